#pragma once
// Constructors of the built-in backends, for the registry (runner/backends/registry.cpp).

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

// The factories, declared from the table (runner/backends/backends.def).
#define TSREPRO_BACKEND(factory, name, spelling, option_keys, description, issue_label, under) \
  std::unique_ptr<Backend> factory(const std::string& spec, const BackendOptions& options);
#include "runner/backends/backends.def"
#undef TSREPRO_BACKEND

}  // namespace tsrepro
