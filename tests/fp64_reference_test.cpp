// runner/fp64_reference: the float64 reference casts each floating input inside the graph,
// right before its first use, and computes what casting every input up front computes.

#include "runner/exec/fp64_reference.h"

#include <gtest/gtest.h>
#include <torch/script.h>

#include "backends/builtin.h"
#include "tsrepro/case.h"
#include "tsrepro/compare.h"

namespace tsrepro {
namespace {

// Two "layers" of parameters, an integer index, and a parameter used only inside an If body.
constexpr const char* kLayers =
    R"IR(graph(%x : Tensor, %w1 : Tensor, %w2 : Tensor, %idx : Tensor, %w3 : Tensor, %c : bool):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %y1 : Tensor = aten::mul(%x, %w1)
  %r1 : Tensor = aten::relu(%y1)
  %y2 : Tensor = aten::mul(%r1, %w2)
  %g : Tensor = aten::index_select(%y2, %zero, %idx)
  %out : Tensor = prim::If(%c)
    block0():
      %z : Tensor = aten::add(%g, %w3, %one)
      -> (%z)
    block1():
      -> (%g)
  return (%out, %w1))IR";

std::vector<c10::IValue> layer_inputs() {
  return {torch::randn({4}), torch::randn({4}),
          torch::randn({4}), torch::tensor({2, 0}, torch::kLong),
          torch::randn({1}), true};
}

// The kinds of the top-level nodes, constants left out, in order.
std::vector<std::string> kinds(const torch::jit::Graph& graph) {
  std::vector<std::string> out;
  for (const torch::jit::Node* node : graph.nodes())
    if (node->kind() != c10::prim::Constant) out.push_back(node->kind().toQualString());
  return out;
}

std::shared_ptr<torch::jit::Graph> layers_graph() { return graph_from_ir(kLayers, "test graph"); }

TEST(Fp64Reference, CastsEachFloatingInputRightBeforeItsFirstUse) {
  const BackendInput input{layers_graph(), {}};
  const Fp64Reference fp64 = fp64_reference(input, layer_inputs(), {});
  // x and w1 before the first mul, w2 only after the relu, w3 before the If that reads it
  // inside; the integer index is not cast.
  EXPECT_EQ(kinds(*fp64.input.graph),
            (std::vector<std::string>{"aten::to", "aten::to", "aten::mul", "aten::relu", "aten::to", "aten::mul",
                                      "aten::index_select", "aten::to", "prim::If"}));
  // The values handed to the run stay float32: only the graph's copies are float64.
  EXPECT_EQ(fp64.inputs[1].toTensor().scalar_type(), at::kFloat);
  // The original graph is untouched.
  EXPECT_EQ(kinds(*input.graph),
            (std::vector<std::string>{"aten::mul", "aten::relu", "aten::mul", "aten::index_select", "prim::If"}));
}

TEST(Fp64Reference, ComputesWhatCastingEveryInputUpFrontComputes) {
  const BackendInput input{layers_graph(), {}};
  const std::vector<c10::IValue> inputs = layer_inputs();
  const Fp64Reference fp64 = fp64_reference(input, inputs, {});
  const std::vector<c10::IValue> got = interpret_graph(fp64.input.graph)->run(fp64.inputs);

  std::vector<c10::IValue> wide;
  for (const c10::IValue& v : inputs) wide.push_back(cast_floating_to_fp64(v));
  const std::vector<c10::IValue> want = interpret_graph(input.graph->copy())->run(wide);

  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].toTensor().scalar_type(), at::kDouble) << "output " << i;
    EXPECT_TRUE(torch::equal(got[i].toTensor(), want[i].toTensor())) << "output " << i;
  }
}

TEST(Fp64Reference, InputsWhoseGradientIsWantedAreCastUpFront) {
  const BackendInput input{layers_graph(), {}};
  const Fp64Reference fp64 = fp64_reference(input, layer_inputs(), {true, false, false, false, false, false});
  // x arrives as a float64 leaf (its gradient is taken in float64); w1 is still cast in the graph.
  EXPECT_EQ(fp64.inputs[0].toTensor().scalar_type(), at::kDouble);
  EXPECT_EQ(kinds(*fp64.input.graph).front(), "aten::to");
  size_t casts = 0;
  for (const torch::jit::Node* node : fp64.input.graph->nodes()) casts += node->kind() == c10::aten::to;
  EXPECT_EQ(casts, 3u);  // w1, w2, w3
}

TEST(Fp64Reference, AnInPlaceWriteReachesTheCopyNotTheInput) {
  const auto graph = graph_from_ir(R"IR(graph(%w : Tensor):
  %one : int = prim::Constant[value=1]()
  %w2 : Tensor = aten::add_(%w, %w, %one)
  return (%w2))IR",
                                   "test graph");
  const at::Tensor w = torch::ones({3});
  const Fp64Reference fp64 = fp64_reference(BackendInput{graph, {}}, {w}, {});
  const std::vector<c10::IValue> out = interpret_graph(fp64.input.graph)->run(fp64.inputs);
  EXPECT_TRUE(torch::equal(out[0].toTensor(), torch::full({3}, 2.0, torch::kDouble)));
  EXPECT_TRUE(torch::equal(w, torch::ones({3})));
}

}  // namespace
}  // namespace tsrepro
