// `pyeager`: the case's eager module form (backends/eager_module.h) run as plain PyTorch in the
// compile server, uncompiled: exactly what PyTorch 2's module route hands torch.compile and
// torch.export (backends/pt2_program.h), with no compiler after it. Its verdict says whether that
// Python computes what the TorchScript graph computes; it needs no PyTorch 2 (the eager form is
// plain PyTorch on either libtorch line), so the corpus checks every model's module form with it.
// A difference is tsrepro's defect, never a compiler's: the route check says so (exit 2) before
// the backend's own comparison is reached.

#include "backends/builtin.h"
#include "backends/pt2_program.h"
#include "tsrepro/error.h"

namespace tsrepro {
namespace {

class PyeagerBackend : public Pt2Backend {
 public:
  using Pt2Backend::Pt2Backend;
  // A saved model has no module form to run.
  std::unique_ptr<PreparedGraph> prepare_module(const torch::jit::Module& module,
                                                const std::vector<c10::IValue>& sample) override {
    return Backend::prepare_module(module, sample);
  }
};

}  // namespace

std::unique_ptr<Backend> make_pyeager_backend(const std::string&, const BackendOptions&) {
  return std::make_unique<PyeagerBackend>("pyeager", BackendOptions{}, Pt2Route::Module,
                                          /*route_is_the_subject=*/false);
}

}  // namespace tsrepro
