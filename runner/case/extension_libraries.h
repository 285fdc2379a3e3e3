#pragma once
// Custom operators from extension libraries (torchvision's torchvision::nms, a project's own
// TORCH_LIBRARY): a module that calls one cannot even be loaded until the library that registers
// it is. `--load-library PATH` and TSREPRO_LOAD_LIBRARY (colon-separated paths) name them; the CLI
// loads them before it forks its zygote (so every worker has them), passes them on to exec'd
// tsrepro-runners through the environment. A case records the libraries its graph calls
// (Case::libraries, with the operators: import sees which operators each library registered),
// every command that reads a case loads them, and the reproducers load them too.

#include <string>
#include <vector>

#include "tsrepro/case.h"

namespace torch::jit {
struct Graph;
}

namespace tsrepro {

inline constexpr const char* kLoadLibraryVariable = "TSREPRO_LOAD_LIBRARY";

// Loads (dlopen, RTLD_NOW | RTLD_GLOBAL) the libraries named by TSREPRO_LOAD_LIBRARY and by
// `paths`, as absolute paths, once each, and sets TSREPRO_LOAD_LIBRARY to all of them for the
// processes this one starts. Throws UserError("<path>: cannot load the library: <why>").
void load_extension_libraries(const std::vector<std::string>& paths = {});

// The libraries loaded so far, in order, each with the operators it registered.
const std::vector<ExtensionLibrary>& loaded_extension_libraries();

// Of `libraries` (the same path may come twice: the first counts), those that register operators
// `graph` calls, each with those operators only: what a case records and a reproducer loads.
std::vector<ExtensionLibrary> libraries_called_by(const torch::jit::Graph& graph,
                                                  const std::vector<ExtensionLibrary>& libraries);

// What case `c` needs loaded: the libraries it records and those loaded now (a case made before
// cases recorded them), kept where the graph calls their operators.
std::vector<ExtensionLibrary> libraries_of_case(const Case& c);

// The dotted name of the Python package a library is part of (torchvision for
// .../torchvision/_C.so: each folder up from the library's that holds an __init__.py), or "" for
// a library of no package. A Python program that uses such operators imports the package, and the
// package's Python side registers what torch.export needs of them (their fake kernels): the
// PyTorch 2 compile server and repro.py import it too.
std::string python_package_of(const std::string& library_path);

// The paths of the libraries CASE_DIR/case.json records, read without torch (the CLI loads them
// before it starts anything); none where it records none or cannot be read (load_case says why).
std::vector<std::string> recorded_library_paths(const std::string& case_dir);

}  // namespace tsrepro
