#pragma once
// `tsrepro sweep ZOO -o OUT`: every model of a zoo under every backend, the failures grouped into
// distinct bugs, one representative of each minified and reported. The work is jobs (job.h) in
// phases: import each model, run each model x backend, run each failure again --repeat times (its
// rate), minify, report. Failures are pooled by backend, status and signature; in rounds, the
// smallest model left in each pool is minified and the models whose graphs contain its minified
// graph (pattern_match.h) are that bug; an exception's signature (type and message) names its bug
// alone, so there the whole pool is. Bugs of different signatures whose minified graphs have
// the same canonical form (canonical_form.h) are then one. OUT/sweep.json records it all (docs/FORMATS.md). Run again
// on the same OUT, the sweep keeps every finished job and goes on.

#include <map>
#include <string>
#include <vector>

#include "runner/word_lists.h"
#include "sweep/executor.h"
#include "tsrepro/backend.h"
#include "tsrepro/backend_defaults.h"

namespace tsrepro {

struct SweepOptions {
  std::string zoo;
  std::string out;
  std::vector<std::string> backends = comma_separated(kDefaultSweepBackends);
  std::string executor = "local";              // a name of sweep/executors/executors.def
  std::vector<std::string> executor_settings;  // --executor-opt KEY=VALUE, checked by the executor
  std::map<std::string, BackendOptions> backend_options;  // of a swept backend: the --backend-opt it takes
  int repeat = 3;                              // runs of every failure again, for its rate
  double timeout_seconds = 300;                // of one run (run --timeout, minify --timeout)
  std::string tsrepro;                         // this executable: the jobs run it
  std::vector<std::string> libraries;          // --load-library: custom-operator libraries every job loads
};

// Throws UserError for a bad zoo, a bad OUT or settings that differ from OUT's earlier sweep.
void run_sweep(const SweepOptions& options);

// Whether a run result's status in sweep.json is a failure of the backend (verdict.h's
// is_failure); "error", where tsrepro run itself could not run the case, is none, nor is a name
// that is no verdict status.
bool is_failure_status(const std::string& status);

}  // namespace tsrepro
