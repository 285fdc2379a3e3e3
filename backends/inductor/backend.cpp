// `inductor`: torch.compile(module, backend="inductor") on torch.export's program of the case (the
// only way a TorchScript model's code reaches Inductor: PyTorch's TorchScript converter makes it
// an FX module Dynamo can trace), with the options of backends/inductor/options.h. The first call
// compiles (in prepare(): its failures are compile errors); run() calls it again.

#include "backends/builtin.h"
#include "backends/inductor/options.h"
#include "backends/pt2_program.h"

namespace tsrepro {
namespace {

class InductorBackend : public Backend {
 public:
  explicit InductorBackend(BackendOptions server_options) : options_(std::move(server_options)) {}
  std::string name() const override { return "inductor"; }
  std::unique_ptr<PreparedGraph> prepare(const BackendInput& input, const std::vector<c10::IValue>& sample) override {
    return run_in_python(compile_in_python("inductor", options_, input, sample));
  }
  std::unique_ptr<PreparedGraph> prepare_module(const torch::jit::Module& module,
                                                const std::vector<c10::IValue>& sample) override {
    return run_in_python(compile_in_python("inductor", options_, module, sample));
  }

 private:
  BackendOptions options_;  // as the compile server reads them (InductorOptions::server_options)
};

}  // namespace

std::unique_ptr<Backend> make_inductor_backend(const std::string&, const BackendOptions& options) {
  require_pytorch2("inductor");
  return std::make_unique<InductorBackend>(InductorOptions::from(options).server_options());
}

}  // namespace tsrepro
