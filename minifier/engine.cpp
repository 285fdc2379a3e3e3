// The reduction loop: passes to a fixpoint, then the 1-minimality check. The only place where
// candidates become states.

#include <unistd.h>

#include <filesystem>
#include <regex>

#include <spdlog/spdlog.h>
#include <torch/script.h>

#include "minifier/content_hash.h"
#include "minifier/pass.h"
#include "process/child_process.h"
#include "runner/file_util.h"
#include "runner/case/inputs.h"
#include "tsrepro/error.h"

namespace tsrepro {

namespace {

// The order in which states get smaller: nodes first, then inputs, outputs, input elements.
// Only a strictly smaller candidate can be accepted, so no pass can go round in circles.
std::tuple<size_t, size_t, size_t, int64_t> size_of(const Case& c) {
  int64_t elements = 0;
  for (const c10::IValue& v : *c.values)
    if (v.isTensor()) elements += v.toTensor().numel();
  return {count_compute_nodes(*c.graph), c.inputs.size(), c.graph->outputs().size(), elements};
}

}  // namespace

std::optional<std::pair<size_t, Case>> PassContext::find_first_interesting(size_t count, const CandidateMaker& make,
                                                                           bool must_shrink) {
  const auto current_size = size_of(state_);
  const size_t window = oracle_.parallelism();
  size_t next = 0;
  while (next < count) {
    std::vector<Case> runnable;
    std::vector<size_t> original_index;
    for (; next < count && runnable.size() < window; ++next) {
      std::optional<Case> candidate;
      try {
        candidate = make(next);
      } catch (const std::exception& e) {
        // An edit libtorch refuses (an internal assert in alias analysis, a lint failure) is a
        // candidate that does not exist, never the end of the minify.
        spdlog::debug("pass {}: candidate {} could not be made: {}", pass_, next, one_line_error(e.what()));
      }
      if (!candidate || (must_shrink && !(size_of(*candidate) < current_size))) continue;
      // A candidate that computes nothing points at no op and no compiler pass (kOneNodeLeftSkip's
      // reason): it is not asked, and a state keeps its last node.
      if (count_compute_nodes(*candidate->graph) == 0) {
        spdlog::debug("pass {}: candidate {} computes nothing: not asked", pass_, next);
        continue;
      }
      runnable.push_back(std::move(*candidate));
      original_index.push_back(next);
    }
    if (runnable.empty()) break;
    oracle_.set_progress_context(pass_, count_compute_nodes(*state_.graph));
    // Windows go in order and each answers its first interesting candidate: the same answer
    // as the whole list at once, for every -j.
    if (auto found = oracle_.first_interesting(runnable))
      return std::make_pair(original_index[*found], std::move(runnable[*found]));
  }
  return std::nullopt;
}

std::optional<size_t> PassContext::try_candidates_lazily(size_t count, const CandidateMaker& make) {
  auto found = find_first_interesting(count, make, /*must_shrink=*/true);
  if (!found) return std::nullopt;
  accept(std::move(found->second));
  return found->first;
}

std::optional<size_t> PassContext::try_candidates(std::vector<std::optional<Case>> candidates) {
  return try_candidates_lazily(candidates.size(), [&](size_t i) { return std::move(candidates[i]); });
}

bool PassContext::try_all_halves_singles(const std::vector<size_t>& items, const SubsetMaker& make) {
  std::vector<std::vector<size_t>> subsets = {items};
  const size_t half = items.size() / 2;
  if (items.size() >= 2) {
    subsets.emplace_back(items.begin(), items.begin() + half);
    subsets.emplace_back(items.begin() + half, items.end());
  }
  if (items.size() >= 3)  // (two items: the halves were the singles)
    for (size_t item : items) subsets.push_back({item});
  return try_candidates_lazily(subsets.size(), [&](size_t i) { return make(subsets[i]); }).has_value();
}

bool PassContext::is_interesting(const Case& candidate) { return first_interesting({candidate}).has_value(); }

std::optional<size_t> PassContext::first_interesting(const std::vector<std::optional<Case>>& candidates) {
  // Copies share the graph: the oracle only reads it.
  auto found = find_first_interesting(
      candidates.size(), [&](size_t i) { return candidates[i]; }, /*must_shrink=*/false);
  if (!found) return std::nullopt;
  return found->first;
}

std::optional<Verdict> PassContext::verdict_of(const Case& candidate) {
  oracle_.set_progress_context(pass_, count_compute_nodes(*state_.graph));
  return oracle_.verdict_of(candidate);
}

std::optional<ReferenceValues> PassContext::reference_values_of(const Case& c) const {
  try {
    return offload_dir_.empty()
               ? compute_reference_values(c, std::filesystem::temp_directory_path(), kReferenceValuesMemoryBudget)
               : compute_reference_values(c, offload_dir_, 0);
  } catch (const std::exception& e) {
    spdlog::debug("no reference values: {}", e.what());
    return std::nullopt;
  }
}

const ReferenceValues* PassContext::state_reference_values() {
  if (state_values_at_step_ != steps_.size()) {
    state_values_.reset();  // the old values' memory first: both may be large
    state_values_ = reference_values_of(state_);
    state_values_at_step_ = steps_.size();
  }
  return state_values_ ? &*state_values_ : nullptr;
}

const ExpectedFailure& PassContext::expected_failure() const { return oracle_.expected(); }

void PassContext::accept(Case candidate) {
  AcceptedStep step;
  step.pass = pass_;
  step.nodes_before = count_compute_nodes(*state_.graph);
  state_ = with_copy_numbering(std::move(candidate));
  step.nodes_after = count_compute_nodes(*state_.graph);
  step.stats = oracle_.stats();
  steps_.push_back(step);
  observer_.on_accepted(state_, step);
}

bool PassContext::nodes_last_cut_by_this_pass() const {
  for (auto step = steps_.rbegin(); step != steps_.rend(); ++step)
    if (step->nodes_after != step->nodes_before) return step->pass == pass_;
  return false;
}

const std::vector<PassInfo>& list_passes() {
  static const std::vector<PassInfo> infos = [] {
    std::vector<PassInfo> out;
    for (const PassEntry& entry : pass_table()) out.push_back({entry.name, entry.description});
    return out;
  }();
  return infos;
}

Verdict PredicateInterest::check_original(const Case& original) {
  if (!predicate_(original)) throw NotFailingError("the predicate does not hold on the original case", Verdict{});
  return Verdict{};
}

namespace {

// The table's entries named by --passes (all when none is named), in the table's order.
std::vector<const PassEntry*> selected_passes(const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    const bool known =
        std::any_of(pass_table().begin(), pass_table().end(), [&](const PassEntry& e) { return e.name == name; });
    if (!known) throw UserError("--passes: unknown pass '" + name + "' (see tsrepro minify --list-passes)");
  }
  std::vector<const PassEntry*> selected;
  for (const PassEntry& entry : pass_table())
    if (names.empty() || std::find(names.begin(), names.end(), entry.name) != names.end()) selected.push_back(&entry);
  return selected;
}

}  // namespace

void MinifyOptions::validate() const {
  run.validate();
  selected_passes(passes);
  if (interest == Interest::CheckStr) {
    try {
      std::regex check(check_str);
    } catch (const std::regex_error& e) {
      throw UserError("--check-str " + check_str + ": not a valid regex (" + e.what() + ")");
    }
  }
  // The test command's program: a missing one would only show as "not interesting" (exit 3).
  if (interest == Interest::TestCommand) {
    const std::string program = test_command.substr(0, test_command.find_first_of(" \t"));
    if (find_program(program).empty())
      throw UserError("--test " + test_command + ": no program " + program + " to run");
  }
}

namespace {

// The minifier works on concrete values from the start (the case's, or seeded fake ones), and
// on a normalized graph: dead code and inputs nothing reads never reach a pass.
Case initial_state(const Case& original, const MinifyOptions& options) {
  Case state = copy_case(original);
  if (!state.values || options.run.fake_inputs) state.values = make_fake_inputs(state.inputs, options.run.seed);
  Case normalized = copy_case(state);
  return with_copy_numbering(normalize(normalized) ? normalized : state);
}

// How a candidate's outcome was decided, as one word for the outcome store: a stored outcome is
// reused only by a run that judges the same way (the whole RunSpec, the kind of interest, the
// failure kept).
std::string judging_of(const MinifyOptions& options, const ExpectedFailure& kept) {
  const std::string text = run_spec_to_json(options.run).dump() + '\n' +
                           std::to_string(static_cast<int>(options.interest)) + '\n' + options.check_str + '\n' +
                           options.test_command + '\n' + kept.status_text() + '\n' + kept.signature;
  uint64_t h = kContentHashSeed;
  content_hash_update(h, text.data(), text.size());
  return std::to_string(h);
}

}  // namespace

MinifyResult minify(const Case& original, const MinifyOptions& options, MinifyObserver& observer) {
  options.validate();
  std::unique_ptr<InterestTest> interest = make_worker_interest(options);
  return minify(original, options, *interest, observer);
}

MinifyResult minify(const Case& original, const MinifyOptions& options, InterestTest& interest,
                    MinifyObserver& observer) {
  const std::vector<const PassEntry*> passes = selected_passes(options.passes);
  // --offload: a directory of this run's own, removed when the minify ends (normally or not).
  const ScratchDirectory offload =
      options.offload ? ScratchDirectory::temporary("tsrepro-reference-values") : ScratchDirectory();
  Oracle oracle(interest, observer);
  MinifyResult result;
  if (!options.inputs_file.empty() && original.values) interest.values_read_from(options.inputs_file, *original.values);
  Case state = initial_state(original, options);
  result.original_nodes = count_compute_nodes(*original.graph);
  if (options.known_failure) {
    oracle.expect(*options.known_failure);
  } else {
    result.original_verdict = oracle.check_original(state);
    const std::string route_failure = std::string("exception:") + phase_name(Phase::Route) + ":";
    if (!options.keep_route_failure && oracle.expected().signature.rfind(route_failure, 0) == 0)
      throw UserError(
          "the case fails on its way into " + options.run.backend + ", before its compiler runs (" +
          oracle.expected().signature + "): that failure is the route's (torch.export's tracing or " +
          "the TorchScript converter), not the compiler's; add --keep-route-failure to minify it (`tsrepro " +
          "run` shows the whole message, and a way past a data-dependent guard)");
  }
  state.expected = oracle.expected();
  if (!options.outcomes_file.empty())
    oracle.keep_outcomes_in(options.outcomes_file, judging_of(options, oracle.expected()));
  observer.on_start(state, result.original_verdict);

  // One context per pass run: a pass's reference values are its own (the engine may set the
  // state itself between passes).
  const auto context_for = [&](const std::string& pass) {
    return PassContext(oracle, state, observer, result.steps, pass, offload.path());
  };
  // Runs the passes of `stage` once each, in table order; true when one changed the state.
  const auto run_stage = [&](PassStage stage) {
    bool changed = false;
    for (const PassEntry* pass : passes) {
      if (pass->stage != stage) continue;
      PassContext ctx = context_for(pass->name);
      const size_t queries_before = oracle.stats().queries;
      bool pass_changed = false;
      try {
        pass_changed = pass->run(ctx);
      } catch (const std::exception& e) {
        // libtorch refused an edit the pass made outside a candidate maker, or a value the pass
        // needed cannot be computed: the pass ends here, what it accepted stays (every accepted
        // state was checked), and the other passes go on.
        spdlog::warn("pass {}: stopped: {}", pass->name, one_line_error(e.what()));
      }
      if (!pass_changed && !ctx.skip_reason().empty())
        spdlog::info("pass {}: skipped ({} queries): {}", pass->name, oracle.stats().queries - queries_before,
                     ctx.skip_reason());
      else
        spdlog::info("pass {}: {} ({} queries)", pass->name, pass_changed ? "changed the graph" : "no change",
                     oracle.stats().queries - queries_before);
      changed |= pass_changed;
    }
    return changed;
  };
  bool cleaned = false;  // the cleanup passes ran on these nodes
  for (;;) {
    const size_t nodes_at_start = count_compute_nodes(*state.graph);
    // Another round where this one removed nodes. One that changed only inputs, outputs or shapes
    // goes to the 1-minimality check instead: the node passes would ask again, under another
    // compile each, what they just asked, and the check's single cuts find what those changes
    // made removable (its success starts a round).
    if (run_stage(PassStage::nodes) && count_compute_nodes(*state.graph) < nodes_at_start) continue;
    PassContext ctx = context_for("one-minimal-check");
    const size_t queries_before = oracle.stats().queries;
    bool cut = false, checked = true;
    try {
      cut = single_node_cuts_pass(ctx);
      spdlog::info("one-minimal-check: {} ({} queries){}", cut ? "cut a node" : "1-minimal",
                   oracle.stats().queries - queries_before, ctx.skip_reason().empty() ? "" : ": " + ctx.skip_reason());
    } catch (const std::exception& e) {
      spdlog::warn("the 1-minimal check could not finish: {}", one_line_error(e.what()));
      checked = false;  // one_minimal stays false: the summary says so
    }
    if (cut) {
      cleaned = false;
      continue;
    }
    // No single node goes (or that cannot be told): the cleanup passes, once; where they change
    // the state (an input folded may let a node go), the rounds and the check run again on it.
    if (!cleaned && run_stage(PassStage::cleanup)) {
      cleaned = true;
      continue;
    }
    result.one_minimal = checked;
    break;
  }
  result.minimized = state;
  result.minimized.expected = oracle.expected();
  result.final_nodes = count_compute_nodes(*state.graph);
  result.stats = oracle.stats();
  return result;
}

}  // namespace tsrepro
