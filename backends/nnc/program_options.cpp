// The program's own fuser settings as nnc's --backend-opt values. The default strategy (static
// then dynamic) is the backend's default too: only a dynamic first choice is said.

#include "backends/nnc/program_options.h"

#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

namespace tsrepro {

std::vector<std::string> nnc_options_of_this_program() {
  std::vector<std::string> options;
  if (!torch::jit::getFusionGroupInlining()) options.push_back("inline=0");
  if (torch::jit::tensorExprDynamicShapeFusionEnabled()) options.push_back("dynamic_shapes=1");
  if (torch::jit::texprReductionsEnabled()) options.push_back("reductions=1");
  const torch::jit::FusionStrategy strategy = torch::jit::getFusionStrategy();
  if (!strategy.empty() && strategy.front().first == torch::jit::FusionBehavior::DYNAMIC)
    options.push_back("strategy=dynamic");
  return options;
}

}  // namespace tsrepro
