// module_of_case: backends/case_module.h says what it makes and for whom.

#include "backends/case_module.h"

#include <string>

#include <torch/csrc/jit/ir/ir.h>

namespace tsrepro {

using torch::jit::Value;

bool is_training_flag(const Value* input) {
  const std::string& name = input->debugName();
  const std::string flag = "training";
  return input->type()->kind() == c10::TypeKind::BoolType && name.size() >= flag.size() &&
         name.compare(name.size() - flag.size(), flag.size(), flag) == 0;
}

torch::jit::Module module_of_case(const BackendInput& input, const std::vector<c10::IValue>& values, bool& packed,
                                  TrainingFlags flags) {
  torch::jit::Module module(c10::QualifiedName("__torch__.tsrepro.CaseModule"));
  module.register_attribute("training", c10::BoolType::get(), false);  // forward reads the lifted flags
  auto graph = input.graph->copy();
  packed = graph->outputs().size() != 1;
  if (packed) {
    std::vector<Value*> outputs(graph->outputs().begin(), graph->outputs().end());
    Value* tuple = graph->insertNode(graph->createTuple(outputs))->output();
    while (!graph->outputs().empty()) graph->eraseOutput(0);
    graph->registerOutput(tuple);
  }
  Value* self = graph->insertInput(0, "self");
  self->setType(module.type());
  torch::jit::WithInsertPoint at_top(graph->param_node()->next());
  for (size_t i = input.lifted.size(); i-- > 0;) {
    if (!input.lifted[i]) continue;
    const std::string name = "lifted_" + std::to_string(i);
    Value* lifted = graph->inputs()[i + 1];
    if (values.at(i).isTensor()) {
      module.register_buffer(name, values.at(i).toTensor());
    } else {
      // m.eval() sets every submodule's `training` to False.
      const bool cleared = flags == TrainingFlags::Eval && is_training_flag(lifted);
      module.register_attribute(name, lifted->type(), cleared ? c10::IValue(false) : values.at(i));
    }
    lifted->replaceAllUsesWith(graph->insertGetAttr(self, name));
    graph->eraseInput(i + 1);
  }
  auto* forward = module._ivalue()->compilation_unit()->create_function(
      c10::QualifiedName(*module.type()->name(), "forward"), graph);
  module.type()->addMethod(forward);
  return module;
}

std::vector<c10::IValue> forward_inputs(const std::vector<c10::IValue>& inputs, const std::vector<bool>& lifted) {
  std::vector<c10::IValue> kept;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (i >= lifted.size() || !lifted[i]) kept.push_back(inputs[i]);
  return kept;
}

}  // namespace tsrepro
