#pragma once
// inductor's and aoti's `--backend-opt config=KEY=VALUE` entries, checked against the
// torch._inductor.config of the Python that compiles (backends/inductor_config_check.py) before any
// case runs: a misspelt key or a value of another type is the user's error (UserError: one line,
// exit 2), never a compile's failure that tsrepro would take for a compiler bug and minify.

#include "tsrepro/backend.h"

namespace tsrepro {

// `server_options`: a PyTorch 2 backend's options as the compile server reads them, the config as
// "config.KEY" entries holding Python literals (backends/inductor/options.h checked their syntax).
// Starts that Python once per process for each set of entries (a command validates its RunSpec
// more than once); none, no Python. Throws UserError naming the entry, or saying why it cannot tell.
void check_inductor_config(const BackendOptions& server_options);

}  // namespace tsrepro
