// `tsrepro report`: ISSUE.md and the --archive bundle for a real bug of examples/bugs, minified
// with the real backend; bad input leaves nothing behind.

#include <gtest/gtest.h>

#include <set>

#include "tests/support/expectations.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/process.h"
#include "tests/support/real_bugs.h"

namespace {

using namespace tsrepro_test;

const std::string kBug = kSourceDir + "/examples/bugs/nnc_round_half_even";

// The bug, imported and minified once for the suite.
class Report : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    const std::string case_dir = *dir_ / "case";
    out_ = *dir_ / "out";
    ASSERT_EQ(tsrepro(import_args(kBug + "/model.pt", kBug + "/inputs.pt", case_dir)).exit_code, 0);
    const Result minify = tsrepro({"minify", case_dir, "--backend", "nnc", "-o", out_}, {dir_->path().string(), 600});
    ASSERT_EQ(minify.exit_code, 0) << minify.describe();
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static TempDir* dir_;
  static std::string out_;
};

TempDir* Report::dir_ = nullptr;
std::string Report::out_;

TEST_F(Report, WritesAnIssueWithTitleEnvironmentObservationAndTheShortRepro) {
  const Result r = tsrepro({"report", out_}, {dir_->path().string(), 600});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.out, out_ + "/ISSUE.md\n");
  const std::string issue = read_text(out_ + "/ISSUE.md");
  // The pass minify bisected it to (issue 54) ends the title.
  EXPECT_EQ(issue.rfind("# [JIT][NNC] aten::div + aten::round return wrong values under the TensorExpr fuser "
                        "(bisected to NNC's kernel of fusion group 1)\n",
                        0),
            0u)
      << issue;
  EXPECT_NE(issue.find("Bisected to: NNC's kernel of fusion group 1 (aten::div, aten::round)"), std::string::npos)
      << issue;
  for (const char* part : {"## Summary", "## Expected vs observed", "## Reproducer", "## Where the nodes come from",
                           "## Environment", "libtorch version (tsrepro): ", "OS: ", "CPU: ", "**Observed**",
                           "| output | dtype | max_abs | max_rel |", "tsrepro minified it from "})
    EXPECT_NE(issue.find(part), std::string::npos) << part << "\n" << issue;
  // The short repro.py, inline: the same text as the minified case's, bar the command line.
  const std::string block_start = "```python\n";
  const auto start = issue.find(block_start);
  ASSERT_NE(start, std::string::npos) << issue;
  const std::string inline_repro =
      issue.substr(start + block_start.size(), issue.find("\n```\n", start) - start - block_start.size() + 1);
  EXPECT_NE(inline_repro.find("torch._C._jit_override_can_fuse_on_cpu(True)"), std::string::npos) << inline_repro;
  EXPECT_LE(repro_py_code_lines(inline_repro), 50u) << inline_repro;
  // The graph drawn beside it, where Graphviz is installed (scripts/bootstrap.sh installs it).
  if (run_shell("command -v dot").exit_code == 0) {
    EXPECT_NE(issue.find("](graph.svg)"), std::string::npos) << issue;
    const std::string svg = read_text(out_ + "/graph.svg");
    EXPECT_EQ(svg.rfind("<svg", 0), 0u) << svg.substr(0, 200);
    EXPECT_NE(svg.find("aten::round"), std::string::npos);
  }
  if (system_python_has_torch()) {
    EXPECT_NE(issue.find("PyTorch version (Python): " + torch_line() + "."), std::string::npos) << issue;
    EXPECT_NE(issue.find("Its output on this machine (exit status 1)"), std::string::npos) << issue;
  }
}

TEST_F(Report, ArchiveHoldsTheIssueTheReproducersAndTheCaseAndReproducesUnpacked) {
  const Result r = tsrepro({"report", out_, "--archive"}, {dir_->path().string(), 600});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const std::string archive = out_ + "/tsrepro-report.tar.gz";
  EXPECT_EQ(r.out, out_ + "/ISSUE.md\n" + archive + "\n");
  const Result list = run_cmd("/usr/bin/tar", {"-tzf", archive});
  ASSERT_EQ(list.exit_code, 0) << list.describe();
  for (const char* file : {"ISSUE.md", "repro.py", "repro.cpp", "CMakeLists.txt", "case.json", "graph.ir", "inputs.pt"})
    EXPECT_NE(list.out.find("tsrepro-report/" + std::string(file) + "\n"), std::string::npos) << file << "\n"
                                                                                              << list.out;
  EXPECT_TRUE(temp_siblings(out_, "tsrepro-report.tar.gz").empty());

  const std::string unpacked = *dir_ / "unpacked";
  fs::create_directories(unpacked);
  ASSERT_EQ(run_cmd("/usr/bin/tar", {"-xzf", archive, "-C", unpacked}).exit_code, 0);
  EXPECT_EQ(read_text(unpacked + "/tsrepro-report/ISSUE.md"), read_text(out_ + "/ISSUE.md"));
  EXPECT_EQ(tsrepro({"run", unpacked + "/tsrepro-report", "--backend", "nnc"}).exit_code, 1);
  SKIP_WITHOUT_PYTHON_TORCH();
  EXPECT_EQ(run_cmd("/usr/bin/python3", {unpacked + "/tsrepro-report/repro.py"}, {"", 300}).exit_code, 1);
}

TEST(ReportCli, ACaseWithoutARecordedFailureIsBadInputAndWritesNothing) {
  TempDir tmp;
  const std::string case_dir = tmp / "case";
  ASSERT_EQ(tsrepro(import_args(kBug + "/model.pt", kBug + "/inputs.pt", case_dir)).exit_code, 0);
  const std::set<std::string> before = list_dir(case_dir);
  expect_bad_input(tsrepro({"report", case_dir, "--archive"}), case_dir + "/case.json: no recorded failure");
  EXPECT_EQ(list_dir(case_dir), before);
  expect_bad_input(tsrepro({"report", tmp / "nowhere"}), tmp / "nowhere");
}

// `report` judges the case again under the RunSpec case.json recorded, not under today's defaults:
// a failure seen with --tol 0.002 and --timeout 77 keeps both in ISSUE.md and repro.py.
TEST(ReportCli, KeepsTheSettingsTheFailureWasSeenUnder) {
  TempDir tmp;
  const std::string case_dir = tmp / "case";
  ASSERT_EQ(tsrepro(import_args(kBug + "/model.pt", kBug + "/inputs.pt", case_dir)).exit_code, 0);
  const Result run =
      tsrepro({"run", case_dir, "--backend", "nnc", "--tol", "0.002", "--timeout", "77", "--save-repro"});
  ASSERT_EQ(run.exit_code, 1) << run.describe();
  const Result r = tsrepro({"report", case_dir}, {tmp.path().string(), 600});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const std::string issue = read_text(case_dir + "/ISSUE.md");
  EXPECT_NE(issue.find("within tol=0.002 "), std::string::npos) << issue;
  EXPECT_NE(issue.find("signal.alarm(77)"), std::string::npos) << issue;
  EXPECT_NE(issue.find("torch.allclose(ref, res, 0.002, 0.002"), std::string::npos) << issue;
}

}  // namespace
