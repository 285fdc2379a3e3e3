// The shrink-inputs pass (minifier/passes/shrink_inputs.cpp) in process, a predicate deciding.

#include <gtest/gtest.h>

#include "tests/passes/pass_harness.h"

namespace tsrepro {
namespace {

TEST(ShrinkInputs, TriesTheSmallestShapeFirst) {
  PassHarness h(
      case_from_ir("graph(%x : Tensor):\n  %y : Tensor = aten::relu(%x)\n  return (%y)\n", {at::randn({8, 16, 4})}),
      has_op("aten::relu"));
  EXPECT_TRUE(h.run(shrink_inputs_pass));
  EXPECT_EQ(h.state.values->at(0).toTensor().sizes(), (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(h.queries(), 1u + 1u);
}

TEST(ShrinkInputs, HalvesTensorsWhileThePredicateHolds) {
  const char* ir = R"IR(graph(%x : Tensor):
  %y : Tensor = aten::neg(%x)
  return (%y)
)IR";
  PassHarness h(case_from_ir(ir, {at::rand({8, 6}) + 1}), some_output_negative);
  EXPECT_TRUE(h.run(shrink_inputs_pass));
  EXPECT_EQ(h.state.values->at(0).toTensor().numel(), 1);
  EXPECT_EQ(h.state.inputs[0].sizes, (std::vector<int64_t>{1, 1}));
}

// An input whose shapes must fit the model's weights (an attention block's): every smaller shape is
// refused by the reference, here in process, and none of them costs a query.
TEST(ShrinkInputs, ShapesTheReferenceRefusesCostNoQuery) {
  const char* ir = R"IR(graph(%x : Tensor, %w : Tensor):
  %y : Tensor = aten::mm(%x, %w)
  return (%y)
)IR";
  Case c = case_from_ir(ir, {at::randn({4, 8}), at::randn({8, 8})});
  c.inputs[1].lifted = true;  // the model's weight: never halved
  PassHarness h(c, has_op("aten::mm"));
  EXPECT_FALSE(h.run(shrink_inputs_pass));
  EXPECT_EQ(h.state.values->at(0).toTensor().sizes(), (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(h.queries(), 1u);  // the original's check alone
}

}  // namespace
}  // namespace tsrepro
