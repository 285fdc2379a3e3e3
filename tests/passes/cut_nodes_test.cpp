// The cut-nodes pass (minifier/passes/cut_nodes.cpp, which also holds the 1-minimality check's
// single cuts) in process, a predicate deciding.

#include <gtest/gtest.h>

#include "tests/passes/pass_harness.h"

namespace tsrepro {
namespace {

// An edit of an edit: the window's truncation drops a node the nodes after the window read (an
// int, which no prefix returns), and the cut that follows copies the truncated graph, which
// numbers its unnamed values afresh. The cut still feeds each value the state's reference
// value of that value, not that of the one now numbered as it was.
TEST(CutNodes, AnEditOfAnEditFeedsTheStatesValues) {
  const at::Tensor x = at::tensor({0.5, -1.0, 2.0});
  const Case state =
      with_copy_numbering(case_from_ir("graph(%x : Tensor):\n"
                                       "  %1 : int = aten::dim(%x)\n"
                                       "  %2 : Tensor = aten::sin(%x)\n"
                                       "  %3 : Tensor = aten::cos(%2)\n"
                                       "  %4 : Tensor = aten::tanh(%3)\n"
                                       "  %5 : Tensor = aten::add(%4, %4, %1)\n"
                                       "  return (%5)\n",
                                       {x}));
  const ReferenceValues refs = compute_reference_values(state);
  const std::optional<Case> prefix = truncated_after(state, 3, PrefixOutputs::LastNode);  // dim goes
  ASSERT_TRUE(prefix.has_value());
  ASSERT_EQ(node_kinds(*prefix), (std::vector<std::string>{"aten::sin", "aten::cos", "aten::tanh"}));
  const std::optional<Case> window = graph_from_folding(*prefix, 2, refs);  // tanh alone
  ASSERT_TRUE(window.has_value());
  ASSERT_EQ(node_kinds(*window), (std::vector<std::string>{"aten::tanh"}));
  ASSERT_EQ(window->values->size(), 1u);
  EXPECT_TRUE(at::allclose(window->values->at(0).toTensor(), at::cos(at::sin(x))));
}

TEST(CutNodes, LeavesTheCulpritFedByReferenceValues) {
  const at::Tensor x = at::randn({4});
  PassHarness h(case_from_ir(kChain, {x}), has_op("aten::relu"));
  EXPECT_TRUE(h.run(cut_nodes_pass));
  EXPECT_EQ(node_kinds(h.state), (std::vector<std::string>{"aten::relu"}));
  torch::jit::Node* relu = cuttable_nodes(*h.state.graph).front();
  const auto& inputs = h.state.graph->inputs();
  const size_t fed_by = std::find(inputs.begin(), inputs.end(), relu->input(0)) - inputs.begin();
  ASSERT_LT(fed_by, inputs.size());
  EXPECT_TRUE(at::allclose(h.state.values->at(fed_by).toTensor(), at::sin(x)));
}

TEST(CutNodes, CutValuesAreTheReferenceValues) {
  Case c = case_from_ir(kChain, {at::tensor({0.5, -1.0})});
  ReferenceValues refs = compute_reference_values(c);
  std::optional<Case> cut = with_nodes_cut(c, {0}, refs);  // aten::sin
  ASSERT_TRUE(cut);
  ASSERT_EQ(cut->values->size(), 2u);  // x (still read by aten::add) and the cut value
  EXPECT_TRUE(at::allclose(cut->values->at(1).toTensor(), at::sin(at::tensor({0.5, -1.0}))));
  EXPECT_NO_THROW(graph_from_ir(graph_to_ir(*cut->graph), "cut"));
}

}  // namespace
}  // namespace tsrepro
