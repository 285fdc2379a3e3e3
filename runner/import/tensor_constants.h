#pragma once
// Tensor constants as graph inputs. IR text prints a tensor constant as "<Tensor>", which nothing
// parses back, so a graph that holds one (a frozen model's weights, a tensor literal of the
// model's code) becomes a case only once its constants are inputs with their values beside the
// graph. Import does it for every case; the capture library does it for what it captures, and
// compiles this file too: torch alone.

#include <vector>

#include <torch/csrc/jit/ir/ir.h>

namespace tsrepro {

struct LiftedConstant {
  torch::jit::Value* input;  // the graph's new input, typed as the constant was
  at::Tensor value;
};

// Every tensor constant of `graph`, nested blocks included, in graph order, becomes a new input
// named constant_<k> (k counting them); their values come back in the same order. An mkldnn
// constant (prim::ConstantMKLDNNTensor: optimize_for_inference's weights) comes back dense, as a
// file can hold it, and the graph converts it with aten::to_mkldnn where the constant was.
// Nothing else changes: a backend sees each constant again where it was
// (runner/case/constant_inputs.h).
std::vector<LiftedConstant> lift_tensor_constants(torch::jit::Graph& graph);

}  // namespace tsrepro
