#include "process/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace tsrepro {
namespace {

using Clock = std::chrono::steady_clock;

// The KillTargets alive now (every running Child, each zygote worker), as kill(2) targets: a pid,
// or minus the process group it leads. A child with a group of its own (a --test command under
// its time limit, a runner worker) gets no Ctrl-C from the terminal, and no child gets a signal
// sent to this process alone (a scheduler's SIGTERM), so end_children_on_termination_signals
// passes it on. Written by the
// threads that start and reap children, read by a signal handler: lock-free atomics, no locks.
constexpr size_t kChildSlots = 256;
std::atomic<pid_t> running_children[kChildSlots];
static_assert(std::atomic<pid_t>::is_always_lock_free);

void remember_child(pid_t target) {
  for (std::atomic<pid_t>& slot : running_children) {
    pid_t free_slot = 0;
    if (slot.compare_exchange_strong(free_slot, target)) return;
  }
  // More children at once than slots: this one is not passed a termination signal.
}

void forget_child(pid_t target) {
  for (std::atomic<pid_t>& slot : running_children) {
    pid_t mine = target;
    if (slot.compare_exchange_strong(mine, 0)) return;
  }
}

extern "C" void end_children_and_die(int signal_number) {
  for (std::atomic<pid_t>& slot : running_children) {
    const pid_t target = slot.load();
    if (target != 0) ::kill(target, SIGTERM);
  }
  ::signal(signal_number, SIG_DFL);
  ::raise(signal_number);
}

// This process's environment with `changes` applied (NAME=VALUE sets, a bare NAME unsets).
std::vector<std::string> child_environment(const std::vector<std::string>& changes) {
  std::map<std::string, std::string> entries;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry = *e;
    entries[entry.substr(0, entry.find('='))] = entry;
  }
  for (const std::string& change : changes) {
    const size_t equals = change.find('=');
    if (equals == std::string::npos)
      entries.erase(change);
    else
      entries[change.substr(0, equals)] = change;
  }
  std::vector<std::string> environment;
  for (auto& [name, entry] : entries) environment.push_back(std::move(entry));
  return environment;
}

std::vector<char*> pointers_to(std::vector<std::string>& texts) {
  std::vector<char*> pointers;
  for (std::string& text : texts) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// posix_spawn's file actions and attributes, destroyed with it.
struct SpawnSetup {
  posix_spawn_file_actions_t files;
  posix_spawnattr_t attributes;
  std::vector<int> child_ends;  // the child's ends of our pipes: closed here once it has started

  SpawnSetup() {
    posix_spawn_file_actions_init(&files);
    posix_spawnattr_init(&attributes);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&files);
    posix_spawnattr_destroy(&attributes);
    for (int& fd : child_ends) close_fd(fd);
  }

  // Points the child's `target` descriptor where `stream` says; returns our end of a pipe, or -1.
  int direct(int target, const Stream& stream) {
    const bool reads = target == STDIN_FILENO;
    switch (stream.kind) {
      case Stream::Kind::Inherit:
        return -1;
      case Stream::Kind::Null:
        posix_spawn_file_actions_addopen(&files, target, "/dev/null", reads ? O_RDONLY : O_WRONLY, 0);
        return -1;
      case Stream::Kind::File:
        posix_spawn_file_actions_addopen(&files, target, stream.path.c_str(),
                                         reads ? O_RDONLY : (O_WRONLY | O_CREAT | (stream.append ? O_APPEND : O_TRUNC)),
                                         0644);
        return -1;
      case Stream::Kind::AsStdout:
        posix_spawn_file_actions_adddup2(&files, STDOUT_FILENO, target);
        return -1;
      case Stream::Kind::Pipe: {
        int ends[2];  // close-on-exec: no other child inherits them
        if (::pipe2(ends, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
        const int ours = reads ? ends[1] : ends[0], theirs = reads ? ends[0] : ends[1];
        posix_spawn_file_actions_adddup2(&files, theirs, target);
        child_ends.push_back(theirs);
        return ours;
      }
    }
    return -1;
  }
};

// How long until `deadline`, in poll's milliseconds (-1: no deadline).
int poll_timeout(const std::optional<Clock::time_point>& deadline) {
  if (!deadline) return -1;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1000 * 60 * 60));
}

// write(2) to a pipe whose reader may have exited: EPIPE, not a SIGPIPE that would end this
// process. The signal is blocked in this thread for the write and a pending one taken back.
ssize_t write_without_sigpipe(int fd, const char* data, size_t size) {
  sigset_t pipe_signal, before;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, &before);
  const ssize_t n = ::write(fd, data, size);
  const int write_errno = errno;
  if (n < 0 && write_errno == EPIPE) {
    const timespec no_wait{0, 0};
    sigtimedwait(&pipe_signal, nullptr, &no_wait);
  }
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  errno = write_errno;
  return n;
}

// Feeds `input` to `in` and reads `out` and `err` into `run` until all are closed or `deadline`
// passes; false at the deadline.
bool exchange(int& in, int& out, int& err, const std::string& input, ChildRun& run,
              const std::optional<Clock::time_point>& deadline) {
  size_t written = 0;
  if (in >= 0) ::fcntl(in, F_SETFL, ::fcntl(in, F_GETFL) | O_NONBLOCK);
  if (in >= 0 && input.empty()) close_fd(in);
  char buffer[65536];
  while (in >= 0 || out >= 0 || err >= 0) {
    std::vector<pollfd> fds;
    for (int fd : {in, out, err})
      if (fd >= 0) fds.push_back({fd, static_cast<short>(fd == in ? POLLOUT : POLLIN), 0});
    const int ready = ::poll(fds.data(), fds.size(), poll_timeout(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    if (ready == 0 && deadline && Clock::now() >= *deadline) return false;
    for (const pollfd& p : fds) {
      if (p.revents == 0) continue;
      if (p.fd == in) {
        const ssize_t n = write_without_sigpipe(in, input.data() + written, input.size() - written);
        if (n > 0) written += static_cast<size_t>(n);
        if ((n < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) close_fd(in);
        continue;
      }
      const ssize_t n = ::read(p.fd, buffer, sizeof buffer);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      std::string& into = p.fd == out ? run.out : run.err;
      if (n > 0)
        into.append(buffer, static_cast<size_t>(n));
      else
        close_fd(p.fd == out ? out : err);
    }
  }
  return true;
}

}  // namespace

bool ChildRun::exited_with(int code) const {
  return finished() && WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == code;
}

int ChildRun::exit_code() const {
  if (!finished()) return -1;
  return WIFSIGNALED(wait_status) ? 128 + WTERMSIG(wait_status) : WEXITSTATUS(wait_status);
}

std::string ChildRun::status_text() const {
  if (!started) return "could not start: " + start_error;
  if (timed_out) return "no answer within its time limit";
  return wait_status_text(wait_status);
}

std::string wait_status_text(int wait_status) {
  if (WIFSIGNALED(wait_status)) {
    const char* abbreviation = ::sigabbrev_np(WTERMSIG(wait_status));
    return "killed by " +
           (abbreviation ? "SIG" + std::string(abbreviation) : "signal " + std::to_string(WTERMSIG(wait_status)));
  }
  return "exit status " + std::to_string(WEXITSTATUS(wait_status));
}

Child::Child(const ChildSpec& spec) {
  if (spec.argv.empty()) throw std::runtime_error("no program to run");
  SpawnSetup setup;
  try {
    in_ = setup.direct(STDIN_FILENO, spec.in);
    out_ = setup.direct(STDOUT_FILENO, spec.out);
    err_ = setup.direct(STDERR_FILENO, spec.err);
  } catch (...) {
    release_pipes();
    throw;
  }
  if (!spec.working_dir.empty()) posix_spawn_file_actions_addchdir_np(&setup.files, spec.working_dir.c_str());
  // The child starts with default signal handling and mask, whatever this process set (an
  // ignored SIGPIPE, say, would stay ignored across exec).
  sigset_t defaults, empty;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigemptyset(&empty);
  short flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
  posix_spawnattr_setsigdefault(&setup.attributes, &defaults);
  posix_spawnattr_setsigmask(&setup.attributes, &empty);
  if (spec.own_process_group) {
    flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(&setup.attributes, 0);
  }
  posix_spawnattr_setflags(&setup.attributes, flags);
  std::vector<std::string> argv = spec.argv, environment = child_environment(spec.environment);
  const std::vector<char*> argv_pointers = pointers_to(argv), environment_pointers = pointers_to(environment);
  const int failed = ::posix_spawnp(&pid_, argv_pointers[0], &setup.files, &setup.attributes, argv_pointers.data(),
                                    environment_pointers.data());
  if (failed != 0) {
    pid_ = -1;
    release();
    throw std::runtime_error(spec.argv[0] + ": " + std::strerror(failed));
  }
  target_ = KillTarget(pid_, spec.own_process_group);
}

Child::~Child() { release(); }

Child::Child(Child&& other) noexcept
    : pid_(other.pid_),
      target_(std::move(other.target_)),
      in_(other.in_),
      out_(other.out_),
      err_(other.err_),
      status_(other.status_) {
  other.pid_ = -1;
  other.in_ = other.out_ = other.err_ = -1;
}

Child& Child::operator=(Child&& other) noexcept {
  if (this != &other) {
    release();
    pid_ = other.pid_;
    target_ = std::move(other.target_);
    in_ = other.in_;
    out_ = other.out_;
    err_ = other.err_;
    status_ = other.status_;
    other.pid_ = -1;
    other.in_ = other.out_ = other.err_ = -1;
  }
  return *this;
}

void Child::release_pipes() {
  close_fd(in_);
  close_fd(out_);
  close_fd(err_);
}

void Child::release() {
  release_pipes();
  if (pid_ > 0 && !status_) {
    kill();
    wait();
  }
  pid_ = -1;
}

void Child::close_stdin() { close_fd(in_); }

std::optional<int> Child::try_wait() {
  if (status_ || pid_ <= 0) return status_;
  int status = 0;
  pid_t waited;
  do waited = ::waitpid(pid_, &status, WNOHANG);
  while (waited < 0 && errno == EINTR);
  if (waited == pid_) status_ = status;
  if (waited < 0) status_ = -1;  // no child of ours by that pid (reaped elsewhere): gone all the same
  if (status_) target_.release();
  return status_;
}

int Child::wait() {
  if (status_ || pid_ <= 0) return status_.value_or(-1);
  status_ = reap(pid_);
  target_.release();
  return *status_;
}

std::optional<int> Child::wait_for(std::chrono::duration<double> limit) {
  // Polls: waitpid has no time limit. From 1 ms up to 50 ms between looks, so that a child that
  // ends at once costs no sleep and a long one costs little CPU.
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(limit);
  std::chrono::milliseconds pause{1};
  while (!try_wait()) {
    const auto now = Clock::now();
    if (now >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
  return status_;
}

void Child::kill() {
  if (pid_ <= 0 || status_) return;
  target_.kill();
}

ChildRun run_child(const ChildSpec& spec, std::optional<std::chrono::duration<double>> time_limit,
                   const std::string& input) {
  ChildRun run;
  ChildSpec own = spec;
  if (time_limit) own.own_process_group = true;  // the limit ends what it started too
  std::optional<Child> child;
  try {
    child.emplace(own);
  } catch (const std::exception& e) {
    run.start_error = e.what();
    return run;
  }
  run.started = true;
  std::optional<Clock::time_point> deadline;
  if (time_limit) deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(*time_limit);
  // The pipes are read (and fed) here, each closed at its end.
  const bool in_time = exchange(child->in_, child->out_, child->err_, input, run, deadline);
  child->release_pipes();
  std::optional<int> status;
  if (in_time) status = deadline ? child->wait_for(*deadline - Clock::now()) : std::optional<int>(child->wait());
  if (!status) {
    child->kill();
    child->wait();
    run.timed_out = true;
    return run;
  }
  run.wait_status = *status;
  return run;
}

KillTarget::KillTarget(pid_t pid, bool leads_group) : pid_(pid), leads_group_(leads_group) {
  if (pid_ > 0) remember_child(leads_group_ ? -pid_ : pid_);
}

KillTarget::KillTarget(KillTarget&& other) noexcept : pid_(other.pid_), leads_group_(other.leads_group_) {
  other.pid_ = -1;
}

KillTarget& KillTarget::operator=(KillTarget&& other) noexcept {
  if (this != &other) {
    release();
    pid_ = other.pid_;
    leads_group_ = other.leads_group_;
    other.pid_ = -1;
  }
  return *this;
}

void KillTarget::kill() const {
  if (pid_ <= 0) return;
  if (leads_group_) ::kill(-pid_, SIGKILL);  // ESRCH before the child got its group: then the pid below
  ::kill(pid_, SIGKILL);
}

void KillTarget::release() {
  if (pid_ > 0) forget_child(leads_group_ ? -pid_ : pid_);
  pid_ = -1;
}

bool write_all(int fd, const std::string& data) {
  for (size_t written = 0; written < data.size();) {
    const ssize_t n = write_without_sigpipe(fd, data.data() + written, data.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<size_t>(n);
  }
  return true;
}

pid_t fork_copy() { return ::fork(); }

void end_children_on_termination_signals() {
  struct sigaction action {};
  action.sa_handler = end_children_and_die;
  sigemptyset(&action.sa_mask);
  for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(signal_number, &action, nullptr);
}

int reap(pid_t pid) {
  int status = 0;
  pid_t waited;
  do waited = ::waitpid(pid, &status, 0);
  while (waited < 0 && errno == EINTR);
  return waited == pid ? status : -1;
}

std::string find_program(const std::string& name) {
  const auto executable = [](const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && ::access(path.c_str(), X_OK) == 0;
  };
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return executable(name) ? name : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  for (size_t start = 0; start <= dirs.size();) {
    const size_t colon = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, colon - start);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (executable(candidate)) return candidate;
    start = colon + 1;
  }
  return "";
}

}  // namespace tsrepro
