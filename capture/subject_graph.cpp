// subject_graph.h

#include "capture/subject_graph.h"

#include "runner/graph/strict_fusion.h"
#include "runner/import/tensor_constants.h"
#include "runner/import/wrapped_numbers.h"

namespace tsrepro::capture {
namespace {

using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

bool is_module_input(const Value* input) {
  const auto type = input->type()->cast<c10::ClassType>();
  return type && type->is_module();
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
  // A captured graph is in memory, where a Python number still carries its flag; its case is IR
  // text plus a file of values, where the flag is lost (runner/import/wrapped_numbers.h).
  write_wrapped_numbers_as_scalars(*copy);
  mark_strict_fusion_blocks(*copy);  // a class IR text cannot name: the case's marker (strict_fusion.h)
  for (const LiftedConstant& constant : lift_tensor_constants(*copy)) subject.lifted.emplace_back(constant.value);
  forget_rankless_tensor_types(copy->block());
  subject.graph = std::move(copy);
  return subject;
}

}  // namespace tsrepro::capture
