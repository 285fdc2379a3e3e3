#pragma once
// The flags `run` and `minify` share: the case and how it is evaluated (reference, backend,
// inputs, comparison), registered once for both.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "tsrepro/run_spec.h"

namespace tsrepro::cli {

struct EvaluationCliOptions {
  std::string case_dir;
  RunSpec run;                            // its backend_options come from backend_opts
  std::vector<std::string> backend_opts;  // --backend-opt key=value, as typed

  // The RunSpec with the --backend-opt pairs parsed in, validated (UserError otherwise).
  RunSpec validated_run_spec() const;
};

// The positional case and --backend, for the caller to require (minify --list-passes needs neither).
struct EvaluationFlags {
  CLI::Option* case_dir;
  CLI::Option* backend;
};

EvaluationFlags add_evaluation_flags(CLI::App& cmd, EvaluationCliOptions& options, const std::string& timeout_help,
                                     const std::string& fake_inputs_help);

}  // namespace tsrepro::cli
