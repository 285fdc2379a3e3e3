// Fidelity of the short repro.py: on every checkpoint and final case that minify writes, for every
// inject fault on a 100-node model, running repro.py with stock PyTorch reaches the same outcome
// (reproduced or not) as `tsrepro run` on that directory. (The real bugs of examples/bugs: the same
// check in MinifyCliRealBug.)

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/support/expectations.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/process.h"

namespace {

using namespace tsrepro_test;

struct Source {
  std::string label;
  std::string model, inputs;  // what `tsrepro import` reads
  std::string backend;
  std::string timeout = "30";  // --timeout for minify and run; the repros inherit it
};

void PrintTo(const Source& s, std::ostream* os) { *os << s.label; }

class ReproFidelity : public ::testing::TestWithParam<Source> {};

TEST_P(ReproFidelity, ReproPyAgreesWithTsreproRunOnEveryCheckpoint) {
  SKIP_WITHOUT_PYTHON_TORCH();
  const Source& s = GetParam();
  // An injected fault's repro.py is the same on either line.
  LIBTORCH_INDEPENDENT_TEST();
  TempDir tmp;
  const std::string case_dir = tmp / "case", out = tmp / "out";
  ASSERT_EQ(tsrepro(import_args(s.model, s.inputs, case_dir)).exit_code, 0);
  const Result minify =
      tsrepro({"minify", case_dir, "--backend", s.backend, "-o", out, "--timeout", s.timeout, "-j", "2"},
              {tmp.path().string(), 900});
  ASSERT_EQ(minify.exit_code, 0) << minify.describe();

  // The module form is the rule (repro/module_source.h); the IR form only where source cannot say it.
  EXPECT_GT(expect_repro_py_agrees_on_every_checkpoint(out, s.backend, s.timeout, tmp.path().string()), 0u);
}

const std::string kChain = kModels + "chain100_scripted.pt", kChainInputs = kModels + "chain100_scripted.inputs.pt";

Source chain(const std::string& fault, const std::string& ops, const std::string& timeout = "30") {
  std::string label = fault;
  label.erase(std::remove(label.begin(), label.end(), '-'), label.end());
  return {label, kChain, kChainInputs, "inject:" + fault + "@" + ops, timeout};
}

// The inject faults. The real bugs of examples/bugs are checked the same way where
// MinifyCliRealBug minifies them (tests/minify_cli_test.cpp): one minify each serves both.
std::vector<Source> sources() {
  return {chain("compile-error", "aten::relu+aten::tanh"), chain("runtime-error", "aten::relu"),
          chain("accuracy", "aten::relu"),  chain("abort", "aten::relu"),
          chain("segfault", "aten::relu"),  chain("hang", "aten::relu", "2")};
}

INSTANTIATE_TEST_SUITE_P(Sources, ReproFidelity, ::testing::ValuesIn(sources()),
                         [](const auto& info) { return info.param.label; });

}  // namespace
