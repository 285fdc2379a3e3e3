#pragma once
// Custom operators from extension libraries (torchvision's torchvision::nms, a project's own
// TORCH_LIBRARY): a module that calls one cannot even be loaded until the library that registers
// it is. `--load-library PATH` and TSREPRO_LOAD_LIBRARY (colon-separated paths) name them; the CLI
// loads them before it forks its zygote (so every worker has them), passes them on to exec'd
// tsrepro-runners through the environment, and the reproducers load them too.

#include <string>
#include <vector>

namespace tsrepro {

inline constexpr const char* kLoadLibraryVariable = "TSREPRO_LOAD_LIBRARY";

// Loads (dlopen, RTLD_NOW | RTLD_GLOBAL) the libraries named by TSREPRO_LOAD_LIBRARY and by
// `paths`, as absolute paths, once each, and sets TSREPRO_LOAD_LIBRARY to all of them for the
// processes this one starts. Throws UserError("<path>: cannot load the library: <why>").
void load_extension_libraries(const std::vector<std::string>& paths = {});

// The absolute paths loaded so far, in order: what a reproducer must load as well.
const std::vector<std::string>& loaded_extension_libraries();

}  // namespace tsrepro
