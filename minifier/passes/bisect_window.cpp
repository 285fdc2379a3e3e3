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
// half is taken to (the window fails, so with one culprit that half holds it) without asking, up
// to kMaxInferredInARow rounds in a row, so most rounds cost one query; the window so reached is
// asked once at the end. Where that answer is no (the failure needs nodes of both halves of a
// window on the way), the windows taken unasked are bisected for the deepest that fails
// (deepest_failing below), which is where the search stops.
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
  if (const std::optional<size_t> begin_there = still_held(state, *up_to_last, begin)) {
    drop_outputs_untouched_from(*up_to_last, *begin_there);
    return graph_from_folding(*up_to_last, *begin_there, refs);
  }
  // Nodes without origins (a graph written as IR text): cut, then truncate at the same node.
  std::optional<Case> from_begin = graph_from(state, begin, refs);
  if (!from_begin) return std::nullopt;
  return truncated_after(*from_begin, last - begin, PrefixOutputs::FrontierWithContainers);
}

using Window = std::pair<size_t, size_t>;  // cuttable nodes [first, last]

// How many rounds in a row may take a half unasked. Each one saves a query where the failure has
// one culprit; where it needs nodes of both halves of a window, the rounds after it (each asking a
// half of a window that cannot fail) are wasted until the cap asks. One, two, three and no cap
// were measured on scripts/bench/queries.py and the corpus (docs/BENCHMARKS.md, the query table's
// "fifth session"; docs/ARCHITECTURE.md).
constexpr size_t kMaxInferredInARow = 2;

// A window known to fail, and its candidate (none for the whole state: the sanity run asked it).
struct Failing {
  Window window;
  std::optional<Case> made;
};

class WindowSearch {
 public:
  WindowSearch(PassContext& ctx, const ReferenceValues& refs) : ctx_(ctx), refs_(refs) {}

  // The window [first, last] of the state as a candidate (none where libtorch refuses an edit).
  std::optional<Case> make(const Window& w) const {
    std::optional<Case> made;
    try {
      made = window(ctx_.state(), w.first, w.second, refs_);
    } catch (const std::exception& e) {  // an edit libtorch refuses: no candidate, as the engine has it
      spdlog::debug("bisect-window: nodes [{}, {}]: no candidate: {}", w.first, w.second, e.what());
    }
    spdlog::debug("bisect-window: nodes [{}, {}]: a candidate of {} nodes", w.first, w.second,
                  made ? cuttable_nodes(*made->graph).size() : 0);
    return made;
  }

  // The window's candidate where it fails; none where it does not or cannot be made.
  std::optional<Case> failing(const Window& w) const {
    std::optional<Case> made = make(w);
    return made && ctx_.is_interesting(*made) ? std::move(made) : std::nullopt;
  }

  // Halving from the whole state down to one node, or to a window neither of whose halves fails
  // alone (truncate-suffix and cut-ranges go on from there). The side that failed last round is asked first; where it
  // does not fail, the other is taken unasked (one culprit: it is there), at most kMaxInferredInARow rounds in a row;
  // then the other half is asked.
  Failing halve(size_t n) const {
    Failing known{{0, n - 1}, std::nullopt};
    std::vector<Window> inferred;  // the windows taken since `known` without asking, outermost first
    bool upper_first = false;
    Window w = known.window;
    while (w.first < w.second) {
      const size_t mid = w.first + (w.second - w.first) / 2;
      const Window lower{w.first, mid}, upper{mid + 1, w.second};
      const Window asked = upper_first ? upper : lower, other = upper_first ? lower : upper;
      std::optional<Case> first = make(asked);
      if (first && ctx_.is_interesting(*first)) {
        w = asked;
        known = {w, std::move(first)};
        inferred.clear();
        continue;
      }
      if (first && inferred.size() < kMaxInferredInARow) {
        w = other;
        upper_first = w == upper;
        inferred.push_back(w);
        continue;
      }
      // The other half asked: the first could not be made (nothing to infer from), or the rounds
      // in a row taken unasked are at their cap.
      std::optional<Case> second = failing(other);
      if (!second) break;
      w = other;
      upper_first = w == upper;
      known = {w, std::move(second)};
      inferred.clear();
    }
    if (inferred.empty()) return known;
    return deepest_failing(std::move(known), inferred);
  }

  // The windows taken unasked are each inside the one before, the first inside `known`. The
  // deepest is asked; where it does not fail (the failure needs nodes of both halves of a window
  // on the way), a bisection over the list finds the deepest that does: its first-asked half did
  // not fail, nor does its other half (the next window of the list), so the search stops there.
  Failing deepest_failing(Failing known, const std::vector<Window>& inferred) const {
    if (std::optional<Case> deepest = failing(inferred.back())) return {inferred.back(), std::move(deepest)};
    spdlog::debug("bisect-window: nodes [{}, {}] do not fail; bisecting the {} windows taken unasked",
                  inferred.back().first, inferred.back().second, inferred.size());
    // Invariant: window `fails` fails (-1: `known`), window `passes` does not.
    std::ptrdiff_t fails = -1, passes = static_cast<std::ptrdiff_t>(inferred.size()) - 1;
    while (passes - fails > 1) {
      const std::ptrdiff_t middle = fails + (passes - fails) / 2;
      if (std::optional<Case> made = failing(inferred[static_cast<size_t>(middle)])) {
        fails = middle;
        known = {inferred[static_cast<size_t>(middle)], std::move(made)};
      } else {
        passes = middle;
      }
    }
    return known;
  }

 private:
  PassContext& ctx_;
  const ReferenceValues& refs_;
};

}  // namespace

bool bisect_window_pass(PassContext& ctx) {
  const size_t n = cuttable_nodes(*ctx.state().graph).size();
  if (left_to_the_one_minimal_check(n)) return ctx.skip(kFewNodesSkip);
  const ReferenceValues* refs = ctx.state_reference_values();
  if (!refs) return ctx.skip(kNoValuesSkip);
  const WindowSearch search(ctx, *refs);
  Failing found = search.halve(n);
  return found.made && ctx.try_candidate(std::move(found.made));
}

}  // namespace tsrepro
