#pragma once
// ofi's options (--backend-opt), read once for the runner (backend.cpp) and the writers
// (section.cpp): numerics=0|1 (freeze's optimize_numerics), mkldnn=0|1 (optimize_for_inference's
// MKLDNN conversion; 0 runs its other passes only).

#include "backends/options.h"

namespace tsrepro {

struct OfiOptions {
  bool numerics = true;
  bool mkldnn = true;

  static OfiOptions from(const BackendOptions& options) {
    return {option_flag(options, "numerics", true), option_flag(options, "mkldnn", true)};
  }
};

}  // namespace tsrepro
