#pragma once
// Where in the compiler a case fails (issue 54): the first of its backend's passes after which the
// graph fails as the whole backend does. The backend lists the passes it applies to the case
// (Backend::pass_applications) and stops after any K of them (its passes=K option: the graph the
// first K left, run unoptimized); each K is judged in this process as `tsrepro run` judges the
// case, and the first whose verdict is the case's own (same_failure) names the pass. Where every
// prefix runs right, the failure is in what runs after the passes (the executor's own
// optimizations, the kernels), and the finding says so; it never guesses.

#include <optional>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>
#include <nlohmann/json.hpp>

#include "tsrepro/case.h"
#include "tsrepro/run_spec.h"
#include "tsrepro/verdict.h"

namespace tsrepro {

struct PassFinding {
  Verdict whole;                    // the case under the backend, all of it
  std::vector<std::string> passes;  // the pass applications, in order (empty: none tsrepro can stop between)
  std::optional<size_t> culprit;    // index into passes: the first after which the graph fails so
  std::vector<Verdict> prefixes;    // the verdict after passes[0..k], for each k asked
  size_t runs = 0;                  // cases judged, the whole backend's included
  std::string finding;              // one sentence for people (ISSUE.md's "Bisected to: ...")
};

// Whether tsrepro can stop between `backend`'s passes: it takes passes=K (backends/backends.def).
bool splits_into_passes(const std::string& backend);
// What is said of a backend it cannot split.
std::string unsplit_finding(const std::string& backend);

PassFinding find_failing_pass(const Case& c, const std::vector<c10::IValue>& inputs, const RunSpec& spec);

nlohmann::json pass_finding_to_json(const PassFinding& f);

}  // namespace tsrepro
