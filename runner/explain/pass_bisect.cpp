#include "runner/explain/pass_bisect.h"

#include <algorithm>
#include <map>

#include "runner/exec/evaluate.h"
#include "tsrepro/backend.h"

namespace tsrepro {

namespace {

bool takes_option(const std::string& backend, const char* key) {
  const BackendInfo* info = find_backend(backend);
  return info && std::find(info->option_keys.begin(), info->option_keys.end(), key) != info->option_keys.end();
}

}  // namespace

bool splits_into_passes(const std::string& backend) {
  return takes_option(backend, "passes") || takes_option(backend, "bisect");
}

std::string unsplit_finding(const std::string& backend) {
  return "cannot split " + backend + " further: tsrepro cannot stop between its passes";
}

namespace {

// `v` is the case's failure `whole`, wherever it shows: a prefix's graph first runs when it is run
// (the interpreter), where the whole backend's profiling runs met it while compiling, so an
// exception's phase is not part of the question (ofi_mkldnn_max_pool2d on 2.6: "exception:compile:"
// whole, "exception:run:" after ConvertFrozenOpsToMKLDNN, the same assert).
bool same_failure_any_phase(const Verdict& whole, const Verdict& v) {
  if (same_failure(whole, v)) return true;
  if (!v.failed() || v.status != whole.status || v.status != Status::Exception) return false;
  const auto without_phase = [](const std::string& signature) {  // "exception:<phase>:<rest>" -> <rest>
    const size_t second = signature.find(':', signature.find(':') + 1);
    return second == std::string::npos ? signature : signature.substr(second + 1);
  };
  return without_phase(v.signature) == without_phase(whole.signature);
}

}  // namespace

namespace {

// What judges the tries of one search: each a run of the case, counted.
struct Judge {
  const Case& c;
  const std::vector<c10::IValue>& inputs;
  PassFinding& f;
  Evaluator evaluator;

  Verdict operator()(const RunSpec& run) {
    ++f.runs;
    return evaluator.evaluate_values(eval_request(c, run, ""), inputs, [](Phase) {});
  }
  // The try `point` of the search, recorded; whether it fails as the case does.
  bool fails_so(const RunSpec& run, const std::string& point) {
    f.passes.push_back(point);
    f.prefixes.push_back((*this)(run));
    return same_failure_any_phase(f.whole, f.prefixes.back());
  }
};

// Passes one after another (ofi, nnc). In order, not by bisection: a later pass may undo what an
// earlier one broke, and on these backends a run costs milliseconds. The first prefix that fails
// names the pass.
void search_pass_sequence(Judge& judge, const RunSpec& spec, std::vector<std::string> passes) {
  PassFinding& f = judge.f;
  for (size_t k = 0; k < passes.size(); ++k) {
    RunSpec prefix = spec;
    prefix.backend_options["passes"] = std::to_string(k + 1);
    if (judge.fails_so(prefix, passes[k])) {
      f.culprit = k;
      f.pass = passes[k];
      f.finding = passes[k] + " (pass " + std::to_string(k + 1) + " of " + std::to_string(passes.size()) + " of " +
                  spec.backend + "): the case runs right up to it, and fails as it does from it on";
      return;
    }
  }
  const bool all_right =
      std::none_of(f.prefixes.begin(), f.prefixes.end(), [](const Verdict& v) { return v.failed(); });
  f.finding = all_right ? "after all " + std::to_string(passes.size()) + " of " + spec.backend +
                              "'s passes the graph runs right in the interpreter: the failure is in what runs it, "
                              "past every stop tsrepro has (not split further)"
                        : "no prefix of " + spec.backend + "'s " + std::to_string(passes.size()) +
                              " passes fails as the case does, and some fail otherwise (--json lists each): "
                              "not split further";
}

// What a stage is, for people, as the backend's plan says (its name where the plan says nothing).
std::string stage_text(const CompilerBisectPlan& plan, const std::string& stage) {
  const auto found = plan.texts.find(stage);
  return found == plan.texts.end() ? stage : found->second;
}

// The pass an application of a subsystem is, for people and for titles (the part before " (").
std::string application_text(const CompilerBisectPlan& plan, const std::string& subsystem,
                             const std::string& debug_info) {
  const auto found = plan.application_texts.find(subsystem);
  return (found == plan.application_texts.end() ? subsystem : found->second) + " " + debug_info;
}

// One bisect=... try: `point` in the backend's options.
RunSpec bisect_try(const RunSpec& spec, const std::string& point) {
  RunSpec run = spec;
  run.backend_options["bisect"] = point;
  return run;
}

// A counted subsystem that fixes the case when switched off: the first k of its applications kept,
// bisected to the smallest k that fails (k = 0 runs right, known; all of them fail, as the case).
void bisect_applications(Judge& judge, const RunSpec& spec, const CompilerBisectPlan& plan,
                         const CompilerBisectPlan::Subsystem& sub) {
  PassFinding& f = judge.f;
  const std::string prefix = sub.stage + ":" + sub.name + ":";
  ++f.runs;  // the compile that counts them
  const std::vector<std::string> applications =
      judge.evaluator.pass_applications(eval_request(judge.c, bisect_try(spec, prefix + "all"), ""), judge.inputs);
  f.applications = applications.size();
  size_t right = 0, wrong = applications.size();
  while (wrong - right > 1) {
    const size_t mid = right + (wrong - right) / 2;
    if (judge.fails_so(bisect_try(spec, prefix + std::to_string(mid)), prefix + std::to_string(mid))) {
      wrong = mid;
      f.culprit = f.passes.size() - 1;
    } else {
      right = mid;
    }
  }
  if (applications.empty()) {
    f.finding = "switching off " + sub.stage + "'s " + sub.name + " makes the case run right, but the compile " +
                "applies it nowhere that tsrepro saw: not split further";
    return;
  }
  f.application = wrong;
  f.debug_info = applications[wrong - 1];
  f.pass = application_text(plan, sub.name, f.debug_info);
  f.runs_right_with = {{"TORCH_BISECT_BACKEND", sub.stage},
                       {"TORCH_BISECT_SUBSYSTEM", sub.name},
                       {"TORCH_BISECT_MAX", std::to_string(static_cast<long>(wrong) - 2)}};
  f.finding = f.pass + ": application " + std::to_string(wrong) + " of " + std::to_string(applications.size()) +
              " of CompilerBisector's " + sub.stage + " subsystem " + sub.name + " (with " +
              (wrong == 1 ? std::string("none") : "the first " + std::to_string(wrong - 1)) +
              " of them kept the case runs right; with this one too, it fails as it does)";
}

// PyTorch 2 (inductor, aoti): CompilerBisector's order, as do_bisect goes (the header says how).
void search_compiler_stages(Judge& judge, const RunSpec& spec, const CompilerBisectPlan& plan) {
  PassFinding& f = judge.f;
  std::vector<std::string> right_stages;
  f.stage = plan.last;
  for (const std::string& stage : plan.stages) {
    if (judge.fails_so(bisect_try(spec, stage), stage)) {
      f.stage = stage;
      f.culprit = f.passes.size() - 1;
      break;
    }
    right_stages.push_back(stage);
  }
  std::string before;
  for (const std::string& stage : right_stages) before += (before.empty() ? "" : ", ") + stage;
  const std::string earlier =
      before.empty() ? "" : " (before it, " + before + (right_stages.size() == 1 ? " runs" : " run") + " right)";
  for (const CompilerBisectPlan::Subsystem& sub : plan.subsystems) {
    if (sub.within != f.stage) continue;
    const std::string off = sub.stage + ":" + sub.name + ":0";
    if (judge.fails_so(bisect_try(spec, off), off)) continue;
    f.subsystem = sub.name;
    f.culprit = f.passes.size() - 1;
    if (sub.counted) {
      bisect_applications(judge, spec, plan, sub);
      if (!f.pass.empty()) f.finding += "; in " + stage_text(plan, f.stage) + earlier;
      return;
    }
    // A config change (CompilerBisector's BinarySubsystem): applying it makes the case run right.
    // No runs_right_with: CompilerBisector's variables alone do not apply a config change (it reads
    // the change from its state files, which only its own bisection writes); the finding names it.
    f.pass = "CompilerBisector's " + sub.name;
    f.finding = f.pass + ": with " + stage_text(plan, f.stage) + "'s config change " + sub.name +
                " applied the case runs right" + earlier;
    return;
  }
  const bool is_last = f.stage == plan.last;
  const bool has_subsystems =
      std::any_of(plan.subsystems.begin(), plan.subsystems.end(),
                  [&](const CompilerBisectPlan::Subsystem& sub) { return sub.within == f.stage; });
  // "bisected to Inductor" would tell an Inductor bug's reader nothing: the last stage is named only
  // where it has no subsystems to have tried (export's converter).
  if (!is_last || !has_subsystems) f.pass = stage_text(plan, f.stage);
  if (is_last && !has_subsystems) {  // export's converter: the other way in runs right
    std::string others;
    for (const std::string& stage : right_stages) others += (others.empty() ? "" : "; ") + stage_text(plan, stage);
    f.finding = stage_text(plan, f.stage) + ": the case runs right through " + others +
                ", and fails as it does through this; not split further";
    return;
  }
  f.finding = stage_text(plan, f.stage) + earlier + ": it fails as the case does" +
              (!has_subsystems ? "; not split further"
               : is_last       ? " with each subsystem CompilerBisector switches off (its lowerings, joint-graph and "
                                 "post-grad passes, its config changes): the fault is past them (code generation, "
                                 "scheduling, the kernels), not split further"
                               : ", and with each of its subsystems switched off: not split further");
}

}  // namespace

PassFinding find_failing_pass(const Case& c, const std::vector<c10::IValue>& inputs, const RunSpec& spec) {
  PassFinding f;
  Judge judge{c, inputs, f, {}};
  // Asked first: a backend tsrepro cannot split costs no run (under PyTorch 2, a compile).
  std::vector<std::string> passes;
  std::optional<CompilerBisectPlan> plan;
  if (takes_option(spec.backend, "bisect"))
    plan = make_backend(spec.backend, spec.backend_options)->compiler_bisect_plan();
  else
    passes = judge.evaluator.pass_applications(eval_request(c, spec, ""), inputs);
  if (passes.empty() && !plan) {
    f.finding = unsplit_finding(spec.backend);
    return f;
  }
  f.whole = judge(spec);
  if (!f.whole.failed()) {
    f.finding = "the case does not fail under " + spec.backend + ": no pass to name";
    return f;
  }
  if (plan)
    search_compiler_stages(judge, spec, *plan);
  else
    search_pass_sequence(judge, spec, std::move(passes));
  return f;
}

nlohmann::json pass_finding_to_json(const PassFinding& f) {
  nlohmann::json prefixes = nlohmann::json::array();
  for (const Verdict& v : f.prefixes)
    prefixes.push_back({{"status", status_name(v.status)}, {"signature", v.signature}});
  nlohmann::json j{{"verdict", verdict_to_json(f.whole)},
                   {"passes", f.passes},
                   {"pass", f.pass.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.pass)},
                   {"pass_index", f.culprit ? nlohmann::json(*f.culprit + 1) : nlohmann::json(nullptr)},
                   {"prefixes", prefixes},
                   {"runs", f.runs},
                   {"finding", f.finding}};
  if (!f.stage.empty()) {  // CompilerBisector's BisectionResult, in its own words
    j["stage"] = f.stage;
    j["subsystem"] = f.subsystem.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.subsystem);
    j["bisect_number"] = f.application ? nlohmann::json(*f.application) : nlohmann::json(nullptr);
    j["applications"] = f.applications;
    j["debug_info"] = f.debug_info.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.debug_info);
    j["runs_right_with"] = f.runs_right_with;
  }
  return j;
}

}  // namespace tsrepro
