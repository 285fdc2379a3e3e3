// subject_graph.h

#include "capture/subject_graph.h"

#include <torch/csrc/jit/ir/constants.h>

namespace tsrepro::capture {
namespace {

using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

bool is_module_input(const Value* input) {
  const auto type = input->type()->cast<c10::ClassType>();
  return type && type->is_module();
}

void collect_tensor_constants(torch::jit::Block* block, std::vector<Node*>& out) {
  for (Node* node : block->nodes()) {
    if (node->kind() == c10::prim::ConstantMKLDNNTensor) out.push_back(node);
    if (node->kind() == c10::prim::Constant && node->output()->type()->cast<c10::TensorType>()) out.push_back(node);
    for (torch::jit::Block* inner : node->blocks()) collect_tensor_constants(inner, out);
  }
}

// A tensor type that knows its dtype but not its rank prints as "FloatTensor(...)", which the IR
// parser does not read (mkldnn values of optimize_for_inference carry such types): plain Tensor.
void forget_rankless_tensor_types(torch::jit::Block* block) {
  auto plain = [](Value* value) {
    const auto tensor = value->type()->cast<c10::TensorType>();
    if (tensor && !tensor->sizes().size() && tensor->scalarType()) value->setType(c10::TensorType::get());
  };
  for (Value* input : block->inputs()) plain(input);
  for (Node* node : block->nodes()) {
    for (Value* output : node->outputs()) plain(output);
    for (torch::jit::Block* inner : node->blocks()) forget_rankless_tensor_types(inner);
  }
}

}  // namespace

bool reads_its_module(const Graph& graph) {
  return !graph.inputs().empty() && is_module_input(graph.inputs()[0]) && !graph.inputs()[0]->uses().empty();
}

SubjectGraph ir_subject_graph(std::shared_ptr<Graph> copy) {
  SubjectGraph subject;
  if (!copy->inputs().empty() && is_module_input(copy->inputs()[0]) && copy->inputs()[0]->uses().empty()) {
    copy->eraseInput(0);
    subject.drops_first_input = true;
  }
  std::vector<Node*> constants;
  collect_tensor_constants(copy->block(), constants);
  for (Node* constant : constants) {
    Value* out = constant->output();
    // A plain name: the constants' own ("self.conv1.bias_fused_bn.1_mkldnn") do not all parse.
    Value* input = copy->addInput("constant_" + std::to_string(subject.lifted.size()));
    if (constant->kind() == c10::prim::ConstantMKLDNNTensor) {
      // The value goes in dense (a file holds no mkldnn tensor); the graph converts it where the
      // constant was.
      const at::Tensor mkldnn = constant->t(c10::attr::value);
      subject.lifted.emplace_back(mkldnn.to_dense());
      input->setType(c10::TensorType::create(subject.lifted.back().toTensor()));
      torch::jit::WithInsertPoint here(constant);
      Value* none = copy->insertConstant(c10::IValue());
      Node* to_mkldnn = copy->insertNode(copy->create(c10::aten::to_mkldnn, {input, none}));
      to_mkldnn->output()->setType(out->type());
      out->replaceAllUsesWith(to_mkldnn->output());
    } else {
      subject.lifted.push_back(*torch::jit::toIValue(out));
      input->setType(out->type());
      out->replaceAllUsesWith(input);
    }
    constant->destroy();
  }
  forget_rankless_tensor_types(copy->block());
  subject.graph = std::move(copy);
  return subject;
}

}  // namespace tsrepro::capture
