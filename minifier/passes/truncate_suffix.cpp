// truncate-suffix: the failure usually sits early in a long graph. Search on k for the shortest
// prefix "nodes 0..k, with node k's outputs as the graph outputs" that still fails: about
// log2(N) queries to drop everything after the culprit.
//
// The search is ternary: each round asks about two split points, lower first. With -j 2 both run
// at once (a round cuts the range to a third in one query's time); with -j 1 the upper one only
// runs when the lower one is not interesting, which costs about 5% more queries than bisection.
// Either way every decision is the same, so the result does not depend on -j.

#include "minifier/pass.h"

namespace tsrepro {

bool truncate_suffix_pass(PassContext& ctx) {
  const size_t n = cuttable_nodes(*ctx.state().graph).size();
  if (left_to_the_one_minimal_check(n)) return ctx.skip(kFewNodesSkip);
  // Invariant: prefix(hi) is interesting, or hi is the last node (the untested full graph).
  size_t lo = 0, hi = n - 1;
  std::optional<Case> shortest;
  while (lo < hi) {
    const size_t span = hi - lo;
    const size_t low_mid = lo + span / 3;
    const size_t high_mid = std::max(low_mid + 1, lo + 2 * span / 3);  // == hi is fine: hi itself
    std::vector<size_t> points = {low_mid};
    if (high_mid < hi) points.push_back(high_mid);
    std::vector<std::optional<Case>> prefixes;
    for (size_t k : points) prefixes.push_back(truncated_after(ctx.state(), k));
    const std::optional<size_t> found = ctx.first_interesting(prefixes);
    if (!found) {
      lo = points.back() + 1;
      continue;
    }
    hi = points[*found];
    if (*found > 0) lo = points[*found - 1] + 1;
    shortest = std::move(prefixes[*found]);
  }
  return shortest && ctx.try_candidate(std::move(shortest));
}

}  // namespace tsrepro
