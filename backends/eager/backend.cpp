// `eager`: the graph in the TorchScript interpreter, no optimization passes at all. The reference.

#include <torch/script.h>
#include <torch/csrc/jit/runtime/interpreter.h>

#include "backends/builtin.h"
#include "backends/profiling_executor.h"
#include "runner/graph/strict_fusion.h"

namespace tsrepro {
namespace {

// The interpreter enters and exits a strict_fusion block's object (runner/graph/strict_fusion.h):
// a case's marker becomes one first (a no-op where evaluate_values did it already).
std::shared_ptr<torch::jit::Graph> with_strict_fusion_objects(std::shared_ptr<torch::jit::Graph> graph) {
  recreate_strict_fusion_objects(*graph);
  return graph;
}

class InterpretedGraph : public PreparedGraph {
 public:
  explicit InterpretedGraph(std::shared_ptr<torch::jit::Graph> graph)
      : graph_(with_strict_fusion_objects(std::move(graph))), code_(graph_, "tsrepro_candidate") {}

  std::vector<c10::IValue> run(std::vector<c10::IValue> inputs) override {
    torch::jit::Stack stack(std::move(inputs));
    seed_random_generators();
    torch::jit::InterpreterState(code_).run(stack);
    return stack;
  }

  std::string executed_graph() const override { return graph_->toString(false); }

 private:
  std::shared_ptr<torch::jit::Graph> graph_;
  torch::jit::Code code_;
};

class EagerBackend : public Backend {
 public:
  std::string name() const override { return "eager"; }
  std::unique_ptr<PreparedGraph> prepare(const BackendInput& input, const std::vector<c10::IValue>&) override {
    return interpret_graph(input.graph->copy());
  }
  // The model's own unoptimized run: `with torch.jit.optimized_execution(False): model(*inputs)`.
  std::unique_ptr<PreparedGraph> prepare_module(const torch::jit::Module& module,
                                                const std::vector<c10::IValue>& sample) override {
    JitSwitches unoptimized;
    unoptimized.optimize = false;
    return prepare_module_with_profiling_executor(module, sample, unoptimized);
  }
};

}  // namespace

std::unique_ptr<PreparedGraph> interpret_graph(std::shared_ptr<torch::jit::Graph> graph) {
  return std::make_unique<InterpretedGraph>(std::move(graph));
}

std::unique_ptr<Backend> make_eager_backend(const std::string&, const BackendOptions&) {
  return std::make_unique<EagerBackend>();
}

}  // namespace tsrepro
