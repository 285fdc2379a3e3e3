#pragma once
// ofi's options (--backend-opt), read once for the runner (backend.cpp) and the writers
// (section.cpp): numerics=0|1 (freeze's optimize_numerics), mkldnn=0|1 (optimize_for_inference's
// MKLDNN conversion; 0 runs its other passes only), passes=K (`tsrepro explain --passes`: the
// first K pass applications of pass_sequence.h alone, the frozen graph then run unoptimized; past
// them, the profiling executor's stops on the frozen graph).

#include "backends/options.h"

namespace tsrepro {

struct OfiOptions {
  bool numerics = true;
  bool mkldnn = true;
  std::optional<size_t> passes;  // unset: the public calls themselves

  static OfiOptions from(const BackendOptions& options) {
    return {option_flag(options, "numerics", true), option_flag(options, "mkldnn", true),
            option_count(options, "passes")};
  }
};

}  // namespace tsrepro
