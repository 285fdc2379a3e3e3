#pragma once
// Where a sweep's jobs run. An executor gets the jobs of one phase, all prepared (job.h), runs
// each unfinished one as `tsrepro sweep-job DIR`, and returns when every one is finished. It
// schedules nothing of its own beyond that: local runs a process pool on this machine, slurm
// hands the phase to Slurm as one job array and reads Slurm's state.
//
// Executors are registered as backends and passes are: one folder, sweep/executors/<name>/, whose
// executor.cpp defines its factory, and one line in sweep/executors/executors.def. Each reads its
// own settings (`--executor-opt KEY=VALUE`) through ExecutorOptions, which refuses a key it did
// not declare, before the sweep starts any job.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sweep/job.h"

namespace tsrepro {

// Called after each job finishes: jobs finished so far and in all, of this phase.
using JobProgress = std::function<void(size_t finished, size_t total)>;

class Executor {
 public:
  virtual ~Executor() = default;
  virtual void run(const std::vector<Job>& jobs, const JobProgress& progress) = 0;
};

// One setting an executor takes: its key and what it means (for the error that lists them).
struct ExecutorOptionSpec {
  std::string key;
  std::string meaning;
  bool repeatable = false;  // may be given more than once (each value kept, in order)
};

// An executor's `--executor-opt KEY=VALUE` settings, checked against the keys it declares. Throws
// UserError in one line, naming the executor, for an entry without `=`, a key it does not take
// (listing those it does) and a key given twice that is not repeatable.
class ExecutorOptions {
 public:
  ExecutorOptions(const std::string& executor, const std::vector<std::string>& entries,
                  const std::vector<ExecutorOptionSpec>& accepted);
  // The value of `key`, or `fallback` where it was not given.
  std::string text(const std::string& key, const std::string& fallback = "") const;
  // Every value of a repeatable key, in the order given.
  std::vector<std::string> texts(const std::string& key) const;
  // A whole number >= 1 (UserError otherwise, naming the key), or `fallback`.
  int positive_int(const std::string& key, int fallback) const;

 private:
  std::string executor_;
  std::map<std::string, std::vector<std::string>> values_;
};

// What every executor is made from.
struct ExecutorSetup {
  std::string tsrepro;                // this executable: jobs run `tsrepro sweep-job DIR`
  std::string work_dir;               // the sweep's OUT: an executor's own files go under it
  std::vector<std::string> settings;  // --executor-opt KEY=VALUE, in the order given
};

using ExecutorFactory = std::unique_ptr<Executor> (*)(const ExecutorSetup&);

// The executors, declared from the table.
#define TSREPRO_EXECUTOR(factory, name, description) std::unique_ptr<Executor> factory(const ExecutorSetup& setup);
#include "sweep/executors/executors.def"
#undef TSREPRO_EXECUTOR

struct ExecutorEntry {
  std::string name;
  std::string description;
  ExecutorFactory make;
};

// The one table of executors (sweep/executors/executors.def), in its order.
const std::vector<ExecutorEntry>& executor_table();
std::vector<std::string> executor_names();
// The executor `name` made from `setup`: UserError for a name not in the table (listing them)
// and for settings the executor refuses.
std::unique_ptr<Executor> make_executor(const std::string& name, const ExecutorSetup& setup);

}  // namespace tsrepro
