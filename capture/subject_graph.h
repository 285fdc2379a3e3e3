#pragma once
// The graph a captured subject's case is made of: a copy of what the program runs that IR text
// can hold. A frozen or optimize_for_inference'd model keeps its weights as tensor constants
// (prim::Constant[value=<Tensor>], prim::ConstantMKLDNNTensor), which IR text prints as
// "<Tensor>" and nothing parses back; and its graph's module input, all attributes folded, is
// unused, while a module saved again with such constants does not load. So the constants become
// inputs of the copy, with their values beside it, and an unused module input is dropped.

#include <memory>
#include <vector>

#include <torch/csrc/jit/ir/ir.h>

namespace tsrepro::capture {

struct SubjectGraph {
  std::shared_ptr<torch::jit::Graph> graph;
  // The values of the inputs that stand for constants, appended after the program's inputs in
  // this order (an mkldnn constant as a dense tensor: the graph converts it back).
  std::vector<c10::IValue> lifted;
  bool drops_first_input = false;  // the program's first input (an unused module) is not the copy's
};

// `copy` is the caller's own copy of the subject; it is changed in place.
SubjectGraph ir_subject_graph(std::shared_ptr<torch::jit::Graph> copy);

// A graph whose first input is a module its nodes read (prim::GetAttr): only the module itself
// holds what they read, so the subject is the module, saved.
bool reads_its_module(const torch::jit::Graph& graph);

}  // namespace tsrepro::capture
