// shrink-inputs: smaller tensors make a shorter repro and a faster one. Halve every dimension
// of all tensor inputs at once, then of half of them, then of each one, while the failure holds
// (the reference rejects shapes that no longer fit together: those candidates are invalid, not
// interesting).

#include <torch/script.h>

#include "minifier/pass.h"

namespace tsrepro {
namespace {

// The leading half (rounded up) of every dimension longer than 1; nullopt if nothing shrinks.
std::optional<at::Tensor> halved(const at::Tensor& t) {
  at::Tensor out = t;
  bool shrunk = false;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) <= 1) continue;
    out = out.narrow(d, 0, (t.size(d) + 1) / 2);
    shrunk = true;
  }
  if (!shrunk) return std::nullopt;
  return out.contiguous().clone();
}

std::optional<Case> with_inputs_halved(const Case& state, const std::vector<size_t>& indices) {
  Case smaller = copy_case(state);
  bool any = false;
  for (size_t i : indices) {
    const c10::IValue& v = smaller.values->at(i);
    if (!v.isTensor()) continue;
    std::optional<at::Tensor> half = halved(v.toTensor());
    if (!half) continue;
    InputSpec spec = spec_from_value(smaller.inputs[i].name, *half);
    spec.lifted = smaller.inputs[i].lifted;
    spec.lifted_from = smaller.inputs[i].lifted_from;
    smaller.inputs[i] = spec;
    (*smaller.values)[i] = *half;
    any = true;
  }
  if (!any) return std::nullopt;
  return smaller;
}

}  // namespace

bool shrink_inputs_pass(PassContext& ctx) {
  bool changed = false;
  const auto halve = [&](const std::vector<size_t>& subset) { return with_inputs_halved(ctx.state(), subset); };
  for (;;) {
    std::vector<size_t> tensors;
    for (size_t i = 0; i < ctx.state().values->size(); ++i)
      if (ctx.state().values->at(i).isTensor()) tensors.push_back(i);
    if (tensors.empty() || !ctx.try_all_halves_singles(tensors, halve)) break;
    changed = true;
  }
  return changed;
}

}  // namespace tsrepro
