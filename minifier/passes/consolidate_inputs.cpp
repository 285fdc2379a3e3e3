// consolidate-inputs: fewer inputs make a shorter repro. Scalar inputs (int, float, bool, None,
// str) become constants of the graph; tensor inputs holding equal values become one input.

#include <torch/script.h>

#include "minifier/pass.h"

namespace tsrepro {
namespace {

bool is_scalar(const c10::IValue& v) { return v.isInt() || v.isDouble() || v.isBool() || v.isNone() || v.isString(); }

std::optional<Case> with_inputs_as_constants(const Case& state, const std::vector<size_t>& indices) {
  Case folded = copy_case(state);
  torch::jit::WithInsertPoint at_top(folded.graph->param_node()->next());
  for (size_t i : indices) {
    torch::jit::Value* constant = folded.graph->insertConstant(folded.values->at(i));
    // A value that does not fit the input's type (a cut's reference value of another kind)
    // would make a graph libtorch asserts on: no candidate then.
    if (!constant->type()->isSubtypeOf(*folded.graph->inputs()[i]->type())) return std::nullopt;
    folded.graph->inputs()[i]->replaceAllUsesWith(constant);
  }
  if (!normalize(folded)) return std::nullopt;
  return folded;
}

bool same_tensor(const c10::IValue& a, const c10::IValue& b) {
  if (!a.isTensor() || !b.isTensor()) return false;
  const at::Tensor& x = a.toTensor();
  const at::Tensor& y = b.toTensor();
  return x.scalar_type() == y.scalar_type() && x.sizes() == y.sizes() && x.strides() == y.strides() &&
         x.device() == y.device() && at::equal(x, y);
}

// Later inputs equal to an earlier one read the earlier one instead.
std::optional<Case> with_equal_inputs_merged(const Case& state) {
  Case merged = copy_case(state);
  bool any = false;
  const size_t n = merged.values->size();
  for (size_t later = 1; later < n; ++later) {
    for (size_t earlier = 0; earlier < later; ++earlier) {
      if (!same_tensor(merged.values->at(earlier), merged.values->at(later))) continue;
      merged.graph->inputs()[later]->replaceAllUsesWith(merged.graph->inputs()[earlier]);
      any = true;
      break;
    }
  }
  if (!any || !normalize(merged)) return std::nullopt;
  return merged;
}

std::vector<size_t> scalar_inputs(const Case& state) {
  std::vector<size_t> scalars;
  for (size_t i = 0; i < state.values->size(); ++i)
    if (is_scalar(state.values->at(i))) scalars.push_back(i);
  return scalars;
}

}  // namespace

bool consolidate_inputs_pass(PassContext& ctx) {
  // Without scalars to fold, the state reaches the merge unchanged: its candidate, made once here,
  // also decides whether there is anything to do.
  const bool no_scalars = scalar_inputs(ctx.state()).empty();
  std::optional<Case> merged_as_is = no_scalars ? with_equal_inputs_merged(ctx.state()) : std::nullopt;
  if (no_scalars && !merged_as_is) return ctx.skip("no scalar input to fold, no two inputs alike");
  bool changed = false;
  for (std::vector<size_t> scalars = scalar_inputs(ctx.state()); !scalars.empty();
       scalars = scalar_inputs(ctx.state())) {
    const auto fold = [&](const std::vector<size_t>& subset) { return with_inputs_as_constants(ctx.state(), subset); };
    if (!ctx.try_all_halves_singles(scalars, fold)) break;
    changed = true;
  }
  changed |= ctx.try_candidate(no_scalars ? std::move(merged_as_is) : with_equal_inputs_merged(ctx.state()));
  return changed;
}

}  // namespace tsrepro
