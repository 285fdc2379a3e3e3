// aoti's section of the reproducers (backends/aoti/repro.py, repro.cpp.in): repro.py exports the
// case (PyTorch's TorchScript converter), compiles it with aoti_compile_and_package into repro.pt2
// beside itself and runs it with aoti_load_package; repro.cpp runs that repro.pt2 with
// torch::inductor::AOTIModelPackageLoader, the way a C++ service does.

#include "backends/inductor/options.h"
#include "backends/options.h"
#include "backends/pt2_program.h"
#include "repro/backend_section.h"

namespace tsrepro {
namespace {

SectionParts aoti_section(const SectionRequest& request) {
  refuse_pass_stop_in_reproducer(request.options);
  const InductorOptions o = InductorOptions::from(request.options);
  SectionParts parts;
  parts.values["FORWARD_INPUTS"] = forward_input_list(request.c);
  parts.values["CONFIG"] = o.config_dict(request.dialect.string_literal);
  // the module route's torch.export call, as the compile server made it (backends/pt2_program.h)
  if (request.eager_module)
    parts.flags.insert(pt2_draft_export(request.options, Pt2Route::Module) ? flag::draft_export : flag::plain_export);
  // repro.cpp: <fstream> to look for the package, <cstdlib> for std::exit(2) (the loader's header
  // is in repro_head.cpp.in); repro.py: os.path for the package beside it
  parts.program_flags.insert({flag::files, flag::abort, flag::os});
  return parts;
}

// repro.py holds the eager module form where the backend received it (the module route).
bool aoti_receives_eager_module(const BackendOptions& options) {
  return pt2_route(options, Pt2Route::Module) == Pt2Route::Module;
}

}  // namespace

extern const ReproBackend aoti_repro{/*profiles=*/false, /*freezes=*/true, aoti_section, aoti_receives_eager_module};

}  // namespace tsrepro
