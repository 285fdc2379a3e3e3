#pragma once
// The bodies of the `tsrepro` subcommands. main.cpp only parses flags into these structs.
// Each returns the process exit code; bad input throws tsrepro::UserError (exit 2).

#include <string>
#include <vector>

#include "runner/import.h"
#include "tsrepro/compare.h"

namespace tsrepro::cli {

int import_command(const ImportOptions& options, const std::string& output_dir);

struct RunOptions {
  std::string case_dir;
  std::string backend;
  std::string ref = "eager";
  std::vector<std::string> backend_opts;  // key=value
  std::string device = "cpu";
  double timeout = 300;
  bool fake_inputs = false;
  uint64_t seed = 0;
  bool backward = false;
  bool explain_backend = false;
  bool json = false;
  CompareOptions compare;
};

int run_command(const RunOptions& options);

}  // namespace tsrepro::cli
