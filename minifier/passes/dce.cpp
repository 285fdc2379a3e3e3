// dce: every candidate is already free of plain dead code; this pass also deletes nodes kept
// only for their side effects (shape checks that raise, prints), if the failure survives that.

#include <torch/script.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>

#include "minifier/pass.h"

namespace tsrepro {

bool dce_pass(PassContext& ctx) {
  Case candidate = copy_case(ctx.state());
  torch::jit::EliminateDeadCode(candidate.graph->block(), true,
                                torch::jit::DCESideEffectPolicy::ALLOW_DELETING_NODES_WITH_SIDE_EFFECTS);
  if (!normalize(candidate)) return false;
  if (count_compute_nodes(*candidate.graph) == count_compute_nodes(*ctx.state().graph))
    return ctx.skip("no node is kept for its side effects alone");
  return ctx.try_candidate(std::move(candidate));
}

}  // namespace tsrepro
