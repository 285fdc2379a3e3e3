#pragma once
// A scripted or traced module's method as a standalone graph: every call inlined (calls through
// interface types and on submodules passed around as values included, since the concrete
// submodule is known from the module object), the module's state read through prim::GetAttr
// turned into graph inputs (tensors, and lists and tuples of tensors such as nn.LSTM's
// _flat_weights; and bools, ints, floats, strings, None and int lists, which a module's executor
// reads as opaquely as tensors) or constants (everything else), and %self dropped.

#include <memory>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>

#include <ATen/core/interned_strings.h>

namespace torch::jit {
struct Block;
struct Graph;
struct Module;
struct Node;
}  // namespace torch::jit

namespace tsrepro {

struct LiftedInput {
  c10::IValue value;  // a tensor or a scalar attribute
  std::string from;   // "self.layer1.conv.weight", "self.lstm._flat_weights.3"
};

struct LiftedGraph {
  std::shared_ptr<torch::jit::Graph> graph;
  std::vector<LiftedInput> lifted;  // the last lifted.size() graph inputs, in this order
};

// Throws UserError("<origin>: ...") naming the node, its kind and its source line where the
// module's state is used in a way a standalone graph cannot express (an attribute write, a
// submodule stored in a list or returned).
LiftedGraph lift_module_method(const torch::jit::Module& module, const std::string& method, const std::string& origin);

// The nodes of `kind` in `block` and the blocks nested in it, in program order.
std::vector<torch::jit::Node*> nodes_of_kind(torch::jit::Block* block, c10::Symbol kind);

// "node 'prim::SetAttr' (model.py:12)": how errors name a node for people.
std::string describe_node(const torch::jit::Node* node);

}  // namespace tsrepro
