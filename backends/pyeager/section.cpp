// pyeager's section of the reproducers (backends/pyeager/repro.py, repro.cpp.in): none that could
// reproduce. The backend checks tsrepro's own eager module form, whose differences are tsrepro's
// defects (exit 2, never minified): each reproducer says so and exits 2.

#include "repro/backend_section.h"

namespace tsrepro {
namespace {

SectionParts pyeager_section(const SectionRequest&) {
  SectionParts parts;
  parts.program_flags.insert(flag::abort);  // repro.cpp: <cstdlib>, for its std::exit(2)
  return parts;
}

}  // namespace

extern const ReproBackend pyeager_repro{/*profiles=*/false, /*freezes=*/false, pyeager_section};

}  // namespace tsrepro
