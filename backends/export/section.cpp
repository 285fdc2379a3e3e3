// export's section of the reproducers (backends/export/repro.py, repro.cpp.in): PyTorch's
// TorchScript converter on the scripted Repro (the module form) or the case's module archive (the
// IR form), then (decompose=1) its run_decompositions, then the ExportedProgram's module. repro.cpp
// cannot call torch.export: it says so.

#include "backends/options.h"
#include "backends/pt2_program.h"
#include "repro/backend_section.h"

namespace tsrepro {
namespace {

SectionParts export_section(const SectionRequest& request) {
  refuse_pass_stop_in_reproducer(request.options);
  SectionParts parts;
  parts.values["FORWARD_INPUTS"] = forward_input_list(request.c);
  // the module route's torch.export call, as the compile server made it (backends/pt2_program.h)
  if (request.eager_module)
    parts.flags.insert(pt2_draft_export(request.options, Pt2Route::Module) ? flag::draft_export : flag::plain_export);
  if (option_flag(request.options, "decompose", false)) parts.flags.insert(flag::decomposed);
  parts.program_flags.insert(flag::abort);  // repro.cpp: <cstdlib>, for its std::exit(2)
  return parts;
}

// repro.py holds the eager module form where the backend received it (the module route).
bool export_receives_eager_module(const BackendOptions& options) {
  return pt2_route(options, Pt2Route::Converter) == Pt2Route::Module;
}

}  // namespace

extern const ReproBackend export_repro{/*profiles=*/false, /*freezes=*/true, export_section,
                                       export_receives_eager_module};

}  // namespace tsrepro
