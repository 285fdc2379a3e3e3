#pragma once
// Running programs from the tests: `tsrepro` and other executables as subprocesses (own process
// group, watchdog, captured stdout/stderr, a check for workers left behind), and shell commands.

#include <sys/types.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/paths.h"

namespace tsrepro_test {

using json = nlohmann::json;
using Args = std::vector<std::string>;

struct Result {
  Args args;
  bool exited = false;  // WIFEXITED
  int exit_code = -1;   // WEXITSTATUS when exited
  int term_signal = 0;  // WTERMSIG when killed by a signal
  bool watchdog_fired = false;
  size_t stray_processes = 0;  // live processes left in the child's process group after it ended
  // Processes of its group, zombies included, the moment it ended: what it started and did not reap.
  size_t unreaped_at_exit = 0;
  std::string out, err;
  double seconds = 0;

  std::string describe() const;

  json stdout_json() const { return json::parse(out); }  // throws unless stdout is exactly one JSON value
};

struct RunOptions {
  // A constructor, not an aggregate: callers write {tmpdir}, {tmpdir, watchdog} or all three.
  RunOptions(std::string tmpdir = "", double watchdog_s = 120, std::vector<std::string> env = {})
      : tmpdir(std::move(tmpdir)), watchdog_s(watchdog_s), env(std::move(env)) {}
  std::string tmpdir;            // TMPDIR for the child ("" = inherit)
  double watchdog_s;             // SIGKILL the child's process group after this long
  std::vector<std::string> env;  // extra KEY=VALUE for the child (TSREPRO_* are not inherited)
};

// Runs `program` with `tail` as its arguments, without the TSREPRO_* variables of this process.
Result run_cmd(const std::string& program, const Args& tail, const RunOptions& options = {});
// This build's tsrepro.
Result tsrepro(const Args& args, const RunOptions& options = {});
// Several tsrepro commands concurrently (a few at a time); results in order.
std::vector<Result> tsrepro_all(const std::vector<Args>& commands, const RunOptions& options = {});

// Configures (Release; this build's libtorch) and builds a CMake project. Returns the failing
// step's result, or the build's.
Result cmake_build(const std::string& source, const std::string& build, std::vector<std::string> extra = {});

// A shell command line (popen), stdout and stderr together.
struct ShellResult {
  int exit_code = -1;
  std::string output;
};
ShellResult run_shell(const std::string& command);
// '...' for the shell (the paths the tests make hold no quotes).
std::string shell_quoted(const std::string& text);

// Whether kPython can import torch. Tests that need it skip themselves without it, saying why;
// scripts/test.sh (and so CI, whose bootstrap installs python3-torch) sets
// TSREPRO_TEST_REQUIRE_PYTHON_TORCH=1, which turns that skip into a failure.
bool system_python_has_torch();
bool python_torch_required();
#define SKIP_WITHOUT_PYTHON_TORCH()                                                                              \
  if (!::tsrepro_test::system_python_has_torch()) {                                                              \
    if (::tsrepro_test::python_torch_required())                                                                 \
      FAIL() << ::tsrepro_test::kPython << " cannot import torch, and TSREPRO_TEST_REQUIRE_PYTHON_TORCH is set"; \
    GTEST_SKIP() << ::tsrepro_test::kPython << " cannot import torch";                                           \
  }

// A test whose subject is tsrepro's own logic (the sweep's executors and resume, the minifier's
// search over injected faults, the readers' limits), which libtorch only carries: CI runs it on
// one libtorch line. scripts/test-debian13.sh sets TSREPRO_TEST_SKIP_LIBTORCH_INDEPENDENT for the
// second line, to keep CI inside its time; unset it there to run everything.
bool skip_libtorch_independent_tests();
#define LIBTORCH_INDEPENDENT_TEST()                                                            \
  if (::tsrepro_test::skip_libtorch_independent_tests()) {                                     \
    GTEST_SKIP() << "its subject does not depend on libtorch: run on the other libtorch line " \
                    "(TSREPRO_TEST_SKIP_LIBTORCH_INDEPENDENT is set)";                         \
  }

}  // namespace tsrepro_test
