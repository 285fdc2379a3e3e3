// The consolidate-inputs pass (minifier/passes/consolidate_inputs.cpp) in process, a predicate deciding.

#include <gtest/gtest.h>

#include "tests/passes/pass_harness.h"

namespace tsrepro {
namespace {

TEST(ConsolidateInputs, FoldsScalarsAndMergesEqualTensors) {
  const char* ir = R"IR(graph(%x : Tensor, %y : Tensor, %k : int, %j : int, %i : int):
  %a : Tensor = aten::add(%x, %y, %k)
  %b : Tensor = aten::add(%a, %x, %j)
  %c : Tensor = aten::add(%b, %y, %i)
  %d : Tensor = aten::relu(%c)
  return (%d)
)IR";
  const at::Tensor same = at::randn({3});
  PassHarness h(case_from_ir(ir, {same, same.clone(), int64_t{2}, int64_t{1}, int64_t{3}}), has_op("aten::relu"));
  EXPECT_TRUE(h.run(consolidate_inputs_pass));
  EXPECT_EQ(h.state.inputs.size(), 1u);
  EXPECT_LE(h.queries(), 1u + 2u);  // all scalars at once, then the merge
}

TEST(ConsolidateInputs, KeepsTheScalarThePredicateNeedsAsAnInput) {
  const char* ir = R"IR(graph(%x : Tensor, %k : int, %j : int, %i : int, %h : int):
  %a : Tensor = aten::add(%x, %x, %k)
  %b : Tensor = aten::add(%a, %x, %j)
  %c : Tensor = aten::add(%b, %x, %i)
  %d : Tensor = aten::add(%c, %x, %h)
  return (%d)
)IR";
  // Interesting while the last scalar is still an input (the second half, then each one).
  const auto needs_last_input = [](const Case& s) { return !s.inputs.empty() && s.inputs.back().name == "h"; };
  PassHarness h(case_from_ir(ir, {at::randn({3}), int64_t{2}, int64_t{1}, int64_t{3}, int64_t{4}}), needs_last_input);
  EXPECT_TRUE(h.run(consolidate_inputs_pass));
  ASSERT_EQ(h.state.inputs.size(), 2u);
  EXPECT_EQ(h.state.inputs[1].name, "h");
}

}  // namespace
}  // namespace tsrepro
