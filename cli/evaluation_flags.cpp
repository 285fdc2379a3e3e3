// The flags `run` and `minify` share (cli/evaluation_flags.h), and --load-library.

#include "cli/evaluation_flags.h"

#include <charconv>

#include "cli/command.h"
#include "tsrepro/backend.h"

namespace tsrepro::cli {
namespace {

// CLI11 saturates a number too wide for its variable: a seed that does not fit is refused instead.
const CLI::Validator kWholeNumberFitsUint64(
    [](std::string& text) {
      uint64_t value = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
      return error == std::errc() && end == text.data() + text.size() ? std::string()
                                                                      : "not a whole number from 0 to 2^64-1: " + text;
    },
    "UINT64");

void add_compare_flags(CLI::App& cmd, CompareOptions& compare) {
  cmd.add_option("--tol", compare.tol, "tolerance of the same()-style comparison")->capture_default_str();
  cmd.add_flag("--cos", compare.cos_similarity, "compare by cosine similarity (>= 0.99)");
  cmd.add_flag("--equal-nan,!--no-equal-nan", compare.equal_nan,
               "NaN equals NaN (default, as PyTorch's minifier compares)");
  cmd.add_flag("!--no-fp64", compare.use_fp64,
               "judge by allclose alone: no fp64 reference run excuses a result (same_two_models_use_fp64=False)");
  cmd.add_flag("!--no-exact-dtype", compare.exact_dtype, "allow the backend's outputs to differ in dtype");
  cmd.add_flag("--ignore-non-fp", compare.ignore_non_fp, "compare floating-point outputs only");
}

}  // namespace

RunSpec EvaluationCliOptions::validated_run_spec() const {
  RunSpec spec = run;
  spec.backend_options = parse_backend_options(backend_opts);
  spec.validate();
  return spec;
}

EvaluationFlags add_evaluation_flags(CLI::App& cmd, EvaluationCliOptions& o, const std::string& timeout_help,
                                     const std::string& fake_inputs_help) {
  EvaluationFlags flags;
  flags.case_dir = cmd.add_option("case", o.case_dir, "case directory (from tsrepro import)");
  flags.backend = cmd.add_option("--backend", o.run.backend, "tested backend: " + known_backends_text());
  cmd.add_option("--ref", o.run.ref, "reference backend")->capture_default_str();
  cmd.add_option("--backend-opt", o.backend_opts, "backend option key=value (repeatable)");
  cmd.add_option("--device", o.run.device, "cpu or cuda")->capture_default_str();
  cmd.add_option("--timeout", o.run.timeout_seconds, timeout_help)->capture_default_str()->check(CLI::PositiveNumber);
  cmd.add_flag("--fake-inputs", o.run.fake_inputs, fake_inputs_help);
  cmd.add_option("--seed", o.run.seed, "seed of the fake inputs")->capture_default_str()->check(kWholeNumberFitsUint64);
  cmd.add_flag("--backward", o.run.backward, "also compare input gradients of a scalar loss");
  cmd.add_option("--repeat", o.run.repeat, "runs per judgement: a nondeterministic failure fails some of them")
      ->capture_default_str();
  cmd.add_option("--min-fails", o.run.min_fails,
                 "of --repeat runs, how many must fail for the case to count as failing")
      ->capture_default_str();
  add_compare_flags(cmd, o.run.compare);
  return flags;
}

void add_load_library_flag(CLI::App& cmd, std::vector<std::string>& libraries) {
  cmd.add_option("--load-library", libraries,
                 "a library of custom operators (torch.ops.load_library), e.g. torchvision's _C.so; repeatable, "
                 "or TSREPRO_LOAD_LIBRARY=PATH[:PATH...]");
}

}  // namespace tsrepro::cli
