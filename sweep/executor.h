#pragma once
// Where a sweep's jobs run. An executor gets the jobs of one phase, all prepared (job.h), runs
// each unfinished one as `tsrepro sweep-job DIR`, and returns when every one is finished. It
// schedules nothing of its own beyond that: local runs a process pool on this machine, slurm
// hands the phase to Slurm as one job array and reads Slurm's state.

#include <functional>
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

struct SlurmOptions {
  std::string partition;                // sbatch --partition; empty: Slurm's default
  std::string time_limit;               // sbatch --time per array task, e.g. "30:00"; empty: the partition's
  std::vector<std::string> extra_args;  // given to sbatch as they are (--account=..., --mem=...)
};

// `tsrepro` is this executable: jobs run `tsrepro sweep-job DIR`.
std::unique_ptr<Executor> make_local_executor(const std::string& tsrepro, int parallel_jobs);
// Job lists, scripts and Slurm's logs go under `work_dir`/slurm (on the file system the nodes share).
std::unique_ptr<Executor> make_slurm_executor(const std::string& tsrepro, const std::string& work_dir,
                                              const SlurmOptions& options);

}  // namespace tsrepro
