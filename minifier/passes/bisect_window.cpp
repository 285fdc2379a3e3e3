// bisect-window: find one culprit by halving a window of the graph. The window [lo, hi] of
// cuttable nodes starts as the whole graph; each round asks about its two halves, each made
// into a candidate of its own: the nodes before the half become inputs fed with their
// reference values (one instrumented reference run of the state gives them all), and every
// tensor the half hands on becomes an output. The half that still fails is the new window.
//
// Why not only truncate-suffix? A prefix "nodes 0..k" costs a query k nodes of work, and its
// search spends most of its queries on large prefixes when the culprit sits late in a real
// model (every query a whole resnet or convnext). Here a query costs the half it runs, so a
// whole search costs about twice the graph's work wherever the culprit sits, in about log2(N)
// queries. The side that failed last round is asked first (culprits near an end are found in
// one query per round); with -j 2 both halves run at once.
//
// When neither half fails alone (two culprits, one in each, or a failure that needs both
// halves together), the search stops at the window it has; truncate-suffix and cut-ranges go on
// from there. A window of one node is the usual end.

#include <set>

#include <spdlog/spdlog.h>

#include "minifier/pass.h"
#include "tsrepro/node_origin.h"

namespace tsrepro {
namespace {

// How many of `state`'s first `count` cuttable nodes `edited` still holds, known by their import
// origins; nullopt where a node has none.
std::optional<size_t> still_held(const Case& state, const Case& edited, size_t count) {
  std::set<int64_t> held;
  for (torch::jit::Node* node : cuttable_nodes(*edited.graph)) {
    const std::optional<int64_t> origin = origin_index(*node);
    if (!origin) return std::nullopt;
    held.insert(*origin);
  }
  const std::vector<torch::jit::Node*> nodes = cuttable_nodes(*state.graph);
  size_t found = 0;
  for (size_t i = 0; i < count; ++i) {
    const std::optional<int64_t> origin = origin_index(*nodes[i]);
    if (!origin) return std::nullopt;
    found += held.count(*origin);
  }
  return found;
}

// Cuttable nodes [begin, last] of `state` alone: everything after `last` truncated (the tensors it
// hands on become the outputs), then the nodes before `begin` cut (their values fed in; what those
// values decide may fold away too). Truncated first, a value that only nodes after the window read
// (ssdlite's list of image sizes, which its postprocessing reads) keeps no node before the window.
std::optional<Case> window(const Case& state, size_t begin, size_t last, const ReferenceValues& refs) {
  const size_t n = cuttable_nodes(*state.graph).size();
  if (last + 1 >= n) return graph_from_folding(state, begin, refs);
  std::optional<Case> up_to_last = truncated_after(state, last, PrefixOutputs::FrontierWithContainers);
  if (!up_to_last) return std::nullopt;
  if (const std::optional<size_t> begin_there = still_held(state, *up_to_last, begin))
    return graph_from_folding(*up_to_last, *begin_there, refs);
  // Nodes without origins (a graph written as IR text): cut, then truncate at the same node.
  std::optional<Case> from_begin = graph_from(state, begin, refs);
  if (!from_begin) return std::nullopt;
  return truncated_after(*from_begin, last - begin, PrefixOutputs::FrontierWithContainers);
}

}  // namespace

bool bisect_window_pass(PassContext& ctx) {
  const size_t n = cuttable_nodes(*ctx.state().graph).size();
  if (left_to_the_one_minimal_check(n)) return false;
  const ReferenceValues* refs = ctx.reference_values_of_state();
  if (!refs) return false;
  size_t lo = 0, hi = n - 1;  // the window: the whole state is known to fail
  std::optional<Case> best;
  bool upper_first = false;  // ask first for the half that failed last round
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const std::pair<size_t, size_t> lower{lo, mid}, upper{mid + 1, hi};
    const std::vector<std::pair<size_t, size_t>> halves =
        upper_first ? std::vector{upper, lower} : std::vector{lower, upper};
    auto found = ctx.first_interesting_lazily(
        halves.size(), [&](size_t i) {
          std::optional<Case> made = window(ctx.state(), halves[i].first, halves[i].second, *refs);
          spdlog::debug("bisect-window: nodes [{}, {}] of {}: a candidate of {} nodes", halves[i].first,
                        halves[i].second, n, made ? cuttable_nodes(*made->graph).size() : 0);
          return made;
        });
    if (!found) break;  // neither half fails alone: the window stays as it is
    std::tie(lo, hi) = halves[found->first];
    upper_first = halves[found->first] == upper;
    best = std::move(found->second);
  }
  return best && ctx.try_candidate(std::move(best));
}

}  // namespace tsrepro
