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
// queries. The side that failed last round is asked first; where it does not fail, the other
// half is taken to (the window fails, so with one culprit that half holds it) without asking,
// though never twice in a row, so most rounds cost one query; a window reached that way is
// asked once at the end. Where
// that answer is no (the failure needs nodes of both halves), the search goes back to the last
// window known to fail and asks about both halves each round.
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
  if (left_to_the_one_minimal_check(n)) return ctx.skip(kFewNodesSkip);
  const ReferenceValues* refs = ctx.state_reference_values();
  if (!refs) return ctx.skip(kNoValuesSkip);
  using Window = std::pair<size_t, size_t>;  // cuttable nodes [first, last]
  auto make = [&](const Window& w) {
    std::optional<Case> made;
    try {
      made = window(ctx.state(), w.first, w.second, *refs);
    } catch (const std::exception& e) {  // an edit libtorch refuses: no candidate, as the engine has it
      spdlog::debug("bisect-window: nodes [{}, {}]: no candidate: {}", w.first, w.second, e.what());
    }
    spdlog::debug("bisect-window: nodes [{}, {}] of {}: a candidate of {} nodes", w.first, w.second, n,
                  made ? cuttable_nodes(*made->graph).size() : 0);
    return made;
  };
  Window known{0, n - 1};          // the last window known to fail: the whole state at first
  std::optional<Case> known_case;  // its candidate (none for the whole state)
  bool upper_first = false;        // ask first for the half that failed last round
  // First with inference, then (where an inference proved wrong) asking about both halves.
  for (const bool infer : {true, false}) {
    Window w = known;
    bool inferred = false;  // w is taken to fail, not yet known to
    while (w.first < w.second) {
      const size_t mid = w.first + (w.second - w.first) / 2;
      const Window lower{w.first, mid}, upper{mid + 1, w.second};
      const std::vector<Window> halves = upper_first ? std::vector{upper, lower} : std::vector{lower, upper};
      std::optional<Case> first;
      if (infer) {
        first = make(halves[0]);
        if (first && ctx.is_interesting(*first)) {
          w = known = halves[0];
          known_case = std::move(first);
          inferred = false;
          continue;
        }
        // w fails and this half does not: one culprit is in the other half. Not twice in a row:
        // a failure that needs nodes of both halves would be followed down to one node unasked.
        if (first && !inferred) {
          w = halves[1];
          upper_first = w == upper;
          inferred = true;
          continue;
        }
      }
      // Both halves asked (the first, where inference asked it already, from the cache).
      auto found = ctx.first_interesting_lazily(halves.size(),
                                                [&](size_t i) { return i == 0 && first ? first : make(halves[i]); });
      if (!found) break;  // neither half fails alone: the window stays as it is
      w = known = halves[found->first];
      upper_first = w == upper;
      known_case = std::move(found->second);
      inferred = false;
    }
    if (!inferred) break;
    // The window reached by inference, asked once: one query where each round asked one.
    std::optional<Case> reached = make(w);
    if (reached && ctx.is_interesting(*reached)) {
      known_case = std::move(reached);
      break;
    }
    // An inference was wrong (a failure that needs nodes of both halves): from the last window
    // known to fail, both halves are asked each round.
    spdlog::debug("bisect-window: nodes [{}, {}] do not fail alone; asking both halves from [{}, {}]", w.first,
                  w.second, known.first, known.second);
  }
  return known_case && ctx.try_candidate(std::move(known_case));
}

}  // namespace tsrepro
