// `export`: what a TorchScript user moving to torch.export gets. The case as a module goes through
// PyTorch's own TorchScript converter (torch._export.converter.TS2EPConverter, which ends in
// torch.export.export); with route=module, torch.export.export(strict=False) takes the case's
// eager module form instead (with export=draft, draft_export: backends/pt2_program.h). The
// ExportedProgram's module runs eagerly (backends/export/compile.py). A model export cannot take fails in prepare(): a
// compile-phase exception whose signature is Python's exception type and the first line of its message (the construct
// the converter or export refused): here the route is what is judged.
//
// decompose=1 lowers the program to core ATen first (ExportedProgram.run_decompositions, what a
// consumer of torch.export such as ExecuTorch receives).
//
// `tsrepro explain --passes` splits it at its stages (issue 54), each run instead of the backend,
// undecomposed: bisect=module is the case through torch.export of its module form (no converter),
// bisect=converter through the converter. The first that fails as the case does is at fault
// (module: torch.export's own; converter: the converter's); where both run right, the last stage's:
// the converter's without decompose, run_decompositions' with it.

#include "backends/builtin.h"
#include "backends/options.h"
#include "backends/pt2_program.h"
#include "tsrepro/error.h"

namespace tsrepro {
namespace {

class ExportBackend : public Pt2Backend {
 public:
  using Pt2Backend::Pt2Backend;
  ExportBackend(const BackendOptions& server_options, Pt2Route route, bool decomposes)
      : Pt2Backend("export", server_options, route, /*route_is_the_subject=*/true), decomposes_(decomposes) {}
  std::optional<CompilerBisectPlan> compiler_bisect_plan() override {
    const bool converter = route() == Pt2Route::Converter;
    if (!converter && !decomposes_) return std::nullopt;  // torch.export alone: nothing to split
    CompilerBisectPlan plan;
    plan.stages = {"module"};
    if (converter && decomposes_) plan.stages.push_back("converter");
    plan.last = decomposes_ ? "run_decompositions" : "converter";
    plan.texts = {
        {"module", "torch.export of the case's eager module form (no converter, no decompositions), run eagerly"},
        {"converter", "PyTorch's TorchScript converter (TS2EPConverter)"},
        {"run_decompositions", "torch.export's run_decompositions (the core ATen decompositions)"}};
    return plan;
  }
  std::vector<std::string> pass_applications(const BackendInput&, const std::vector<c10::IValue>&) override {
    return {};
  }

 private:
  bool decomposes_;
};

}  // namespace

std::unique_ptr<Backend> make_export_backend(const std::string&, const BackendOptions& options) {
  require_pytorch2("export");
  const std::optional<BisectPoint> bisect = option_bisect_point(options);
  if (bisect && bisect->text != "module" && bisect->text != "converter")
    throw UserError("--backend-opt bisect=" + bisect->text +
                    ": export's stages are module (torch.export of the module form) and converter (PyTorch's "
                    "TorchScript converter), each undecomposed");
  // A stage is its route, undecomposed.
  const Pt2Route route = !bisect                    ? pt2_route(options, Pt2Route::Converter)
                         : bisect->text == "module" ? Pt2Route::Module
                                                    : Pt2Route::Converter;
  const bool decomposes = !bisect && option_flag(options, "decompose", false);
  BackendOptions server_options = with_export_option(BackendOptions{}, options, route);
  if (decomposes) server_options["decompose"] = "1";
  return std::make_unique<ExportBackend>(server_options, route, decomposes);
}

}  // namespace tsrepro
