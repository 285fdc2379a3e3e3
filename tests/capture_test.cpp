// libtsrepro_capture.so (issue 16): unmodified programs, C++ (examples/capture/plain_app.cpp, built
// against libtorch alone) and Python (examples/capture/plain_script.py), captured by environment
// alone: LD_PRELOAD + TSREPRO_AFTER=fusion + TSREPRO_LEVEL. The model is examples/bugs/
// nnc_round_half_even, a real NNC miscompile (aten::round after a division rounds half away
// from zero in the kernel, half to even in the interpreter).

#include <algorithm>
#include <csignal>
#include <regex>
#include <set>

#include <gtest/gtest.h>

#include "tests/support/expectations.h"

namespace tsrepro_test {
namespace {

const std::string kCaptureLibrary = kBinaryDir + "/libtsrepro_capture.so";
const std::string kPlainApp = kBinaryDir + "/capture_plain_app";
const std::string kPlainScript = kSourceDir + "/examples/capture/plain_script.py";
const std::string kRoundBug = kSourceDir + "/examples/bugs/nnc_round_half_even/";

// The environment of a captured run writing into `dir`: the preload, and TSREPRO_* as given.
std::vector<std::string> captured(const std::string& dir, std::vector<std::string> settings) {
  settings.push_back("LD_PRELOAD=" + kCaptureLibrary);
  settings.push_back("TSREPRO_DIR=" + dir);
  settings.push_back("TSREPRO_BIN=" + kTsrepro);
  return settings;
}

// The one case the run wrote whose name matches `pattern` (not its -minified sibling).
std::string only_case(const std::string& run, const std::string& pattern) {
  std::vector<std::string> found;
  for (const std::string& name : list_dir(run))
    if (std::regex_match(name, std::regex(pattern))) found.push_back(run + "/" + name);
  EXPECT_EQ(found.size(), 1u) << join(list_dir(run)) << "\n" << read_text(run + "/capture.log");
  return found.empty() ? run + "/missing" : found.front();
}

std::string only_group_case(const std::string& run) { return only_case(run, R"(fusion_\d+_group_\d+)"); }
std::string only_graph_case(const std::string& run) { return only_case(run, R"(graph_\d+)"); }

// What every captured run of the rounding bug must leave: the failing group's case, minified to
// the round, with a repro.py that reproduces under stock PyTorch.
void expect_minified_rounding_case(const std::string& run) {
  const std::string group = only_group_case(run);
  EXPECT_NE(read_text(run + "/capture.log").find("FAILED under nnc: " + group), std::string::npos)
      << read_text(run + "/capture.log");
  EXPECT_EQ(read_case_json(group)["expected_failure"]["status"], "accuracy");
  const std::string minified = group + "-minified/minified";
  EXPECT_NE(read_text(minified + "/graph.ir").find("aten::round"), std::string::npos);
  // The model's own lines, read in the program (the IR text the check imports keeps none).
  for (const std::string& graph_ir : {group + "/graph.ir", minified + "/graph.ir"})
    EXPECT_NE(round_line(read_text(graph_ir)).find("nnc_round_half_even/make_case.py:"), std::string::npos)
        << read_text(graph_ir);
  SKIP_WITHOUT_PYTHON_TORCH();
  const Result repro = run_cmd(kPython, {minified + "/repro.py"}, {"", 300});
  EXPECT_EQ(repro.exit_code, 1) << repro.describe();
}

TEST(Capture, AnUnmodifiedCppProgramsMiscompiledGroupIsMinifiedToAReproducingCase) {
  TempDir tmp;
  const Result r = run_cmd(kPlainApp, {kRoundBug + "model.pt", kRoundBug + "inputs.pt", "6"},
                           {"", 600, captured(tmp / "out", {"TSREPRO_AFTER=fusion", "TSREPRO_LEVEL=4"})});
  EXPECT_EQ(r.exit_code, 0) << r.describe();  // the program's own run is left as it is
  EXPECT_NE(r.out.find("call 5: first output sum"), std::string::npos) << r.describe();
  EXPECT_NE(r.err.find("[tsrepro capture] prim::TensorExprGroup"), std::string::npos) << r.describe();
  const std::string run = only_run_dir(tmp / "out");
  expect_minified_rounding_case(run);
  // Four optimized calls, one check per group: the model's 10 groups, 9 agreeing, 1 failing.
  const std::string log = read_text(run + "/capture.log");
  size_t agreeing = 0;
  for (size_t at = log.find("agrees with the interpreter"); at != std::string::npos;
       at = log.find("agrees with the interpreter", at + 1))
    ++agreeing;
  EXPECT_EQ(agreeing, 9u) << log;
}

TEST(Capture, AnUnmodifiedPythonScriptsMiscompiledGroupIsMinifiedToAReproducingCase) {
  SKIP_WITHOUT_PYTHON_TORCH();
  TempDir tmp;
  const Result r = run_cmd(kPython, {kPlainScript, kRoundBug + "model.pt", kRoundBug + "inputs.pt", "3"},
                           {"", 600, captured(tmp / "out", {"TSREPRO_AFTER=fusion", "TSREPRO_LEVEL=4"})});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  expect_minified_rounding_case(only_run_dir(tmp / "out"));
}

// TSREPRO_AFTER=graph: the module's whole forward (a pre pass sees the graph before fusion) is
// the subject, saved as the module it is and imported; level 4 compares it with eager.
TEST(Capture, TheGraphStageCapturesTheWholeForwardOfAnUnmodifiedProgram) {
  TempDir tmp;
  const Result r = run_cmd(kPlainApp, {kRoundBug + "model.pt", kRoundBug + "inputs.pt", "3"},
                           {"", 600, captured(tmp / "out", {"TSREPRO_AFTER=graph", "TSREPRO_LEVEL=4"})});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  const std::string graph_case = only_graph_case(only_run_dir(tmp / "out"));
  EXPECT_EQ(read_case_json(graph_case)["expected_failure"]["status"], "accuracy");
  EXPECT_NE(read_text(graph_case + "-minified/minified/graph.ir").find("aten::round"), std::string::npos);
  EXPECT_NE(round_line(read_text(graph_case + "-minified/minified/graph.ir")).find("nnc_round_half_even/make_case.py:"),
            std::string::npos);
  SKIP_WITHOUT_PYTHON_TORCH();
  const Result repro = run_cmd(kPython, {graph_case + "-minified/minified/repro.py"}, {"", 300});
  EXPECT_EQ(repro.exit_code, 1) << repro.describe();
}

// A model served through torch.jit.optimize_for_inference: frozen, its weights are constants of
// the graph (IR text cannot hold them) and its module input goes unused (a module saved again
// with such constants does not load). The constants become inputs of the case, at both stages.
class CaptureOptimized : public ::testing::TestWithParam<std::string> {};

TEST_P(CaptureOptimized, AFrozenModelsSubjectTakesItsConstantsAsInputsAndIsMinified) {
  SKIP_WITHOUT_PYTHON_TORCH();
  TempDir tmp;
  const Result r = run_cmd(kPython, {kPlainScript, kRoundBug + "model.pt", kRoundBug + "inputs.pt", "3", "optimize"},
                           {"", 600, captured(tmp / "out", {"TSREPRO_AFTER=" + GetParam(), "TSREPRO_LEVEL=4"})});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  const std::string run = only_run_dir(tmp / "out");
  const std::string subject = GetParam() == "graph" ? only_graph_case(run) : only_group_case(run);
  EXPECT_NE(read_text(subject + "/graph.ir").find("%constant_0 : Float("), std::string::npos)
      << read_text(subject + "/graph.ir");
  EXPECT_EQ(read_case_json(subject)["expected_failure"]["status"], "accuracy");
  const std::string minified = subject + "-minified/minified";
  EXPECT_NE(round_line(read_text(minified + "/graph.ir")).find("nnc_round_half_even/make_case.py:"), std::string::npos)
      << read_text(minified + "/graph.ir");
  const Result repro = run_cmd(kPython, {minified + "/repro.py"}, {"", 300});
  EXPECT_EQ(repro.exit_code, 1) << repro.describe();
}

INSTANTIATE_TEST_SUITE_P(Stages, CaptureOptimized, ::testing::Values("fusion", "graph"));

// A program that trains (the rounding bug's model, its input and parameters requiring grad),
// captured at `stage` and `level`.
Result run_training_program(const TempDir& tmp, const std::string& stage, int level) {
  const std::string script = tmp / "train.py";
  write_text(script,
             "import sys, torch\n"
             "torch._C._jit_override_can_fuse_on_cpu(True)\n"
             "torch._C._jit_set_te_must_use_llvm_cpu(torch._C._llvm_enabled())\n"
             "model = torch.jit.load(sys.argv[1])\n"
             "x, hi, lo = torch.load(sys.argv[2])\n"
             "x = x.clone().requires_grad_()\n"
             "for i in range(3):\n"
             "    out = model(x, hi, lo)\n"
             "    (out[0] if isinstance(out, tuple) else out).sum().backward()\n"
             "    print('call', i, x.grad.sum().item())\n");
  return run_cmd(
      kPython, {script, kRoundBug + "model.pt", kRoundBug + "inputs.pt"},
      {"", 600, captured(tmp / "out", {"TSREPRO_AFTER=" + stage, "TSREPRO_LEVEL=" + std::to_string(level)})});
}

// Its fusion groups sit in the forward of a prim::DifferentiableGraph (the post pass also runs
// there), and the backward pass still runs.
TEST(Capture, AProgramThatNeedsGradientsGetsItsGroupsChecked) {
  SKIP_WITHOUT_PYTHON_TORCH();
  TempDir tmp;
  const Result r = run_training_program(tmp, "fusion", 1);
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("call 2"), std::string::npos) << r.describe();
  const std::string group = only_group_case(only_run_dir(tmp / "out"));
  EXPECT_EQ(read_case_json(group)["expected_failure"]["status"], "accuracy");
}

// At the graph stage the executor also optimizes the backward graph, whose gradient inputs
// include one nothing computed (the model's integer output's): that graph is said to be not
// checked, and nothing is left half-written; the forward is captured and minified.
TEST(Capture, AProgramThatNeedsGradientsGetsItsForwardCheckedAtTheGraphStage) {
  SKIP_WITHOUT_PYTHON_TORCH();
  TempDir tmp;
  const Result r = run_training_program(tmp, "graph", 4);  // the graph stage compares at level 4
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("call 2"), std::string::npos) << r.describe();
  EXPECT_EQ(r.err.find("could not check"), std::string::npos) << r.describe();
  const std::string run = only_run_dir(tmp / "out");
  const std::string log = read_text(run + "/capture.log");
  EXPECT_NE(log.find("holds an undefined tensor (a gradient nothing computed), which no case can hold"),
            std::string::npos)
      << log;
  const std::string graph_case = only_graph_case(run);
  EXPECT_EQ(read_case_json(graph_case)["expected_failure"]["status"], "accuracy");
  EXPECT_NE(read_text(graph_case + "-minified/minified/graph.ir").find("aten::round"), std::string::npos);
  for (const std::string& name : list_dir(run)) EXPECT_NE(name.rfind(".capture-", 0), 0u) << name;
}

// A program that forks: parent and child each write their cases into a run directory of their own.
TEST(Capture, AForkedProcessWritesItsOwnRunDirectory) {
  SKIP_WITHOUT_PYTHON_TORCH();
  TempDir tmp;
  const Result r = run_cmd(kPython, {kPlainScript, kRoundBug + "model.pt", kRoundBug + "inputs.pt", "3", "fork"},
                           {"", 600, captured(tmp / "out", {"TSREPRO_AFTER=fusion", "TSREPRO_LEVEL=1"})});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("child call 2"), std::string::npos) << r.describe();
  const std::set<std::string> runs = list_dir(tmp / "out");
  ASSERT_EQ(runs.size(), 2u) << join(runs);
  for (const std::string& run : runs) {
    const std::string group = only_group_case(tmp / ("out/" + run));
    EXPECT_EQ(read_case_json(group)["expected_failure"]["status"], "accuracy") << group;
  }
}

// A program that exits at once, skipping every cleanup: what was captured is already on disk
// (the checks run before the program's own code goes on).
TEST(Capture, AProgramThatExitsEarlyLosesNothingCaptured) {
  SKIP_WITHOUT_PYTHON_TORCH();
  TempDir tmp;
  const Result r = run_cmd(kPython, {kPlainScript, kRoundBug + "model.pt", kRoundBug + "inputs.pt", "2", "exit"},
                           {"", 600, captured(tmp / "out", {"TSREPRO_AFTER=fusion", "TSREPRO_LEVEL=2"})});
  EXPECT_EQ(r.exit_code, 3) << r.describe();
  const std::string group = only_group_case(only_run_dir(tmp / "out"));
  EXPECT_EQ(read_case_json(group)["expected_failure"]["status"], "accuracy");
  EXPECT_TRUE(fs::exists(group + "/repro.py"));
  EXPECT_TRUE(fs::exists(group + "/minify.sh"));
}

// Four threads call the model at once (CPU fusion off: libtorch 1.13's NNC interpreter is not
// safe for that): every call completes, and the graph is captured and checked once.
TEST(Capture, ThreadsCallingAtOnceGetTheGraphCheckedOnce) {
  SKIP_WITHOUT_PYTHON_TORCH();
  TempDir tmp;
  const Result r = run_cmd(kPython, {kPlainScript, kRoundBug + "model.pt", kRoundBug + "inputs.pt", "3", "threads"},
                           {"", 600, captured(tmp / "out", {"TSREPRO_AFTER=graph", "TSREPRO_LEVEL=4"})});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  for (int t = 0; t < 4; ++t)
    EXPECT_NE(r.out.find("thread " + std::to_string(t) + " call 2"), std::string::npos) << r.describe();
  const std::string run = only_run_dir(tmp / "out");
  only_graph_case(run);  // one graph case, not one per thread
  const std::string log = read_text(run + "/capture.log");
  EXPECT_EQ(log.find("FAILED"), log.rfind("FAILED")) << log;  // one check, not one per thread
}

// Inputs beyond TSREPRO_CAPTURE_MAX_BYTES are not written: the log says which and how large.
TEST(Capture, InputsOverTheLimitAreSkippedAndSaidSo) {
  TempDir tmp;
  const Result r = run_cmd(
      kPlainApp, {kRoundBug + "model.pt", kRoundBug + "inputs.pt", "3"},
      {"", 300, captured(tmp / "out", {"TSREPRO_AFTER=fusion", "TSREPRO_LEVEL=4", "TSREPRO_CAPTURE_MAX_BYTES=16"})});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  const std::string run = only_run_dir(tmp / "out");
  EXPECT_EQ(list_dir(run), (std::set<std::string>{"capture.log"}));
  EXPECT_NE(read_text(run + "/capture.log").find("skipped: its inputs hold"), std::string::npos)
      << read_text(run + "/capture.log");
}

// Level 3 writes the group's case before it is checked: a check that crashes leaves it behind,
// and the minifier runs on it. (The check's backend segfaults on aten::round here: no real NNC
// kernel of this libtorch crashes on demand.)
TEST(Capture, ACrashingCheckLeavesTheCaseBehindAndMinifiesItAtLevelThree) {
  TempDir tmp;
  const Result r = run_cmd(kPlainApp, {kRoundBug + "model.pt", kRoundBug + "inputs.pt", "3"},
                           {"", 600,
                            captured(tmp / "out", {"TSREPRO_AFTER=fusion", "TSREPRO_LEVEL=3",
                                                   "TSREPRO_CAPTURE_BACKEND=inject:segfault@aten::round"})});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  const std::string run = only_run_dir(tmp / "out");
  const std::string log = read_text(run + "/capture.log");
  EXPECT_NE(log.find("the check died of signal " + std::to_string(SIGSEGV)), std::string::npos) << log;
  const std::string group = only_group_case(run);
  EXPECT_TRUE(fs::exists(group + "/case.json")) << log;
  EXPECT_NE(read_text(group + "-minified/minified/graph.ir").find("aten::round"), std::string::npos) << log;
  expect_verdict(tsrepro({"run", group, "--backend", "inject:segfault@aten::round", "--json"}), 1, "crash");
}

TEST(Capture, AHealthyProgramLeavesOnlyTheRunDirectorysLog) {
  SKIP_WITHOUT_PYTHON_TORCH();  // the app reads a tuple; the example's inputs are a one-element list
  TempDir tmp;
  const std::string inputs = tmp / "inputs.pt";
  const Result saved =
      run_cmd(kPython, {"-c", "import sys, torch; torch.save(tuple(torch.load(sys.argv[1])), sys.argv[2])",
                        model_path("elementwise_chain_scripted.inputs.pt"), inputs});
  ASSERT_EQ(saved.exit_code, 0) << saved.describe();
  const Result r = run_cmd(kPlainApp, {model_path("elementwise_chain_scripted.pt"), inputs, "3"},
                           {"", 600, captured(tmp / "out", {"TSREPRO_AFTER=fusion", "TSREPRO_LEVEL=4"})});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  const std::string run = only_run_dir(tmp / "out");
  EXPECT_EQ(list_dir(run), (std::set<std::string>{"capture.log"}));
  EXPECT_NE(read_text(run + "/capture.log").find("agrees with the interpreter"), std::string::npos);
}

TEST(Capture, WithoutTsreproAfterTheLibraryDoesNothing) {
  TempDir tmp;
  const Result r =
      run_cmd(kPlainApp, {kRoundBug + "model.pt", kRoundBug + "inputs.pt", "3"}, {"", 300, captured(tmp / "out", {})});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.err.find("[tsrepro capture]"), std::string::npos) << r.describe();
  EXPECT_FALSE(fs::exists(tmp / "out"));
}

TEST(Capture, WithoutATsreproExecutableItSaysSoAndTheProgramRunsOn) {
  TempDir tmp;
  std::vector<std::string> env = captured(tmp / "out", {"TSREPRO_AFTER=fusion", "TSREPRO_LEVEL=1"});
  env.back() = "TSREPRO_BIN=" + (tmp / "no-such-tsrepro");
  const Result r = run_cmd(kPlainApp, {kRoundBug + "model.pt", kRoundBug + "inputs.pt", "3"}, {"", 300, env});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.err.find("not checked: cannot run " + (tmp / "no-such-tsrepro") + " (set TSREPRO_BIN)"),
            std::string::npos)
      << r.describe();
  EXPECT_EQ(list_dir(only_run_dir(tmp / "out")), (std::set<std::string>{"capture.log"}));
}

TEST(Capture, ABadSettingIsOneLineAndTheProgramRunsOn) {
  TempDir tmp;
  const Result r = run_cmd(kPlainApp, {kRoundBug + "model.pt", kRoundBug + "inputs.pt", "3"},
                           {"", 300, captured(tmp / "out", {"TSREPRO_AFTER=fusion", "TSREPRO_LEVEL=9"})});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.err.find("[tsrepro capture] TSREPRO_LEVEL=9: expected 1, 2, 3 or 4: capture is off\n"), std::string::npos)
      << r.describe();
  EXPECT_FALSE(fs::exists(tmp / "out"));
}

// What a user preloads is the installed library: it finds the capture proper and the tsrepro
// executable of the install (no TSREPRO_BIN).
TEST(Capture, TheInstalledLibraryCapturesWithTheInstalledTsrepro) {
  TempDir tmp;
  const std::string prefix = tmp / "prefix";
  const Result install = run_cmd("/usr/bin/cmake", {"--install", kBinaryDir, "--prefix", prefix}, {"", 300});
  ASSERT_EQ(install.exit_code, 0) << install.describe();
  std::string installed;
  for (const auto& entry : fs::recursive_directory_iterator(prefix))
    if (entry.path().filename() == "libtsrepro_capture.so") installed = entry.path().string();
  ASSERT_FALSE(installed.empty());
  std::vector<std::string> env = captured(tmp / "out", {"TSREPRO_AFTER=fusion", "TSREPRO_LEVEL=1"});
  env.erase(
      std::remove_if(env.begin(), env.end(), [](const std::string& e) { return e.rfind("TSREPRO_BIN=", 0) == 0; }),
      env.end());
  std::replace(env.begin(), env.end(), "LD_PRELOAD=" + kCaptureLibrary, "LD_PRELOAD=" + installed);
  const Result r = run_cmd(kPlainApp, {kRoundBug + "model.pt", kRoundBug + "inputs.pt", "3"}, {"", 300, env});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  const std::string run = only_run_dir(tmp / "out");
  EXPECT_NE(read_text(run + "/capture.log").find("FAILED under nnc: " + only_group_case(run)), std::string::npos)
      << read_text(run + "/capture.log");
}

// A process whose libtorch is another file than the one the capture links (a pip PyTorch under a
// Debian-built tsrepro) must run as it would without the preload: a preload that brought its own
// libtorch made the second copy's static registrations abort the program ("Tried to register
// multiple backend fallbacks for the same dispatch key Batched"), TSREPRO_AFTER set or not. A
// copy of this libtorch_cpu at another path stands for the other libtorch (its dependencies
// resolve to this libtorch's, so it runs on its own), loaded as Python loads torch._C: by dlopen,
// after startup.
std::string other_libtorch_copy(const TempDir& tmp) {
  const std::string copy = tmp / "other-libtorch/libtorch_cpu.so.1.13";
  fs::create_directories(fs::path(copy).parent_path());
  fs::copy_file(TSREPRO_LIBTORCH_CPU_FILE, copy);
  return copy;
}

const std::string kLoadLibrary =
    "import ctypes, sys; ctypes.CDLL(sys.argv[1], ctypes.RTLD_GLOBAL); print('the program ran on')";

TEST(Capture, AProgramRunningAnotherLibtorchGetsOneLineAndRunsOn) {
  TempDir tmp;
  const std::string copy = other_libtorch_copy(tmp);
  const Result r = run_cmd(kPython, {"-c", kLoadLibrary, copy},
                           {"", 300, captured(tmp / "out", {"TSREPRO_AFTER=fusion", "TSREPRO_LEVEL=4"})});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.out, "the program ran on\n");
  EXPECT_EQ(r.err, "[tsrepro capture] capture is off: the program's libtorch is " + fs::canonical(copy).string() +
                       ", and this libtsrepro_capture.so was built against " +
                       fs::canonical(TSREPRO_LIBTORCH_CPU_FILE).string() +
                       " (a second libtorch in one process aborts it); build tsrepro against the program's libtorch\n");
  EXPECT_FALSE(fs::exists(tmp / "out"));
}

TEST(Capture, WithoutTsreproAfterAProgramRunningAnotherLibtorchRunsAsItWould) {
  TempDir tmp;
  const Result r =
      run_cmd(kPython, {"-c", kLoadLibrary, other_libtorch_copy(tmp)}, {"", 300, captured(tmp / "out", {})});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.out, "the program ran on\n");
  EXPECT_EQ(r.err, "");
}

}  // namespace
}  // namespace tsrepro_test
