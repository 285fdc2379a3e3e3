#pragma once
// The case's graph as the forward of a module: what ofi freezes, what the PyTorch 2 backends hand
// to torch.export (backends/pt2_program.h), and what the reproducers embed as a
// torch::jit::Module::save archive where they keep the IR form.

#include <vector>

#include <torch/csrc/jit/api/module.h>

#include "tsrepro/backend.h"

namespace tsrepro {

// A lifted `training` attribute, named after its path (self.bn1.training -> %bn1_training): the
// flags m.eval() clears before freezing, and the reproducers' Repro.train() sets.
bool is_training_flag(const torch::jit::Value* input);

// How the module's `training` flags are set: as m.eval() leaves them (freezing needs it), or as
// the case holds them (the reference ran with them).
enum class TrainingFlags { Eval, AsInCase };

// The case's graph as the forward of a fresh module: lifted inputs become buffers (tensors) or
// attributes (scalars such as `training`) holding `values`, read through prim::GetAttr; forward
// takes the inputs that were not lifted; several outputs become one tuple (`packed` says so).
torch::jit::Module module_of_case(const BackendInput& input, const std::vector<c10::IValue>& values, bool& packed,
                                  TrainingFlags flags = TrainingFlags::Eval);

// The values that module's forward takes: the inputs that were not lifted into its state.
std::vector<c10::IValue> forward_inputs(const std::vector<c10::IValue>& inputs, const std::vector<bool>& lifted);

}  // namespace tsrepro
