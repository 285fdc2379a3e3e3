// ofi's section of the reproducers (backends/ofi/repro.py, repro.cpp.in): freeze and
// optimize_for_inference with its options (backends/ofi/options.h), on the scripted Repro (the
// module form) or on the case's module archive (the IR form), whose forward takes the inputs
// that were not lifted.

#include "backends/ofi/options.h"
#include "repro/backend_section.h"
#include "tsrepro/error.h"

namespace tsrepro {
namespace {

SectionParts ofi_section(const SectionRequest& request) {
  const OfiOptions o = OfiOptions::from(request.options);
  if (o.passes)  // a stop between the passes is explain's question; a reproducer runs the public calls
    throw UserError("--backend-opt passes=" + std::to_string(*o.passes) +
                    ": a reproducer runs the whole of freeze and optimize_for_inference; drop passes=");
  SectionParts parts;
  parts.values["FORWARD_INPUTS"] = forward_input_list(request.c);
  parts.values["NUMERICS"] = request.dialect.bool_literal(o.numerics);
  if (o.mkldnn) parts.flags.insert(flag::mkldnn);  // else repro_head.cpp.in: the passes' headers
  return parts;
}

}  // namespace

extern const ReproBackend ofi_repro{/*profiles=*/false, /*freezes=*/true, ofi_section};

}  // namespace tsrepro
