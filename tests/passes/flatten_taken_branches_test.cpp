// The flatten-taken-branches pass (minifier/passes/flatten_taken_branches.cpp) in process, a predicate deciding.

#include <gtest/gtest.h>

#include "tests/passes/pass_harness.h"

namespace tsrepro {
namespace {

// mobilenet_v2's `if self.use_res_connect`: a branch on an input, and inside it one on a value
// the branch computes. Both levels go in one query, and what is left is the branch that ran.
const std::string kNestedBranchesIr =
    "graph(%x : Tensor, %use_res_connect : bool):\n"
    "  %y : Tensor = prim::If(%use_res_connect)\n"
    "    block0():\n"
    "      %n : int = aten::dim(%x)\n"
    "      %one : int = prim::Constant[value=1]()\n"
    "      %flat : bool = aten::eq(%n, %one)\n"
    "      %a : Tensor = prim::If(%flat)\n"
    "        block0():\n"
    "          %r : Tensor = aten::relu(%x)\n"
    "          -> (%r)\n"
    "        block1():\n"
    "          %t : Tensor = aten::tanh(%x)\n"
    "          -> (%t)\n"
    "      -> (%a)\n"
    "    block1():\n"
    "      %s : Tensor = aten::sin(%x)\n"
    "      -> (%s)\n"
    "  return (%y)\n";

TEST(FlattenTakenBranches, KeepsTheBranchesThatRanEveryLevelInOneQuery) {
  PassHarness h(case_from_ir(kNestedBranchesIr, {at::randn({4}), c10::IValue(true)}), has_op("aten::relu"));
  EXPECT_TRUE(h.run(flatten_taken_branches_pass));
  const std::vector<std::string> kinds = node_kinds(h.state);
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "aten::relu"), kinds.end());
  for (const char* gone : {"prim::If", "aten::tanh", "aten::sin"})
    EXPECT_EQ(std::find(kinds.begin(), kinds.end(), gone), kinds.end()) << gone;
  EXPECT_EQ(h.queries(), 1u + 1u);  // the original, then the flat graph
}

// Where the failure needs an If, the flat graph passes; one level at a time goes as far as it can.
TEST(FlattenTakenBranches, WhereTheFailureNeedsAnIfGoesOneLevelAtATime) {
  PassHarness h(case_from_ir(kNestedBranchesIr, {at::randn({4}), c10::IValue(true)}),
                [](const Case& s) { return has_op("aten::relu")(s) && has_op("prim::If")(s); });
  EXPECT_TRUE(h.run(flatten_taken_branches_pass));
  const std::vector<std::string> kinds = node_kinds(h.state);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "prim::If"), 1);  // the inner one, now on top
  EXPECT_EQ(std::find(kinds.begin(), kinds.end(), "aten::sin"), kinds.end());
  EXPECT_LE(h.queries(), 1u + 3u);
}

// ssd300's anchors: `for _ in image_list.image_sizes` runs once at batch 1, and its culprit was
// dug out by truncate-suffix and cut-ranges (53 queries where the bound is 32). A loop known to run
// once becomes one pass through its body, one known to run no time its initial values; a loop of
// two trips stays. The trip count here is a value the reference run made (aten::len of an input).
TEST(FlattenTakenBranches, ALoopKnownToRunOnceOrNeverIsFlattenedToo) {
  const std::string ir =
      "graph(%x : Tensor, %sizes : int[]):\n"
      "  %n : int = aten::len(%sizes)\n"
      "  %true : bool = prim::Constant[value=1]()\n"
      "  %zero : int = prim::Constant[value=0]()\n"
      "  %two : int = prim::Constant[value=2]()\n"
      "  %y : Tensor = prim::Loop(%n, %true, %x)\n"
      "    block0(%i : int, %a : Tensor):\n"
      "      %r : Tensor = aten::relu(%a)\n"
      "      -> (%true, %r)\n"
      "  %z : Tensor = prim::Loop(%zero, %true, %y)\n"
      "    block0(%j : int, %b : Tensor):\n"
      "      %s : Tensor = aten::sin(%b)\n"
      "      -> (%true, %s)\n"
      "  %w : Tensor = prim::Loop(%two, %true, %z)\n"
      "    block0(%k : int, %c : Tensor):\n"
      "      %t : Tensor = aten::tanh(%c)\n"
      "      -> (%true, %t)\n"
      "  return (%w)\n";
  PassHarness h(case_from_ir(ir, {at::randn({4}), c10::IValue(c10::List<int64_t>({3}))}), has_op("aten::relu"));
  EXPECT_TRUE(h.run(flatten_taken_branches_pass));
  const std::vector<std::string> kinds = node_kinds(h.state);
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "aten::relu"), kinds.end());  // at the top level now
  EXPECT_FALSE(has_op("aten::sin")(h.state));
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "prim::Loop"), 1);  // the loop of two trips
  EXPECT_TRUE(has_op("aten::tanh")(h.state));
  EXPECT_EQ(h.queries(), 1u + 1u);
}

}  // namespace
}  // namespace tsrepro
