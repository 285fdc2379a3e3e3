// The one table of reduction passes, in the order the engine runs them each round
// (llvm-reduce's DeltaPasses.def, as a table). Adding a pass: one file and one line here.

#include "minifier/pass.h"

namespace tsrepro {

const std::vector<PassEntry>& pass_table() {
  static const std::vector<PassEntry> table = {
      {"localize-divergence", "accuracy failures: one instrumented run finds the first node the backend gets wrong; try it alone",
       localize_divergence_pass},
      {"truncate-suffix", "bisect on the topological prefix: node k's outputs become the graph outputs", truncate_suffix_pass},
      {"cut-ranges", "from each node on, cut the longest run of nodes the failure does not need (probes from the top, then bisection)",
       cut_ranges_pass},
      {"cut-nodes", "replace chunks of nodes by inputs fed with their reference values (ddmin schedule)", cut_nodes_pass},
      {"inline-blocks", "replace a prim::If by one of its branches, a prim::Loop by one pass through its body", inline_blocks_pass},
      {"remove-outputs", "drop graph outputs the failure does not need", remove_outputs_pass},
      {"dce", "delete dead nodes, side-effecting ones (checks, raises) included", dce_pass},
      {"remove-unused-inputs", "drop graph inputs nothing reads", remove_unused_inputs_pass},
      {"consolidate-inputs", "fold scalar inputs into constants and merge inputs holding equal values", consolidate_inputs_pass},
      {"shrink-inputs", "halve tensor inputs along every dimension while the failure holds", shrink_inputs_pass},
  };
  return table;
}

}  // namespace tsrepro
