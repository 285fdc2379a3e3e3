// verify_case_against_model: runner/import/verify.h says what is compared and why.

#include "runner/import/verify.h"

#include <filesystem>

#include "runner/formats/torch_save_reader.h"
#include "runner/exec/evaluate.h"
#include "runner/file_util.h"
#include "runner/worker/worker_client.h"
#include "tsrepro/backend.h"
#include "tsrepro/compare.h"

namespace tsrepro {
namespace {

namespace fs = std::filesystem;

std::string verdict_text(const Verdict& v) {
  std::string text = status_name(v.status);
  if (v.phase != Phase::None && v.status != Status::Pass) text += std::string(" (") + phase_name(v.phase) + ")";
  if (!v.signature.empty()) text += " " + v.signature;
  return text;
}

// The outputs a worker wrote (EvalRequest::outputs_path): the reference's and the backend's.
struct SideOutputs {
  std::vector<c10::IValue> reference, backend;
};

SideOutputs read_side_outputs(const fs::path& path) {
  SideOutputs out;
  if (!fs::exists(path)) return out;
  const c10::IValue both = read_torch_save(path.string());
  out.reference = both.toTupleRef().elements().at(0).toTupleRef().elements().vec();
  out.backend = both.toTupleRef().elements().at(1).toTupleRef().elements().vec();
  return out;
}

// "output 0.1: not allclose ...", or "" where the two sides' values agree.
std::string first_output_difference(const std::vector<c10::IValue>& model, const std::vector<c10::IValue>& case_side,
                                    CompareOptions options) {
  if (model.empty() || case_side.empty()) return "";  // a side that did not run: its verdict says so
  options.use_fp64 = false;
  const CompareResult result = compare_outputs(model, case_side, nullptr, options);
  const OutputDiff* first = result.first_failure();
  if (first == nullptr) return "";
  return "output " + first->path + ": model " + first->reason;
}

std::string difference_between(const Verdict& model, const Verdict& case_side, const SideOutputs& model_outputs,
                               const SideOutputs& case_outputs, const RunSpec& run) {
  if (model.status != case_side.status || model.phase != case_side.phase || model.signature != case_side.signature)
    return "the model gives " + verdict_text(model) + ", the case " + verdict_text(case_side);
  if (std::string why = first_output_difference(model_outputs.reference, case_outputs.reference, run.compare);
      !why.empty())
    return "the reference (" + run.ref + ") differs: " + why;
  if (std::string why = first_output_difference(model_outputs.backend, case_outputs.backend, run.compare);
      !why.empty())
    return "the backend differs: " + why;
  return "";
}

}  // namespace

std::vector<FidelityCheck> verify_case_against_model(const Case& c, const std::string& model_path,
                                                     const std::vector<std::string>& backends, const RunSpec& base,
                                                     RunnerProcess& runner) {
  const ScratchDirectory scratch = ScratchDirectory::temporary("tsrepro-verify");
  const fs::path case_dir = fs::path(scratch.path()) / "case";
  write_case(c, case_dir.string());
  std::vector<FidelityCheck> checks;
  for (size_t i = 0; i < backends.size(); ++i) {
    RunSpec run = base;
    run.backend = backends[i];
    run.validate();
    EvalRequest case_request = eval_request(c, run, case_dir.string());
    case_request.outputs_path = (fs::path(scratch.path()) / ("case_" + std::to_string(i) + ".pt")).string();
    EvalRequest model_request = case_request;
    model_request.module_path = model_path;
    model_request.outputs_path = (fs::path(scratch.path()) / ("model_" + std::to_string(i) + ".pt")).string();
    FidelityCheck check;
    check.backend = backends[i];
    check.case_only = !make_backend(run.backend, run.backend_options)->takes_saved_model_as_case();
    if (check.case_only) {
      check.case_side = runner.evaluate(case_request);
      check.model = check.case_side;
      if (check.case_side.status == Status::Invalid) check.difference = check.case_side.message;
      checks.push_back(check);
      continue;
    }
    check.model = runner.evaluate(model_request);
    check.case_side = runner.evaluate(case_request);
    check.difference = difference_between(check.model, check.case_side, read_side_outputs(model_request.outputs_path),
                                          read_side_outputs(case_request.outputs_path), run);
    checks.push_back(check);
  }
  return checks;
}

Verdict model_reference_verdict(const Case& c, const std::string& model_path, const RunSpec& base,
                                RunnerProcess& runner) {
  const ScratchDirectory scratch = ScratchDirectory::temporary("tsrepro-verify");
  const fs::path case_dir = fs::path(scratch.path()) / "case";
  write_case(c, case_dir.string());
  RunSpec run = base;
  run.backend = run.ref;
  EvalRequest request = eval_request(c, run, case_dir.string());
  request.module_path = model_path;
  return runner.evaluate(request);
}

}  // namespace tsrepro
