#pragma once
// The workflow on a case directory's graph instead of a module: what `tsrepro after` runs for
// the Python shim (python/tsrepro/after.py), which saves the module and its inputs and imports them.

#include "tsrepro/after.h"
#include "tsrepro/case.h"

namespace tsrepro {

// Like compile(), for a case's graph: every case input is an input of the call. `id` > 0 names
// the subjects (graph_<id>, fusion_<id>_group_<k>), so that several processes writing into one
// run directory (TSREPRO_RUN_DIR) never collide; 0 counts as compile() does.
CompiledModule compile_case(const Case& c, const std::string& backend, const BackendOptions& options, int id);

}  // namespace tsrepro
