#pragma once
// Reproducer writers: the source of repro.py (stock PyTorch) and repro.cpp + CMakeLists.txt
// (libtorch) for a case. They return text; write_case puts it into the case directory
// atomically together with the case itself.

#include <map>
#include <string>

#include "tsrepro/case.h"
#include "tsrepro/run_spec.h"

namespace tsrepro {

// How the failure was seen: everything a reproducer needs to run the same comparison.
struct ReproSettings {
  ExpectedFailure failure;   // how it was judged (RunSpec) and what "reproduced" means (status, signature)
  std::string command_line;  // the tsrepro command that made it, for the header
};

// repro.py: `python repro.py` runs reference and backend as tsrepro does and exits 1 when the
// expected failure reproduces, 0 when it does not. The graph is embedded; real inputs are read
// from the inputs.pt beside it.
std::string repro_py_source(const Case& c, const ReproSettings& settings);

// repro.cpp and the CMakeLists.txt that builds it with find_package(Torch).
std::string repro_cpp_source(const Case& c, const ReproSettings& settings);
std::string repro_cmake_source();

// Every reproducer file of a case, by file name (repro.py, repro.cpp, CMakeLists.txt): what
// write_case puts beside the case wherever a failure is recorded.
std::map<std::string, std::string> reproducer_files(const Case& c, const ReproSettings& settings);

}  // namespace tsrepro
