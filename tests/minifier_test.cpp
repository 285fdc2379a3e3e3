// The minifier end to end: candidates really run in tsrepro-runner workers. Whole minifications of
// a ~120-node model for every injected fault, and -j. The passes are tested one file each in
// tests/passes/ (localize-divergence there with workers too, for it needs verdicts), the engine's
// guarantees in process in minifier_unit_test.cpp.

#include <map>

#include <gtest/gtest.h>
#include <torch/script.h>

#include "minifier/worker_interest.h"
#include "runner/import/import.h"
#include "tests/support/cases.h"
#include "tsrepro/minify.h"

namespace tsrepro {
namespace {

using testing::case_from_ir;
using testing::kChain;
using testing::kRunner;
using testing::node_kinds;
using testing::QuietObserver;
using testing::worker_minify_options;

// The minifier with workers started from this build's tsrepro-runner.
MinifyResult minify_in_workers(const Case& c, const MinifyOptions& options) {
  QuietObserver observer;
  WorkerInterest interest(options, kRunner);
  return minify(c, options, interest, observer);
}

TEST(Minify, OriginalThatDoesNotFailIsReported) {
  Case c = case_from_ir(kChain, {at::randn({4})});
  EXPECT_THROW(minify_in_workers(c, worker_minify_options("jit")), NotFailingError);
}

TEST(Minify, TwoInteractingCulpritsStayTogether) {
  Case c = case_from_ir(kChain, {at::randn({4})});
  MinifyResult r = minify_in_workers(c, worker_minify_options("inject:compile-error@aten::relu+aten::sigmoid"));
  std::vector<std::string> kinds = node_kinds(r.minimized);
  EXPECT_EQ(kinds, (std::vector<std::string>{"aten::relu", "aten::sigmoid"}));
  EXPECT_TRUE(r.one_minimal);
}

struct FaultCase {
  std::string fault;
  double timeout;
};

class MinifyChain100 : public ::testing::TestWithParam<FaultCase> {};

// The bar: a model of 100+ nodes, every fault, at most 3 compute nodes left, culprit kept.
TEST_P(MinifyChain100, EndsWithAtMostThreeNodesIncludingTheCulprit) {
  Case c = import_case(
      {testing::model_path("chain100_scripted.pt"), "forward", testing::model_path("chain100_scripted.inputs.pt"), ""});
  ASSERT_GE(count_compute_nodes(*c.graph), 100u);
  MinifyOptions o = worker_minify_options("inject:" + GetParam().fault + "@aten::relu");
  o.run.timeout_seconds = GetParam().timeout;
  MinifyResult r = minify_in_workers(c, o);
  std::vector<std::string> kinds = node_kinds(r.minimized);
  EXPECT_LE(r.final_nodes, 3u);
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "aten::relu"), kinds.end());
  EXPECT_TRUE(r.one_minimal);
  EXPECT_EQ(r.minimized.expected->run.backend, o.run.backend);
  EXPECT_FALSE(r.minimized.expected->signature.empty());
}

INSTANTIATE_TEST_SUITE_P(EveryFault, MinifyChain100,
                         ::testing::Values(FaultCase{"compile-error", 60}, FaultCase{"runtime-error", 60},
                                           FaultCase{"accuracy", 60}, FaultCase{"abort", 60}, FaultCase{"segfault", 60},
                                           FaultCase{"hang", 1.5}),
                         [](const auto& info) {
                           std::string name = info.param.fault;
                           name.erase(std::remove(name.begin(), name.end(), '-'), name.end());
                           return name;
                         });

TEST(Minify, ParallelWorkersGiveTheSameResultAndSteps) {
  Case c = import_case(
      {testing::model_path("chain100_scripted.pt"), "forward", testing::model_path("chain100_scripted.inputs.pt"), ""});
  MinifyOptions one = worker_minify_options("inject:runtime-error@aten::tanh");
  MinifyOptions two = one;
  two.jobs = 2;
  MinifyResult a = minify_in_workers(c, one), b = minify_in_workers(c, two);
  EXPECT_EQ(graph_to_ir(*a.minimized.graph), graph_to_ir(*b.minimized.graph));
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    EXPECT_EQ(a.steps[i].pass, b.steps[i].pass);
    EXPECT_EQ(a.steps[i].nodes_after, b.steps[i].nodes_after);
  }
}

}  // namespace
}  // namespace tsrepro
