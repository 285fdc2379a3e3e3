// The inline-blocks pass (minifier/passes/inline_blocks.cpp) in process, a predicate deciding.

#include <algorithm>

#include <gtest/gtest.h>
#include <torch/script.h>

#include "minifier/pass.h"
#include "tests/passes/pass_harness.h"
#include "tests/support/cases.h"
#include "tsrepro/node_origin.h"

namespace tsrepro {
namespace {

using testing::case_from_ir;
using testing::has_op;
using testing::node_kinds;
using testing::PassHarness;

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
