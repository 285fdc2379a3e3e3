#pragma once
// One candidate, judged: run the reference and the tested backend on the same inputs and say
// whether, and how, the tested backend fails. This runs inside a tsrepro-runner worker; the
// parent talks to it through runner/worker/worker_client.h.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/case/inputs.h"
#include "tsrepro/backend.h"
#include "tsrepro/compare.h"
#include "tsrepro/run_spec.h"
#include "tsrepro/verdict.h"

namespace tsrepro {

struct EvalRequest {
  std::string graph_ir;
  std::vector<InputSpec> specs;
  std::string inputs_path;  // inputs.pt with real values; empty (or run.fake_inputs): fake ones
  // Or one file per graph input (torch::pickle_save of a 1-tuple), content-addressed: a file's
  // contents never change, so a worker reads each once and keeps it while requests use it.
  // input_file_element(FILE, I) names element I of the tuple in FILE, a case's inputs.pt: the
  // values a minify started from, read by each worker once (kept for its life) instead of written
  // again.
  std::vector<std::string> input_files;
  RunSpec run;
  bool explain = false;  // return the graph the backend executed
  // Set: judge the saved model at this path (torch.jit.load) instead of graph_ir, through each
  // side's public calls on the module (Backend::prepare_module), with the inputs that are not
  // lifted (forward's arguments): what `import --verify` compares the case with.
  std::string module_path;
  // Set: both sides' outputs go to this file, torch::pickle_save of (reference outputs, backend
  // outputs), each a tuple, as far as they were computed.
  std::string outputs_path;
};

// "FILE#I": element I of the tuple of values in the torch.save file FILE, as an entry of
// EvalRequest::input_files (Evaluator::read_input_file reads it back).
inline std::string input_file_element(const std::string& file, size_t index) {
  return file + "#" + std::to_string(index);
}

// The request that judges case `c` under `run`: its graph's IR and input specs, and, where the
// case has real values and `run` does not ask for fake ones, `case_dir`'s inputs.pt (the case as
// written there). The one way a request is made from a case.
EvalRequest eval_request(const Case& c, const RunSpec& run, const std::string& case_dir);

nlohmann::json request_to_json(const EvalRequest& request);
EvalRequest request_from_json(const nlohmann::json& j);

// Where the evaluation is, announced before each step so that a parent can tell which side
// crashed or hung: Reference, Fp64, Compile, Run, Backward.
using PhaseCallback = std::function<void(Phase phase)>;

// Inside a catch block: the exception verdict the runner would give it (Compile, Run), with the
// same type, message unwrapping and signature.
Verdict verdict_for_current_exception(Phase phase);

// A verdict's OutputDiff path for input i's gradient is kGradientPath + "<i>" (after the outputs'
// own paths): one comparison covers both, and the phase and attribution tell them apart by it.
inline constexpr char kGradientPath[] = "grad.";

class Evaluator {
 public:
  // Throws UserError for a request that cannot be run at all (bad backend, unreadable inputs).
  Verdict evaluate(const EvalRequest& request, const PhaseCallback& on_phase);
  // The same with the inputs at hand (request's own inputs_path and input_files unused): for a
  // caller that runs candidates in its own process, such as tsrepro explain.
  Verdict evaluate_values(const EvalRequest& request, std::vector<c10::IValue> inputs, const PhaseCallback& on_phase);
  // The passes request.run's backend applies to the request's graph, in order, each application
  // once (Backend::pass_applications): what `tsrepro explain --passes` stops between.
  std::vector<std::string> pass_applications(const EvalRequest& request, std::vector<c10::IValue> inputs);
  // The saved model of request.module_path judged on the inputs that are not lifted.
  Verdict evaluate_module(const EvalRequest& request, std::vector<c10::IValue> inputs, const PhaseCallback& on_phase);

 private:
  std::vector<c10::IValue> load_inputs(const EvalRequest& request);
  c10::IValue read_input_file(const std::string& entry);            // one input_files entry
  std::map<std::string, std::vector<c10::IValue>> inputs_by_path_;  // a worker reads each file once
  std::map<std::string, c10::IValue> values_by_file_;               // input_files of the last request
  std::map<std::string, std::vector<c10::IValue>> archives_;        // FILE of "FILE#I" entries
};

}  // namespace tsrepro
