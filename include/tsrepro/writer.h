#pragma once
// Reproducer writers: the source of repro.py (stock PyTorch) and repro.cpp + CMakeLists.txt
// (libtorch) for a case. They return text; write_case puts it into the case directory
// atomically together with the case itself.

#include <string>

#include "tsrepro/backend.h"
#include "tsrepro/case.h"
#include "tsrepro/compare.h"

namespace tsrepro {

// How the failure was seen: everything a reproducer needs to run the same comparison.
struct ReproSettings {
  std::string ref = "eager";
  std::string backend;                 // eager, jit, nnc, ofi, inject:<fault>@<op>[+<op>...]
  BackendOptions backend_options;      // e.g. {"inline": "0"}
  std::string device = "cpu";
  CompareOptions compare;
  bool backward = false;
  bool fake_inputs = false;            // make inputs from the specs (seeded) instead of inputs.pt
  uint64_t seed = 0;
  double timeout_seconds = 300;        // a backend run longer than this counts as a hang
  std::string expected_kind;           // the verdict status that means "reproduced": exception, accuracy, crash, timeout
  std::string expected_signature;      // for information and the header
  std::string command_line;            // the tsrepro command that made it, for the header
};

// repro.py: `python repro.py` runs reference and backend as tsrepro does and exits 1 when the
// expected failure reproduces, 0 when it does not. Reads graph.ir / inputs.pt beside itself.
std::string repro_py_source(const Case& c, const ReproSettings& settings);

// repro.cpp and the CMakeLists.txt that builds it with find_package(Torch).
std::string repro_cpp_source(const Case& c, const ReproSettings& settings);
std::string repro_cmake_source();

}  // namespace tsrepro
