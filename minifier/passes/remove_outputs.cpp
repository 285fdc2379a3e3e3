// remove-outputs: a failure rarely needs every output. Try dropping all but one, then half of
// them, then each one (at least one output always stays).

#include <numeric>

#include "minifier/pass.h"

namespace tsrepro {

bool remove_outputs_pass(PassContext& ctx) {
  if (ctx.state().graph->outputs().size() < 2) return ctx.skip("one output");
  bool changed = false;
  while (ctx.state().graph->outputs().size() >= 2) {
    std::vector<size_t> outputs(ctx.state().graph->outputs().size());
    std::iota(outputs.begin(), outputs.end(), 0);
    if (!ctx.try_all_halves_singles(
            outputs, [&](const std::vector<size_t>& drop) { return without_outputs(ctx.state(), drop); }))
      break;
    changed = true;
  }
  return changed;
}

}  // namespace tsrepro
