// flatten-taken-branches: every top-level prim::If whose condition the case already knows (a
// constant, an input, or a value the reference run made) becomes the branch that ran; the
// branches' own Ifs are then at the top level, and the next level takes them. All levels go in
// one candidate: it computes what the reference run computed, so where the failure does not hang
// on the Ifs themselves, one query leaves a flat graph for bisect-window.
//
// Why before the bisection: real models keep most of their work in branches on constant
// attributes (mobilenet_v2's `if self.use_res_connect` around each block). bisect-window sees a
// node with blocks as one; landing on one, it left the rest to inline-blocks, two queries per If
// and nesting level (49 queries on mobilenet_v2, 21 with this pass).

#include <torch/script.h>

#include "minifier/pass.h"

namespace tsrepro {
namespace {

using torch::jit::Node;
using torch::jit::Value;

// What the state knows of `condition` without running anything new.
std::optional<bool> known_condition(const Case& state, const Value* condition, const std::string& name_in_state,
                                    const ReferenceValues* refs) {
  if (const std::optional<c10::IValue> constant = torch::jit::toIValue(condition); constant && constant->isBool())
    return constant->toBool();
  const auto& inputs = state.graph->inputs();
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i]->debugName() == name_in_state)
      return state.values->at(i).isBool() ? std::optional<bool>(state.values->at(i).toBool()) : std::nullopt;
  if (refs)
    if (const std::optional<c10::IValue> made = refs->find(name_in_state); made && made->isBool()) return made->toBool();
  return std::nullopt;
}

std::optional<Case> with_taken_branches(const Case& state, const ReferenceValues* refs) {
  Case flat = copy_case(state);
  const std::map<const Value*, std::string> name_in_state = names_in_source(*flat.graph, *state.graph);
  std::vector<std::pair<Node*, size_t>> taken;
  for (Node* node : flat.graph->nodes()) {
    if (node->kind() != c10::prim::If) continue;
    const auto name = name_in_state.find(node->input());
    if (name == name_in_state.end()) continue;
    if (const std::optional<bool> condition = known_condition(state, node->input(), name->second, refs))
      taken.emplace_back(node, *condition ? 0 : 1);
  }
  if (taken.empty()) return std::nullopt;
  for (const auto& [conditional, branch] : taken) inline_branch(conditional, branch);
  if (!normalize(flat)) return std::nullopt;
  return flat;
}

bool has_top_level_if(const Case& state) {
  for (const Node* node : state.graph->nodes())
    if (node->kind() == c10::prim::If) return true;
  return false;
}

// One level: the top-level Ifs whose condition the state knows.
std::optional<Case> one_level_flattened(PassContext& ctx, const Case& state) {
  const std::optional<ReferenceValues> refs = ctx.reference_values_for_cuts(state);
  return with_taken_branches(state, refs ? &*refs : nullptr);
}

// Every level, without a query in between: each level's Ifs, then the reference run of what is
// left (in this process) for the conditions the branches computed. DeepLabV3's mobilenet_v3
// backbone nests twelve levels, a query each one at a time.
std::optional<Case> all_levels_flattened(PassContext& ctx, const Case& state) {
  std::optional<Case> flat;
  while (has_top_level_if(flat ? *flat : state)) {
    std::optional<Case> next = one_level_flattened(ctx, flat ? *flat : state);
    if (!next) break;
    flat = with_copy_numbering(std::move(*next));
  }
  return flat;
}

}  // namespace

bool flatten_taken_branches_pass(PassContext& ctx) {
  bool changed = false;
  while (has_top_level_if(ctx.state())) {
    // All levels in one query; where the failure needs some If (the flattened graph passes), one
    // level at a time, each a query (a level all at once is the same candidate: a cache hit).
    if (ctx.try_candidate(all_levels_flattened(ctx, ctx.state())) ||
        ctx.try_candidate(one_level_flattened(ctx, ctx.state()))) {
      changed = true;
      continue;
    }
    break;
  }
  return changed;
}

}  // namespace tsrepro
