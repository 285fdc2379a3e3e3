#pragma once
// The passes `torch.jit.optimize_for_inference(torch.jit.freeze(m))` runs, one by one, in the order
// this libtorch runs them (torch/csrc/jit/api/module.cpp: freeze, then optimize_for_inference;
// passes/frozen_graph_optimizations.cpp: OptimizeFrozenGraph), so that `tsrepro explain --passes`
// can stop after any of them and say which one the failure starts at (issue 54). Read off each
// line's libtorch (1.13's OptimizeFrozenGraph from its disassembly, 2.6's from its source); the
// test FreezePasses.TheSequenceIsThePublicCall checks on both lines that the whole sequence gives
// the graph the public calls give.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <torch/csrc/jit/api/module.h>

#include "backends/ofi/options.h"

namespace tsrepro {

// How many pass applications may still run, and the names of those that ran. A pass a fixpoint
// loop runs again counts again: the bisection names the application, not only the pass.
class PassBudget {
 public:
  explicit PassBudget(std::optional<size_t> limit = std::nullopt) : limit_(limit) {}
  // Runs `pass` if the budget allows (what it returns: whether it changed the graph); false if not.
  bool run(const std::string& name, const std::function<bool()>& pass);
  const std::vector<std::string>& applied() const { return applied_; }

 private:
  std::optional<size_t> limit_;
  std::vector<std::string> applied_;
};

// `module` (in eval mode) frozen and optimized for inference by the passes one at a time, as far
// as `budget` allows. options.mkldnn = false leaves out ConvertFrozenOpsToMKLDNN, as the backend does.
torch::jit::Module freeze_pass_by_pass(const torch::jit::Module& module, const OfiOptions& options, PassBudget& budget);

}  // namespace tsrepro
