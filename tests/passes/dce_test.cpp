// The dce pass (minifier/passes/dce.cpp) in process, a predicate deciding.

#include <gtest/gtest.h>

#include "tests/passes/pass_harness.h"

namespace tsrepro {
namespace {

TEST(Dce, DeletesSideEffectingNodesTheFailureDoesNotNeed) {
  const char* ir = R"IR(graph(%x : Tensor):
  %msg : str = prim::Constant[value="bad input"]()
  %zero : int = prim::Constant[value=0]()
  %n : int = aten::dim(%x)
  %bad : bool = aten::eq(%n, %zero)
  prim::If(%bad)
    block0():
      prim::RaiseException(%msg)
      -> ()
    block1():
      -> ()
  %y : Tensor = aten::relu(%x)
  return (%y)
)IR";
  PassHarness h(case_from_ir(ir, {at::randn({4})}), has_op("aten::relu"));
  EXPECT_TRUE(h.run(dce_pass));
  EXPECT_EQ(node_kinds(h.state), (std::vector<std::string>{"aten::relu"}));
}

}  // namespace
}  // namespace tsrepro
