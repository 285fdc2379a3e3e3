#pragma once
// The real bugs of examples/bugs/, as examples/bugs/bugs.json lists them: which backend shows
// each, the verdict kind, its op, and whether it reproduces on the libtorch these tests were built
// against (its major.minor, from CMake's find_package(Torch)). Torch-free.

#include <ostream>
#include <string>
#include <vector>

namespace tsrepro_test {

struct RealBug {
  std::string name;     // examples/bugs/<name>/
  std::string backend;  // nnc, ofi, inductor
  std::string kind;     // accuracy, exception, crash
  std::string op;       // the op at its heart, e.g. aten::round
  bool reproduces_here;
  bool minified_by_the_tests = true;  // false: checked through its committed repro.py only
  // Other backends that show the same bug (AOTInductor runs Inductor's kernels); the tests
  // minify it under each of them too, and there a backend with a C++ path builds its repro.cpp.
  std::vector<std::string> also_under;
  // false: its minified repro.py keeps the graph as IR text, because the module form cannot hold
  // what the bug is about (a list attribute Python would type anew); the tests check it stays so.
  bool module_form = true;
  // true: it shows on some CPUs of its libtorch line only (bugs.json's cpu_dependent), so where it
  // should be here its repro.py may exit 0 as well as 1 (never 2).
  bool cpu_dependent = false;
  // What `tsrepro explain --passes` names: the start of the pass's name, or "" (not checked).
  std::string bisected_to;
  // Whether MinifyCliRealBug builds its minified repro.cpp (real_bugs_to_minify sets it).
  bool builds_repro_cpp = true;

  std::string dir() const;  // examples/bugs/<name>/ (with the slash)
};

inline void PrintTo(const RealBug& bug, std::ostream* os) { *os << bug.name << " under " << bug.backend; }
// A test's name for one (bug, backend): the bug's name, with the backend added for an also_under one.
std::string test_name(const RealBug& bug);

// "1.13", "2.6": the libtorch line of this build.
std::string torch_line();

// Every bug of the catalogue, in its order.
std::vector<RealBug> all_real_bugs();
// Those that reproduce on this build's libtorch; with `backend` / `kind` given, only those.
std::vector<RealBug> real_bugs_here(const std::string& backend = "", const std::string& kind = "");
// Those of real_bugs_here() that the tests minify (bugs.json: minified_by_the_tests), once under
// their backend and once under each of also_under.
// The bugs here that the tests minify, one entry per backend that shows it. Only the first of each
// backend builds its repro.cpp: the backend's section is the same C++ for all of them (they differ
// in the graph and inputs, which every repro.py run checks), and a repro.cpp build is the slowest
// step of the test (40-60 s against libtorch 2.6).
std::vector<RealBug> real_bugs_to_minify();
}  // namespace tsrepro_test
