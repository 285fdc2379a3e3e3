// RunSpec: its one validation and its one JSON form.

#include <torch/cuda.h>

#include "tsrepro/error.h"
#include "tsrepro/run_spec.h"

using nlohmann::json;

namespace tsrepro {
namespace {

void validate_device(const std::string& device) {
  if (device == "cpu") return;
  if (device != "cuda") throw UserError("--device " + device + ": expected cpu or cuda");
  if (!torch::cuda::is_available())
    throw UserError("--device cuda: this libtorch has no CUDA support or sees no GPU; use --device cpu");
}

}  // namespace

void RunSpec::validate() const {
  if (backend.empty()) throw UserError("--backend: no backend given");
  validate_device(device);
  check_backend(backend, backend_options);  // unknown backends and options: UserError naming them
  check_backend(ref, {});
  if (!(timeout_seconds > 0)) throw UserError("--timeout " + std::to_string(timeout_seconds) + ": must be positive");
  if (!(compile_timeout_seconds > 0))
    throw UserError("--compile-timeout " + std::to_string(compile_timeout_seconds) + ": must be positive");
  if (repeat < 1) throw UserError("--repeat " + std::to_string(repeat) + ": must be at least 1");
  if (min_fails < 1 || min_fails > repeat)
    throw UserError("--min-fails " + std::to_string(min_fails) + ": must be between 1 and --repeat (" +
                    std::to_string(repeat) + ")");
}

// The JSON forms: one key per field, named as the field; a missing key keeps the default.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CompareOptions, tol, cos_similarity, equal_nan, use_fp64, exact_dtype,
                                                ignore_non_fp)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RunSpec, ref, backend, backend_options, device, compare, backward,
                                                fake_inputs, seed, timeout_seconds, compile_timeout_seconds, repeat,
                                                min_fails)

json run_spec_to_json(const RunSpec& spec) { return spec; }
RunSpec run_spec_from_json(const json& j) { return j.get<RunSpec>(); }

BackendOptions parse_backend_options(const std::vector<std::string>& pairs) {
  BackendOptions options;
  for (const std::string& pair : pairs) {
    const auto eq = pair.find('=');
    if (eq == std::string::npos || eq == 0) throw UserError("--backend-opt " + pair + ": write key=value");
    options[pair.substr(0, eq)] = pair.substr(eq + 1);
  }
  return options;
}

}  // namespace tsrepro
