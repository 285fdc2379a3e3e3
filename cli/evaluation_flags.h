#pragma once
// The flags `run` and `minify` share: the case and how it is evaluated (reference, backend,
// inputs, comparison), registered once for both.

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "tsrepro/case.h"
#include "tsrepro/run_spec.h"

namespace tsrepro::cli {

// One flag of a RunSpec field: whether it was given decides where the field's value comes from.
struct RunSpecFlag {
  const CLI::Option* option;
  void (*copy)(RunSpec& to, const RunSpec& from);  // the field this flag sets
  std::string (*text)(const RunSpec& spec);        // the field's value, as the flag takes it
};

struct EvaluationCliOptions {
  std::string case_dir;
  RunSpec run;                            // its backend_options come from backend_opts
  std::vector<std::string> backend_opts;  // --backend-opt key=value, as typed
  std::vector<RunSpecFlag> flags;         // filled by add_evaluation_flags

  // The RunSpec with the --backend-opt pairs parsed in, validated (UserError otherwise).
  RunSpec validated_run_spec() const;

  // How to judge a case that records how it was judged (case.json's expected_failure.run):
  // that RunSpec, with the field of each flag given on the command line taken from the flag, and
  // one line in `overrides` ("--tol 0.001 (recorded: 0.0001)") for each that changes it. A
  // backend given anew drops the recorded backend's options unless --backend-opt is given too.
  // A case that records none is judged by the flags and their defaults, --backend required.
  // Validated (UserError otherwise).
  RunSpec resolved_run_spec(const std::optional<RunSpec>& recorded, std::vector<std::string>& overrides) const;
};

// How case `c` records itself judged: its expected failure's RunSpec, if any.
std::optional<RunSpec> recorded_run(const Case& c);

// The positional case and --backend, for the caller to require (minify --list-passes needs neither).
struct EvaluationFlags {
  CLI::Option* case_dir;
  CLI::Option* backend;
};

EvaluationFlags add_evaluation_flags(CLI::App& cmd, EvaluationCliOptions& options, const std::string& timeout_help,
                                     const std::string& fake_inputs_help);

}  // namespace tsrepro::cli
