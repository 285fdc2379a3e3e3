// cut-ranges: walk the nodes in topological order and, from each position p, cut the longest run
// of nodes [p, k) that the failure does not need, feeding their reference values in as inputs.
// Nodes before p stay (a cut exposes the values they fed into the range as outputs), so a
// culprit found early is kept while the harmless nodes between it and the next culprit go.
//
// Why not only ddmin (cut-nodes)? Two culprits far apart in a chain defeat ddmin's halves: every
// half holds a culprit, so it must go to fine granularity, about 4·log2(N) queries per culprit.
// Here each position costs one query ("is node p needed?"); a gap of harmless nodes costs a few
// probes from the top (the whole rest, all but the last node, then halves) and a bisection:
// about log2(N) per culprit. Truncate-suffix has already made the last node a culprit, so the
// "all but the last" probe ends most searches at once.
//
// Bisection assumes that cutting less of a run is at least as interesting as cutting more; where
// that does not hold it only finds a shorter run, never a wrong one (every accepted cut is a
// candidate the oracle found interesting), and cut-nodes and the 1-minimal check come after.

#include "minifier/pass.h"

namespace tsrepro {
namespace {

// Nodes [begin, end) cut. Nodes before `begin` that fed only the range stay, their values
// exposed as outputs; with nothing before the range to keep, a plain cut is the same thing.
std::optional<Case> with_range_cut(const Case& state, size_t begin, size_t end, const ReferenceValues& refs) {
  std::vector<size_t> indices;
  for (size_t i = begin; i < end; ++i) indices.push_back(i);
  if (begin > 0)
    if (std::optional<Case> kept = with_nodes_cut(state, indices, refs, CutMode::KeepFeeders)) return kept;
  return with_nodes_cut(state, indices, refs, CutMode::DropFeeders);
}

// Range ends to probe from the top for position p of n nodes: the whole rest (but not from 0:
// an empty graph does not fail), all but the last node, then halves down to just above p + 1.
std::vector<size_t> probe_ends(size_t p, size_t n) {
  std::vector<size_t> ends;
  if (p > 0) ends.push_back(n);
  if (n - 1 > p + 1) ends.push_back(n - 1);
  for (size_t span = (n - p) / 2; p + span > p + 1; span /= 2)
    if (ends.empty() || p + span < ends.back()) ends.push_back(p + span);
  return ends;
}

}  // namespace

bool cut_ranges_pass(PassContext& ctx) {
  if (left_to_the_one_minimal_check(ctx.state())) return ctx.skip(kFewNodesSkip);
  bool changed = false;
  for (size_t p = 0;; ++p) {
    const size_t n = cuttable_nodes(*ctx.state().graph).size();
    if (n < 2 || p >= n) break;
    // The state's own: after an accepted cut, it is another graph with other names.
    const ReferenceValues* refs = ctx.state_reference_values();
    if (!refs) break;  // nothing to cut with
    const auto cut_to = [&](size_t end) { return with_range_cut(ctx.state(), p, end, *refs); };

    std::optional<Case> longest = cut_to(p + 1);
    if (!longest || !ctx.is_interesting(*longest)) continue;  // node p is needed: keep it
    // Invariant: cutting [p, lo) is interesting (held in `longest`), cutting [p, hi) is not or
    // is untested beyond the end.
    size_t lo = p + 1, hi = p > 0 ? n + 1 : n;  // from 0, cutting everything is never tried
    // Probes are made a window at a time: each is a copy of the whole graph.
    const std::vector<size_t> ends = probe_ends(p, n);
    auto found = ctx.first_interesting_lazily(ends.size(),
                                              [&](size_t i) { return ends[i] > lo ? cut_to(ends[i]) : std::nullopt; });
    const size_t failed_above = found ? found->first : ends.size();  // probes before it were not interesting
    if (failed_above > 0) hi = ends[failed_above - 1];
    if (found) {
      lo = ends[found->first];
      longest = std::move(found->second);
    }
    while (hi - lo > 1) {
      const size_t mid = lo + (hi - lo) / 2;
      std::optional<Case> candidate = cut_to(mid);
      if (candidate && ctx.is_interesting(*candidate)) {
        lo = mid;
        longest = std::move(candidate);
      } else {
        hi = mid;
      }
    }
    // Known interesting: the cache answers, and the engine checks that it is smaller.
    if (ctx.try_candidate(std::move(longest))) changed = true;
    // The node now at p is the first one the cut could not take: most likely needed, so the
    // walk goes on after it (cut-nodes and the 1-minimal check catch the exceptions).
  }
  return changed;
}

}  // namespace tsrepro
