// The local executor: at most -j `tsrepro sweep-job DIR` processes at once on this machine.

#include <sys/wait.h>

#include <deque>

#include <boost/process.hpp>

#include "sweep/executor.h"
#include "tsrepro/error.h"

namespace bp = boost::process;

namespace tsrepro {
namespace {

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
    std::vector<std::pair<const Job*, bp::child>> running;
    while (!waiting.empty() || !running.empty()) {
      while (!waiting.empty() && running.size() < static_cast<size_t>(parallel_)) {
        const Job* job = waiting.front();
        waiting.pop_front();
        running.emplace_back(job, bp::child(tsrepro_, "sweep-job", job->dir, bp::std_in < bp::null));
      }
      // Wait for any one of ours to end (a sweep starts no other children).
      int status = 0;
      const pid_t pid = ::waitpid(-1, &status, 0);
      if (pid < 0) throw std::runtime_error("sweep: waitpid failed");
      for (auto it = running.begin(); it != running.end(); ++it) {
        if (it->second.id() != pid) continue;
        it->second.detach();  // reaped here: Boost must not wait for it again
        if (!job_finished(it->first->dir))
          throw UserError(it->first->dir + ": tsrepro sweep-job ended without finishing the job (status " +
                          std::to_string(status) + ")");
        running.erase(it);
        progress(++finished, jobs.size());
        break;
      }
    }
  }

 private:
  std::string tsrepro_;
  int parallel_;
};

}  // namespace

std::unique_ptr<Executor> make_local_executor(const std::string& tsrepro, int parallel_jobs) {
  return std::make_unique<LocalExecutor>(tsrepro, std::max(1, parallel_jobs));
}

}  // namespace tsrepro
