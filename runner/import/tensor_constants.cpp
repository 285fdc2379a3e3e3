// tensor_constants.h

#include "runner/import/tensor_constants.h"

#include <string>

#include <torch/csrc/jit/ir/constants.h>

namespace tsrepro {
namespace {

using torch::jit::Node;
using torch::jit::Value;

bool is_tensor_constant(const Node* node) {
  if (node->kind() == c10::prim::ConstantMKLDNNTensor) return true;
  return node->kind() == c10::prim::Constant && node->output()->type()->isSubtypeOf(*c10::TensorType::get());
}

void collect_tensor_constants(torch::jit::Block* block, std::vector<Node*>& out) {
  for (Node* node : block->nodes()) {
    if (is_tensor_constant(node)) out.push_back(node);
    for (torch::jit::Block* inner : node->blocks()) collect_tensor_constants(inner, out);
  }
}

}  // namespace

std::vector<LiftedConstant> lift_tensor_constants(torch::jit::Graph& graph) {
  std::vector<Node*> constants;
  collect_tensor_constants(graph.block(), constants);
  std::vector<LiftedConstant> lifted;
  for (Node* constant : constants) {
    Value* out = constant->output();
    Value* input = graph.addInput("constant_" + std::to_string(lifted.size()));
    if (constant->kind() == c10::prim::ConstantMKLDNNTensor) {
      lifted.push_back({input, constant->t(c10::attr::value).to_dense()});
      input->setType(c10::TensorType::create(lifted.back().value));
      torch::jit::WithInsertPoint here(constant);
      Value* none = graph.insertConstant(c10::IValue());
      Node* to_mkldnn = graph.insertNode(graph.create(c10::aten::to_mkldnn, {input, none}));
      to_mkldnn->output()->setType(out->type());
      out->replaceAllUsesWith(to_mkldnn->output());
    } else {
      lifted.push_back({input, torch::jit::toIValue(out)->toTensor()});
      input->setType(out->type());
      out->replaceAllUsesWith(input);
    }
    constant->destroy();
  }
  return lifted;
}

}  // namespace tsrepro
