#pragma once
// A case judged over RunSpec::repeat runs. A nondeterministic failure (a kernel that reads
// uninitialized memory) fails some runs and not others: one run is not a judgement, and the rate
// is part of the bug report.

#include <functional>
#include <map>
#include <string>

#include "runner/worker/worker_client.h"
#include "tsrepro/run_spec.h"
#include "tsrepro/verdict.h"

namespace tsrepro {

struct RepeatedVerdict {
  // The verdict that stands for the series: the first run of the failure seen most often (ties:
  // the smaller signature, so that a series always picks alike), or the last run where none counted. A run whose
  // reference itself fails (invalid) ends the series and stands.
  Verdict verdict;
  int runs = 0;                         // runs made: fewer than repeat when the series stopped once decided
  int failed_runs = 0;                  // of them, the ones the judge counted
  std::map<std::string, int> failures;  // per signature, the counted runs that failed with it

  // The counted runs that failed with `signature` (0 for one never seen).
  int runs_failing_with(const std::string& signature) const {
    const auto seen = failures.find(signature);
    return seen == failures.end() ? 0 : seen->second;
  }
  // Whether the series counts as failing under `run`: at least min_fails counted runs.
  bool failing(const RunSpec& run) const { return failed_runs >= run.min_fails; }
};

// Whether a run's verdict counts as a failing run.
using RunJudge = std::function<bool(const Verdict&)>;

// Runs `request` request.run.repeat times on `runner`, one after the other in its worker. With
// `stop_when_decided` the series ends as soon as request.run.min_fails runs counted, or can no
// longer reach that many: the minifier needs the answer, not the rate.
RepeatedVerdict evaluate_repeatedly(RunnerProcess& runner, const EvalRequest& request, const RunJudge& counts,
                                    bool stop_when_decided);

}  // namespace tsrepro
