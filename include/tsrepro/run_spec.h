#pragma once
// How a case is judged: the reference and the tested backend, the device, the inputs, the
// comparison, and how long a run may take. `run`, `minify`, the worker protocol, the reproducer
// writers and the TSREPRO_AFTER workflow each hold one RunSpec (by composition) instead of
// copying these fields into structs of their own; it crosses processes and files as one JSON
// object (run_spec_to_json / run_spec_from_json).

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tsrepro/backend.h"
#include "tsrepro/backend_defaults.h"
#include "tsrepro/compare.h"

namespace tsrepro {

// The seed of fake inputs when none is given (repro.py and repro.cpp use the same default).
inline constexpr uint64_t kDefaultFakeSeed = 0;

// The global random generators are seeded with this right before every run of a graph that is
// compared or kept (the reference, the tested backend's measured call, the fp64 reference, the
// minifier's reference values), and repro.py and repro.cpp do the same before their calls: a
// graph that draws random numbers (dropout with training=True, as Tacotron2's prenet does in eval
// mode too) then draws the same ones on both sides, wherever the backend draws them in the same
// order. Warm-up calls (the profiling run) are not seeded: the measured call's seed is what counts.
inline constexpr uint64_t kRunSeed = 0;

struct RunSpec {
  std::string ref = kReferenceBackend;  // the reference backend
  std::string backend;                  // a spec of backends/backends.def: an id, or inject:<fault>@<op>[+<op>...]
  BackendOptions backend_options;       // e.g. {"inline": "0"}: --backend-opt key=value
  std::string device = "cpu";           // cpu or cuda
  CompareOptions compare;
  bool backward = false;     // also compare input gradients of a scalar loss
  bool fake_inputs = false;  // seeded fake inputs from the specs instead of the case's values
  uint64_t seed = kDefaultFakeSeed;
  double timeout_seconds = 300;  // a run longer than this counts as a hang
  // A backend that compiles ahead of time (Backend::compiles_ahead_of_time: PyTorch 2's) has a
  // bound of its own for its way in and its compile: an Inductor compile of a large model takes
  // minutes where its run takes milliseconds. Past it the verdict is a timeout with the signature
  // timeout:compile; the run's bound starts again once it compiled.
  double compile_timeout_seconds = 1800;
  // A failure counts when at least min_fails of `repeat` runs show it: a nondeterministic bug
  // (uninitialized memory) fails some runs only (runner/worker/repeated_evaluation.h).
  int repeat = 1;
  int min_fails = 1;

  // The one check of a spec, before any work: a known backend and reference, options the backend
  // takes, a device this libtorch has, a positive timeout, 1 <= min_fails <= repeat. Throws UserError naming the flag.
  void validate() const;
};

nlohmann::json run_spec_to_json(const RunSpec& spec);
// Missing keys keep RunSpec's defaults (older case files and requests carry fewer).
RunSpec run_spec_from_json(const nlohmann::json& j);

// --backend-opt key=value pairs. Throws UserError for a pair without "=" or without a key.
BackendOptions parse_backend_options(const std::vector<std::string>& pairs);

}  // namespace tsrepro
