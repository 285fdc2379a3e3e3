#pragma once
// Whether a model's graph holds a minified bug's ops: the sweep's test of "the same bug" for a
// model it did not minify. A failure signature is coarse (every wrong float32 output is
// "accuracy:float32"), so the models of one signature are split by it: the smallest is minified,
// those whose graphs contain its minified graph are that bug, the rest go to the next round.

#include <torch/csrc/jit/ir/ir.h>

namespace tsrepro {

// True when `graph` (nested blocks included) has a node for each of `pattern`'s ops (its nodes
// outside the prim:: namespace), of the same kind, wired to each other as in `pattern`: where a
// pattern op reads another's output, the matched ops do the same. A pattern without ops matches
// nothing. The search gives up (false) after a bounded number of steps.
bool contains_pattern(torch::jit::Graph& graph, torch::jit::Graph& pattern);

}  // namespace tsrepro
