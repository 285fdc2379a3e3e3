// The workflow's accuracy check: interpreter (and its fp64 run) against a backend's result.

#include <torch/script.h>

#include "repro/after/accuracy_check.h"
#include "runner/backends/builtin.h"
#include "runner/fp64_reference.h"

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
  if (result.same) return std::nullopt;
  Verdict v;
  v.status = Status::Accuracy;
  v.phase = "run";
  v.outputs = result.outputs;
  const OutputDiff* worst = result.first_failure();
  v.signature = accuracy_signature(worst ? worst->dtype : "");
  v.message = worst ? "output " + worst->path + ": " + worst->reason : "outputs differ";
  return v;
}

}  // namespace tsrepro
