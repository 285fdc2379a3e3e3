#pragma once
// A sweep's unit of work: one tsrepro command (import, run, minify, report) in a directory of its
// own, OUT/jobs/<phase>/<name>/:
//   job.json    {"argv": [...]}: the command, written before anything runs it
//   result.json the command's result, the object `run --json` and `minify --json` print, written
//               (atomically) by the command itself: the sweep gives run and minify jobs
//               `--json-file DIR/result.json`, and reads nothing it would have to scrape
//   stdout      its standard output
//   stderr      its standard error (its last line: tsrepro's one-line error, where it failed)
//   seconds     how long the command ran (wall seconds; the work per job, for estimates)
//   exit_code   its exit status (128 + N for signal N), written last and atomically: a job with
//               this file is finished, whatever executor ran it; one without runs again
// The executors (executor.h) only decide where and when `tsrepro sweep-job DIR` (run_job) runs.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tsrepro {

struct Job {
  std::string dir;
  std::vector<std::string> argv;  // argv[0]: the tsrepro executable
  // What the command writes outside DIR (import's and minify's -o): removed before an unfinished
  // job runs again, since those commands refuse a directory that exists.
  std::vector<std::string> outputs;
};

// What a finished job left.
struct JobOutcome {
  int exit_code = -1;
  nlohmann::json result;   // DIR/result.json's object; null where the command wrote none
  std::string last_error;  // the last non-empty line of stderr: tsrepro's one-line error
};

// Where a job's command writes its result (--json-file).
std::string job_result_file(const std::string& dir);

// Writes DIR/job.json (atomically) unless the job is finished; an unfinished job's old output
// (its stdout, stderr and `outputs`) goes, so that it starts afresh.
void prepare_job(const Job& job);

bool job_finished(const std::string& dir);
// nullopt while unfinished.
std::optional<JobOutcome> job_outcome(const std::string& dir);

// Runs DIR's command with its output in DIR's files and writes DIR/exit_code: the body of
// `tsrepro sweep-job DIR`, which every executor runs. Throws UserError for a DIR without job.json.
void run_job(const std::string& dir);

}  // namespace tsrepro
