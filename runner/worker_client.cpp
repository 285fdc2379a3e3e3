// Starting, feeding and burying tsrepro-runner workers (Boost.Process + poll on the pipes).

#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/process.hpp>
#include <spdlog/spdlog.h>

#include "runner/worker_client.h"
#include "tsrepro/error.h"

namespace bp = boost::process;
namespace fs = std::filesystem;
using nlohmann::json;

namespace tsrepro {
namespace {

using Clock = std::chrono::steady_clock;

void set_close_on_exec(int fd) { ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC); }

bool write_all(int fd, const std::string& data) {
  size_t written = 0;
  while (written < data.size()) {
    const ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<size_t>(n);
  }
  return true;
}

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

// A worker that dies before the tested backend started says nothing about the backend.
bool stage_is_reference(const std::string& stage) {
  return stage == "ref" || stage == "fp64" || stage == "start" || stage.empty();
}

}  // namespace

struct RunnerProcess::Process {
  bp::pipe to_worker;
  bp::pipe from_worker;
  bp::child child;
  fs::path log;
  std::string buffered;  // bytes read past the last complete line

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
      pollfd wait_for{from_worker.native_source(), POLLIN, 0};
      const int ready = ::poll(&wait_for, 1, static_cast<int>(std::min<long long>(left, 1000)));
      if (ready < 0 && errno != EINTR) return Read::Eof;
      if (ready <= 0) continue;
      char chunk[65536];
      const ssize_t n = ::read(from_worker.native_source(), chunk, sizeof chunk);
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
  const fs::path found = bp::search_path("tsrepro-runner").string();
  return found.empty() ? beside.string() : found.string();
}

RunnerProcess::RunnerProcess(std::string executable) : executable_(std::move(executable)) {
  // Writing to a worker that just died must not kill us.
  std::signal(SIGPIPE, SIG_IGN);
}

RunnerProcess::~RunnerProcess() { stop(); }

void RunnerProcess::start() {
  if (!fs::exists(executable_)) throw UserError(executable_ + ": tsrepro-runner not found (set TSREPRO_RUNNER)");
  auto p = std::make_unique<Process>();
  p->log = fs::temp_directory_path() / ("tsrepro-runner-" + std::to_string(::getpid()) + "-" + std::to_string(starts_) + ".log");
  p->child = bp::child(executable_, bp::std_in < p->to_worker, bp::std_out > p->from_worker, bp::std_err > p->log.string());
  set_close_on_exec(p->to_worker.native_sink());
  set_close_on_exec(p->from_worker.native_source());
  ++starts_;
  spdlog::debug("started runner pid {} ({})", p->child.id(), executable_);
  process_ = std::move(p);
}

void RunnerProcess::stop() {
  if (!process_) return;
  const pid_t pid = process_->child.id();
  if (process_->child.running()) {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
  }
  std::error_code ec;
  process_->child.wait(ec);
  fs::remove(process_->log, ec);
  process_.reset();
}

Verdict RunnerProcess::verdict_for_dead_worker(const std::string& stage) {
  std::error_code ec;
  process_->child.wait(ec);
  const int status = process_->child.native_exit_code();
  const std::string log_tail = tail_of_log(process_->log, 3);
  Verdict v;
  v.phase = stage;
  if (WIFSIGNALED(status)) {
    v.status = Status::Crash;
    v.signature = crash_signature(WTERMSIG(status));
    v.message = "the worker died by " + signal_name(WTERMSIG(status)) + " during " + stage;
  } else {
    v.status = Status::Crash;
    v.signature = "crash:exit " + std::to_string(WEXITSTATUS(status));
    v.message = "the worker exited with status " + std::to_string(WEXITSTATUS(status)) + " during " + stage;
  }
  if (!log_tail.empty()) v.message += " (" + log_tail + ")";
  if (stage_is_reference(stage)) {
    v.status = Status::Invalid;
    v.message = "the reference crashed: " + v.message;
  }
  stop();
  return v;
}

Verdict RunnerProcess::verdict_for_timeout(const std::string& stage, double timeout_seconds) {
  Verdict v;
  v.status = stage_is_reference(stage) ? Status::Invalid : Status::Timeout;
  v.phase = stage;
  v.signature = stage_is_reference(stage) ? "" : "timeout";
  v.message = "no answer within " + std::to_string(timeout_seconds).substr(0, 5) + " s during " + stage +
              (stage_is_reference(stage) ? " (the reference itself is too slow: raise --timeout)" : "");
  stop();
  return v;
}

Verdict RunnerProcess::evaluate(const EvalRequest& request, double timeout_seconds) {
  const auto started = Clock::now();
  Verdict verdict = exchange(request, timeout_seconds);
  // Crashes and timeouts are timed here: the worker could not report its own time.
  if (verdict.seconds == 0) verdict.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return verdict;
}

Verdict RunnerProcess::exchange(const EvalRequest& request, double timeout_seconds) {
  if (!process_) start();
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_seconds));
  std::string stage;
  if (!write_all(process_->to_worker.native_sink(), request_to_json(request).dump() + "\n"))
    return verdict_for_dead_worker("start");
  for (std::string line;;) {
    switch (process_->read_line(line, deadline)) {
      case Process::Read::Timeout: return verdict_for_timeout(stage, timeout_seconds);
      case Process::Read::Eof: return verdict_for_dead_worker(stage);
      case Process::Read::Line: break;
    }
    const json message = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (message.is_discarded()) {
      spdlog::warn("runner: unreadable line: {}", line);
      continue;
    }
    if (message.contains("stage")) {
      stage = message["stage"].get<std::string>();
    } else if (message.contains("verdict")) {
      return verdict_from_json(message["verdict"]);
    } else if (message.contains("error")) {
      throw UserError(message["error"].get<std::string>());
    }
  }
}

}  // namespace tsrepro
