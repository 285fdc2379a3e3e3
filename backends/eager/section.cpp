// eager's section of the reproducers (backends/eager/repro.py, repro.cpp.in): the graph in the
// TorchScript interpreter, nothing to choose. It calls the program's interpreter helper (calls_interpreted).

#include "repro/backend_section.h"

namespace tsrepro {
namespace {

SectionParts eager_section(const SectionRequest&) {
  SectionParts parts;
  parts.calls_interpreted = true;
  return parts;
}

}  // namespace

extern const ReproBackend eager_repro{/*profiles=*/false, /*freezes=*/false, eager_section};

}  // namespace tsrepro
