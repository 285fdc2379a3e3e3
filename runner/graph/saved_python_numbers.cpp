// flag_saved_python_numbers: runner/graph/saved_python_numbers.h says which constants and why.

#include "runner/graph/saved_python_numbers.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>

namespace tsrepro {
namespace {

bool looks_like_a_saved_python_number(const at::Tensor& t) {
  return t.defined() && t.dim() == 0 && t.device().is_cpu() && !t.requires_grad() &&
         (t.scalar_type() == at::kDouble || t.scalar_type() == at::kComplexDouble);
}

std::size_t flag_in_block(torch::jit::Block* block) {
  std::size_t flagged = 0;
  for (torch::jit::Node* node : block->nodes()) {
    for (torch::jit::Block* inner : node->blocks()) flagged += flag_in_block(inner);
    if (node->kind() != c10::prim::Constant || !node->hasAttribute(c10::attr::value) ||
        node->kindOf(c10::attr::value) != torch::jit::AttributeKind::t)
      continue;
    const at::Tensor t = node->t(c10::attr::value);
    if (!looks_like_a_saved_python_number(t) || t.unsafeGetTensorImpl()->is_wrapped_number()) continue;
    t.unsafeGetTensorImpl()->set_wrapped_number(true);
    ++flagged;
  }
  return flagged;
}

}  // namespace

std::size_t flag_saved_python_numbers(torch::jit::Graph& graph) { return flag_in_block(graph.block()); }

std::size_t flag_saved_python_numbers(const torch::jit::Module& module) {
  std::size_t flagged = 0;
  for (const torch::jit::Module& each : module.modules())
    for (const torch::jit::Method& method : each.get_methods())
      if (torch::jit::GraphFunction* body = torch::jit::tryToGraphFunction(method.function()))
        flagged += flag_saved_python_numbers(*body->graph());
  return flagged;
}

}  // namespace tsrepro
