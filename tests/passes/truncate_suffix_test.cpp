// The truncate-suffix pass (minifier/passes/truncate_suffix.cpp) in process, a predicate deciding.

#include <gtest/gtest.h>

#include "tests/passes/pass_harness.h"

namespace tsrepro {
namespace {

TEST(TruncateSuffix, DropsEverythingAfterTheCulpritInLogarithmicQueries) {
  PassHarness h(case_from_ir(chain_ir(64, {{20, "relu"}}), {at::randn({4})}), has_op("aten::relu"));
  EXPECT_TRUE(h.run(truncate_suffix_pass));
  EXPECT_EQ(node_kinds(h.state).size(), 21u);
  EXPECT_EQ(node_kinds(h.state).back(), "aten::relu");
  EXPECT_LE(h.queries(), 1u + 8u);  // the original + a bisection over 64
}

TEST(TruncateSuffix, APrefixEndingOnTheOtherBranchKeepsTheCulprit) {
  // Block 5's relu is position 26; the prefixes ending on the other branch after it (its cos at
  // 27, its shape query at 28) do not read the relu, but hand its tensor on: it stays.
  const Case c = case_from_ir(two_branch_ir(8, 5), {at::randn({4})});
  ASSERT_EQ(cuttable_nodes(*c.graph)[26]->kind(), c10::aten::relu);
  for (size_t end : {27u, 28u}) {
    const std::optional<Case> prefix = truncated_after(c, end);
    ASSERT_TRUE(prefix.has_value());
    EXPECT_TRUE(has_op("aten::relu")(*prefix)) << "prefix ending at " << end;
    EXPECT_EQ(cuttable_nodes(*prefix->graph).size(), end + 1);  // no node of the prefix is dead
  }
  PassHarness h(c, has_op("aten::relu"));
  EXPECT_TRUE(h.run(truncate_suffix_pass));
  EXPECT_EQ(cuttable_nodes(*h.state.graph).size(), 27u);  // the shortest prefix ends at the relu
}

}  // namespace
}  // namespace tsrepro
