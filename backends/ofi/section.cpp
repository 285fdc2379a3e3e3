// ofi's section of the reproducers (backends/ofi/repro.py, repro.cpp.in): freeze and
// optimize_for_inference with its options (backends/ofi/options.h), on the scripted Repro (the
// module form) or on the case's module archive (the IR form), whose forward takes the inputs
// that were not lifted.

#include "backends/ofi/options.h"
#include "repro/backend_section.h"

namespace tsrepro {
namespace {

SectionParts ofi_section(const SectionRequest& request) {
  const OfiOptions o = OfiOptions::from(request.options);
  refuse_pass_stop_in_reproducer(request.options);
  SectionParts parts;
  parts.values["FORWARD_INPUTS"] = forward_input_list(request.c);
  parts.values["NUMERICS"] = request.dialect.bool_literal(o.numerics);
  if (o.mkldnn) parts.flags.insert(flag::mkldnn);  // else repro_head.cpp.in: the passes' headers
  return parts;
}

}  // namespace

extern const ReproBackend ofi_repro{/*profiles=*/false, /*freezes=*/true, ofi_section};

}  // namespace tsrepro
