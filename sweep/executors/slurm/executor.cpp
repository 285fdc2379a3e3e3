// The Slurm executor: a phase is one `sbatch --array` over its unfinished jobs (its script made
// from slurm_array.sh beside this file); Slurm schedules them on its nodes, and the sweep only
// watches: the jobs' exit_code files for progress, squeue for when the array has left the queue. The nodes must see OUT
// at the same path (a shared file system), as they see the tsrepro executable.

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "process/child_process.h"
#include "repro/shell_literal.h"
#include "repro/template_fill.h"
#include "repro/templates_sweep_executor.h"  // generated from sweep/executors/*/*.sh
#include "runner/file_util.h"
#include "sweep/executor.h"
#include "tsrepro/error.h"

namespace fs = std::filesystem;

namespace tsrepro {
namespace {

// How often the sweep looks at the jobs and at squeue: a job takes seconds at least.
constexpr std::chrono::milliseconds kPollInterval{500};

struct CommandOutput {
  int exit_code = -1;
  std::string out, err;
};

CommandOutput run_command(const std::string& program, const std::vector<std::string>& args) {
  const std::string path = find_program(program);
  if (path.empty()) throw UserError(program + ": not found on PATH (the Slurm executor needs Slurm's commands)");
  ChildSpec spec;
  spec.argv = {path};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.out = spec.err = Stream::pipe();
  ChildRun run = run_child(spec);
  return {run.exit_code(), std::move(run.out), std::move(run.err)};
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// Its settings (--executor-opt): each given to sbatch for every array it submits.
struct SlurmOptions {
  std::string partition;                // sbatch --partition; empty: Slurm's default
  std::string time_limit;               // sbatch --time per array task, e.g. "30:00"; empty: the partition's
  std::vector<std::string> extra_args;  // given to sbatch as they are (--account=..., --mem=...)
};

class SlurmExecutor : public Executor {
 public:
  SlurmExecutor(std::string tsrepro, std::string work_dir, SlurmOptions options)
      : tsrepro_(std::move(tsrepro)), dir_(fs::path(work_dir) / "slurm"), options_(std::move(options)) {}

  void run(const std::vector<Job>& jobs, const JobProgress& progress) override {
    std::vector<const Job*> waiting;
    for (const Job& job : jobs)
      if (!job_finished(job.dir)) waiting.push_back(&job);
    if (waiting.empty()) return;
    const std::string array_id = submit(waiting);
    size_t reported = jobs.size() - waiting.size();
    for (bool queued = true; queued;) {
      std::this_thread::sleep_for(kPollInterval);
      queued = in_queue(array_id);
      size_t finished = 0;
      for (const Job& job : jobs) finished += job_finished(job.dir) ? 1 : 0;
      for (; reported < finished; ++reported) progress(reported + 1, jobs.size());
    }
    for (const Job* job : waiting)
      if (!job_finished(job->dir))
        throw UserError(job->dir + ": its Slurm task (array " + array_id + ") ended without finishing it; see " +
                        (dir_ / "logs").string());
  }

 private:
  // Writes the list and the script of this array and submits it; returns the array's job id.
  std::string submit(const std::vector<const Job*>& jobs) {
    const std::string name = "phase-" + std::to_string(++arrays_) + "-" + std::to_string(::getpid());
    fs::create_directories(dir_ / "logs");
    std::string list;
    for (const Job* job : jobs) list += job->dir + "\n";
    const std::string list_file = (dir_ / (name + ".jobs")).string(), script = (dir_ / (name + ".sh")).string();
    write_file_atomically(list_file, list);
    write_file_atomically(script,
                          fill_template(templates::sweep_executor_slurm_array,
                                        {{"LIST", shell_quoted(list_file)}, {"TSREPRO", shell_quoted(tsrepro_)}}));
    std::vector<std::string> args = {"--parsable", "--array=0-" + std::to_string(jobs.size() - 1),
                                     "--job-name=tsrepro-sweep", "--output=" + (dir_ / "logs" / "%A_%a.out").string()};
    if (!options_.partition.empty()) args.push_back("--partition=" + options_.partition);
    if (!options_.time_limit.empty()) args.push_back("--time=" + options_.time_limit);
    args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
    args.push_back(script);
    const CommandOutput sbatch = run_command("sbatch", args);
    if (sbatch.exit_code != 0) throw UserError("sbatch refused the sweep's job array: " + first_line(sbatch.err));
    const std::string id = first_line(sbatch.out).substr(0, sbatch.out.find(';'));  // "ID" or "ID;cluster"
    if (id.empty()) throw UserError("sbatch printed no job id");
    return id;
  }

  // Whether any task of the array is still pending or running. A job Slurm no longer knows has
  // left the queue too (squeue then fails with "Invalid job id").
  bool in_queue(const std::string& array_id) const {
    const CommandOutput squeue = run_command("squeue", {"-h", "-j", array_id, "-o", "%T"});
    return squeue.exit_code == 0 && squeue.out.find_first_not_of(" \n") != std::string::npos;
  }

  std::string tsrepro_;
  fs::path dir_;
  SlurmOptions options_;
  int arrays_ = 0;
};

}  // namespace

std::unique_ptr<Executor> make_slurm_executor(const ExecutorSetup& setup) {
  const ExecutorOptions options("slurm", setup.settings,
                                {{"partition", "sbatch --partition"},
                                 {"time", "sbatch --time per job, e.g. 30:00"},
                                 {"sbatch-arg", "one more sbatch flag, as it is", /*repeatable=*/true}});
  SlurmOptions slurm;
  slurm.partition = options.text("partition");
  slurm.time_limit = options.text("time");
  slurm.extra_args = options.texts("sbatch-arg");
  return std::make_unique<SlurmExecutor>(setup.tsrepro, setup.work_dir, slurm);
}

}  // namespace tsrepro
