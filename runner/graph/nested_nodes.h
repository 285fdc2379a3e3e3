#pragma once
// Every node of a block, the nodes of its nodes' blocks included, in pre-order (a node, then its
// blocks' nodes, then the next node): the one walk the import passes (object tuples), the
// backends (inject's faults) and the minifier (inline-blocks) share. The same order finds the
// same node in a copy of the graph. Header-only: a few lines of IR traversal.

#include <vector>

#include <torch/csrc/jit/ir/ir.h>

namespace tsrepro {

inline void append_nested_nodes(torch::jit::Block* block, std::vector<torch::jit::Node*>& out) {
  for (torch::jit::Node* node : block->nodes()) {
    out.push_back(node);
    for (torch::jit::Block* inner : node->blocks()) append_nested_nodes(inner, out);
  }
}

inline std::vector<torch::jit::Node*> nested_nodes(torch::jit::Block* block) {
  std::vector<torch::jit::Node*> nodes;
  append_nested_nodes(block, nodes);
  return nodes;
}

}  // namespace tsrepro
