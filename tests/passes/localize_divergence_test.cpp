// The localize-divergence pass (minifier/passes/localize_divergence.cpp): it learns from verdicts,
// so its tests run candidates in real tsrepro-runner workers, injected faults deciding.

#include <gtest/gtest.h>
#include <torch/script.h>

#include "minifier/pass.h"
#include "minifier/worker_interest.h"
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

// Runs one pass on `state` against a real oracle; returns whether it changed the state.
struct WorkerPassHarness {
  explicit WorkerPassHarness(Case initial, const std::string& backend)
      : options(worker_minify_options(backend)),
        interest(options, kRunner),
        oracle(interest, observer),
        state(std::move(initial)),
        ctx(oracle, state, observer, steps, "test") {
    state.expected = {};
    oracle.check_original(state);
  }
  bool run(PassFunction pass) { return pass(ctx); }
  MinifyOptions options;
  QuietObserver observer;
  WorkerInterest interest;
  Oracle oracle;
  Case state;
  std::vector<AcceptedStep> steps;
  PassContext ctx;
};

TEST(LocalizeDivergence, OneInstrumentedRunFindsTheFirstWrongNode) {
  WorkerPassHarness h(case_from_ir(kChain, {at::randn({4})}), "inject:accuracy@aten::relu");
  const size_t before = h.oracle.stats().queries;
  EXPECT_TRUE(h.run(localize_divergence_pass));
  EXPECT_EQ(node_kinds(h.state), (std::vector<std::string>{"aten::relu"}));
  EXPECT_LE(h.oracle.stats().queries - before, 2u);  // the instrumented run + the culprit alone
}

// An int64 node computes wrong numbers; the failure's signature is accuracy:float32, from the cast
// after it (Inductor's x >> 64, pytorch#143555). The node alone would fail as accuracy:int64,
// another failure: the pass asks once for the path from it to the cast.
TEST(LocalizeDivergence, KeepsThePathToWhereTheFailuresDtypeShows) {
  const char* ir = R"IR(graph(%x : Tensor):
  %long : int = prim::Constant[value=4]()
  %float : int = prim::Constant[value=6]()
  %no : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %a : Tensor = aten::sin(%x)
  %i : Tensor = aten::to(%a, %long, %no, %no, %none)
  %j : Tensor = aten::neg(%i)
  %f : Tensor = aten::to(%j, %float, %no, %no, %none)
  %y : Tensor = aten::tanh(%f)
  return (%y)
)IR";
  WorkerPassHarness h(case_from_ir(ir, {at::randn({4})}), "inject:accuracy@aten::neg");
  ASSERT_EQ(h.ctx.expected_failure().signature, "accuracy:float32");
  const size_t before = h.oracle.stats().queries;
  EXPECT_TRUE(h.run(localize_divergence_pass));
  EXPECT_EQ(node_kinds(h.state), (std::vector<std::string>{"aten::neg", "aten::to"}));
  EXPECT_LE(h.oracle.stats().queries - before, 2u);  // the instrumented run + the path
}

TEST(LocalizeDivergence, LeavesOtherFailuresToTheOtherPasses) {
  WorkerPassHarness h(case_from_ir(kChain, {at::randn({4})}), "inject:runtime-error@aten::relu");
  EXPECT_FALSE(h.run(localize_divergence_pass));
  EXPECT_EQ(h.oracle.stats().queries, 1u);  // the sanity run only
}

}  // namespace
}  // namespace tsrepro
