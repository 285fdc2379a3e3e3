#pragma once
// What the backends share: the factories' declarations for the registry (backends/registry.cpp),
// the interpreter and the seed.

#include <memory>
#include <string>

#include <ATen/Context.h>

#include "tsrepro/backend.h"
#include "tsrepro/run_spec.h"

namespace tsrepro {

// Right before a run that counts (include/tsrepro/run_spec.h, kRunSeed, says why).
inline void seed_random_generators() { at::manual_seed(kRunSeed); }

// The interpreter with no passes: what `eager` runs, and what inject faults run on.
std::unique_ptr<PreparedGraph> interpret_graph(std::shared_ptr<torch::jit::Graph> graph);

// The factories, declared from the table (backends/backends.def).
#define TSREPRO_BACKEND(id, spelling, option_keys, description, issue_label, under, roles) \
  std::unique_ptr<Backend> make_##id##_backend(const std::string& spec, const BackendOptions& options);
#include "backends/backends.def"
#undef TSREPRO_BACKEND

}  // namespace tsrepro
