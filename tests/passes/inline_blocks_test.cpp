// The inline-blocks pass (minifier/passes/inline_blocks.cpp) in process, a predicate deciding.

#include <gtest/gtest.h>

#include "tests/passes/pass_harness.h"

namespace tsrepro {
namespace {

TEST(InlineBlocks, ReplacesAnIfByTheBranchThatHoldsTheCulprit) {
  const char* ir = R"IR(graph(%x : Tensor, %flag : bool):
  %y : Tensor = prim::If(%flag)
    block0():
      %a : Tensor = aten::relu(%x)
      -> (%a)
    block1():
      %b : Tensor = aten::tanh(%x)
      -> (%b)
  return (%y)
)IR";
  PassHarness h(case_from_ir(ir, {at::randn({4}), true}), has_op("aten::relu"));
  EXPECT_TRUE(h.run(inline_blocks_pass));
  EXPECT_EQ(node_kinds(h.state), (std::vector<std::string>{"aten::relu"}));
}

}  // namespace
}  // namespace tsrepro
