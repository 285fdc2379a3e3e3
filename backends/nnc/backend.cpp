// `nnc`: the profiling executor with the TensorExpr (NNC) fuser forced on for the CPU, with the
// options of backends/nnc/options.h.

#include "backends/builtin.h"
#include "backends/nnc/options.h"
#include "backends/profiling_executor.h"

namespace tsrepro {
namespace {

class NncBackend : public Backend {
 public:
  explicit NncBackend(JitSwitches switches) : switches_(switches) {}
  std::string name() const override { return "nnc"; }
  std::unique_ptr<PreparedGraph> prepare(const BackendInput& input, const std::vector<c10::IValue>& sample) override {
    return prepare_with_profiling_executor(input.graph, sample, switches_);
  }
  std::unique_ptr<PreparedGraph> prepare_module(const torch::jit::Module& module,
                                                const std::vector<c10::IValue>& sample) override {
    return prepare_module_with_profiling_executor(module, sample, switches_);
  }

 private:
  JitSwitches switches_;
};

}  // namespace

std::unique_ptr<Backend> make_nnc_backend(const std::string&, const BackendOptions& options) {
  const NncOptions o = NncOptions::from(options);
  JitSwitches switches;
  switches.fuse_on_cpu = true;
  switches.te_fuser = true;
  switches.fusion_group_inlining = o.fusion_group_inlining;
  switches.dynamic_shape_fusion = o.dynamic_shapes;
  switches.reductions = o.reductions;
  switches.strategy = o.strategy;
  return std::make_unique<NncBackend>(switches);
}

}  // namespace tsrepro
