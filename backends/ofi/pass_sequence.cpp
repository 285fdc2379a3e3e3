#include "backends/ofi/pass_sequence.h"

#include <torch/csrc/jit/passes/freeze_module.h>
#include <torch/csrc/jit/passes/frozen_concat_linear.h>
#include <torch/csrc/jit/passes/frozen_conv_add_relu_fusion.h>
#include <torch/csrc/jit/passes/frozen_conv_folding.h>
#include <torch/csrc/jit/passes/frozen_linear_transpose.h>
#include <torch/csrc/jit/passes/frozen_ops_to_mkldnn.h>
#include <torch/csrc/jit/passes/remove_dropout.h>
#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/jit/passes/frozen_linear_folding.h>
#endif

namespace tsrepro {

bool PassBudget::run(const std::string& name, const std::function<bool()>& pass) {
  if (limit_ && applied_.size() >= *limit_) return false;
  applied_.push_back(name);
  return pass();
}

torch::jit::Module freeze_pass_by_pass(const torch::jit::Module& module, const OfiOptions& options, PassBudget& budget) {
  using Graph = std::shared_ptr<torch::jit::Graph>;
  const auto changed = [](auto pass) {  // a pass that does not say whether it changed the graph
    return [pass](Graph& graph) {
      pass(graph);
      return true;
    };
  };
  torch::jit::Module frozen = module;
  budget.run("freeze_module", [&] {
    frozen = torch::jit::freeze_module(module);
    return true;
  });
  Graph graph = frozen.get_method("forward").graph();
  const auto step = [&](const char* name, const std::function<bool(Graph&)>& pass) {
    return budget.run(name, [&] { return pass(graph); });
  };
  // torch::jit::freeze's OptimizeFrozenGraph (optimize_numerics: its fixpoint of foldings).
  step("removeDropout", changed([](Graph& g) { torch::jit::removeDropout(g); }));
  step("FrozenConcatLinear", torch::jit::FrozenConcatLinear);
  if (options.numerics) {
    bool again = true;
    while (again) {
      again = step("FoldFrozenConvBatchnorm", torch::jit::FoldFrozenConvBatchnorm);
      again |= step("FoldFrozenConvAddOrSub", torch::jit::FoldFrozenConvAddOrSub);
      again |= step("FoldFrozenConvMulOrDiv", torch::jit::FoldFrozenConvMulOrDiv);
#if TORCH_VERSION_MAJOR >= 2
      again |= step("FoldFrozenLinearBatchnorm", torch::jit::FoldFrozenLinearBatchnorm);
#endif
    }
  }
  // torch::jit::optimize_for_inference on the frozen module.
  step("FuseFrozenConvAddRelu", changed([](Graph& g) { torch::jit::FuseFrozenConvAddRelu(g); }));
  if (options.mkldnn) step("ConvertFrozenOpsToMKLDNN", changed([](Graph& g) { torch::jit::ConvertFrozenOpsToMKLDNN(g); }));
  step("FrozenLinearTranspose", torch::jit::FrozenLinearTranspose);
  return frozen;
}

}  // namespace tsrepro
