// The one table of backends. Adding a backend: one file under runner/backends/ and one line here.

#include <sstream>

#include "runner/backends/builtin.h"
#include "tsrepro/error.h"

namespace tsrepro {

const std::vector<BackendInfo>& backend_registry() {
  static const std::vector<BackendInfo> registry = {
      {"eager", "TorchScript interpreter, no optimization passes (the reference)", {}, make_eager_backend},
      {"jit", "profiling graph executor with its default passes", {}, make_jit_backend},
      {"nnc", "profiling executor with the TensorExpr fuser forced on the CPU",
       {"inline", "dynamic_shapes", "reductions", "strategy"}, make_nnc_backend},
      {"ofi", "frozen-graph passes of optimize_for_inference, then the profiling executor",
       {"numerics", "mkldnn"}, make_ofi_backend},
      {"inject", "test backend: inject:<fault>@<op>[+<op>] with fault compile-error, runtime-error, "
                 "accuracy, abort, segfault or hang", {}, make_inject_backend},
  };
  return registry;
}

std::unique_ptr<Backend> make_backend(const std::string& spec, const BackendOptions& options) {
  const std::string family = spec.substr(0, spec.find(':'));
  for (const BackendInfo& info : backend_registry()) {
    if (info.name != family) continue;
    for (const auto& [key, value] : options) {
      if (std::find(info.option_keys.begin(), info.option_keys.end(), key) != info.option_keys.end()) continue;
      std::string known;
      for (const std::string& k : info.option_keys) known += (known.empty() ? "" : ", ") + k;
      throw UserError("--backend-opt " + key + ": backend '" + family + "' has no such option" +
                      (known.empty() ? " (it takes none)" : " (it takes: " + known + ")"));
    }
    return info.make(spec, options);
  }
  throw UserError("--backend " + spec + ": unknown backend (known: eager, jit, nnc, ofi, inject:<fault>@<op>)");
}

}  // namespace tsrepro
