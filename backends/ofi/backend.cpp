// `ofi`: exactly what `torch.jit.optimize_for_inference(torch.jit.freeze(m.eval()))` does, applied
// to the case's graph. The graph becomes a module again (its lifted parameters and buffers are the
// module's buffers, read with prim::GetAttr as a scripted module reads them), then the public C++
// equivalents run: torch::jit::freeze (freeze_module with its cleanups, OptimizeFrozenGraph) and
// torch::jit::optimize_for_inference (conv-add-relu fusion, MKLDNN conversion, linear
// transposition). The result runs in the profiling executor, as the frozen module's forward would.
//
// Options (backends/ofi/options.h): numerics=0|1 (freeze's optimize_numerics); mkldnn=0 skips
// ConvertFrozenOpsToMKLDNN, a debugging knob with no public-API equivalent (optimize_for_inference
// always converts); passes=K stops after the first K pass applications of pass_sequence.h and
// runs the frozen graph in the interpreter, unoptimized, or past them, at the profiling executor's
// stops on the frozen graph (backends/executor_passes.h): `tsrepro explain --passes` asks, for each
// K, whether the graph the passes left already fails as the case does.

#include <torch/script.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/passes/frozen_conv_add_relu_fusion.h>
#include <torch/csrc/jit/passes/frozen_linear_transpose.h>

#include "backends/builtin.h"
#include "backends/case_module.h"
#include "backends/executor_passes.h"
#include "backends/ofi/options.h"
#include "backends/ofi/pass_sequence.h"
#include "backends/profiling_executor.h"

namespace tsrepro {
namespace {

using torch::jit::Graph;

// The frozen forward is a method: it takes the frozen module as %self (freezing may leave reads of
// it, as for a buffer the module updates in place) and only the user's inputs (the lifted ones are
// constants in it), and returns a tuple where the case's graph had several outputs (a method
// returns one value). It runs as `frozen(*inputs)` does: the module first. Every run starts from
// the module's state as freezing left it, as every run of the case starts from fresh inputs: the
// profiling runs before it must not count as earlier calls.
class FrozenGraph : public PreparedGraph {
 public:
  FrozenGraph(torch::jit::Module pristine, std::unique_ptr<PreparedGraph> inner, std::vector<bool> lifted, bool packed)
      : pristine_(std::move(pristine)), inner_(std::move(inner)), lifted_(std::move(lifted)), packed_(packed) {}

  static std::vector<c10::IValue> method_inputs(const torch::jit::Module& frozen,
                                                const std::vector<c10::IValue>& inputs,
                                                const std::vector<bool>& lifted) {
    std::vector<c10::IValue> kept{frozen._ivalue()};
    for (c10::IValue& value : forward_inputs(inputs, lifted)) kept.push_back(std::move(value));
    return kept;
  }

  std::vector<c10::IValue> run(std::vector<c10::IValue> inputs) override {
    std::vector<c10::IValue> outputs = inner_->run(method_inputs(pristine_.deepcopy(), inputs, lifted_));
    if (!packed_) return outputs;
    return outputs.at(0).toTupleRef().elements().vec();
  }
  std::string executed_graph() const override { return inner_->executed_graph(); }
  std::shared_ptr<Graph> optimized_graph() const override { return inner_->optimized_graph(); }

 private:
  torch::jit::Module pristine_;  // the frozen module's state before the profiling runs
  std::unique_ptr<PreparedGraph> inner_;
  std::vector<bool> lifted_;
  bool packed_;
};

class OfiBackend : public Backend {
 public:
  explicit OfiBackend(OfiOptions options) : options_(options) {}
  std::string name() const override { return "ofi"; }

  std::unique_ptr<PreparedGraph> prepare(const BackendInput& input, const std::vector<c10::IValue>& sample) override {
    bool packed = false;
    if (options_.passes) {
      PassBudget budget(*options_.passes);
      torch::jit::Module frozen = freeze_pass_by_pass(module_of_case(input, sample, packed), options_, budget);
      auto graph = frozen.get_method("forward").graph()->copy();
      if (budget.applied().size() == *options_.passes)  // stopped inside freezing: the frozen graph, unoptimized
        return std::make_unique<FrozenGraph>(frozen.deepcopy(), interpret_graph(graph), input.lifted, packed);
      // Past freezing: the profiling executor's stops on the frozen graph.
      const size_t stop = *options_.passes - budget.applied().size();
      auto inner =
          prepare_executor_stop(graph, FrozenGraph::method_inputs(frozen, sample, input.lifted), JitSwitches{}, stop);
      return std::make_unique<FrozenGraph>(frozen.deepcopy(), std::move(inner), input.lifted, packed);
    }
    torch::jit::Module frozen = frozen_and_optimized(module_of_case(input, sample, packed));
    torch::jit::Module pristine = frozen.deepcopy();
    auto graph = frozen.get_method("forward").graph()->copy();
    auto inner =
        prepare_with_profiling_executor(graph, FrozenGraph::method_inputs(frozen, sample, input.lifted), JitSwitches{});
    return std::make_unique<FrozenGraph>(pristine, std::move(inner), input.lifted, packed);
  }

  std::vector<std::string> pass_applications(const BackendInput& input,
                                             const std::vector<c10::IValue>& sample) override {
    bool packed = false;
    PassBudget all;
    torch::jit::Module frozen;
    try {
      frozen = freeze_pass_by_pass(module_of_case(input, sample, packed), options_, all);
    } catch (const std::exception&) {
      // A pass that raises (the MKLDNN conversion's isDouble() assert) ends the list: it is the
      // last one there is, and the prefix that ends with it fails as the case does.
      return all.applied();
    }
    // Then the profiling executor's, on the frozen graph.
    std::vector<std::string> stops = all.applied();
    for (std::string& stop : executor_stops(frozen.get_method("forward").graph()->copy(),
                                            FrozenGraph::method_inputs(frozen, sample, input.lifted), JitSwitches{}))
      stops.push_back(std::move(stop));
    return stops;
  }

  // `torch.jit.optimize_for_inference(torch.jit.freeze(model.eval()))`, then the frozen forward's calls.
  std::unique_ptr<PreparedGraph> prepare_module(const torch::jit::Module& module,
                                                const std::vector<c10::IValue>& sample) override {
    torch::jit::Module copy = module.deepcopy();
    copy.eval();
    return prepare_module_with_profiling_executor(frozen_and_optimized(copy), sample, JitSwitches{});
  }

 private:
  // torch::jit::freeze, then optimize_for_inference (or, with mkldnn=0, its passes but the MKLDNN
  // conversion). A frozen module has no `training` attribute, so optimize_for_inference does not
  // freeze it again (Python's torch.jit.optimize_for_inference behaves the same on it).
  torch::jit::Module frozen_and_optimized(const torch::jit::Module& module) const {
    torch::jit::Module frozen = torch::jit::freeze(module, c10::nullopt, options_.numerics);
    if (options_.mkldnn) return torch::jit::optimize_for_inference(frozen);
    auto graph = frozen.get_method("forward").graph();
    torch::jit::FuseFrozenConvAddRelu(graph);
    torch::jit::FrozenLinearTranspose(graph);
    return frozen;
  }

  OfiOptions options_;
};

}  // namespace

std::unique_ptr<Backend> make_ofi_backend(const std::string&, const BackendOptions& options) {
  return std::make_unique<OfiBackend>(OfiOptions::from(options));
}

}  // namespace tsrepro
