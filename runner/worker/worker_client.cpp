// Starting, feeding and burying tsrepro-runner workers: forked by the zygote or exec'd as a Child
// (process/child_process.h), talked to over two pipes, read with poll.

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "runner/worker/worker_client.h"
#include "tsrepro/backend.h"
#include "process/child_process.h"
#include "runner/file_util.h"
#include "runner/worker/zygote.h"
#include "tsrepro/error.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace tsrepro {
namespace {

using Clock = std::chrono::steady_clock;

// The last few meaningful lines a dead worker wrote to stderr ("terminate called after...").
std::string tail_of_log(const fs::path& log, size_t max_lines) {
  std::ifstream in(log);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line.rfind("frame #", 0) != 0) lines.push_back(line);
  std::string tail;
  for (size_t i = lines.size() > max_lines ? lines.size() - max_lines : 0; i < lines.size(); ++i)
    tail += (tail.empty() ? "" : " | ") + lines[i];
  return tail;
}

}  // namespace

struct RunnerProcess::Process {
  // Exec'd tsrepro-runner: our child, leading its own process group, with a pipe each way.
  std::optional<Child> child;
  // Forked by the zygote: a pid and our ends of two pipes (not our child: the zygote waits).
  // Registered as a kill target all the same: a SIGTERM to this process reaches its group.
  pid_t forked_pid = -1;
  KillTarget forked_target;
  int forked_to = -1, forked_from = -1;
  fs::path log;
  std::string buffered;  // bytes read past the last complete line

  ~Process() {
    if (forked_to >= 0) ::close(forked_to);
    if (forked_from >= 0) ::close(forked_from);
  }
  bool forked() const { return forked_pid > 0; }
  pid_t pid() const { return forked() ? forked_pid : child->pid(); }
  int request_fd() { return forked() ? forked_to : child->stdin_fd(); }
  int answer_fd() { return forked() ? forked_from : child->stdout_fd(); }
  bool running() { return forked() || child->running(); }
  void kill_group() {
    if (!forked()) return child->kill();
    forked_target.kill();
  }
  // The raw wait status once it has ended.
  int wait_status() {
    if (forked()) {
      int status = 255 << 8;  // where the zygote died with its worker's status: say "exit 255"
      try {
        status = zygote::wait_for_worker(forked_pid);
      } catch (const std::exception&) {
      }
      forked_target.release();
      return status;
    }
    return child->wait();
  }

  enum class Read { Line, Eof, Timeout };
  Read read_line(std::string& line, Clock::time_point deadline) {
    for (;;) {
      const auto newline = buffered.find('\n');
      if (newline != std::string::npos) {
        line = buffered.substr(0, newline);
        buffered.erase(0, newline + 1);
        return Read::Line;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return Read::Timeout;
      pollfd wait_for{answer_fd(), POLLIN, 0};
      const int ready = ::poll(&wait_for, 1, static_cast<int>(std::min<long long>(left, 1000)));
      if (ready < 0 && errno != EINTR) return Read::Eof;
      if (ready <= 0) continue;
      char chunk[65536];
      const ssize_t n = ::read(answer_fd(), chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Read::Eof;
      buffered.append(chunk, static_cast<size_t>(n));
    }
  }
};

std::string default_runner_path() {
  if (const char* env = std::getenv("TSREPRO_RUNNER")) return env;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  const fs::path beside = self.parent_path() / "tsrepro-runner";
  if (!ec && fs::exists(beside)) return beside.string();
  const std::string found = find_program("tsrepro-runner");
  return found.empty() ? beside.string() : found;
}

RunnerProcess::RunnerProcess(std::string executable) : executable_(std::move(executable)) {
  // Writing to a worker that just died must not kill us: write_all never raises SIGPIPE.
  if (executable_.empty() && std::getenv("TSREPRO_RUNNER")) executable_ = default_runner_path();
}

RunnerProcess::~RunnerProcess() { stop(); }

// From the zygote when this process has one and no runner was named (TSREPRO_RUNNER, or a path
// given by the caller); else tsrepro-runner, exec'd.
bool RunnerProcess::start_forked(Process& p) {
  if (!executable_.empty() || !zygote::available()) return false;
  int requests[2], answers[2];
  if (::pipe2(requests, O_CLOEXEC) != 0) return false;
  if (::pipe2(answers, O_CLOEXEC) != 0) {
    ::close(requests[0]);
    ::close(requests[1]);
    return false;
  }
  try {
    p.forked_pid = zygote::spawn_worker(requests[0], answers[1], p.log.string());
  } catch (const std::exception& e) {
    spdlog::debug("zygote: {}; starting tsrepro-runner instead", e.what());
  }
  ::close(requests[0]);
  ::close(answers[1]);
  if (!p.forked()) {
    ::close(requests[1]);
    ::close(answers[0]);
    return false;
  }
  p.forked_to = requests[1];
  p.forked_from = answers[0];
  p.forked_target = KillTarget(p.forked_pid, /*leads_group=*/true);  // worker_loop.cpp: setpgid(0, 0)
  return true;
}

void RunnerProcess::start() {
  auto p = std::make_unique<Process>();
  p->log = fs::temp_directory_path() /
           ("tsrepro-runner-" + std::to_string(::getpid()) + "-" + std::to_string(starts_) + ".log");
  if (!start_forked(*p)) {
    const std::string executable = executable_.empty() ? default_runner_path() : executable_;
    if (!fs::exists(executable)) throw UserError(executable + ": tsrepro-runner not found (set TSREPRO_RUNNER)");
    ChildSpec spec;
    spec.argv = {executable};
    spec.in = spec.out = Stream::pipe();
    spec.err = Stream::file(p->log.string());
    spec.own_process_group = true;
    p->child.emplace(spec);
  }
  ++starts_;
  spdlog::debug("started runner pid {} ({})", p->pid(), p->forked() ? "forked by the zygote" : executable_);
  process_ = std::move(p);
}

void RunnerProcess::stop() {
  if (!process_) return;
  if (process_->running()) process_->kill_group();
  process_->wait_status();
  std::error_code ec;
  fs::remove(process_->log, ec);
  remove_tree(process_scratch_path(process_->pid()));  // what it kept while it lived (file_util.h)
  process_.reset();
}

Verdict RunnerProcess::verdict_for_dead_worker(Phase phase) {
  const int status = process_->wait_status();
  const std::string log_tail = tail_of_log(process_->log, 3);
  Verdict v;
  v.phase = phase;
  const std::string during = std::string(" during ") + phase_name(phase);
  if (WIFSIGNALED(status)) {
    v.status = Status::Crash;
    v.signature = crash_signature(WTERMSIG(status));
    v.message = "the worker died by " + signal_name(WTERMSIG(status)) + during;
  } else {
    v.status = Status::Crash;
    v.signature = "crash:exit " + std::to_string(WEXITSTATUS(status));
    v.message = "the worker exited with status " + std::to_string(WEXITSTATUS(status)) + during;
  }
  if (!log_tail.empty()) v.message += " (" + log_tail + ")";
  // A worker that dies before the tested backend started says nothing about the backend.
  if (is_reference_phase(phase)) {
    v.status = Status::Invalid;
    v.message = "the reference crashed: " + v.message;
  }
  stop();
  return v;
}

Verdict RunnerProcess::verdict_for_timeout(Phase phase, bool compiling, double timeout_seconds) {
  Verdict v;
  const bool reference = is_reference_phase(phase);
  v.status = reference ? Status::Invalid : Status::Timeout;
  v.phase = phase;
  // A compile past its own bound is another failure than a run that hangs.
  v.signature = reference ? "" : compiling ? "timeout:compile" : "timeout";
  v.message = "no answer within " + std::to_string(timeout_seconds).substr(0, 5) + " s during " + phase_name(phase) +
              (reference ? " (the reference itself is too slow: raise --timeout)" : "");
  stop();
  return v;
}

namespace {

// Whether the run's tested backend compiles ahead of time (Backend::compiles_ahead_of_time). A
// spec this build cannot make (a PyTorch 2 backend on libtorch 1.13) is refused by the worker.
bool compiles_ahead_of_time(const RunSpec& run) {
  try {
    return make_backend(run.backend, run.backend_options)->compiles_ahead_of_time();
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

Verdict RunnerProcess::evaluate(const EvalRequest& request) {
  const auto started = Clock::now();
  Verdict verdict = exchange(request, request.run.timeout_seconds);
  // Crashes and timeouts are timed here: the worker could not report its own time.
  if (verdict.seconds == 0) verdict.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return verdict;
}

Verdict RunnerProcess::exchange(const EvalRequest& request, double timeout_seconds) {
  if (!process_) start();
  auto after = [](double seconds) {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  };
  // The run's bound, but for the compile of a backend that compiles ahead of time, which has its
  // own (RunSpec::compile_timeout_seconds); the run's bound starts again once it compiled.
  const bool own_compile_bound = compiles_ahead_of_time(request.run);
  auto compiling = [&](Phase p) { return own_compile_bound && (p == Phase::Route || p == Phase::Compile); };
  auto deadline = after(timeout_seconds);
  Phase phase = Phase::None;
  if (!write_all(process_->request_fd(), request_to_json(request).dump() + "\n"))
    return verdict_for_dead_worker(Phase::Start);
  for (std::string line;;) {
    switch (process_->read_line(line, deadline)) {
      case Process::Read::Timeout:
        return verdict_for_timeout(phase, compiling(phase),
                                   compiling(phase) ? request.run.compile_timeout_seconds : timeout_seconds);
      case Process::Read::Eof:
        return verdict_for_dead_worker(phase);
      case Process::Read::Line:
        break;
    }
    const json message = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (message.is_discarded()) {
      spdlog::warn("runner: unreadable line: {}", line);
      continue;
    }
    if (message.contains("phase")) {
      const Phase next = phase_from_name(message["phase"].get<std::string>());
      if (compiling(next) && !compiling(phase)) deadline = after(request.run.compile_timeout_seconds);
      if (!compiling(next) && compiling(phase)) deadline = after(timeout_seconds);
      phase = next;
    } else if (message.contains("verdict")) {
      return verdict_from_json(message["verdict"]);
    } else if (message.contains("error")) {
      throw UserError(message["error"].get<std::string>());
    }
  }
}

}  // namespace tsrepro
