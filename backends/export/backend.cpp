// `export`: what a TorchScript user moving to torch.export gets. The case as a module goes through
// PyTorch's own TorchScript converter (torch._export.converter.TS2EPConverter, which ends in
// torch.export.export); with route=module, torch.export.export(strict=False) takes the case's
// eager module form instead (with export=draft, draft_export: backends/pt2_program.h). The
// ExportedProgram's module runs eagerly (backends/export/compile.py). A model export cannot take fails in prepare(): a
// compile-phase exception whose signature is Python's exception type and the first line of its message (the construct
// the converter or export refused): here the route is what is judged.
//
// `tsrepro explain --passes` splits the converter route in two (issue 54): bisect=module is the
// same case through torch.export of its module form, no converter. Where that runs right, the
// fault is the converter's; where it fails as the case does, torch.export's own.

#include "backends/builtin.h"
#include "backends/options.h"
#include "backends/pt2_program.h"
#include "tsrepro/error.h"

namespace tsrepro {
namespace {

class ExportBackend : public Pt2Backend {
 public:
  using Pt2Backend::Pt2Backend;
  std::optional<CompilerBisectPlan> compiler_bisect_plan() override {
    if (route() != Pt2Route::Converter) return std::nullopt;  // torch.export alone: nothing to split
    CompilerBisectPlan plan;
    plan.stages = {"module"};
    plan.last = "converter";
    plan.texts = {{"module", "torch.export of the case's eager module form (no converter), run eagerly"},
                  {"converter", "PyTorch's TorchScript converter (TS2EPConverter)"}};
    return plan;
  }
  std::vector<std::string> pass_applications(const BackendInput&, const std::vector<c10::IValue>&) override {
    return {};
  }
};

}  // namespace

std::unique_ptr<Backend> make_export_backend(const std::string&, const BackendOptions& options) {
  require_pytorch2("export");
  const std::optional<std::string> bisect = option_bisect_point(options);
  if (bisect && *bisect != "module")
    throw UserError("--backend-opt bisect=" + *bisect +
                    ": export's one stage is module (torch.export of the "
                    "module form, no converter)");
  const Pt2Route route = bisect ? Pt2Route::Module : pt2_route(options, Pt2Route::Converter);
  return std::make_unique<ExportBackend>("export", with_export_option(BackendOptions{}, options, route), route,
                                         /*route_is_the_subject=*/true);
}

}  // namespace tsrepro
