// flatten-taken-branches: every top-level prim::If whose condition the case already knows (a
// constant, an input, or a value the reference run made) becomes the branch that ran, and every
// top-level prim::Loop whose trip count it knows to be 0 or 1 becomes what that run did (its
// initial values, or one pass through its body); the blocks' own Ifs and Loops are then at the
// top level, and the next level takes them. All levels go in one candidate: it computes what the
// reference run computed, so where the failure does not hang on the blocks themselves, one query
// leaves a flat graph for bisect-window.
//
// Why before the bisection: real models keep most of their work in branches on constant
// attributes (mobilenet_v2's `if self.use_res_connect` around each block). bisect-window sees a
// node with blocks as one; landing on one, it left the rest to inline-blocks, two queries per If
// and nesting level (49 queries on mobilenet_v2, 21 with this pass). Loops for the same reason:
// a detection model's per-image loops run once at batch 1 (`for _ in image_list.image_sizes` of
// ssd300's anchors), and a culprit inside one took truncate-suffix and cut-ranges to dig out
// (53 queries on ssd300_vgg16 where its bound is 32).

#include <torch/script.h>

#include "minifier/pass.h"

namespace tsrepro {
namespace {

using torch::jit::Node;
using torch::jit::Value;

// What the state knows of `value` without running anything new: a constant, an input's value,
// or what the reference run made.
std::optional<c10::IValue> known_value(const Case& state, const Value* value,
                                       const std::map<const Value*, std::string>& name_in_state,
                                       const ReferenceValues* refs) {
  // auto, not std::optional: 1.13's toIValue gives a c10::optional, which converts to an IValue
  // (None where it is empty) and so to a std::optional that always holds one.
  if (const auto constant = torch::jit::toIValue(value)) return *constant;
  const auto name = name_in_state.find(value);
  if (name == name_in_state.end()) return std::nullopt;
  const auto& inputs = state.graph->inputs();
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i]->debugName() == name->second) return state.values->at(i);
  if (refs) return refs->find(name->second);
  return std::nullopt;
}

std::optional<bool> known_bool(const Case& state, const Value* value,
                               const std::map<const Value*, std::string>& name_in_state, const ReferenceValues* refs) {
  const std::optional<c10::IValue> known = known_value(state, value, name_in_state, refs);
  return known && known->isBool() ? std::optional<bool>(known->toBool()) : std::nullopt;
}

// How many iterations a prim::Loop(max_trips, initial condition, ...) runs, where that is 0 or 1
// and known: a loop that may go on is left as it is.
std::optional<int64_t> known_trips_up_to_one(const Case& state, Node* loop,
                                             const std::map<const Value*, std::string>& name_in_state,
                                             const ReferenceValues* refs) {
  const std::optional<bool> enters = known_bool(state, loop->inputs()[1], name_in_state, refs);
  if (enters == false) return 0;
  const std::optional<c10::IValue> max_trips = known_value(state, loop->inputs()[0], name_in_state, refs);
  if (!enters || !max_trips || !max_trips->isInt()) return std::nullopt;
  const int64_t trips = std::max<int64_t>(max_trips->toInt(), 0);
  return trips <= 1 ? std::optional<int64_t>(trips) : std::nullopt;
}

std::optional<Case> with_taken_branches(const Case& state, const ReferenceValues* refs) {
  Case flat = copy_case(state);
  const std::map<const Value*, std::string> name_in_state = names_in_source(*flat.graph, *state.graph);
  std::vector<std::pair<Node*, size_t>> taken;  // an If and its branch that ran, a Loop and its trips
  for (Node* node : flat.graph->nodes()) {
    if (node->kind() == c10::prim::If) {
      if (const std::optional<bool> condition = known_bool(state, node->input(), name_in_state, refs))
        taken.emplace_back(node, *condition ? 0 : 1);
    } else if (node->kind() == c10::prim::Loop) {
      if (const std::optional<int64_t> trips = known_trips_up_to_one(state, node, name_in_state, refs))
        taken.emplace_back(node, static_cast<size_t>(*trips));
    }
  }
  if (taken.empty()) return std::nullopt;
  for (const auto& [node, way] : taken) {
    if (node->kind() == c10::prim::If)
      inline_branch(node, way);
    else if (way == 1)
      inline_first_iteration(*flat.graph, node);
    else
      inline_no_iteration(node);
  }
  if (!normalize(flat)) return std::nullopt;
  return flat;
}

bool has_top_level_block(const Case& state) {
  for (const Node* node : state.graph->nodes())
    if (node->kind() == c10::prim::If || node->kind() == c10::prim::Loop) return true;
  return false;
}

// One level: the top-level Ifs whose condition the state knows, the Loops whose trips it knows.
std::optional<Case> one_level_flattened(PassContext& ctx, const Case& state) {
  const std::optional<ReferenceValues> refs = ctx.reference_values_of(state);
  return with_taken_branches(state, refs ? &*refs : nullptr);
}

// Every level, without a query in between: each level's Ifs and Loops, then the reference run of what is
// left (in this process) for the conditions the branches computed. DeepLabV3's mobilenet_v3
// backbone nests twelve levels, a query each one at a time.
std::optional<Case> all_levels_flattened(PassContext& ctx, const Case& state) {
  std::optional<Case> flat;
  while (has_top_level_block(flat ? *flat : state)) {
    std::optional<Case> next = one_level_flattened(ctx, flat ? *flat : state);
    if (!next) break;
    flat = with_copy_numbering(std::move(*next));
  }
  return flat;
}

}  // namespace

bool flatten_taken_branches_pass(PassContext& ctx) {
  if (!has_top_level_block(ctx.state())) return ctx.skip("no prim::If or prim::Loop");
  bool changed = false;
  while (has_top_level_block(ctx.state())) {
    // All levels in one query; where the failure needs some If or Loop (the flattened graph passes), one
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
