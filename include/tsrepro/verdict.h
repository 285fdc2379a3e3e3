#pragma once
// The answer to "does the tested backend fail on this candidate, and how?".

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tsrepro/compare.h"

namespace tsrepro {

enum class Status { Pass, Exception, Accuracy, Crash, Timeout, Invalid };

const char* status_name(Status s);
Status status_from_name(const std::string& name);
// A status that is a failure of the backend: not a pass, and not an invalid case (the reference
// itself fails).
inline bool is_failure(Status s) { return s != Status::Pass && s != Status::Invalid; }

// Where an evaluation is, or where it failed. The worker announces each phase before it starts
// it, so that a parent can tell which side crashed or hung; a verdict names the phase it failed
// in. Start: the request was not yet read; ReferenceCompile: the reference cannot even compile
// the graph (the graph is at fault, whatever the inputs); Reference: it fails running it; Fp64:
// the float64 reference for accuracy; Route: the way into a PyTorch 2 compiler failed before the
// compiler ran (torch.export's tracing of the module form, the TorchScript converter): the
// failure is the route's, not the compiler's. Names ("ref", "compile", ...) are in verdict.cpp.
enum class Phase { None, Start, Reference, ReferenceCompile, Fp64, Route, Compile, Run, Backward };

const char* phase_name(Phase p);
Phase phase_from_name(const std::string& name);  // "" is None; throws on an unknown name
// A phase before the tested backend started: a failure there says nothing about the backend.
bool is_reference_phase(Phase p);

struct Verdict {
  Status status = Status::Pass;
  Phase phase = Phase::None;  // exception: Route, Compile, Run or Backward; crash/timeout: where it died;
                              // invalid: Reference, ReferenceCompile, Fp64 or Start
  std::string signature;      // normalized identity of the failure; empty for pass
  std::string message;        // for people: the exception text, the signal, the worst diff
  std::vector<OutputDiff> outputs;
  std::string backend_graph;  // the optimized graph the backend executed, when asked for
  double seconds = 0;
  // Of those, the candidate's own work: the reference, the backend's compile and run, the
  // comparison (0 where the worker did not get that far). The rest is tsrepro's overhead.
  double compute_seconds = 0;
  // Of those, the tested backend's compile (its prepare: an Inductor or AOTInductor compile, NNC's
  // kernels, the profiling runs of jit): what a query costs where compiling is most of it.
  double compile_seconds = 0;

  bool failed() const { return is_failure(status); }
};

nlohmann::json verdict_to_json(const Verdict& v);
Verdict verdict_from_json(const nlohmann::json& j);

// "RuntimeError: shape [N, N] at /x/y.cpp:N" from an exception type and raw message: numbers,
// hex addresses and paths masked so that the same bug has the same signature across candidates.
std::string exception_signature(Phase phase, const std::string& type, const std::string& message);
std::string crash_signature(int signal_number);
// "accuracy:<dtype>" for wrong outputs; "accuracy:backward:<dtype>" when the outputs agree and
// only gradients differ (Phase::Backward): a candidate whose forward goes wrong instead is
// another bug, and the signatures keep the minifier from taking one for the other.
std::string accuracy_signature(const std::string& dtype, Phase phase = Phase::Run);

// Whether `v` is the failure `kept` is: the same status and signature (what minify keeps by
// default, and what `tsrepro explain --passes` asks of each pass's graph).
inline bool same_failure(const Verdict& kept, const Verdict& v) {
  return v.failed() && v.status == kept.status && v.signature == kept.signature;
}

// "SIGSEGV" for 11, "signal 77" for unknown numbers.
std::string signal_name(int signal_number);

}  // namespace tsrepro
