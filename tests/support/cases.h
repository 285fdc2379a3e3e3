#pragma once
// Cases for the library tests: the bundled example models and bugs, graphs written as IR text,
// and predicates over graphs for the in-process minifier tests.

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>
#include <nlohmann/json.hpp>

#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/process.h"
#include "tsrepro/case.h"
#include "tsrepro/minify.h"
#include "tsrepro/writer.h"

namespace tsrepro_test {

using tsrepro::Case;

// examples/models/MANIFEST.json.
nlohmann::json example_manifest();
// An example model (examples/models/NAME.pt, or NAME.ir for small_graph) imported with its inputs.
Case example_case(const std::string& name);
// A real bug of examples/bugs/NAME/ imported with its inputs.
Case bug_case(const std::string& name);

// The settings a writer is given for a case that fails (or passes) under `backend`: the expected
// status by name ("accuracy", "exception", ...; "" keeps the default) and signature.
tsrepro::ReproSettings settings_for(const std::string& backend, const std::string& kind,
                                    const std::string& signature = "");

// A case of IR text with these input values (specs made from the values).
Case case_from_ir(const std::string& ir, std::vector<c10::IValue> values);

// x -> sin -> relu -> tanh -> add(x) -> sigmoid.
extern const char* const kChain;
// A chain of `n` unary nodes with the given ops at the given positions ("relu"; tanh elsewhere).
std::string chain_ir(size_t n, const std::map<size_t, std::string>& ops_at);

// The kinds of the cuttable nodes, in order.
std::vector<std::string> node_kinds(const Case& c);
// "The graph still holds a node of this kind" (nested blocks included): fx_minifier's has_mul.
std::function<bool(const Case&)> has_op(const std::string& kind);

// The minifier through real workers: options for `backend` (each run bounded at 60 s), and an
// observer that prints nothing.
inline tsrepro::MinifyOptions worker_minify_options(const std::string& backend) {
  tsrepro::MinifyOptions o;
  o.run.backend = backend;
  o.run.timeout_seconds = 60;
  return o;
}
class QuietObserver : public tsrepro::MinifyObserver {};

}  // namespace tsrepro_test

// Inside namespace tsrepro, the tests say testing::TempDir (gtest's own is ::testing).
namespace tsrepro {
namespace testing = ::tsrepro_test;
}
