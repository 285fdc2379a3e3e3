// `jit`: the profiling graph executor with its default passes and default fusion settings
// (on the CPU that means no fusion), as `torch.jit.script(model)(x)` runs it.

#include "backends/builtin.h"
#include "backends/profiling_executor.h"

namespace tsrepro {
namespace {

class JitBackend : public Backend {
 public:
  std::string name() const override { return "jit"; }
  std::unique_ptr<PreparedGraph> prepare(const BackendInput& input, const std::vector<c10::IValue>& sample) override {
    return prepare_with_profiling_executor(input.graph, sample, JitSwitches{});
  }
  std::unique_ptr<PreparedGraph> prepare_module(const torch::jit::Module& module,
                                                const std::vector<c10::IValue>& sample) override {
    return prepare_module_with_profiling_executor(module, sample, JitSwitches{});
  }
};

}  // namespace

std::unique_ptr<Backend> make_jit_backend(const std::string&, const BackendOptions&) {
  return std::make_unique<JitBackend>();
}

}  // namespace tsrepro
