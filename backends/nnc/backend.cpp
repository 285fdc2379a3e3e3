// `nnc`: the profiling executor with the TensorExpr (NNC) fuser forced on for the CPU, with the
// options of backends/nnc/options.h.
//
// Its passes, for `tsrepro explain --passes`: the profiling executor's graph passes one by one, then
// NNC's kernel of each fusion group in turn (backends/executor_passes.h). A failure that first shows
// with group k fused is inside that kernel, and the stop's name lists the ops lowered into it.

#include "backends/builtin.h"
#include "backends/executor_passes.h"
#include "backends/nnc/options.h"
#include "backends/profiling_executor.h"

namespace tsrepro {
namespace {

class NncBackend : public Backend {
 public:
  NncBackend(JitSwitches switches, std::optional<size_t> passes) : switches_(switches), passes_(passes) {}
  std::string name() const override { return "nnc"; }
  std::unique_ptr<PreparedGraph> prepare(const BackendInput& input, const std::vector<c10::IValue>& sample) override {
    if (!passes_) return prepare_with_profiling_executor(input.graph, sample, switches_);
    return prepare_executor_stop(input.graph, sample, switches_, *passes_);
  }
  std::unique_ptr<PreparedGraph> prepare_module(const torch::jit::Module& module,
                                                const std::vector<c10::IValue>& sample) override {
    return prepare_module_with_profiling_executor(module, sample, switches_);
  }
  std::vector<std::string> pass_applications(const BackendInput& input,
                                             const std::vector<c10::IValue>& sample) override {
    return executor_stops(input.graph, sample, switches_);
  }

 private:
  JitSwitches switches_;
  std::optional<size_t> passes_;
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
  return std::make_unique<NncBackend>(switches, o.passes);
}

}  // namespace tsrepro
