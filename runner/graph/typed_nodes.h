#pragma once
// Nodes a graph edit makes by hand, shared by the backends (inject's faults) and the minifier
// (gradient attribution's probe). Header-only: each is a few IR calls.

#include <torch/csrc/jit/ir/ir.h>

namespace tsrepro {

// A node made by hand, its output typed `type`: the interpreter picks the overload from the
// inputs' types (Graph::insert's schema matching may take a Tensor for a Scalar).
inline torch::jit::Value* insert_typed(torch::jit::Graph& graph, c10::Symbol kind,
                                       torch::jit::ArrayRef<torch::jit::Value*> inputs, const c10::TypePtr& type) {
  torch::jit::Value* out = graph.insertNode(graph.create(kind, inputs))->output();
  out->setType(type);
  return out;
}

// y + extra * (y - y.detach()): exactly y's values, and a gradient (1 + extra) times y's.
// `extra` is an int value; null means 1 (twice the gradient).
inline torch::jit::Value* with_scaled_gradient(torch::jit::Graph& graph, torch::jit::Value* y,
                                               torch::jit::Value* extra = nullptr) {
  torch::jit::Value* one = graph.insertConstant(1);
  torch::jit::Value* detached = insert_typed(graph, c10::aten::detach, {y}, y->type());
  torch::jit::Value* zero_with_gradient = insert_typed(graph, c10::aten::sub, {y, detached, one}, y->type());
  return insert_typed(graph, c10::aten::add, {y, zero_with_gradient, extra ? extra : one}, y->type());
}

}  // namespace tsrepro
