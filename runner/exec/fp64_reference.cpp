// fp64_reference.h: each floating tensor input cast to float64 right before its first use.

#include <torch/script.h>

#include "runner/exec/fp64_reference.h"
#include "tsrepro/compare.h"

namespace tsrepro {
namespace {

bool castable_in_graph(const c10::IValue& value, const torch::jit::Value& graph_input, bool wants_grad) {
  if (wants_grad || !value.isTensor() || !graph_input.type()->cast<c10::TensorType>()) return false;
  const at::Tensor& tensor = value.toTensor();
  return tensor.defined() && tensor.is_floating_point() && tensor.scalar_type() != at::kDouble;
}

// The node of the graph's own block that holds `node` (itself, or the If/Loop around it).
torch::jit::Node* top_level(torch::jit::Node* node, torch::jit::Block* top) {
  while (node->owningBlock() != top) node = node->owningBlock()->owningNode();
  return node;
}

torch::jit::Node* first_top_level_user(torch::jit::Value* value, torch::jit::Block* top) {
  torch::jit::Node* first = nullptr;
  for (const torch::jit::Use& use : value->uses()) {
    torch::jit::Node* user = top_level(use.user, top);
    if (first == nullptr || user->isBefore(first)) first = user;
  }
  return first;
}

// Every use of `value` reads, instead, a float64 copy made right before the first of them.
void cast_before_first_use(torch::jit::Graph& graph, torch::jit::Value* value) {
  torch::jit::Node* first = first_top_level_user(value, graph.block());
  if (first == nullptr) return;  // unused: nothing reads it, nothing to cast
  torch::jit::WithInsertPoint here(first);
  torch::jit::Node* cast =
      graph.create(c10::Symbol::fromQualString("aten::to"),
                   {value, graph.insertConstant(static_cast<int64_t>(at::kDouble)), graph.insertConstant(false),
                    graph.insertConstant(false), graph.insertConstant(c10::IValue())});
  graph.insertNode(cast);
  torch::jit::Value* copy = cast->output();
  copy->setType(value->type()->expect<c10::TensorType>()->withScalarType(at::kDouble));
  value->replaceAllUsesAfterNodeWith(cast, copy);
}

}  // namespace

Fp64Reference fp64_reference(const BackendInput& input, const std::vector<c10::IValue>& inputs,
                             const std::vector<bool>& with_grad) {
  Fp64Reference out{BackendInput{input.graph->copy(), input.lifted}, {}};
  out.inputs.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const bool wants_grad = i < with_grad.size() && with_grad[i];
    torch::jit::Value* graph_input = i < out.input.graph->inputs().size() ? out.input.graph->inputs()[i] : nullptr;
    if (graph_input != nullptr && castable_in_graph(inputs[i], *graph_input, wants_grad)) {
      cast_before_first_use(*out.input.graph, graph_input);
      out.inputs.push_back(inputs[i]);
    } else {
      out.inputs.push_back(cast_floating_to_fp64(inputs[i]));
    }
  }
  return out;
}

}  // namespace tsrepro
