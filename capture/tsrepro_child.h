#pragma once
// The capture's child processes: the tsrepro executable, run with this process's environment less
// the preload (a tsrepro process must not capture itself), into the run directory given. Torch-free.

#include <string>
#include <vector>

namespace tsrepro::capture {

struct ChildResult {
  bool started = false;  // false: the executable could not be run at all
  int exit_code = -1;    // -1: it did not exit (see signal)
  int signal = 0;
};

// $TSREPRO_BIN, else the tsrepro beside this library (PREFIX/lib -> PREFIX/bin, or the build
// tree), else PATH's.
std::string tsrepro_executable();

// Runs `tsrepro ARGS...` with TSREPRO_RUN_DIR=run and TSREPRO_CAPTURE_CHILD=1, its stdout and
// stderr appended to log_path, and waits for it.
ChildResult run_tsrepro(const std::vector<std::string>& args, const std::string& run, const std::string& log_path);

// The command as a shell would take it, for the log.
std::string quoted_command(const std::vector<std::string>& args);

}  // namespace tsrepro::capture
