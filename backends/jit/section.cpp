// jit's section of the reproducers (backends/jit/repro.py, repro.cpp.in): the profiling executor
// with its default passes, nothing to choose. It calls the program's profiling-executor helper (calls_profiled).

#include "backends/options.h"
#include "repro/backend_section.h"

namespace tsrepro {
namespace {

SectionParts jit_section(const SectionRequest& request) {
  refuse_pass_stop_in_reproducer(request.options);
  SectionParts parts;
  parts.calls_profiled = true;
  return parts;
}

}  // namespace

extern const ReproBackend jit_repro{/*profiles=*/true, /*freezes=*/false, jit_section};

}  // namespace tsrepro
