// The local executor: at most `jobs` (--executor-opt jobs=N, or -j N) `tsrepro sweep-job DIR`
// processes at once on this machine.

#include <chrono>
#include <deque>
#include <thread>

#include "process/child_process.h"
#include "sweep/executor.h"
#include "tsrepro/error.h"

namespace tsrepro {
namespace {

// How often the running jobs are looked at.
constexpr std::chrono::milliseconds kJobPollInterval{20};

class LocalExecutor : public Executor {
 public:
  LocalExecutor(std::string tsrepro, int parallel_jobs) : tsrepro_(std::move(tsrepro)), parallel_(parallel_jobs) {}

  void run(const std::vector<Job>& jobs, const JobProgress& progress) override {
    std::deque<const Job*> waiting;
    size_t finished = 0;
    for (const Job& job : jobs) {
      if (job_finished(job.dir))
        ++finished;  // by an earlier, interrupted sweep
      else
        waiting.push_back(&job);
    }
    std::vector<std::pair<const Job*, Child>> running;
    while (!waiting.empty() || !running.empty()) {
      while (!waiting.empty() && running.size() < static_cast<size_t>(parallel_)) {
        const Job* job = waiting.front();
        waiting.pop_front();
        ChildSpec spec;
        spec.argv = {tsrepro_, "sweep-job", job->dir};
        running.emplace_back(job, Child(spec));
      }
      // Each of ours looked at in turn: a job takes a second at least, and a wait for "any child"
      // would reap children that other parts of this process started.
      std::this_thread::sleep_for(kJobPollInterval);
      for (auto it = running.begin(); it != running.end();) {
        const std::optional<int> status = it->second.try_wait();
        if (!status) {
          ++it;
          continue;
        }
        if (!job_finished(it->first->dir))
          throw UserError(it->first->dir + ": tsrepro sweep-job ended without finishing the job (" +
                          wait_status_text(*status) + ")");
        it = running.erase(it);
        progress(++finished, jobs.size());
      }
    }
  }

 private:
  std::string tsrepro_;
  int parallel_;
};

}  // namespace

std::unique_ptr<Executor> make_local_executor(const ExecutorSetup& setup) {
  const ExecutorOptions options("local", setup.settings, {{"jobs", "jobs at once, 2 by default"}});
  return std::make_unique<LocalExecutor>(setup.tsrepro, options.positive_int("jobs", 2));
}

}  // namespace tsrepro
