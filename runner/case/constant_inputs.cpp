// fold_constant_inputs: runner/case/constant_inputs.h says which inputs and why.

#include "runner/case/constant_inputs.h"

#include <torch/csrc/jit/ir/ir.h>

#include "tsrepro/error.h"

namespace tsrepro {

bool is_constant_input(const InputSpec& spec) {
  return spec.lifted && spec.lifted_from == "constant" && spec.kind == "tensor";
}

std::vector<size_t> constant_input_indices(const std::vector<InputSpec>& specs) {
  std::vector<size_t> indices;
  for (size_t i = 0; i < specs.size(); ++i)
    if (is_constant_input(specs[i])) indices.push_back(i);
  return indices;
}

void fold_constant_inputs(torch::jit::Graph& graph, std::vector<InputSpec>& specs, std::vector<c10::IValue>& values,
                          const std::vector<bool>& written) {
  const std::vector<size_t> indices = constant_input_indices(specs);
  if (indices.empty()) return;
  if (specs.size() != graph.inputs().size() || values.size() != graph.inputs().size())
    throw UserError("constant inputs: the graph takes " + std::to_string(graph.inputs().size()) + " inputs, " +
                    std::to_string(specs.size()) + " specs and " + std::to_string(values.size()) + " values given");
  torch::jit::WithInsertPoint at_top(graph.param_node()->next());
  for (auto it = indices.rbegin(); it != indices.rend(); ++it) {
    const size_t i = *it;
    if (!values[i].isTensor())
      throw UserError("constant input '" + specs[i].name + "' holds a " + values[i].type()->repr_str() +
                      ", not a tensor");
    at::Tensor value = values[i].toTensor();
    if (i < written.size() && written[i]) value = value.clone();
    torch::jit::Node* constant = graph.create(c10::prim::Constant);
    constant->t_(c10::attr::value, value);
    constant->output()->inferTypeFrom(value);
    graph.insertNode(constant);
    graph.inputs()[i]->replaceAllUsesWith(constant->output());
    graph.eraseInput(i);
    specs.erase(specs.begin() + static_cast<std::ptrdiff_t>(i));
    values.erase(values.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

}  // namespace tsrepro
