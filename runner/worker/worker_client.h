#pragma once
// The parent side of the runner: a tsrepro-runner process that is started on first use, asked
// one request at a time, and replaced when a candidate kills it (crash) or outlives --timeout.
// Nothing a candidate does reaches the caller as anything but a Verdict.

#include <memory>
#include <string>

#include "runner/exec/evaluate.h"
#include "tsrepro/verdict.h"

namespace tsrepro {

// The tsrepro-runner executable: $TSREPRO_RUNNER, else the one next to the running program.
std::string default_runner_path();

class RunnerProcess {
 public:
  // No executable: a worker forked from the zygote where this process has one, else
  // default_runner_path(). A named one (or TSREPRO_RUNNER) is always exec'd.
  explicit RunnerProcess(std::string executable = "");
  ~RunnerProcess();
  RunnerProcess(const RunnerProcess&) = delete;
  RunnerProcess& operator=(const RunnerProcess&) = delete;

  // Runs the request within its run.timeout_seconds. Throws UserError only when the request
  // itself is bad (the worker answered with an error).
  Verdict evaluate(const EvalRequest& request);

  // How many workers were started so far (1 + restarts).
  int starts() const { return starts_; }

 private:
  struct Process;
  void start();
  bool start_forked(Process& p);
  void stop();
  Verdict exchange(const EvalRequest& request, double timeout_seconds);
  Verdict verdict_for_dead_worker(Phase phase);
  // `compiling`: the backend was compiling ahead of time (its own bound, signature timeout:compile).
  Verdict verdict_for_timeout(Phase phase, bool compiling, double timeout_seconds);

  std::string executable_;
  std::unique_ptr<Process> process_;
  int starts_ = 0;
};

}  // namespace tsrepro
