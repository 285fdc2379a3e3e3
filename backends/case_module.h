#pragma once
// The module the ofi backend freezes, for the reproducers that load and freeze the same module
// (repro.py and repro.cpp embed it as a torch::jit::Module::save archive).

#include <vector>

#include <torch/csrc/jit/api/module.h>

#include "tsrepro/backend.h"

namespace tsrepro {

// The case's graph as the forward of a fresh module in eval mode: lifted inputs become buffers
// (tensors) or attributes (scalars such as `training`, false as after m.eval()) holding `values`,
// read through prim::GetAttr; several outputs become one tuple (`packed` says so).
// A lifted `training` attribute, named after its path (self.bn1.training -> %bn1_training): the
// flags m.eval() clears before freezing, and the reproducers' Repro.train() sets.
bool is_training_flag(const torch::jit::Value* input);

torch::jit::Module module_of_case(const BackendInput& input, const std::vector<c10::IValue>& values, bool& packed);

}  // namespace tsrepro
