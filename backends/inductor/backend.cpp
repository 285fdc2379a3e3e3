// `inductor`: torch.compile(model, backend="inductor") in the PyTorch 2 compile server
// (backends/inductor/compile.py), with the options of backends/inductor/options.h. The model is
// the case's eager module form (the module route), or with route=converter the module of the
// TorchScript converter's program (backends/pt2_program.h). The first call compiles (in prepare():
// its failures are compile errors); run() calls it again.

#include "backends/builtin.h"
#include "backends/inductor/options.h"
#include "backends/pt2_program.h"

namespace tsrepro {
namespace {

class InductorBackend : public Pt2Backend {
 public:
  using Pt2Backend::Pt2Backend;
  std::unique_ptr<PreparedGraph> prepare(const BackendInput& input, const std::vector<c10::IValue>& sample) override {
    return run_in_python(pt2_case(input, sample).compile());
  }
  std::unique_ptr<PreparedGraph> prepare_module(const torch::jit::Module& module,
                                                const std::vector<c10::IValue>& sample) override {
    return run_in_python(compile_saved_model("inductor", options(), module, sample));
  }
};

}  // namespace

std::unique_ptr<Backend> make_inductor_backend(const std::string&, const BackendOptions& options) {
  require_pytorch2("inductor");
  return std::make_unique<InductorBackend>("inductor", InductorOptions::from(options).server_options(),
                                           pt2_route(options, Pt2Route::Module), /*route_is_the_subject=*/false);
}

}  // namespace tsrepro
