// Fusion groups of an optimized graph: found, fed with the values the program gave them, and
// checked kernel-against-interpreter.

#include <torch/script.h>

#include "minifier/reference_values.h"
#include "repro/after/accuracy_check.h"
#include "repro/after/fusion_groups.h"
#include "backends/builtin.h"
#include "backends/profiling_executor.h"
#include "runner/exec/evaluate.h"

namespace tsrepro {
namespace {

using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

// The switches NNC needs to compile a kernel here (no LLVM: its IR interpreter).
JitSwitches kernel_switches() {
  JitSwitches s;
  s.fuse_on_cpu = true;
  return s;
}

std::string recorded_name(size_t group, size_t input) {
  return "group" + std::to_string(group) + "_in" + std::to_string(input);
}

}  // namespace

std::vector<FusionGroup> fusion_groups_with_inputs(const std::shared_ptr<Graph>& optimized,
                                                   const std::vector<c10::IValue>& graph_inputs) {
  auto instrumented = optimized->copy();
  std::vector<Node*> nodes;
  collect_fusion_groups(instrumented->block(), nodes);
  if (nodes.empty()) return {};
  for (size_t g = 0; g < nodes.size(); ++g) {
    torch::jit::WithInsertPoint before(nodes[g]);
    for (size_t i = 0; i < nodes[g]->inputs().size(); ++i)
      insert_recording(*instrumented, nodes[g]->inputs()[i], recorded_name(g, i));
  }
  ReferenceValues recorded;
  {
    ScopedJitSwitches scope(kernel_switches());
    run_recording(instrumented, clone_values(graph_inputs), recorded);
  }
  std::vector<FusionGroup> groups;
  for (size_t g = 0; g < nodes.size(); ++g) {
    FusionGroup group;
    group.kind = nodes[g]->kind().toQualString();
    group.subgraph = nodes[g]->g(c10::attr::Subgraph)->copy();
    group.node = nodes[g];
    group.owner = instrumented;
    bool ran = true;
    for (size_t i = 0; i < nodes[g]->inputs().size() && ran; ++i) {
      std::optional<c10::IValue> value = recorded.find(recorded_name(g, i));
      if (value)
        group.inputs.push_back(*value);
      else
        ran = false;
    }
    if (ran) groups.push_back(std::move(group));
  }
  return groups;
}

std::optional<Verdict> check_fusion_group(const FusionGroup& group, bool compare_accuracy,
                                          const CompareOptions& options) {
  // The group node alone in a graph: running it runs the fuser's compiled kernel.
  auto kernel_graph = std::make_shared<Graph>();
  std::unordered_map<Value*, Value*> mapped;
  for (Value* input : group.node->inputs()) {
    Value* v = kernel_graph->addInput();
    v->setType(input->type());
    mapped[input] = v;
  }
  Node* kernel =
      kernel_graph->insertNode(kernel_graph->createClone(group.node, [&](Value* v) { return mapped.at(v); }));
  for (Value* output : kernel->outputs()) kernel_graph->registerOutput(output);

  std::vector<c10::IValue> got;
  try {
    ScopedJitSwitches scope(kernel_switches());
    got = interpret_graph(kernel_graph)->run(clone_values(group.inputs));
  } catch (...) {
    return verdict_for_current_exception(Phase::Run);
  }
  if (!compare_accuracy) return std::nullopt;

  return accuracy_failure(group.subgraph, group.inputs, got, options);
}

}  // namespace tsrepro
