// remove-outputs: a failure rarely needs every output. Try dropping half of them, then each one.

#include "minifier/pass.h"

namespace tsrepro {

bool remove_outputs_pass(PassContext& ctx) {
  bool changed = false;
  for (;;) {
    const size_t n = ctx.state().graph->outputs().size();
    if (n < 2) break;
    std::vector<size_t> first_half, second_half;
    for (size_t i = 0; i < n; ++i) (i < n / 2 ? first_half : second_half).push_back(i);
    std::vector<std::optional<Case>> candidates = {without_outputs(ctx.state(), first_half),
                                                   without_outputs(ctx.state(), second_half)};
    for (size_t i = 0; i < n; ++i) candidates.push_back(without_outputs(ctx.state(), {i}));
    if (!ctx.try_candidates(std::move(candidates))) break;
    changed = true;
  }
  return changed;
}

}  // namespace tsrepro
