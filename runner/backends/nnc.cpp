// `nnc`: the profiling executor with the TensorExpr (NNC) fuser forced on for the CPU.
// Options: inline=0|1 (fusion-group inlining; 0 also lets single-op groups form),
// dynamic_shapes=0|1, reductions=0|1, strategy=static|dynamic.

#include "runner/backends/builtin.h"
#include "runner/backends/profiling_executor.h"
#include "tsrepro/error.h"

namespace tsrepro {
namespace {

class NncBackend : public Backend {
 public:
  explicit NncBackend(JitSwitches switches) : switches_(switches) {}
  std::string name() const override { return "nnc"; }
  std::unique_ptr<PreparedGraph> prepare(const BackendInput& input, const std::vector<c10::IValue>& sample) override {
    return prepare_with_profiling_executor(input.graph, sample, switches_);
  }

 private:
  JitSwitches switches_;
};

}  // namespace

std::unique_ptr<Backend> make_nnc_backend(const std::string&, const BackendOptions& options) {
  JitSwitches switches;
  switches.fuse_on_cpu = true;
  switches.te_fuser = true;
  switches.fusion_group_inlining = option_flag(options, "inline", true);
  switches.dynamic_shape_fusion = option_flag(options, "dynamic_shapes", false);
  switches.reductions = option_flag(options, "reductions", false);
  if (auto strategy = options.find("strategy"); strategy != options.end()) {
    if (strategy->second != "static" && strategy->second != "dynamic")
      throw UserError("--backend-opt strategy=" + strategy->second + ": expected static or dynamic");
    switches.strategy = strategy->second;
  }
  return std::make_unique<NncBackend>(switches);
}

}  // namespace tsrepro
