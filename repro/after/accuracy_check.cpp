// The workflow's accuracy check: interpreter (and its fp64 run) against a backend's result, judged
// as the runner judges (runner/exec/accuracy_verdict.h).

#include <torch/script.h>

#include "repro/after/accuracy_check.h"
#include "runner/exec/accuracy_verdict.h"
#include "backends/builtin.h"
#include "runner/exec/fp64_reference.h"

namespace tsrepro {

std::optional<Verdict> accuracy_failure(const std::shared_ptr<torch::jit::Graph>& graph,
                                        const std::vector<c10::IValue>& inputs, const std::vector<c10::IValue>& got,
                                        const CompareOptions& options) {
  const std::vector<c10::IValue> expected = interpret_graph(graph->copy())->run(clone_values(inputs));
  std::optional<std::vector<c10::IValue>> fp64;
  try {
    const Fp64Reference wide = fp64_reference(BackendInput{graph, {}}, inputs, /*with_grad=*/{});
    fp64 = interpret_graph(wide.input.graph)->run(wide.inputs);
  } catch (const std::exception&) {
    // Some graphs cannot run in fp64 (a dtype-specialized op): same() then uses ref as fp64.
  }
  const CompareResult result = compare_outputs(expected, got, fp64 ? &*fp64 : nullptr, options);
  Verdict v;
  judge_accuracy(result, v);
  if (v.status != Status::Accuracy) return std::nullopt;
  return v;
}

}  // namespace tsrepro
