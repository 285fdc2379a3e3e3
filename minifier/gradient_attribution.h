#pragma once
// Where a failure of the backward pass starts: the first forward node, in backward order, whose
// outputs' gradients agree with the reference while the gradients its backward hands to its
// inputs do not. Used by `tsrepro explain --backend` and by the minifier's localize-divergence.
//
// The probes are graphs the backend compiles as it would any case, judged with gradients:
//  1. Every node isolated (graph_edit.h, with_every_node_isolated): one run compares the gradient
//     each node's backward makes for each of its inputs, whatever the other nodes do. The wrong
//     gradient of one op shows here, in one run.
//  2. Failing that (a bug that needs nodes fused together, or an error raised in backward, which
//     names no value): bisection on "the graph from node k on" (graph_from), the nodes before k
//     fed their reference values. That graph fails exactly while k is at or before the culprit:
//     from k + 1 on, the culprit's outputs are inputs whose gradients agree. About log2(N) runs.
//
// Hooks on the backend's autograd nodes could not do this: the profiling executor differentiates
// a whole prim::DifferentiableGraph in one DifferentiableGraphBackward, whose inner values have no
// gradient of their own (runner/explain/autograd_table.h).

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "minifier/graph_edit.h"
#include "tsrepro/compare.h"
#include "tsrepro/verdict.h"

namespace tsrepro {

struct ValueGradient {
  std::string value;             // the case's value, as the probe's input stood for it
  std::optional<size_t> reader;  // the node whose backward made this gradient (cuttable index)
  OutputDiff diff;               // reference against backend
};

struct GradientAttribution {
  std::optional<size_t> culprit;         // index in cuttable_nodes of the case's graph
  std::string method;                    // "isolated nodes" or "bisection"; empty without a culprit
  std::vector<ValueGradient> gradients;  // what the deciding probe compared
  size_t runs = 0;                       // probes run
  std::string note;                      // why there is no culprit
};

struct GradientProbes {
  std::function<std::optional<Verdict>(const Case&)> verdict_of;  // one graph judged with gradients
  std::function<bool(const Verdict&)> still_fails;                // the failure being localized
};

// `whole` is the case's own verdict, a failure in the backward phase (accuracy or exception).
GradientAttribution attribute_backward_failure(const Case& state, const Verdict& whole, const ReferenceValues& refs,
                                               const GradientProbes& probes);

}  // namespace tsrepro
