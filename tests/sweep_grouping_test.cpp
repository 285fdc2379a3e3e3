// The sweep's test of "the same bug" (issue 44): contains_pattern, which assigns a model to a
// minified bug, and canonical_form, which merges two minified bugs into one. On IR text: two bugs
// that share an op, and one bug whose models put an op between its two.

#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <torch/csrc/jit/ir/irparser.h>

#include "sweep/canonical_form.h"
#include "sweep/pattern_match.h"

namespace tsrepro {
namespace {

std::shared_ptr<torch::jit::Graph> graph(const std::string& ir) {
  auto g = std::make_shared<torch::jit::Graph>();
  torch::jit::parseIR(ir, g.get());
  return g;
}

// Two minified bugs of one signature: frac then mul, and frac then add.
const std::string kFracMul =
    "graph(%x : Tensor, %y : Tensor):\n"
    "  %f : Tensor = aten::frac(%x)\n"
    "  %m : Tensor = aten::mul(%f, %y)\n"
    "  return (%m)\n";
const std::string kFracAdd =
    "graph(%x : Tensor, %y : Tensor):\n"
    "  %one : int = prim::Constant[value=1]()\n"
    "  %f : Tensor = aten::frac(%x)\n"
    "  %a : Tensor = aten::add(%f, %y, %one)\n"
    "  return (%a)\n";

TEST(SweepGrouping, TwoBugsThatShareAnOpEachTakeOnlyTheirModels) {
  // A model with frac -> mul (and an add elsewhere, not fed by the frac).
  auto model = graph(
      "graph(%x : Tensor, %y : Tensor):\n"
      "  %one : int = prim::Constant[value=1]()\n"
      "  %r : Tensor = aten::relu(%x)\n"
      "  %f : Tensor = aten::frac(%r)\n"
      "  %m : Tensor = aten::mul(%f, %y)\n"
      "  %a : Tensor = aten::add(%m, %y, %one)\n"
      "  return (%a)\n");
  auto frac_mul = graph(kFracMul), frac_add = graph(kFracAdd);
  EXPECT_TRUE(contains_pattern(*model, *frac_mul));
  EXPECT_FALSE(contains_pattern(*model, *frac_add));  // the add reads the mul, not the frac
  EXPECT_NE(canonical_form(*frac_mul), canonical_form(*frac_add));
}

TEST(SweepGrouping, APatternIsFoundInsideABlock) {
  auto model = graph(
      "graph(%x : Tensor, %y : Tensor, %c : bool):\n"
      "  %out : Tensor = prim::If(%c)\n"
      "    block0():\n"
      "      %f : Tensor = aten::frac(%x)\n"
      "      %m : Tensor = aten::mul(%f, %y)\n"
      "      -> (%m)\n"
      "    block1():\n"
      "      -> (%x)\n"
      "  return (%out)\n");
  EXPECT_TRUE(contains_pattern(*model, *graph(kFracMul)));
}

// A model that puts a relu between the frac and the mul does not contain the bug's graph (the
// mul reads the relu): it goes to the next round and is minified on its own. Where the relu does
// not matter to the failure, it minifies to frac -> mul again, under other value names and
// shapes, and the canonical forms merge the two groups into one bug.
TEST(SweepGrouping, AModelWithAnOpInBetweenIsMergedByItsMinifiedForm) {
  auto model = graph(
      "graph(%x : Tensor, %y : Tensor):\n"
      "  %f : Tensor = aten::frac(%x)\n"
      "  %r : Tensor = aten::relu(%f)\n"
      "  %m : Tensor = aten::mul(%r, %y)\n"
      "  return (%m)\n");
  auto frac_mul = graph(kFracMul);
  EXPECT_FALSE(contains_pattern(*model, *frac_mul));
  // The bug as its first model minified (shapes of that model), and the model minified again.
  frac_mul = graph(
      "graph(%x : Float(4, 5), %y : Float(4, 5)):\n"
      "  %f : Float(4, 5) = aten::frac(%x)\n"
      "  %m : Float(4, 5) = aten::mul(%f, %y)\n"
      "  return (%m)\n");
  auto minified_again = graph(
      "graph(%input_3 : Float(2, 3), %other : Float(2, 3)):\n"
      "  %frac_out : Float(2, 3) = aten::frac(%input_3)\n"
      "  %product : Float(2, 3) = aten::mul(%frac_out, %other)\n"
      "  return (%product)\n");
  EXPECT_EQ(canonical_form(*minified_again), canonical_form(*frac_mul));
  // The relu kept (the failure needs it) is another bug.
  EXPECT_NE(canonical_form(*model), canonical_form(*frac_mul));
}

TEST(SweepGrouping, APatternWithoutOpsMatchesNothing) {
  auto model = graph(kFracMul);
  auto empty = graph("graph(%x : Tensor):\n  return (%x)\n");
  EXPECT_FALSE(contains_pattern(*model, *empty));
}

}  // namespace
}  // namespace tsrepro
