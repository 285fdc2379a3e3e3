#pragma once
// The env-var workflow for C++ programs, TorchScript's TORCHDYNAMO_REPRO_AFTER:
//
//   auto fn = tsrepro::compile(module, "nnc");
//   c10::IValue out = fn({x});
//
// runs the module's forward under a tsrepro backend. With no TSREPRO_* variable set that is all
// it does. With them, failures become case directories a bug report can carry:
//
//   TSREPRO_AFTER=graph   the whole graph the program runs is the subject
//   TSREPRO_AFTER=fusion  after the profiling runs, every fusion group the backend formed
//                         (prim::TensorExprGroup, ...) is checked on its own against the
//                         interpreter (same()-style, at every level), with the real values
//                         that flowed into it
//   TSREPRO_LEVEL=1       on failure: a case + repro.py / repro.cpp
//                 2       also the exact `tsrepro minify` command, as minify.sh
//                 3       the case is written before running (a segfault leaves it behind),
//                         and on failure the minifier runs in a subprocess
//                 4       graph stage: also compare against eager with same()-style
//                         tolerances, and minify accuracy failures
//   TSREPRO_DIR           where run_<timestamp>-pid_<pid>/ goes (default ./tsrepro_out)
//   TSREPRO_LOG           info or debug: what was written where, and the next command
//
// Inputs are saved with their real values, so the dump fails as the program did. The program's
// own failure still reaches it after the dump: the exception is re-thrown, the crash happens.
// Link `tsrepro::tsrepro_after` (find_package(tsrepro)).

#include <memory>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>

#include "tsrepro/after_settings.h"
#include "tsrepro/backend.h"

namespace torch::jit {
struct Module;
}

namespace tsrepro {

class CompiledModule {
 public:
  // Runs forward(inputs) under the backend; returns what forward returns (one value, or a
  // tuple for several outputs). The first call compiles (profiling runs included).
  c10::IValue operator()(std::vector<c10::IValue> inputs);

  // How many failures the workflow has written cases for so far (0 with TSREPRO_AFTER unset).
  size_t failures_reported() const;

  struct State;
  explicit CompiledModule(std::shared_ptr<State> state);

 private:
  std::shared_ptr<State> state_;
};

// The module's method, inlined, its parameters and buffers passed as inputs (training-mode
// semantics kept), ready to run under `backend` ("nnc", "jit", "ofi", "inject:<fault>@<op>").
// Throws tsrepro::UserError for an unknown backend or option, or a bad TSREPRO_* value.
CompiledModule compile(const torch::jit::Module& module, const std::string& backend, const BackendOptions& options = {},
                       const std::string& method = "forward");

// Reads the inputs Python saved with torch.save([x, y]) or torch.save((x,)) (every form,
// one-element lists included, which libtorch's own pickle_load refuses). Throws UserError.
std::vector<c10::IValue> load_inputs(const std::string& path);

}  // namespace tsrepro
