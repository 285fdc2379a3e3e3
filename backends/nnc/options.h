#pragma once
// nnc's options (--backend-opt), read once for the runner (backend.cpp) and the writers
// (section.cpp): inline=0|1 (fusion-group inlining; 0 also lets single-op groups form),
// dynamic_shapes=0|1, reductions=0|1, strategy=static|dynamic; passes=K (`tsrepro explain
// --passes`): the case as the K-th stop of the executor left it, its graph passes one by one, then
// its fusion groups' kernels one by one (backends/executor_passes.h).

#include <optional>
#include <string>

#include "backends/options.h"

namespace tsrepro {

struct NncOptions {
  bool fusion_group_inlining = true;
  bool dynamic_shapes = false;
  bool reductions = false;
  std::optional<std::string> strategy;  // "static" or "dynamic": the fusion strategy, depth 2
  std::optional<size_t> passes;         // unset: the backend whole

  static NncOptions from(const BackendOptions& options) {
    NncOptions o;
    o.fusion_group_inlining = option_flag(options, "inline", true);
    o.dynamic_shapes = option_flag(options, "dynamic_shapes", false);
    o.reductions = option_flag(options, "reductions", false);
    if (options.count("strategy")) o.strategy = option_choice(options, "strategy", {"static", "dynamic"}, "");
    o.passes = option_count(options, "passes");
    return o;
  }
};

}  // namespace tsrepro
