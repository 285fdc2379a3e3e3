#include "runner/explain/pass_bisect.h"

#include <algorithm>

#include "runner/exec/evaluate.h"
#include "tsrepro/backend.h"

namespace tsrepro {

bool splits_into_passes(const std::string& backend) {
  const BackendInfo* info = find_backend(backend);
  return info && std::find(info->option_keys.begin(), info->option_keys.end(), "passes") != info->option_keys.end();
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

PassFinding find_failing_pass(const Case& c, const std::vector<c10::IValue>& inputs, const RunSpec& spec) {
  Evaluator evaluator;
  PassFinding f;
  auto judge = [&](const RunSpec& run) {
    ++f.runs;
    return evaluator.evaluate_values(eval_request(c, run, ""), inputs, [](Phase) {});
  };
  // Asked first: a backend tsrepro cannot split costs no run (under PyTorch 2, a compile).
  f.passes = evaluator.pass_applications(eval_request(c, spec, ""), inputs);
  if (f.passes.empty()) {
    f.finding = unsplit_finding(spec.backend);
    return f;
  }
  f.whole = judge(spec);
  if (!f.whole.failed()) {
    f.finding = "the case does not fail under " + spec.backend + ": no pass to name";
    return f;
  }
  // In order, not by bisection: a later pass may undo what an earlier one broke, and on these
  // backends a run costs milliseconds. The first prefix that fails names the pass.
  for (size_t k = 0; k < f.passes.size(); ++k) {
    RunSpec prefix = spec;
    prefix.backend_options["passes"] = std::to_string(k + 1);
    f.prefixes.push_back(judge(prefix));
    if (same_failure_any_phase(f.whole, f.prefixes.back())) {
      f.culprit = k;
      f.finding = f.passes[k] + " (pass " + std::to_string(k + 1) + " of " + std::to_string(f.passes.size()) +
                  " of " + spec.backend + "): the graph is right until it runs, and fails as the case does after it";
      return f;
    }
  }
  const bool all_right = std::none_of(f.prefixes.begin(), f.prefixes.end(), [](const Verdict& v) { return v.failed(); });
  f.finding = all_right ? "after all " + std::to_string(f.passes.size()) + " of " + spec.backend +
                              "'s passes the graph runs right unoptimized: the failure is in its executor's run of it " +
                              "(the profiling executor's own passes, or its kernels)"
                        : "no prefix of " + spec.backend + "'s " + std::to_string(f.passes.size()) +
                              " passes fails as the case does, and some fail otherwise (--json lists each): "
                              "not split further";
  return f;
}

nlohmann::json pass_finding_to_json(const PassFinding& f) {
  nlohmann::json prefixes = nlohmann::json::array();
  for (const Verdict& v : f.prefixes) prefixes.push_back({{"status", status_name(v.status)}, {"signature", v.signature}});
  return {{"verdict", verdict_to_json(f.whole)},
          {"passes", f.passes},
          {"pass", f.culprit ? nlohmann::json(f.passes[*f.culprit]) : nlohmann::json(nullptr)},
          {"pass_index", f.culprit ? nlohmann::json(*f.culprit + 1) : nlohmann::json(nullptr)},
          {"prefixes", prefixes},
          {"runs", f.runs},
          {"finding", f.finding}};
}

}  // namespace tsrepro
