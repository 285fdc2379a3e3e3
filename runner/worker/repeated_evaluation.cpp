// evaluate_repeatedly: one request, run.repeat runs, the verdict of the most frequent failure.

#include "runner/worker/repeated_evaluation.h"

namespace tsrepro {

RepeatedVerdict evaluate_repeatedly(RunnerProcess& runner, const EvalRequest& request, const RunJudge& counts,
                                    bool stop_when_decided) {
  const int repeat = std::max(1, request.run.repeat);
  const int needed = std::max(1, request.run.min_fails);
  RepeatedVerdict series;
  std::map<std::string, Verdict> first_of;  // per signature, its first counted run
  Verdict last;
  for (int run = 0; run < repeat; ++run) {
    last = runner.evaluate(request);
    ++series.runs;
    if (last.status == Status::Invalid) {
      series.verdict = last;
      return series;
    }
    if (counts(last)) {
      ++series.failed_runs;
      if (series.failures[last.signature]++ == 0) first_of.emplace(last.signature, last);
    }
    const int left = repeat - series.runs;
    if (stop_when_decided && (series.failed_runs >= needed || series.failed_runs + left < needed)) break;
  }
  series.verdict = last;
  int most = 0;
  for (const auto& [signature, times] : series.failures)
    if (times > most) {
      most = times;
      series.verdict = first_of.at(signature);
    }
  return series;
}

}  // namespace tsrepro
