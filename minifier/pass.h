#pragma once
// What a reduction pass sees. A pass proposes candidates and asks the context to test them;
// the context (the engine) accepts the first interesting one, so checkpoints, statistics and
// parallelism live in one place, as in llvm-reduce's Delta.cpp.

#include <functional>
#include <utility>
#include <optional>
#include <string>
#include <vector>

#include "minifier/graph_edit.h"
#include "minifier/oracle.h"
#include "tsrepro/minify.h"

namespace tsrepro {

// A state of this many cuttable nodes or fewer is left to the 1-minimality check by the passes
// that search for nodes to cut (bisect-window, truncate-suffix, cut-ranges, cut-nodes): its single
// cuts, each taking the cut node's feeders with it, are the whole search on so few nodes, and those
// passes would first spend a query (under Inductor, a compile) on each candidate of their own.
constexpr size_t kNodesLeftToTheOneMinimalCheck = 3;
inline bool left_to_the_one_minimal_check(size_t cuttable) { return cuttable <= kNodesLeftToTheOneMinimalCheck; }
inline bool left_to_the_one_minimal_check(const Case& state) {
  return left_to_the_one_minimal_check(cuttable_nodes(*state.graph).size());
}
// The skip reason of the passes that leave so few nodes to that check.
inline constexpr const char* kFewNodesSkip = "3 nodes or fewer: the 1-minimality check's single cuts are the search";
// The 1-minimality check's skip reason on a state of one node (minifier/passes/cut_nodes.cpp).
inline constexpr const char* kOneNodeLeftSkip = "one node left: without it the case computes nothing, so it stays";
// The skip reason of the passes that cut with reference values the reference cannot give.
inline constexpr const char* kNoValuesSkip = "the reference cannot expose the graph's values to feed a cut";

class PassContext {
 public:
  // One run of the pass `pass` (the engine makes one context per run; the name goes into each
  // accepted step). `offload_dir`: where reference values go (one file each); empty: they stay in
  // memory.
  PassContext(Oracle& oracle, Case& state, MinifyObserver& observer, std::vector<AcceptedStep>& steps, std::string pass,
              std::string offload_dir = "")
      : oracle_(oracle),
        state_(state),
        observer_(observer),
        steps_(steps),
        pass_(std::move(pass)),
        offload_dir_(std::move(offload_dir)) {}

  const Case& state() const { return state_; }

  // Tests the candidates in order; the first interesting one becomes the state. Returns its
  // index, or nullopt if none was interesting (nullopt entries are skipped, never run).
  std::optional<size_t> try_candidates(std::vector<std::optional<Case>> candidates);
  // The same for long lists: candidate i is made only when its window of -j candidates comes
  // up, so a pass may propose thousands of graph copies without holding them all at once.
  using CandidateMaker = std::function<std::optional<Case>(size_t)>;
  std::optional<size_t> try_candidates_lazily(size_t count, const CandidateMaker& make);
  bool try_candidate(std::optional<Case> candidate) { return try_candidates({std::move(candidate)}).has_value(); }
  // The schedule of edits that apply to any subset of `items` (outputs to drop, inputs to fold or
  // halve): all of them at once, then each half, then each one alone; the first interesting
  // candidate is accepted. `make` builds the candidate for one subset (nullopt: none). Returns
  // true when one was accepted.
  using SubsetMaker = std::function<std::optional<Case>(const std::vector<size_t>&)>;
  bool try_all_halves_singles(const std::vector<size_t>& items, const SubsetMaker& make);

  // Tests without accepting (for searches that accept the best of several answers).
  bool is_interesting(const Case& candidate);
  // The first interesting candidate in list order, without accepting it (nullopt entries are
  // skipped). Runs in parallel windows like try_candidates.
  std::optional<size_t> first_interesting(const std::vector<std::optional<Case>>& candidates);
  // The same with candidates made on demand, a window at a time; returns the index and the case.
  std::optional<std::pair<size_t, Case>> first_interesting_lazily(size_t count, const CandidateMaker& make) {
    return find_first_interesting(count, make, /*must_shrink=*/false);
  }
  // The verdict itself, for passes that learn from it (counts as a query; not cached). nullopt
  // when the interest rule does not judge by verdicts (--test).
  std::optional<Verdict> verdict_of(const Case& candidate);
  // The failure the minify keeps (its status, phase and signature).
  const ExpectedFailure& expected_failure() const;

  // The reference values: the reference run's value of every top-level value, all on disk with
  // --offload, else in memory up to kReferenceValuesMemoryBudget and the rest on disk. nullopt /
  // nullptr where the reference cannot run the graph with its values exposed (a pass that cuts
  // has nothing to cut with then).
  //   - of the state, as the cutting passes need them: computed once per pass run and again after
  //     each accepted step. An accepted candidate is numbered afresh (with_copy_numbering), so
  //     values kept under the names of the state before would feed a pass that cuts again
  //     (cut-ranges, cut-nodes) another node's value. Valid until the next call.
  const ReferenceValues* state_reference_values();
  //   - of any other case (a prefix of the state, a candidate): computed each time.
  std::optional<ReferenceValues> reference_values_of(const Case& c) const;

  // Whether the running pass made the state's nodes what they are: the last step that cut nodes
  // was its own (steps since changed inputs, outputs or shapes only). A pass that runs to its own
  // fixpoint has nothing to ask of its own output.
  bool nodes_last_cut_by_this_pass() const;

  // A pass that can change nothing on this state says why before it asks anything, and returns
  // skip(...)'s false: `-v` prints the reason beside its zero queries (issue 53: where a query is a
  // compile, a pass that runs should be one that can change the case).
  bool skip(std::string why) {
    skip_reason_ = std::move(why);
    return false;
  }
  const std::string& skip_reason() const { return skip_reason_; }

 private:
  void accept(Case candidate);
  // The one search behind the above: candidates made in order, tried in windows of -j; with
  // must_shrink, those not strictly smaller than the state are skipped (never run).
  std::optional<std::pair<size_t, Case>> find_first_interesting(size_t count, const CandidateMaker& make,
                                                                bool must_shrink);

  Oracle& oracle_;
  Case& state_;
  MinifyObserver& observer_;
  std::vector<AcceptedStep>& steps_;
  const std::string pass_;
  const std::string offload_dir_;
  std::string skip_reason_;
  // state_reference_values' values, and the number of accepted steps they were computed at.
  std::optional<ReferenceValues> state_values_;
  std::optional<size_t> state_values_at_step_;
};

using PassFunction = bool (*)(PassContext&);  // true when it changed the state

// When the engine runs a pass (minifier/passes/passes.def says which is which, and why).
enum class PassStage { nodes, cleanup };

struct PassEntry {
  std::string name;
  PassStage stage;
  std::string description;
  PassFunction run;
};

// The one table of passes (minifier/passes/registry.cpp), in the order the engine runs them.
const std::vector<PassEntry>& pass_table();

// The passes, one file each under minifier/passes/, declared from the table.
#define TSREPRO_PASS(function, name, stage, description) bool function(PassContext& ctx);
#include "minifier/passes/passes.def"
#undef TSREPRO_PASS

// The end check, run when no pass changes the state any more: can any single remaining node
// become an input (fed its reference value) with the failure kept? Accepts the first such cut
// and returns true; false means the state is 1-minimal.
bool single_node_cuts_pass(PassContext& ctx);

}  // namespace tsrepro
