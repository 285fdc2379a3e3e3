// nnc's section of the reproducers (backends/nnc/repro.py, repro.cpp.in): the fuser switches of
// its options (backends/nnc/options.h), then the profiling executor.

#include "backends/nnc/options.h"
#include "repro/backend_section.h"

namespace tsrepro {
namespace {

SectionParts nnc_section(const SectionRequest& request) {
  refuse_pass_stop_in_reproducer(request.options);
  const NncOptions o = NncOptions::from(request.options);
  SectionParts parts;
  parts.calls_profiled = true;
  if (!o.fusion_group_inlining) parts.flags.insert(flag::no_inlining);
  if (o.dynamic_shapes) parts.flags.insert(flag::dynamic_shapes);
  if (o.reductions) parts.flags.insert(flag::reductions);
  if (!parts.flags.empty()) parts.flags.insert(flag::options);  // repro_head.cpp.in: tensorexpr_fuser.h
  if (o.strategy) parts.flags.insert(flag::strategy);
  // FusionBehavior's enumerator; the Python API takes the same word as a string.
  parts.values["STRATEGY"] = o.strategy == "dynamic" ? "DYNAMIC" : "STATIC";
  return parts;
}

}  // namespace

extern const ReproBackend nnc_repro{/*profiles=*/true, /*freezes=*/false, nnc_section};

}  // namespace tsrepro
