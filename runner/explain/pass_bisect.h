#pragma once
// Where in the compiler a case fails (issue 54), by one of two searches, both judging each try in
// this process as `tsrepro run` judges the case, the case's own failure kept (same_failure):
//   a sequence of passes (jit, nnc, ofi): the backend lists the passes it applies to the case
//     (Backend::pass_applications: freezing's, the profiling executor's graph passes from its JIT
//     log, NNC's kernels) and stops after any K of them (its passes=K option: the graph the first K
//     left, run by the interpreter); the first K whose verdict is the case's names the pass. Where
//     every prefix runs right, the failure is past every stop, and the finding says so.
//   PyTorch's CompilerBisector (inductor, aoti: Backend::compiler_bisect_plan, option bisect=...):
//     its stages run instead of the backend, earliest first (Dynamo alone, with AOTAutograd, with
//     decompositions; aoti: torch.export's program), the first that fails as the case does being
//     the stage at fault, else the backend's own; then that stage's subsystems switched off one at
//     a time in CompilerBisector's order, and the first whose switching off leaves the case running
//     right is bisected to its application (the first k kept), as CompilerBisector.do_bisect does.
// It never guesses: where nothing splits further, the finding says how far it got.

#include <map>
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
  std::vector<std::string> passes;  // sequence: the pass applications, in order (empty: none tsrepro can stop
                                    // between); CompilerBisector: each bisect=... asked, in order
  std::optional<size_t> culprit;    // index into passes: the first after which the graph fails so
                                    // (CompilerBisector: the try that named the culprit)
  std::vector<Verdict> prefixes;    // the verdict of passes[k], for each k asked
  std::string pass;                 // the pass named, short (ISSUE.md's title); empty where none is
  size_t runs = 0;                  // cases judged (under PyTorch 2, compiles), the whole backend's included
  std::string finding;              // one sentence for people (ISSUE.md's "Bisected to: ...")
  // CompilerBisector's result (its BisectionResult): the stage (a torch.compile backend, or aoti's
  // export), the subsystem, the application at fault (from 1) of how many, what PyTorch says of it,
  // and the TORCH_BISECT_* settings (or the config change) under which the case runs right.
  std::string stage, subsystem, debug_info;
  std::optional<size_t> application;
  size_t applications = 0;
  std::map<std::string, std::string> runs_right_with;
};

// Whether tsrepro can stop inside `backend`: it takes passes=K or bisect=... (backends/backends.def).
bool splits_into_passes(const std::string& backend);
// What is said of a backend it cannot split.
std::string unsplit_finding(const std::string& backend);

PassFinding find_failing_pass(const Case& c, const std::vector<c10::IValue>& inputs, const RunSpec& spec);

nlohmann::json pass_finding_to_json(const PassFinding& f);

}  // namespace tsrepro
