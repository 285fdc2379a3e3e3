// truncate-suffix: the failure usually sits early in a long graph. Bisect on k for the
// shortest prefix "nodes 0..k, with node k's outputs as the graph outputs" that still fails:
// about log2(N) queries to drop everything after the culprit.

#include "minifier/pass.h"

namespace tsrepro {

bool truncate_suffix_pass(PassContext& ctx) {
  const size_t n = cuttable_nodes(*ctx.state().graph).size();
  if (n < 2) return false;
  // Invariant: prefix(hi) is interesting, or hi is the last node (the untested full graph).
  size_t lo = 0, hi = n - 1;
  std::optional<Case> shortest;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    std::optional<Case> prefix = truncated_after(ctx.state(), mid);
    if (prefix && ctx.is_interesting(*prefix)) {
      hi = mid;
      shortest = std::move(prefix);
    } else {
      lo = mid + 1;
    }
  }
  return shortest && ctx.try_candidate(std::move(shortest));
}

}  // namespace tsrepro
