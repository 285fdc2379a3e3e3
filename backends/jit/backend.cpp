// `jit`: the profiling graph executor with its default passes and default fusion settings
// (on the CPU that means no fusion on 1.13, NNC's where libtorch has LLVM, as on 2.6), as
// `torch.jit.script(model)(x)` runs it.
//
// Option passes=K (`tsrepro explain --passes`): the case as the K-th stop of the executor left it
// (backends/executor_passes.h: its graph passes one by one, then any fusion group's kernel).

#include "backends/builtin.h"
#include "backends/executor_passes.h"
#include "backends/options.h"
#include "backends/profiling_executor.h"

namespace tsrepro {
namespace {

class JitBackend : public Backend {
 public:
  explicit JitBackend(std::optional<size_t> passes) : passes_(passes) {}
  std::string name() const override { return "jit"; }
  std::unique_ptr<PreparedGraph> prepare(const BackendInput& input, const std::vector<c10::IValue>& sample) override {
    if (passes_) return prepare_executor_stop(input.graph, sample, JitSwitches{}, *passes_);
    return prepare_with_profiling_executor(input.graph, sample, JitSwitches{});
  }
  std::unique_ptr<PreparedGraph> prepare_module(const torch::jit::Module& module,
                                                const std::vector<c10::IValue>& sample) override {
    return prepare_module_with_profiling_executor(module, sample, JitSwitches{});
  }
  std::vector<std::string> pass_applications(const BackendInput& input,
                                             const std::vector<c10::IValue>& sample) override {
    return executor_stops(input.graph, sample, JitSwitches{});
  }

 private:
  std::optional<size_t> passes_;
};

}  // namespace

std::unique_ptr<Backend> make_jit_backend(const std::string&, const BackendOptions& options) {
  return std::make_unique<JitBackend>(option_count(options, "passes"));
}

}  // namespace tsrepro
