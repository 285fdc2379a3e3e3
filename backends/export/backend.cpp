// `export`: what a TorchScript user moving to torch.export gets. The case as a module goes through
// PyTorch's own TorchScript converter (torch._export.converter.TS2EPConverter, which ends in
// torch.export.export), and the ExportedProgram's module runs eagerly. A model export cannot take
// fails in prepare(): a compile-phase exception whose signature is Python's exception type and
// the first line of its message (the construct the converter or export refused).

#include "backends/builtin.h"
#include "backends/pt2_program.h"

namespace tsrepro {
namespace {

class ExportBackend : public Backend {
 public:
  std::string name() const override { return "export"; }
  std::unique_ptr<PreparedGraph> prepare(const BackendInput& input, const std::vector<c10::IValue>& sample) override {
    return run_in_python(compile_in_python("export", {}, input, sample));
  }
  std::unique_ptr<PreparedGraph> prepare_module(const torch::jit::Module& module,
                                                const std::vector<c10::IValue>& sample) override {
    return run_in_python(compile_in_python("export", {}, module, sample));
  }
};

}  // namespace

std::unique_ptr<Backend> make_export_backend(const std::string&, const BackendOptions&) {
  require_pytorch2("export");
  return std::make_unique<ExportBackend>();
}

}  // namespace tsrepro
