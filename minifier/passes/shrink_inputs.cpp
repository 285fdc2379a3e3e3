// shrink-inputs: smaller tensors make a shorter repro and a faster one. First one try at the
// least there is (every dimension of every tensor input cut to 1: most crashes and compile errors
// do not depend on the shape, and this settles them in one query instead of one per halving);
// where the reference refuses that (a pooling window wants 2), one try at the inputs halved all
// together as often as the reference takes them, found in process; then halve every dimension of
// all tensor inputs at once, then of half of them, then of each one, while the failure holds (the
// reference rejects shapes that no longer fit together: those candidates are invalid, not
// interesting). A tensor of at most kSmallEnough elements is left as
// it is: it already prints on one line of a repro, and under a compiler whose query costs seconds
// (Inductor) halving a 9-element tensor spent 12 queries and gained nothing. Nor are the model's
// own tensors (lifted parameters and buffers) halved: their shapes are the model's (an LSTM's
// weights), and halving them only made candidates the reference rejects.
//
// A candidate is run by the reference here, in this process, before it is asked: shapes that no
// longer fit together (an attention input's last dimension halved under its weights) are no
// candidate, and cost no query. The graph is 1-minimal by now, a few nodes: the run costs
// nothing beside a compile (AOTInductor's native MHA bug spent its last 2 of 12 queries on such
// shapes).

#include <torch/script.h>

#include "minifier/pass.h"

namespace tsrepro {
namespace {

// How long a dimension of `size` elements becomes.
using NewLength = int64_t (*)(int64_t size);
int64_t half_length(int64_t size) { return (size + 1) / 2; }
int64_t unit_length(int64_t) { return 1; }

constexpr int64_t kSmallEnough = 16;  // elements

// The leading part of every dimension longer than 1; nullopt if nothing shrinks.
std::optional<at::Tensor> shrunk(const at::Tensor& t, NewLength length) {
  at::Tensor out = t;
  bool any = false;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) <= 1) continue;
    out = out.narrow(d, 0, length(t.size(d)));
    any = true;
  }
  if (!any) return std::nullopt;
  return out.contiguous().clone();
}

std::optional<Case> with_inputs_shrunk(const Case& state, const std::vector<size_t>& indices, NewLength length) {
  Case smaller = copy_case(state);
  bool any = false;
  for (size_t i : indices) {
    const c10::IValue& v = smaller.values->at(i);
    if (!v.isTensor()) continue;
    std::optional<at::Tensor> part = shrunk(v.toTensor(), length);
    if (!part) continue;
    InputSpec spec = spec_from_value(smaller.inputs[i].name, *part);
    spec.lifted = smaller.inputs[i].lifted;
    spec.lifted_from = smaller.inputs[i].lifted_from;
    smaller.inputs[i] = spec;
    (*smaller.values)[i] = *part;
    any = true;
  }
  if (!any) return std::nullopt;
  return smaller;
}

// `candidate` where the reference runs it; none where it raises (checked only where the reference
// runs the state itself, so that a refusal says the shapes are wrong, not the reference).
std::optional<Case> if_the_reference_runs(PassContext& ctx, std::optional<Case> candidate) {
  if (!candidate || !ctx.state_reference_values() || ctx.reference_values_of(*candidate)) return candidate;
  return std::nullopt;
}

// The inputs `shrinkable_of` names (tensor_inputs_of) halved all together, again and again while the
// reference runs the result, in process: the last one it ran. Nullopt where it runs none, or only
// the first (which the halving loop asks anyway).
template <typename Shrinkable>
std::optional<Case> halved_as_far_as_the_reference_takes(PassContext& ctx, Shrinkable shrinkable_of) {
  std::optional<Case> deepest;
  size_t halvings = 0;
  for (const Case* at = &ctx.state();; at = &*deepest) {
    const std::vector<size_t> indices = shrinkable_of(*at);
    std::optional<Case> next =
        if_the_reference_runs(ctx, indices.empty() ? std::nullopt : with_inputs_shrunk(*at, indices, half_length));
    if (!next) break;
    deepest = std::move(next);
    ++halvings;
  }
  return halvings > 1 ? std::move(deepest) : std::nullopt;
}

}  // namespace

bool shrink_inputs_pass(PassContext& ctx) {
  const auto tensor_inputs_of = [](const Case& c) {
    std::vector<size_t> tensors;
    for (size_t i = 0; i < c.values->size(); ++i)
      if (const c10::IValue& v = c.values->at(i);
          v.isTensor() && v.toTensor().numel() > kSmallEnough && !c.inputs[i].lifted)
        tensors.push_back(i);
    return tensors;
  };
  const auto tensor_inputs = [&] { return tensor_inputs_of(ctx.state()); };
  const std::vector<size_t> shrinkable = tensor_inputs();
  if (shrinkable.empty()) return ctx.skip("no tensor input larger than it need be");
  std::optional<Case> least = if_the_reference_runs(ctx, with_inputs_shrunk(ctx.state(), shrinkable, unit_length));
  const bool least_refused = !least;
  bool changed = ctx.try_candidate(std::move(least));
  if (least_refused && ctx.state_reference_values())  // as far as the reference takes them, then
    changed = ctx.try_candidate(halved_as_far_as_the_reference_takes(ctx, tensor_inputs_of));
  const auto halve = [&](const std::vector<size_t>& subset) {
    return if_the_reference_runs(ctx, with_inputs_shrunk(ctx.state(), subset, half_length));
  };
  for (;;) {
    const std::vector<size_t> tensors = tensor_inputs();
    if (tensors.empty() || !ctx.try_all_halves_singles(tensors, halve)) break;
    changed = true;
  }
  return changed;
}

}  // namespace tsrepro
