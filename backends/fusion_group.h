#pragma once
// What counts as a fusion group, in one place for the backends, the TSREPRO_AFTER workflow and
// libtsrepro_capture.so (which links libtorch alone: hence a header).

#include <algorithm>
#include <string>
#include <vector>

#include <torch/csrc/jit/ir/ir.h>

namespace tsrepro {

// Whether `node` is a fusion group: a node whose subgraph a fuser hands to its code generator
// (prim::TensorExprGroup and the other fusers' kinds). prim::DifferentiableGraph also has a
// subgraph, but it is autodiff's unit, not a kernel: the groups inside it are what counts.
inline bool is_fusion_group(const torch::jit::Node& node) {
  static const char* const kinds[] = {"prim::TensorExprGroup", "prim::FusionGroup", "prim::CudaFusionGroup",
                                      "prim::TensorExprDynamicGroup"};
  const std::string kind = node.kind().toQualString();
  return std::find(std::begin(kinds), std::end(kinds), kind) != std::end(kinds) &&
         node.hasAttribute(c10::attr::Subgraph);
}

// Every fusion group in `block`, nested blocks included, in graph order.
inline void collect_fusion_groups(torch::jit::Block* block, std::vector<torch::jit::Node*>& out) {
  for (torch::jit::Node* node : block->nodes()) {
    if (is_fusion_group(*node)) out.push_back(node);
    for (torch::jit::Block* inner : node->blocks()) collect_fusion_groups(inner, out);
  }
}

}  // namespace tsrepro
