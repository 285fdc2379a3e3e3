#pragma once
// The model's tensor constants, constants again. IR text cannot print a tensor, so import (and the
// capture) lift each tensor constant of a graph into an input whose value is stored with the case
// (InputSpec::lifted_from "constant"). Before any backend sees the graph, every evaluation puts
// each such input back as the prim::Constant it was: the profiling executor's passes treat a
// constant and an input differently (CanonicalizeOps writes a 0-dim tensor constant as a Scalar,
// which picks another overload; constant propagation folds what a constant feeds), and a case is
// judged as its model is. repro.py and repro.cpp do the same before they run anything.

#include <vector>

#include <ATen/core/ivalue.h>

#include "tsrepro/case.h"

namespace torch::jit {
struct Graph;
}

namespace tsrepro {

// Whether the input is a tensor constant of the model, lifted only to be written down.
bool is_constant_input(const InputSpec& spec);

// Which of `specs` are constant inputs, in order: the indices repro.py and repro.cpp fold.
std::vector<size_t> constant_input_indices(const std::vector<InputSpec>& specs);

// Replaces each constant input of `graph` by a prim::Constant holding its value and removes it
// from the graph's inputs, `specs` and `values` alike. `written[i]`: some node may write input i
// in place; its constant is then a copy, so that the values kept for later runs stay as read.
void fold_constant_inputs(torch::jit::Graph& graph, std::vector<InputSpec>& specs, std::vector<c10::IValue>& values,
                          const std::vector<bool>& written);

}  // namespace tsrepro
