// inline-blocks: a culprit inside a prim::If branch or a prim::Loop body keeps the whole
// construct alive, since the cutting passes treat a node with blocks as one (real models are full
// of them: shape checks that raise, `if self.training`, list-building loops). This pass replaces
// an If by the nodes of one of its branches, and a Loop by one pass through its body (iteration 0,
// the loop's initial values), like llvm-reduce's simplify-cfg; the cutting passes then see the
// culprit at the top level. Each node with blocks, nested ones included (outermost and first
// first), is tried alone: an inner `if ...: raise` may have to go before its outer If can.

#include <torch/script.h>

#include "minifier/pass.h"
#include "runner/graph/nested_nodes.h"

namespace tsrepro {
namespace {

using torch::jit::Node;

// The ways to flatten a node: each branch of an If, the first pass of a Loop.
size_t flattenings_of(Node* node) {
  if (node->kind() == c10::prim::If) return node->blocks().size();
  if (node->kind() == c10::prim::Loop) return 1;
  return 0;
}

// Every If and Loop in pre-order: the same index finds the same node in a copy of the graph.
std::vector<Node*> nodes_with_blocks(torch::jit::Graph& graph) {
  std::vector<Node*> nodes;
  for (Node* node : nested_nodes(graph.block()))
    if (!node->blocks().empty()) nodes.push_back(node);
  return nodes;
}

std::optional<Case> flattened(const Case& state, size_t index, size_t way) {
  Case candidate = copy_case(state);
  Node* node = nodes_with_blocks(*candidate.graph).at(index);
  if (node->kind() == c10::prim::If)
    inline_branch(node, way);
  else
    inline_first_iteration(*candidate.graph, node);
  if (!normalize(candidate)) return std::nullopt;
  return candidate;
}

}  // namespace

bool inline_blocks_pass(PassContext& ctx) {
  if (nodes_with_blocks(*ctx.state().graph).empty()) return ctx.skip("no prim::If or prim::Loop");
  bool changed = false;
  size_t index = 0;
  while (true) {
    const std::vector<Node*> nodes = nodes_with_blocks(*ctx.state().graph);
    if (index >= nodes.size()) return changed;
    const size_t ways = flattenings_of(nodes[index]);
    const Case& state = ctx.state();
    if (ways > 0 && ctx.try_candidates_lazily(ways, [&](size_t way) { return flattened(state, index, way); })) {
      changed = true;
      continue;  // the hoisted nodes start at `index`: they may hold blocks of their own
    }
    ++index;
  }
}

}  // namespace tsrepro
