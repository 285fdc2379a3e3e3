#pragma once
// The bodies of the `tsrepro` subcommands. main.cpp only parses flags into these structs.
// Each returns the process exit code; bad input throws tsrepro::UserError (exit 2).

#include <cstdint>
#include <string>
#include <vector>

#include "runner/import.h"
#include "tsrepro/run_spec.h"

namespace tsrepro::cli {

int import_command(const ImportOptions& options, const std::string& output_dir);

// What `run` and `minify` share: the case and how it is evaluated (reference, backend, inputs,
// comparison). main.cpp registers these flags once for both.
struct EvaluationCliOptions {
  std::string case_dir;
  RunSpec run;                            // its backend_options come from backend_opts
  std::vector<std::string> backend_opts;  // --backend-opt key=value, as typed
  std::string command_line;               // as typed, for the reproducers' headers

  // The RunSpec with the --backend-opt pairs parsed in, validated (UserError otherwise).
  RunSpec validated_run_spec() const;
};

struct RunOptions : EvaluationCliOptions {
  bool explain_backend = false;
  bool json = false;
  bool save_repro = false;
};

int run_command(const RunOptions& options);

struct MinifyCliOptions : EvaluationCliOptions {
  std::string output_dir;
  bool accuracy = false;
  std::string check_str;
  std::string test_command;
  int jobs = 1;
  std::vector<std::string> passes;
  bool resume = false;
  bool skip_sanity = false;
  bool offload = false;
  bool json = false;
};

// Exit 0 when minified, 3 when the original case does not fail as required.
int minify_command(const MinifyCliOptions& options);
int list_passes_command();

struct AfterCliOptions {
  std::string case_dir;
  std::string backend;
  std::vector<std::string> backend_opts;  // key=value
  int id = 0;
};

// `tsrepro after`: one call of the case's graph through the TSREPRO_AFTER workflow, as the
// environment asks (what the Python shim runs). Exit 1 when it reported a failure.
int after_command(const AfterCliOptions& options);

struct ReportOptions {
  std::string dir;  // a case directory, or a minify output directory
  bool archive = false;
};

// `tsrepro report`: writes DIR/ISSUE.md (and with archive DIR/tsrepro-report.tar.gz) and prints
// the paths. Exit 0; a directory without a recorded failure is bad input (exit 2).
int report_command(const ReportOptions& options);

struct ExplainOptions {
  std::string case_dir;
  std::string backend;                    // empty: the reference alone
  std::vector<std::string> backend_opts;  // --backend-opt key=value
  bool json = false;
  bool fake_inputs = false;
  uint64_t seed = 0;
};

// `tsrepro explain`: the forward nodes with the autograd nodes that differentiate them, and the
// backward graph in the order the engine runs it. Exit 0.
int explain_command(const ExplainOptions& options);

}  // namespace tsrepro::cli
