#pragma once
// Expectations several command-line test files share: a verdict's JSON, a clean bad-input
// error, an import that leaves nothing behind; and a case imported once for a whole suite.

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/files.h"
#include "tests/support/process.h"

namespace tsrepro_test {

// The verdict JSON of `run --json`, after checking the process ended with `exit_code`.
json expect_verdict(const Result& r, int exit_code, const std::string& status);

void expect_pass(const Result& r);

// Bad input: exit 2, nothing on stdout, exactly one stderr line "tsrepro: error: ..." that names
// what is at fault.
void expect_bad_input(const Result& r, const std::string& must_mention);

// `tsrepro import` that must fail as bad input and leave `dir` exactly as it was (no CASE, no
// ".CASE.tmp-*" sibling, no scratch directories: TMPDIR points at `dir`).
void expect_import_rejected(const TempDir& dir, const Args& args, const std::string& case_path,
                            const std::string& must_mention);

// The size of a short repro.py as cloc counts code: lines neither blank nor comments, and
// outside what grows with the case: the model (the Repro and Edited classes, or the GRAPH /
// EDITED IR and CASE_MODULE) and the INPUTS literals; and outside the comparison, difference(),
// tsrepro's rules the same in every repro.py (repro.cpp has them in tsrepro_compare.h). The rest is
// the harness.
size_t repro_py_code_lines(const std::string& source);
// The same for a short repro.cpp: its model and data are the kForward / kEditedForward (or
// kGraph / kEdited, kCaseModule) and kInputs literals.
size_t repro_cpp_code_lines(const std::string& source);

Args import_args(const std::string& source, const std::string& inputs, const std::string& out);

Args import_spec_args(const std::string& source, const std::string& spec, const std::string& out);

json read_case_json(const std::string& case_dir);

// The line of graph.ir text that holds the aten::round node ("" without one): where its origin
// comment is.
std::string round_line(const std::string& graph_ir);

// The one run_<timestamp>-pid_<pid> directory the TSREPRO_AFTER workflow made under `dir`.
std::string only_run_dir(const std::string& dir);

// Which directories `tsrepro run` judges again. Under a PyTorch 2 backend each run is a compile
// (10-40 s), and a checkpoint is one that minify's own runner already judged failing: there
// minified/ alone is run again, and every checkpoint's repro.py is still run.
enum class TsreproRuns { OnEveryDirectory, OnMinifiedOnly };

// Every directory `tsrepro minify` wrote under `out` (minified/ and each checkpoint) holds the
// failure as `tsrepro run` judges it under `backend`, and its short repro.py, run with stock
// PyTorch, reaches the same outcome: exit 1, the crash's own signal, or SIGALRM for a hang. Where
// repro.py is in the module form, its torch.ops calls are the graph's ops
// (tests/fixtures/scripted_ops.py). Returns how many directories are in the module form.
size_t expect_repro_py_agrees_on_every_checkpoint(const std::string& out, const std::string& backend,
                                                  const std::string& timeout, const std::string& scratch,
                                                  TsreproRuns runs = TsreproRuns::OnEveryDirectory);

// A case imported once and shared read-only by several runs (per test suite where a fixture holds
// it: under ctest, each test is its own process and imports it again).
struct SharedCase {
  std::unique_ptr<TempDir> dir;
  std::string path;
  Result import;

  void create(const Args& import_tail_without_output) {
    dir = std::make_unique<TempDir>();
    path = *dir / "case";
    Args args = import_tail_without_output;
    args.push_back("-o");
    args.push_back(path);
    import = tsrepro(args);
  }
  void destroy() { dir.reset(); }
  bool ok() const { return import.exited && import.exit_code == 0 && fs::exists(fs::path(path) / "case.json"); }
};

}  // namespace tsrepro_test
