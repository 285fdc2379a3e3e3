// The remove-outputs pass (minifier/passes/remove_outputs.cpp) in process, a predicate deciding.

#include <gtest/gtest.h>

#include "tests/passes/pass_harness.h"

namespace tsrepro {
namespace {

TEST(RemoveOutputs, KeepsOnlyTheOutputThePredicateNeeds) {
  const char* ir = R"IR(graph(%x : Tensor):
  %a : Tensor = aten::sin(%x)
  %b : Tensor = aten::relu(%x)
  %c : Tensor = aten::tanh(%x)
  %d : Tensor = aten::cos(%x)
  return (%a, %b, %c, %d)
)IR";
  PassHarness h(case_from_ir(ir, {at::randn({4})}), has_op("aten::relu"));
  EXPECT_TRUE(h.run(remove_outputs_pass));
  EXPECT_EQ(h.state.graph->outputs().size(), 1u);
  EXPECT_EQ(node_kinds(h.state), (std::vector<std::string>{"aten::relu"}));
}

// Where it can change nothing it asks nothing, and says why (`-v` prints it).
TEST(RemoveOutputs, OneOutputIsSkippedWithoutAQueryAndSaysWhy) {
  PassHarness h(case_from_ir(kChain, {at::randn({4})}), has_op("aten::relu"));
  EXPECT_FALSE(h.run(remove_outputs_pass));
  EXPECT_EQ(h.queries(), 1u);  // the sanity run only
  EXPECT_EQ(h.ctx.skip_reason(), "one output");
}

// A candidate that computes nothing is not asked: it points at no op (the engine's rule, as for the
// 1-minimal check on one node). The first candidate, without the relu's output, is such; returning
// the relu alone is the one candidate asked.
TEST(RemoveOutputs, ACandidateThatComputesNothingIsNotAsked) {
  const char* ir = R"IR(graph(%x : Tensor):
  %y : Tensor = aten::relu(%x)
  return (%y, %x)
)IR";
  PassHarness h(case_from_ir(ir, {at::randn({4})}), [](const Case&) { return true; });
  EXPECT_TRUE(h.run(remove_outputs_pass));
  EXPECT_EQ(node_kinds(h.state), (std::vector<std::string>{"aten::relu"}));
  EXPECT_EQ(h.state.graph->outputs().size(), 1u);
  EXPECT_EQ(h.queries(), 2u);  // the sanity run and the relu returned alone
}

}  // namespace
}  // namespace tsrepro
