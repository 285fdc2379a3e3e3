// The cut-ranges pass (minifier/passes/cut_ranges.cpp) in process, a predicate deciding.

#include <gtest/gtest.h>

#include "tests/passes/pass_harness.h"

namespace tsrepro {
namespace {

TEST(CutRanges, TwoCulpritsFarApartInLogarithmicQueries) {
  const Case c = case_from_ir(chain_ir(200, {{30, "relu"}, {170, "sigmoid"}}), {at::randn({4})});
  PassHarness h(c, [](const Case& s) { return has_op("aten::relu")(s) && has_op("aten::sigmoid")(s); });
  EXPECT_TRUE(h.run(cut_ranges_pass));
  const std::vector<std::string> kinds = node_kinds(h.state);
  EXPECT_LE(kinds.size(), 4u);
  EXPECT_LE(h.queries(), 60u);
}

TEST(CutRanges, KeepsEveryNodeOfAGraphThatNeedsThemAll) {
  const auto all_three = [](const Case& s) {
    return has_op("aten::relu")(s) && has_op("aten::sigmoid")(s) && has_op("aten::abs")(s);
  };
  PassHarness h(case_from_ir(chain_ir(3, {{0, "relu"}, {1, "sigmoid"}, {2, "abs"}}), {at::randn({4})}), all_three);
  EXPECT_FALSE(h.run(cut_ranges_pass));
  EXPECT_EQ(node_kinds(h.state).size(), 3u);
  EXPECT_LE(h.queries(), 1u + 3u);  // the original + one "is it needed" query per node
}

}  // namespace
}  // namespace tsrepro
