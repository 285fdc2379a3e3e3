// inductor's section of the reproducers (backends/inductor/repro.py, repro.cpp.in): the export
// section's program, then torch.compile with the options of backends/inductor/options.h under
// torch._inductor.config. repro.cpp cannot call torch.compile: it says so.

#include "backends/inductor/options.h"
#include "backends/options.h"
#include "backends/pt2_program.h"
#include "repro/backend_section.h"

namespace tsrepro {
namespace {

SectionParts inductor_section(const SectionRequest& request) {
  refuse_pass_stop_in_reproducer(request.options);
  const InductorOptions o = InductorOptions::from(request.options);
  SectionParts parts;
  parts.values["FORWARD_INPUTS"] = forward_input_list(request.c);
  parts.program_flags.insert(flag::abort);  // repro.cpp: <cstdlib>, for its std::exit(2)
  std::string arguments = "backend=" + request.dialect.string_literal("inductor");
  if (o.mode != "default") arguments += ", mode=" + request.dialect.string_literal(o.mode);
  if (o.dynamic != "auto") arguments += std::string(", dynamic=") + (o.dynamic == "1" ? "True" : "False");
  parts.values["COMPILE_ARGUMENTS"] = arguments;
  parts.values["CONFIG"] = o.config_dict(request.dialect.string_literal);
  return parts;
}

// repro.py holds the eager module form where the backend received it (the module route).
bool inductor_receives_eager_module(const BackendOptions& options) {
  return pt2_route(options, Pt2Route::Module) == Pt2Route::Module;
}

}  // namespace

extern const ReproBackend inductor_repro{/*profiles=*/false, /*freezes=*/true, inductor_section,
                                         inductor_receives_eager_module};

}  // namespace tsrepro
