// `inductor`: torch.compile(model, backend="inductor") in the PyTorch 2 compile server
// (backends/inductor/compile.py), with the options of backends/inductor/options.h. The model is
// the case's eager module form (the module route), or with route=converter the module of the
// TorchScript converter's program (backends/pt2_program.h). The first call compiles (in prepare():
// its failures are compile errors); run() calls it again.

#include "backends/builtin.h"
#include "backends/inductor/options.h"
#include "backends/pt2_program.h"

namespace tsrepro {

std::unique_ptr<Backend> make_inductor_backend(const std::string&, const BackendOptions& options) {
  require_pytorch2("inductor");
  return std::make_unique<Pt2Backend>("inductor", InductorOptions::from(options).server_options(),
                                      pt2_route(options, Pt2Route::Module), /*route_is_the_subject=*/false);
}

}  // namespace tsrepro
