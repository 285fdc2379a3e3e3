// Fidelity of the short repro.py: on every checkpoint and final case that minify writes, for every
// inject fault on a 100-node model and for the real bugs of examples/bugs, running repro.py with
// stock PyTorch reaches the same outcome (reproduced or not) as `tsrepro run` on that directory.

#include <gtest/gtest.h>

#include <csignal>
#include <algorithm>
#include <map>

#include "tests/support/expectations.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/process.h"
#include "tests/support/real_bugs.h"

namespace {

using namespace tsrepro_test;

struct Source {
  std::string label;
  std::string model, inputs;  // what `tsrepro import` reads
  std::string backend;
  std::string timeout = "30";  // --timeout for minify and run; the repros inherit it
};

void PrintTo(const Source& s, std::ostream* os) { *os << s.label; }

// The signal a crash signature names.
int signal_of(const std::string& signature) {
  static const std::map<std::string, int> kSignals = {{"crash:SIGSEGV", SIGSEGV}, {"crash:SIGABRT", SIGABRT},
                                                      {"crash:SIGBUS", SIGBUS},   {"crash:SIGFPE", SIGFPE},
                                                      {"crash:SIGILL", SIGILL},   {"crash:SIGKILL", SIGKILL}};
  const auto found = kSignals.find(signature);
  return found == kSignals.end() ? -1 : found->second;
}

// tsrepro run's verdict reproduces the recorded failure: same status, and for a crash the same signal.
bool runner_reproduces(const json& verdict, const json& expected) {
  const std::string kind = expected.value("status", "");
  if (verdict.value("status", "") != kind) return false;
  return kind != "crash" || verdict.value("signature", "") == expected.value("signature", "");
}

// The short repro.py reproduces: exit 1, or death by the crash's signal (a crash is left to
// happen), or by SIGALRM for a hang.
bool repro_reproduces(const Result& r, const json& expected) {
  if (r.exited) return r.exit_code == 1;
  const std::string kind = expected.value("status", "");
  if (kind == "timeout") return r.term_signal == SIGALRM;
  return kind == "crash" && r.term_signal == signal_of(expected.value("signature", ""));
}

class ReproFidelity : public ::testing::TestWithParam<Source> {};

TEST_P(ReproFidelity, ReproPyAgreesWithTsreproRunOnEveryCheckpoint) {
  SKIP_WITHOUT_PYTHON_TORCH();
  const Source& s = GetParam();
  // An injected fault's repro.py is the same on either line; the real bugs' are each line's own.
  if (s.backend.rfind("inject:", 0) == 0) LIBTORCH_INDEPENDENT_TEST();
  TempDir tmp;
  const std::string case_dir = tmp / "case", out = tmp / "out";
  ASSERT_EQ(tsrepro(import_args(s.model, s.inputs, case_dir)).exit_code, 0);
  const Result minify =
      tsrepro({"minify", case_dir, "--backend", s.backend, "-o", out, "--timeout", s.timeout, "-j", "2"},
              {tmp.path().string(), 900});
  ASSERT_EQ(minify.exit_code, 0) << minify.describe();

  std::vector<std::string> dirs = {out + "/minified"};
  for (const std::string& name : list_dir(out + "/checkpoints")) dirs.push_back(out + "/checkpoints/" + name);
  size_t reproduced = 0, module_form = 0;
  for (const std::string& dir : dirs) {
    SCOPED_TRACE(dir);
    const json expected = read_case_json(dir)["expected_failure"];
    const Result run =
        tsrepro({"run", dir, "--backend", s.backend, "--timeout", s.timeout, "--json"}, {tmp.path().string(), 300});
    const bool runner = runner_reproduces(run.stdout_json(), expected);
    const Result repro = run_cmd("/usr/bin/python3", {dir + "/repro.py"}, {"", 300});
    EXPECT_EQ(repro_reproduces(repro, expected), runner) << expected.dump() << "\n" << run.out << repro.describe();
    reproduced += runner;
    // The module form: Python's torch.jit.script gives the graph's ops back (tests/fixtures/scripted_ops.py).
    if (read_text(dir + "/repro.py").find("\nclass Repro(") == std::string::npos) continue;
    const Result ops =
        run_cmd(kPython, {kFixtures + "scripted_ops.py", dir + "/repro.py", dir + "/graph.ir"}, {"", 300});
    EXPECT_EQ(ops.exit_code, 0) << ops.describe();
    ++module_form;
  }
  // The module form is the rule (repro/module_source.h); the IR form only where source cannot say it.
  EXPECT_GT(module_form, 0u);
  // Every directory minify writes holds the failure: the agreement is on reproducing.
  EXPECT_EQ(reproduced, dirs.size());
  std::cout << s.label << ": " << dirs.size() << " directories agree, " << module_form << " in the module form\n";
}

const std::string kChain = kModels + "chain100_scripted.pt", kChainInputs = kModels + "chain100_scripted.inputs.pt";

Source chain(const std::string& fault, const std::string& ops, const std::string& timeout = "30") {
  std::string label = fault;
  label.erase(std::remove(label.begin(), label.end(), '-'), label.end());
  return {label, kChain, kChainInputs, "inject:" + fault + "@" + ops, timeout};
}

// The inject faults, then every real bug that reproduces on this libtorch (examples/bugs/bugs.json).
std::vector<Source> sources() {
  std::vector<Source> all = {chain("compile-error", "aten::relu+aten::tanh"),
                             chain("runtime-error", "aten::relu"),
                             chain("accuracy", "aten::relu"),
                             chain("abort", "aten::relu"),
                             chain("segfault", "aten::relu"),
                             chain("hang", "aten::relu", "2")};
  for (const RealBug& bug : real_bugs_here())
    all.push_back({bug.name, bug.dir() + "model.pt", bug.dir() + "inputs.pt", bug.backend});
  return all;
}

INSTANTIATE_TEST_SUITE_P(Sources, ReproFidelity, ::testing::ValuesIn(sources()),
                         [](const auto& info) { return info.param.label; });

}  // namespace
