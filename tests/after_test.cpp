// The TSREPRO_AFTER / TSREPRO_LEVEL workflow end to end: the example programs of
// examples/after_cpp (built in-tree as after_demo) and examples/after_py (through the Python
// shim, python/tsrepro) run as subprocesses with the variables set, and what they leave in
// TSREPRO_DIR is checked: case directories, repro.py exit codes, minifier output.

#include <future>
#include <regex>

#include <gtest/gtest.h>

#include "tests/support/expectations.h"

namespace {

using namespace tsrepro_test;

const std::string kAfterDemo = std::string(TSREPRO_BINARY_DIR) + "/after_demo";
const std::string kAfterPy = kSourceDir + "/examples/after_py/after_demo.py";
const std::string kChain = kModels + "chain100_scripted.pt";
const std::string kChainInputs = kModels + "chain100_scripted.inputs.pt";
const std::string kRoundBug = kSourceDir + "/examples/bugs/nnc_round_half_even/";

// The environment of a workflow run writing into `dir`.
std::vector<std::string> workflow_env(const std::string& dir, const std::string& stage, int level) {
  return {"TSREPRO_AFTER=" + stage, "TSREPRO_LEVEL=" + std::to_string(level), "TSREPRO_DIR=" + dir,
          "TSREPRO_BIN=" + kTsrepro};
}

// The script with the build tree's package importable (build/python), as a user's PYTHONPATH
// (or an install) makes it.
Result run_python(const std::string& script, const Args& args, RunOptions options) {
  Args all = {script};
  all.insert(all.end(), args.begin(), args.end());
  options.env.push_back("PYTHONPATH=" + kBinaryDir + "/python");
  return run_cmd(kPython, all, options);
}

void expect_repro_py_reproduces(const std::string& dir) {
  SKIP_WITHOUT_PYTHON_TORCH();
  const Result py = run_cmd("/usr/bin/python3", {dir + "/repro.py"}, {"", 300});
  EXPECT_EQ(py.exit_code, 1) << py.describe();
}

TEST(AfterCpp, WithoutVariablesItOnlyRunsAndWritesNothing) {
  TempDir tmp;
  const Result ok = run_cmd(kAfterDemo, {kChain, kChainInputs, "nnc", "2"}, {"", 300, {"TSREPRO_DIR=" + tmp / "out"}});
  EXPECT_EQ(ok.exit_code, 0) << ok.describe();
  EXPECT_NE(ok.out.find("call 1: first output sum"), std::string::npos) << ok.describe();
  const Result failing = run_cmd(kAfterDemo, {kChain, kChainInputs, "inject:runtime-error@aten::relu"},
                                 {"", 300, {"TSREPRO_DIR=" + tmp / "out"}});
  EXPECT_EQ(failing.exit_code, 1) << failing.describe();
  EXPECT_NE(failing.err.find("tsrepro injected runtime error"), std::string::npos) << failing.describe();
  EXPECT_FALSE(fs::exists(tmp / "out"));
}

TEST(AfterCpp, BadLevelIsAClearError) {
  TempDir tmp;
  const Result level = run_cmd(kAfterDemo, {kChain, kChainInputs, "nnc"},
                               {"", 120, {"TSREPRO_AFTER=graph", "TSREPRO_LEVEL=7", "TSREPRO_DIR=" + tmp / "out"}});
  EXPECT_EQ(level.exit_code, 1) << level.describe();
  EXPECT_NE(level.err.find("TSREPRO_LEVEL=7: expected 1, 2, 3 or 4"), std::string::npos) << level.describe();
  const Result stage = run_cmd(kAfterDemo, {kChain, kChainInputs, "nnc"}, {"", 120, {"TSREPRO_AFTER=aot"}});
  EXPECT_EQ(stage.exit_code, 1) << stage.describe();
  EXPECT_NE(stage.err.find("TSREPRO_AFTER=aot: expected graph or fusion"), std::string::npos) << stage.describe();
  EXPECT_FALSE(fs::exists(tmp / "out"));
}

TEST(AfterCpp, LevelOneWritesTheCaseAndAReproPyAndTheProgramStillFails) {
  TempDir tmp;
  const std::string backend = "inject:runtime-error@aten::relu";
  const Result r =
      run_cmd(kAfterDemo, {kChain, kChainInputs, backend}, {"", 300, workflow_env(tmp / "out", "graph", 1)});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_NE(r.err.find("after_demo: the compiled model failed: tsrepro injected runtime error"), std::string::npos)
      << r.describe();
  const std::string run = only_run_dir(tmp / "out");
  EXPECT_EQ(list_dir(run), (std::set<std::string>{"graph_1"}));
  const std::string case_dir = run + "/graph_1";
  EXPECT_EQ(list_dir(case_dir),
            (std::set<std::string>{"case.json", "graph.ir", "inputs.pt", "repro.py", "repro.cpp", "CMakeLists.txt"}));
  const json meta = read_case_json(case_dir);
  EXPECT_EQ(meta["expected_failure"]["status"], "exception") << meta.dump(2);
  EXPECT_EQ(meta["provenance"]["source"], "TSREPRO_AFTER");
  EXPECT_NE(r.err.find("wrote " + case_dir), std::string::npos) << r.describe();
  EXPECT_NE(r.err.find("minify:"), std::string::npos) << "the log names the next command\n" << r.describe();
  // Real values were saved: the case fails on its own as the program did.
  const Result again = tsrepro({"run", case_dir, "--backend", backend});
  EXPECT_EQ(again.exit_code, 1) << again.describe();
  expect_repro_py_reproduces(case_dir);
}

TEST(AfterCpp, LevelTwoWritesAMinifierLauncherThatWorks) {
  TempDir tmp;
  const std::string backend = "inject:compile-error@aten::relu";
  const Result r =
      run_cmd(kAfterDemo, {kChain, kChainInputs, backend}, {"", 300, workflow_env(tmp / "out", "graph", 2)});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  const std::string case_dir = only_run_dir(tmp / "out") + "/graph_1";
  const std::string launcher = read_text(case_dir + "/minify.sh");
  EXPECT_NE(launcher.find("'minify' '" + case_dir + "' '--backend' '" + backend + "'"), std::string::npos) << launcher;
  const Result minified = run_cmd("/bin/sh", {case_dir + "/minify.sh"}, {"", 600});
  EXPECT_EQ(minified.exit_code, 0) << minified.describe();
  const std::string graph = read_text(case_dir + "-minified/minified/graph.ir");
  EXPECT_NE(graph.find("aten::relu"), std::string::npos) << graph;
}

TEST(AfterCpp, LevelThreeWithASegfaultLeavesACaseThatTsreproRunReproduces) {
  TempDir tmp;
  const std::string backend = "inject:segfault@aten::relu";
  const Result r =
      run_cmd(kAfterDemo, {kChain, kChainInputs, backend}, {"", 300, workflow_env(tmp / "out", "graph", 3)});
  EXPECT_FALSE(r.exited) << r.describe();
  EXPECT_EQ(r.term_signal, SIGSEGV) << "the program's own crash still happens\n" << r.describe();
  const std::string case_dir = only_run_dir(tmp / "out") + "/graph_1";
  EXPECT_TRUE(fs::exists(case_dir + "/minify.sh"));
  EXPECT_NE(r.err.find("tsrepro run " + case_dir), std::string::npos) << r.describe();
  const json v = expect_verdict(tsrepro({"run", case_dir, "--backend", backend, "--json"}), 1, "crash");
  EXPECT_EQ(v.value("signature", ""), "crash:SIGSEGV");
}

TEST(AfterCpp, LevelFourMinifiesAnAccuracyFailureToAReproThatExitsOne) {
  TempDir tmp;
  const Result r = run_cmd(kAfterDemo, {kChain, kChainInputs, "inject:accuracy@aten::relu", "1"},
                           {"", 600, workflow_env(tmp / "out", "graph", 4)});
  EXPECT_EQ(r.exit_code, 0) << "wrong numbers do not raise\n" << r.describe();
  const std::string run = only_run_dir(tmp / "out");
  EXPECT_EQ(list_dir(run), (std::set<std::string>{"graph_1", "graph_1-minified", "graph_1-minified.log"}));
  EXPECT_EQ(read_case_json(run + "/graph_1")["expected_failure"]["status"], "accuracy");
  const std::string minified = run + "/graph_1-minified/minified";
  EXPECT_NE(read_text(minified + "/graph.ir").find("aten::relu"), std::string::npos);
  expect_repro_py_reproduces(minified);
}

// The fusion stage compares every group with the interpreter at every level; the level decides
// what is written for the failing one.
class AfterCppFusion : public ::testing::TestWithParam<int> {};

TEST_P(AfterCppFusion, FindsTheFusionGroupWithTheRealNncRoundingBug) {
  const int level = GetParam();
  TempDir tmp;
  const Result r = run_cmd(kAfterDemo, {kRoundBug + "model.pt", kRoundBug + "inputs.pt", "nnc", "2"},
                           {"", 600, workflow_env(tmp / "out", "fusion", level)});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.err.find("fusion group(s) formed by nnc"), std::string::npos) << r.describe();
  const std::string run = only_run_dir(tmp / "out");
  // Only the failing group stays (at level 3+ the others were written before their check, then swept).
  std::set<std::string> cases;
  for (const std::string& name : list_dir(run))
    if (name.find("-minified") == std::string::npos) cases.insert(name);
  ASSERT_EQ(cases.size(), 1u) << join(list_dir(run));
  const std::string group = run + "/" + *cases.begin();
  EXPECT_EQ(cases.begin()->rfind("fusion_1_group_", 0), 0u) << *cases.begin();
  EXPECT_NE(read_text(group + "/graph.ir").find("aten::round"), std::string::npos);
  // The group's nodes say where the model made them (the running program's graph has their
  // source ranges), before and after minifying.
  EXPECT_NE(round_line(read_text(group + "/graph.ir")).find("nnc_round_half_even/make_case.py:"), std::string::npos)
      << read_text(group + "/graph.ir");
  EXPECT_EQ(read_case_json(group)["expected_failure"]["status"], "accuracy");
  EXPECT_EQ(fs::exists(group + "/minify.sh"), level >= 2);
  EXPECT_EQ(fs::exists(group + "-minified"), level >= 3);
  if (level == 1) expect_repro_py_reproduces(group);
  if (level >= 3) {
    const std::string minified = group + "-minified/minified";
    EXPECT_NE(read_text(minified + "/graph.ir").find("aten::round"), std::string::npos);
    EXPECT_NE(round_line(read_text(minified + "/graph.ir")).find("nnc_round_half_even/make_case.py:"),
              std::string::npos);
    expect_repro_py_reproduces(minified);
  }
}

INSTANTIATE_TEST_SUITE_P(Levels, AfterCppFusion, ::testing::Values(1, 2, 3, 4));

TEST(AfterCpp, FusionStageOnAHealthyModelWritesNothing) {
  TempDir tmp;
  const Result r =
      run_cmd(kAfterDemo,
              {kModels + "elementwise_chain_scripted.pt", kModels + "elementwise_chain_scripted.inputs.pt", "nnc", "2"},
              {"", 300, workflow_env(tmp / "out", "fusion", 4)});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.err.find("agrees with the interpreter"), std::string::npos) << r.describe();
  EXPECT_TRUE(list_dir(only_run_dir(tmp / "out")).empty());
}

TEST(AfterCpp, TwoRunsNeverShareADirectory) {
  TempDir tmp;
  const std::vector<std::string> env = workflow_env(tmp / "out", "graph", 1);
  auto first = std::async(std::launch::async, [&] {
    return run_cmd(kAfterDemo, {kChain, kChainInputs, "inject:runtime-error@aten::relu"}, {"", 300, env});
  });
  const Result second = run_cmd(kAfterDemo, {kChain, kChainInputs, "inject:runtime-error@aten::relu"}, {"", 300, env});
  EXPECT_EQ(first.get().exit_code, 1);
  EXPECT_EQ(second.exit_code, 1);
  const std::set<std::string> runs = list_dir(tmp / "out");
  ASSERT_EQ(runs.size(), 2u) << join(runs);
  for (const std::string& run : runs) EXPECT_EQ(list_dir(tmp / ("out/" + run)), (std::set<std::string>{"graph_1"}));
}

// A user's project: `find_package(tsrepro)` against an install, link tsrepro_after, build, run.
TEST(AfterCpp, InstalledPackageBuildsTheExampleProject) {
  TempDir tmp;
  const std::string prefix = tmp / "prefix", build = tmp / "build";
  const Result install = run_cmd("/usr/bin/cmake", {"--install", TSREPRO_BINARY_DIR, "--prefix", prefix}, {"", 300});
  ASSERT_EQ(install.exit_code, 0) << install.describe();
  EXPECT_TRUE(fs::exists(prefix + "/include/tsrepro/after.h"));
  const Result make = cmake_build(kSourceDir + "/examples/after_cpp", build, {"-DCMAKE_PREFIX_PATH=" + prefix});
  ASSERT_EQ(make.exit_code, 0) << make.describe();
  EXPECT_EQ(make.out.find("warning:"), std::string::npos) << make.out;
  // The installed library finds the installed tsrepro (no TSREPRO_BIN given).
  std::vector<std::string> env = workflow_env(tmp / "out", "graph", 3);
  env.pop_back();
  const Result r =
      run_cmd(build + "/after_demo", {kChain, kChainInputs, "inject:runtime-error@aten::relu", "1"}, {"", 600, env});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  const std::string run = only_run_dir(tmp / "out");
  EXPECT_TRUE(fs::exists(run + "/graph_1-minified/minified/repro.py")) << join(list_dir(run)) << "\n" << r.describe();
}

// --- Python ----------------------------------------------------------------------------------

class AfterPython : public ::testing::Test {
 protected:
  void SetUp() override { SKIP_WITHOUT_PYTHON_TORCH(); }
};

TEST_F(AfterPython, WithoutVariablesItOnlyRuns) {
  TempDir tmp;
  const Result r = run_python(kAfterPy, {"nnc", "2"}, {"", 300, {"TSREPRO_DIR=" + tmp / "out"}});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("call 1:"), std::string::npos) << r.describe();
  EXPECT_FALSE(fs::exists(tmp / "out"));
}

TEST_F(AfterPython, LevelOneGraphWritesACaseWhoseReproPyFails) {
  TempDir tmp;
  const std::string backend = "inject:runtime-error@aten::round";
  const Result r = run_python(kAfterPy, {backend, "1"}, {"", 300, workflow_env(tmp / "out", "graph", 1)});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_NE(r.err.find("the compiled model failed: tsrepro injected runtime error"), std::string::npos) << r.describe();
  const std::string case_dir = only_run_dir(tmp / "out") + "/graph_1";
  EXPECT_EQ(read_case_json(case_dir)["expected_failure"]["status"], "exception");
  EXPECT_TRUE(fs::exists(case_dir + "/repro.py"));
  expect_repro_py_reproduces(case_dir);
}

TEST_F(AfterPython, LevelThreeWithASegfaultLeavesACaseThatTsreproRunReproduces) {
  TempDir tmp;
  const std::string backend = "inject:segfault@aten::round";
  const Result r = run_python(kAfterPy, {backend, "1"}, {"", 300, workflow_env(tmp / "out", "graph", 3)});
  EXPECT_EQ(r.term_signal, SIGSEGV) << r.describe();
  const std::string case_dir = only_run_dir(tmp / "out") + "/graph_1";
  expect_verdict(tsrepro({"run", case_dir, "--backend", backend, "--json"}), 1, "crash");
}

TEST_F(AfterPython, FusionLevelFourMinifiesTheRoundingBugToAReproThatExitsOne) {
  TempDir tmp;
  const Result r = run_python(kAfterPy, {"nnc", "2"}, {"", 600, workflow_env(tmp / "out", "fusion", 4)});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  const std::string run = only_run_dir(tmp / "out");
  std::string minified;
  for (const std::string& name : list_dir(run))
    if (name.size() > 9 && name.compare(name.size() - 9, 9, "-minified") == 0)
      minified = run + "/" + name + "/minified";
  ASSERT_FALSE(minified.empty()) << join(list_dir(run)) << "\n" << r.describe();
  EXPECT_NE(read_text(minified + "/graph.ir").find("aten::round"), std::string::npos);
  // The script's own line for the round: `tsrepro after` reads the shim's case back from graph.ir,
  // and takes the lines from its table.
  EXPECT_NE(round_line(read_text(minified + "/graph.ir")).find("after_py/after_demo.py:26:"), std::string::npos)
      << read_text(minified + "/graph.ir");
  expect_repro_py_reproduces(minified);
}

}  // namespace
