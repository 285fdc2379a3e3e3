// `ofi`: what torch.jit.optimize_for_inference does to a frozen module, applied to the case's
// graph: lifted parameters go back in as constants (as freezing would leave them), then
// OptimizeFrozenGraph (conv-bn / conv-add / linear folding, dropout removal...), conv-add-relu
// fusion, MKLDNN conversion and linear transposition; the result runs in the profiling executor.
// Options: numerics=0|1 (optimize_numerics folds that may change results), mkldnn=0|1.

#include <torch/script.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/passes/common_subexpression_elimination.h>
#include <torch/csrc/jit/passes/constant_pooling.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/lower_tuples.h>
#include <torch/csrc/jit/passes/peephole.h>
#include <torch/csrc/jit/passes/frozen_conv_add_relu_fusion.h>
#include <torch/csrc/jit/passes/frozen_graph_optimizations.h>
#include <torch/csrc/jit/passes/frozen_linear_transpose.h>
#include <torch/csrc/jit/passes/frozen_ops_to_mkldnn.h>

#include "runner/backends/builtin.h"
#include "runner/backends/profiling_executor.h"

namespace tsrepro {
namespace {

class FrozenGraph : public PreparedGraph {
 public:
  FrozenGraph(std::unique_ptr<PreparedGraph> inner, std::vector<bool> lifted)
      : inner_(std::move(inner)), lifted_(std::move(lifted)) {}

  std::vector<c10::IValue> run(std::vector<c10::IValue> inputs) override { return inner_->run(drop_lifted(inputs)); }
  std::string executed_graph() const override { return inner_->executed_graph(); }
  std::shared_ptr<torch::jit::Graph> optimized_graph() const override { return inner_->optimized_graph(); }

  std::vector<c10::IValue> drop_lifted(const std::vector<c10::IValue>& inputs) const {
    std::vector<c10::IValue> kept;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (i >= lifted_.size() || !lifted_[i]) kept.push_back(inputs[i]);
    return kept;
  }

 private:
  std::unique_ptr<PreparedGraph> inner_;
  std::vector<bool> lifted_;
};

// Lifted inputs become constants again, holding the values of this run.
std::shared_ptr<torch::jit::Graph> fold_lifted_inputs(const BackendInput& input, const std::vector<c10::IValue>& values) {
  auto graph = input.graph->copy();
  torch::jit::WithInsertPoint at_top(graph->param_node()->next());
  for (size_t i = input.lifted.size(); i-- > 0;) {
    if (!input.lifted[i]) continue;
    torch::jit::Value* constant = graph->insertConstant(values.at(i));
    graph->inputs()[i]->replaceAllUsesWith(constant);
    graph->eraseInput(i);
  }
  return graph;
}

// What torch.jit.freeze runs once attributes are constants (freeze_module's runOptimization,
// which libtorch does not export): without it `if self.training` branches and Optional
// checks hide the conv -> batch_norm patterns that OptimizeFrozenGraph folds.
void clean_up_like_freezing(std::shared_ptr<torch::jit::Graph>& graph) {
  torch::jit::EliminateDeadCode(graph);
  torch::jit::EliminateCommonSubexpression(graph);
  torch::jit::PeepholeOptimize(graph);
  torch::jit::ConstantPropagation(graph);
  torch::jit::ConstantPooling(graph);
  torch::jit::EliminateCommonSubexpression(graph);
  torch::jit::LowerSimpleTuples(graph);
}

class OfiBackend : public Backend {
 public:
  OfiBackend(bool numerics, bool mkldnn) : numerics_(numerics), mkldnn_(mkldnn) {}
  std::string name() const override { return "ofi"; }

  std::unique_ptr<PreparedGraph> prepare(const BackendInput& input, const std::vector<c10::IValue>& sample) override {
    auto graph = fold_lifted_inputs(input, sample);
    clean_up_like_freezing(graph);
    torch::jit::OptimizeFrozenGraph(graph, numerics_);
    torch::jit::FuseFrozenConvAddRelu(graph);
    if (mkldnn_) torch::jit::ConvertFrozenOpsToMKLDNN(graph);
    torch::jit::FrozenLinearTranspose(graph);
    auto frozen = std::make_unique<FrozenGraph>(nullptr, input.lifted);
    auto inner = prepare_with_profiling_executor(graph, frozen->drop_lifted(sample), JitSwitches{});
    return std::make_unique<FrozenGraph>(std::move(inner), input.lifted);
  }

 private:
  bool numerics_, mkldnn_;
};

}  // namespace

std::unique_ptr<Backend> make_ofi_backend(const std::string&, const BackendOptions& options) {
  return std::make_unique<OfiBackend>(option_flag(options, "numerics", true), option_flag(options, "mkldnn", true));
}

}  // namespace tsrepro
