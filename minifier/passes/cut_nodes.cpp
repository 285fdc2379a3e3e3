// cut-nodes: delta debugging over the nodes. A chunk of nodes is replaced by new graph inputs
// holding the values the reference run computed for them, so whatever comes after still sees
// the same numbers. Granularity starts at 2 chunks and doubles when no chunk can go (ddmin);
// after a success it steps back down.

#include "minifier/pass.h"

namespace tsrepro {

bool cut_nodes_pass(PassContext& ctx) {
  if (left_to_the_one_minimal_check(ctx.state())) return ctx.skip(kFewNodesSkip);
  bool changed = false;
  size_t chunks = 2;
  for (;;) {
    const size_t n = cuttable_nodes(*ctx.state().graph).size();
    if (n <= 1) break;
    // The state's own: after an accepted cut, it is another graph with other names.
    const ReferenceValues* refs = ctx.state_reference_values();
    if (!refs) break;  // nothing to cut with
    chunks = std::min(chunks, n);
    // Plain cuts first (they remove the most); keep-feeder cuts only where they differ.
    const auto cut_chunk = [&](size_t k) {
      const CutMode mode = k < chunks ? CutMode::DropFeeders : CutMode::KeepFeeders;
      const size_t chunk = k % chunks;
      std::vector<size_t> indices;
      for (size_t i = chunk * n / chunks; i < (chunk + 1) * n / chunks; ++i) indices.push_back(i);
      return with_nodes_cut(ctx.state(), indices, *refs, mode);
    };
    if (ctx.try_candidates_lazily(2 * chunks, cut_chunk)) {
      changed = true;
      chunks = std::max<size_t>(chunks - 1, 2);
      continue;
    }
    if (chunks >= n) break;
    chunks = std::min(n, chunks * 2);
  }
  return changed;
}

bool single_node_cuts_pass(PassContext& ctx) {
  const size_t n = cuttable_nodes(*ctx.state().graph).size();
  // One node left: its cut hands the case's inputs back and computes nothing, which points at no
  // op and no pass of any compiler; a reproducer keeps at least one op, so the state is 1-minimal
  // among reproducers without the query (a compile under PyTorch 2, on every single-op result).
  if (n == 1) return ctx.skip(kOneNodeLeftSkip);
  const ReferenceValues* refs = ctx.state_reference_values();
  // Nothing to cut with: whether the state is 1-minimal cannot be told (the engine says so).
  if (!refs) throw std::runtime_error("the reference cannot expose the graph's values, so no node can be cut");
  const auto cut_one = [&](size_t k) -> std::optional<Case> {
    std::optional<Case> cut =
        with_nodes_cut(ctx.state(), {k % n}, *refs, k < n ? CutMode::DropFeeders : CutMode::KeepFeeders);
    // A cut that leaves nothing to compute (the last node and all that feeds it) is no reproducer,
    // for the reason above.
    if (cut && count_compute_nodes(*cut->graph) == 0) return std::nullopt;
    return cut;
  };
  // 1-minimal when no single node can become an input (the others staying as they are); a cut
  // that works is accepted and the engine goes on.
  return ctx.try_candidates_lazily(2 * n, cut_one).has_value();
}

}  // namespace tsrepro
