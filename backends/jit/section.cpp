// jit's section of the reproducers (backends/jit/repro.py, repro.cpp.in): the profiling executor
// with its default passes, nothing to choose. It calls the program's profiling-executor helper (calls_profiled).

#include "repro/backend_section.h"

namespace tsrepro {
namespace {

SectionParts jit_section(const SectionRequest&) {
  SectionParts parts;
  parts.calls_profiled = true;
  return parts;
}

}  // namespace

extern const ReproBackend jit_repro{/*profiles=*/true, /*freezes=*/false, jit_section};

}  // namespace tsrepro
