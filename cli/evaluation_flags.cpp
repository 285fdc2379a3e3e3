// The flags `run` and `minify` share (cli/evaluation_flags.h), and --load-library.

#include "cli/evaluation_flags.h"

#include <charconv>
#include <iostream>
#include <sstream>

#include "cli/command.h"
#include "runner/file_util.h"
#include "tsrepro/backend.h"
#include "tsrepro/error.h"

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

std::string bool_text(bool value) { return value ? "true" : "false"; }

std::string number_text(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

std::string options_text(const BackendOptions& options) {
  std::string text;
  for (const auto& [key, value] : options) text += (text.empty() ? "" : ",") + key + "=" + value;
  return text.empty() ? "none" : text;
}

// Each flag and the RunSpec field it sets: one line each, so that a new field is one line here too.
#define TSREPRO_FIELD(field, text_of) \
  [](RunSpec& to, const RunSpec& from) { to.field = from.field; }, [](const RunSpec& s) { return text_of(s.field); }

std::string plain_text(const std::string& text) { return text; }
std::string whole_text(uint64_t value) { return std::to_string(value); }

void add_compare_flags(CLI::App& cmd, EvaluationCliOptions& o) {
  CompareOptions& compare = o.run.compare;
  o.flags.push_back(
      {cmd.add_option("--tol", compare.tol, "tolerance of the same()-style comparison")->capture_default_str(),
       TSREPRO_FIELD(compare.tol, number_text)});
  o.flags.push_back({cmd.add_flag("--cos", compare.cos_similarity, "compare by cosine similarity (>= 0.99)"),
                     TSREPRO_FIELD(compare.cos_similarity, bool_text)});
  o.flags.push_back({cmd.add_flag("--equal-nan,!--no-equal-nan", compare.equal_nan,
                                  "NaN equals NaN (default, as PyTorch's minifier compares)"),
                     TSREPRO_FIELD(compare.equal_nan, bool_text)});
  o.flags.push_back(
      {cmd.add_flag("!--no-fp64", compare.use_fp64,
                    "judge by allclose alone: no fp64 reference run excuses a result (same_two_models_use_fp64=False)"),
       TSREPRO_FIELD(compare.use_fp64, bool_text)});
  o.flags.push_back(
      {cmd.add_flag("!--no-exact-dtype", compare.exact_dtype, "allow the backend's outputs to differ in dtype"),
       TSREPRO_FIELD(compare.exact_dtype, bool_text)});
  o.flags.push_back({cmd.add_flag("--ignore-non-fp", compare.ignore_non_fp, "compare floating-point outputs only"),
                     TSREPRO_FIELD(compare.ignore_non_fp, bool_text)});
}

}  // namespace

std::optional<RunSpec> recorded_run(const Case& c) {
  return c.expected ? std::optional<RunSpec>(c.expected->run) : std::nullopt;
}

RunSpec EvaluationCliOptions::validated_run_spec() const {
  RunSpec spec = run;
  spec.backend_options = parse_backend_options(backend_opts);
  spec.validate();
  return spec;
}

RunSpec EvaluationCliOptions::resolved_run_spec(const std::optional<RunSpec>& recorded,
                                                std::vector<std::string>& overrides) const {
  if (!recorded) {
    if (run.backend.empty())
      throw UserError("--backend: required, since " + case_dir + "/case.json records no run to judge it by");
    return validated_run_spec();
  }
  RunSpec given = run;
  given.backend_options = parse_backend_options(backend_opts);
  RunSpec spec = *recorded;
  bool backend_given = false, options_given = false;
  for (const RunSpecFlag& flag : flags) {
    if (flag.option->count() == 0) continue;
    backend_given |= flag.option->get_name() == "--backend";
    options_given |= flag.option->get_name() == "--backend-opt";
    if (flag.text(spec) != flag.text(given))
      overrides.push_back(flag.option->get_name() + " " + flag.text(given) + " (recorded: " + flag.text(spec) + ")");
    flag.copy(spec, given);
  }
  // Options belong to the backend they were given for.
  if (backend_given && !options_given && spec.backend != recorded->backend) spec.backend_options.clear();
  spec.validate();
  return spec;
}

EvaluationFlags add_evaluation_flags(CLI::App& cmd, EvaluationCliOptions& o, const std::string& timeout_help,
                                     const std::string& fake_inputs_help) {
  EvaluationFlags flags;
  flags.case_dir = cmd.add_option("case", o.case_dir, "case directory (from tsrepro import)");
  flags.backend = cmd.add_option(
      "--backend", o.run.backend,
      "tested backend: " + known_backends_text() + " (default: the one the case's case.json records it failing under)");
  o.flags.push_back({flags.backend, TSREPRO_FIELD(backend, plain_text)});
  o.flags.push_back(
      {cmd.add_option("--ref", o.run.ref, "reference backend")->capture_default_str(), TSREPRO_FIELD(ref, plain_text)});
  o.flags.push_back({cmd.add_option("--backend-opt", o.backend_opts, "backend option key=value (repeatable)"),
                     TSREPRO_FIELD(backend_options, options_text)});
  o.flags.push_back({cmd.add_option("--device", o.run.device, "cpu or cuda")->capture_default_str(),
                     TSREPRO_FIELD(device, plain_text)});
  o.flags.push_back({cmd.add_option("--timeout", o.run.timeout_seconds, timeout_help)
                         ->capture_default_str()
                         ->check(CLI::PositiveNumber),
                     TSREPRO_FIELD(timeout_seconds, number_text)});
  o.flags.push_back({cmd.add_option("--compile-timeout", o.run.compile_timeout_seconds,
                                    "seconds the tested backend may take to compile (an Inductor compile) before it "
                                    "counts as hung (timeout:compile); --timeout bounds the rest")
                         ->capture_default_str()
                         ->check(CLI::PositiveNumber),
                     TSREPRO_FIELD(compile_timeout_seconds, number_text)});
  o.flags.push_back(
      {cmd.add_flag("--fake-inputs", o.run.fake_inputs, fake_inputs_help), TSREPRO_FIELD(fake_inputs, bool_text)});
  o.flags.push_back({cmd.add_option("--seed", o.run.seed, "seed of the fake inputs")
                         ->capture_default_str()
                         ->check(kWholeNumberFitsUint64),
                     TSREPRO_FIELD(seed, whole_text)});
  o.flags.push_back({cmd.add_flag("--backward", o.run.backward, "also compare input gradients of a scalar loss"),
                     TSREPRO_FIELD(backward, bool_text)});
  o.flags.push_back(
      {cmd.add_option("--repeat", o.run.repeat, "runs per judgement: a nondeterministic failure fails some of them")
           ->capture_default_str(),
       TSREPRO_FIELD(repeat, number_text)});
  o.flags.push_back({cmd.add_option("--min-fails", o.run.min_fails,
                                    "of --repeat runs, how many must fail for the case to count as failing")
                         ->capture_default_str(),
                     TSREPRO_FIELD(min_fails, number_text)});
  add_compare_flags(cmd, o);
  return flags;
}

void add_load_library_flag(CLI::App& cmd, std::vector<std::string>& libraries) {
  cmd.add_option("--load-library", libraries,
                 "a library of custom operators (torch.ops.load_library), e.g. torchvision's _C.so; repeatable, "
                 "or TSREPRO_LOAD_LIBRARY=PATH[:PATH...]");
}

void add_json_result_flags(CLI::App& cmd, JsonResultFlags& flags, const std::string& what) {
  cmd.add_flag("--json", flags.print, "print " + what + " as one JSON object");
  cmd.add_option("--json-file", flags.file, "write " + what + " as one JSON object to this file (atomically)");
}

void JsonResultFlags::give(const std::string& result_json) const {
  if (!file.empty()) write_file_atomically(file, result_json + "\n");
  if (print) std::cout << result_json << "\n";
}

}  // namespace tsrepro::cli

#undef TSREPRO_FIELD
