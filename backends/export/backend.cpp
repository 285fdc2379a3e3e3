// `export`: what a TorchScript user moving to torch.export gets. The case as a module goes through
// PyTorch's own TorchScript converter (torch._export.converter.TS2EPConverter, which ends in
// torch.export.export); with route=module, torch.export.export(strict=False) takes the case's
// eager module form instead (with export=draft, draft_export: backends/pt2_program.h). The
// ExportedProgram's module runs eagerly (backends/export/compile.py). A model export cannot take fails in prepare(): a compile-phase
// exception whose signature is Python's exception type and the first line of its message (the
// construct the converter or export refused): here the route is what is judged.

#include "backends/builtin.h"
#include "backends/pt2_program.h"

namespace tsrepro {

std::unique_ptr<Backend> make_export_backend(const std::string&, const BackendOptions& options) {
  require_pytorch2("export");
  const Pt2Route route = pt2_route(options, Pt2Route::Converter);
  return std::make_unique<Pt2Backend>("export", with_export_option(BackendOptions{}, options, route), route,
                                      /*route_is_the_subject=*/true);
}

}  // namespace tsrepro
