// node_origin.h: import numbers each node and records where it came from; the number survives
// graph.ir, copies and the minifier's edits, per node, and never reaches a backend's IR.

#include "tsrepro/node_origin.h"

#include <gtest/gtest.h>
#include <torch/script.h>

#include "minifier/graph_edit.h"
#include "minifier/oracle.h"
#include "tests/support/cases.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tsrepro/case.h"
#include "tsrepro/minify.h"

namespace tsrepro {
namespace {

using testing::chain_ir;
using testing::has_op;

std::vector<torch::jit::Node*> compute_nodes(torch::jit::Block* block) {
  std::vector<torch::jit::Node*> out;
  for (torch::jit::Node* node : block->nodes()) {
    if (node->kind() != c10::prim::Constant) out.push_back(node);
    for (torch::jit::Block* inner : node->blocks())
      for (torch::jit::Node* nested : compute_nodes(inner)) out.push_back(nested);
  }
  return out;
}

std::vector<std::optional<int64_t>> numbers(torch::jit::Graph& graph) {
  std::vector<std::optional<int64_t>> out;
  for (torch::jit::Node* node : compute_nodes(graph.block())) out.push_back(origin_index(*node));
  return out;
}

// A made-up table: node i at model.py line 10 + i, in module "m<i>".
std::shared_ptr<const NodeOrigins> numbered(torch::jit::Graph& graph) {
  auto table = std::make_shared<NodeOrigins>();
  for (torch::jit::Node* node : compute_nodes(graph.block())) {
    NodeOrigin o;
    o.index = static_cast<int64_t>(table->size());
    o.kind = node->kind().toQualString();
    o.file = "model.py";
    o.line = 10 + o.index;
    o.column = 4;
    o.module_path = "m" + std::to_string(o.index);
    set_origin_index(*node, o.index);
    table->push_back(o);
  }
  return table;
}

constexpr const char* kBranchy = R"IR(graph(%x : Tensor, %flag : bool):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::sin(%x)
  %y : Tensor = prim::If(%flag)
    block0():
      %b : Tensor = aten::relu(%a)
      -> (%b)
    block1():
      %c : Tensor = aten::add(%a, %x, %one)
      -> (%c)
  %t : (Tensor, Tensor) = prim::TupleConstruct(%y, %a)
  %u : Tensor, %v : Tensor = prim::TupleUnpack(%t)
  %w : Tensor = aten::mul(%u, %v)
  return (%w)
)IR";

TEST(NodeOrigin, GraphIrShowsOriginsAsCommentsAndReadsTheNumbersBack) {
  auto graph = graph_from_ir(kBranchy, "test graph");
  const auto table = numbered(*graph);
  set_flag(*compute_nodes(graph->block())[2], NodeFlag::Culprit);

  // What workers run and reproducers embed: no trace of tsrepro's attributes.
  const std::string plain = graph_to_ir(*graph);
  EXPECT_EQ(plain.find("tsrepro_"), std::string::npos) << plain;
  EXPECT_EQ(plain, graph_to_ir(*graph_from_ir(kBranchy, "test graph")));

  const std::string text = graph_to_ir_with_origins(*graph, table.get());
  EXPECT_EQ(text.find("tsrepro_"), std::string::npos) << text;
  EXPECT_NE(text.find("aten::sin(%x) # model.py:10:4 m0 (node 0)"), std::string::npos) << text;
  EXPECT_NE(text.find("prim::If(%flag) # model.py:11:4 m1 (node 1)"), std::string::npos) << text;
  // A node with two outputs, after the parser renamed its values.
  EXPECT_NE(text.find(" = prim::TupleUnpack(%7) # model.py:15:4 m5 (node 5)"), std::string::npos) << text;

  auto reread = graph_from_ir(text, "graph.ir");
  EXPECT_EQ(numbers(*reread), numbers(*graph));
  EXPECT_EQ(graph_to_ir_with_origins(*reread, table.get()), text);
  EXPECT_EQ(graph_to_ir(*reread), plain);
}

TEST(NodeOrigin, CommentsWithoutANodeNumberAreIgnored) {
  // IR as torch prints it with source locations: comments, no numbers.
  auto graph = graph_from_ir("graph(%x : Tensor):\n  %y : Tensor = aten::relu(%x) # model.py:3:8\n  return (%y)\n",
                             "printed.ir");
  EXPECT_EQ(numbers(*graph), (std::vector<std::optional<int64_t>>{std::nullopt}));
}

TEST(NodeOrigin, MetadataIsPerNode) {
  auto graph = graph_from_ir(kBranchy, "test graph");
  numbered(*graph);
  auto copy = graph->copy();
  EXPECT_EQ(numbers(*copy), numbers(*graph));

  // Renumbering one node of the copy changes neither its other nodes nor the original.
  const std::vector<std::optional<int64_t>> before = numbers(*graph);
  set_origin_index(*compute_nodes(copy->block())[3], 99);
  std::vector<std::optional<int64_t>> expected = before;
  expected[3] = 99;
  EXPECT_EQ(numbers(*copy), expected);
  EXPECT_EQ(numbers(*graph), before);

  // A flag set on one node is on that node only, in that graph only.
  torch::jit::Node* flagged = compute_nodes(graph->block())[1];
  set_flag(*flagged, NodeFlag::Backward);
  for (torch::jit::Node* node : compute_nodes(graph->block()))
    EXPECT_EQ(has_flag(*node, NodeFlag::Backward), node == flagged) << node->kind().toQualString();
  for (torch::jit::Node* node : compute_nodes(copy->block())) EXPECT_FALSE(has_flag(*node, NodeFlag::Backward));
  set_flag(*flagged, NodeFlag::Fused);
  EXPECT_TRUE(has_flag(*flagged, NodeFlag::Backward));
  EXPECT_FALSE(has_flag(*compute_nodes(graph->block())[0], NodeFlag::Fused));
}

TEST(NodeOrigin, DifferentiationMarksTheBackwardNodesAndNoForwardNode) {
  auto graph = graph_from_ir(R"IR(graph(%x : Tensor, %w : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::mul(%x, %w)
  %b : Tensor = aten::tanh(%a)
  %c : Tensor = aten::add(%b, %x, %one)
  %d : Tensor = aten::sigmoid(%c)
  return (%d)
)IR",
                             "test graph");
  numbered(*graph);
  const std::vector<std::optional<int64_t>> before = numbers(*graph);
  const MarkedGradient gradient = differentiate_marked(*graph);
  ASSERT_TRUE(gradient.forward && gradient.backward);

  std::vector<torch::jit::Node*> backward_nodes = compute_nodes(gradient.backward->block());
  ASSERT_FALSE(backward_nodes.empty());
  for (torch::jit::Node* node : backward_nodes) EXPECT_TRUE(has_flag(*node, NodeFlag::Backward)) << *node;
  // The forward graph: every numbered node still has its number and none is marked backward.
  std::vector<int64_t> forward_numbers;
  for (torch::jit::Node* node : compute_nodes(gradient.forward->block())) {
    EXPECT_FALSE(has_flag(*node, NodeFlag::Backward)) << *node;
    if (auto index = origin_index(*node)) forward_numbers.push_back(*index);
  }
  EXPECT_EQ(forward_numbers, (std::vector<int64_t>{0, 1, 2, 3}));
  // Renumbering a node of the forward graph touches no other node and not the original.
  torch::jit::Node* first_forward = compute_nodes(gradient.forward->block()).front();
  set_origin_index(*first_forward, 42);
  for (torch::jit::Node* node : compute_nodes(gradient.forward->block())) {
    if (node == first_forward) continue;
    EXPECT_NE(origin_index(*node), std::optional<int64_t>(42)) << *node;
  }
  // The graph differentiated is untouched: same numbers, no flags.
  EXPECT_EQ(numbers(*graph), before);
  for (torch::jit::Node* node : compute_nodes(graph->block())) EXPECT_FALSE(has_flag(*node, NodeFlag::Backward));
}

TEST(NodeOrigin, CutsKeepTheSurvivorsNumbersAndNewInputsHaveNone) {
  Case c = testing::case_from_ir(chain_ir(6, {{3, "relu"}}), {at::randn({4})});
  c.node_origins = numbered(*c.graph);
  const ReferenceValues refs = compute_reference_values(c);
  const std::optional<Case> cut = with_nodes_cut(c, {0, 1, 2}, refs);
  ASSERT_TRUE(cut);
  EXPECT_EQ(numbers(*cut->graph), (std::vector<std::optional<int64_t>>{3, 4, 5}));
  EXPECT_EQ(numbers(*c.graph), (std::vector<std::optional<int64_t>>{0, 1, 2, 3, 4, 5}));
  const std::vector<NodeOrigin> left = origins_in_graph(*cut->graph, *cut->node_origins);
  ASSERT_EQ(left.size(), 3u);
  EXPECT_EQ(left[0].kind, "aten::relu");
  EXPECT_EQ(left[0].line, 13);
}

TEST(NodeOrigin, AMinifiedGraphKeepsItsCulpritsOrigin) {
  // The culprit inside an If body: truncation, cuts and inline-blocks all touch it.
  Case c = testing::case_from_ir(kBranchy, {at::randn({4}), true});
  c.node_origins = numbered(*c.graph);
  PredicateInterest interest(has_op("aten::relu"));
  MinifyObserver quiet;
  const MinifyResult r = minify(c, MinifyOptions{}, interest, quiet);
  const std::vector<NodeOrigin> left = origins_in_graph(*r.minimized.graph, *r.minimized.node_origins);
  ASSERT_EQ(left.size(), 1u) << graph_to_ir(*r.minimized.graph);
  EXPECT_EQ(left[0].kind, "aten::relu");
  EXPECT_EQ(left[0].index, 2);
  EXPECT_EQ(left[0].module_path, "m2");
}

TEST(NodeOrigin, ImportRecordsTheModelsLinesAndModulePaths) {
  const Case c = testing::example_case("conv_bn_relu_linear_scripted");
  ASSERT_TRUE(c.node_origins);
  EXPECT_EQ(c.node_origins->size(), compute_nodes(c.graph->block()).size());  // literals' packs have origins too
  std::map<std::string, NodeOrigin> by_kind;
  for (const NodeOrigin& o : origins_in_graph(*c.graph, *c.node_origins)) by_kind.emplace(o.kind, o);
  ASSERT_TRUE(by_kind.count("aten::_convolution") || by_kind.count("aten::conv2d"));
  const NodeOrigin& conv = by_kind.count("aten::conv2d") ? by_kind["aten::conv2d"] : by_kind["aten::_convolution"];
  // The model's own line (examples/make_examples.py's forward, as it was when the archive was
  // saved), not torch's conv.py: conv, bn and relu are one statement, fc a later one.
  EXPECT_NE(conv.file.find("make_examples.py"), std::string::npos) << conv.file;
  EXPECT_NE(conv.op_file.find("torch/nn/modules/conv.py"), std::string::npos) << conv.op_file;
  EXPECT_EQ(conv.module_path, "conv");
  ASSERT_TRUE(by_kind.count("aten::batch_norm"));
  EXPECT_EQ(by_kind["aten::batch_norm"].module_path, "bn");
  EXPECT_EQ(by_kind["aten::batch_norm"].line, conv.line);
  ASSERT_TRUE(by_kind.count("aten::relu"));
  EXPECT_EQ(by_kind["aten::relu"].module_path, "relu");
  EXPECT_EQ(by_kind["aten::relu"].line, conv.line);
  ASSERT_TRUE(by_kind.count("aten::linear"));
  EXPECT_EQ(by_kind["aten::linear"].module_path, "fc");
  EXPECT_EQ(by_kind["aten::linear"].file, conv.file);
  EXPECT_GT(by_kind["aten::linear"].line, conv.line);
  // Batch norm's own code, nested blocks included (`if self.training:` and the add_ inside it,
  // which libtorch's inliner leaves without a call stack), belongs to module bn.
  size_t batch_norm_code = 0;
  for (const NodeOrigin& o : *c.node_origins)
    if (o.op_file.find("torch/nn/modules/batchnorm.py") != std::string::npos) {
      ++batch_norm_code;
      EXPECT_EQ(o.module_path, "bn") << o.kind << " at " << o.op_file << ":" << o.op_line;
      EXPECT_EQ(o.line, conv.line) << o.kind;
    }
  EXPECT_GE(batch_norm_code, 2u);
}

TEST(NodeOrigin, ATracedModulesPathsComeFromItsScopes) {
  const Case c = testing::example_case("conv_bn_relu_linear_traced");
  ASSERT_TRUE(c.node_origins);
  std::map<std::string, std::string> path_of;
  for (const NodeOrigin& o : *c.node_origins) path_of.emplace(o.kind, o.module_path);
  EXPECT_EQ(path_of["aten::_convolution"], "conv");
  EXPECT_EQ(path_of["aten::batch_norm"], "bn");
  EXPECT_EQ(path_of["aten::relu"], "relu");
  EXPECT_EQ(path_of["aten::linear"], "fc");
  EXPECT_EQ(path_of["aten::flatten"], "");  // the model's own forward
}

}  // namespace
}  // namespace tsrepro
