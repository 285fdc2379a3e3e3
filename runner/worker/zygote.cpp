// The zygote (see zygote.h): a SOCK_SEQPACKET socketpair between the parent and the zygote, one
// request and one answer per message, under a mutex on the parent's side (-j N asks from N
// threads). Requests: 'S' + log path with two descriptors attached (SCM_RIGHTS): fork a worker;
// 'W' + pid: wait for that worker. Answers: a pid, or a wait status, as a decimal string.

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <string>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "process/child_process.h"
#include "runner/worker/worker_loop.h"
#include "runner/worker/zygote.h"

namespace tsrepro::zygote {
namespace {

int control_fd = -1;  // the parent's end; -1 without a zygote
pid_t zygote_pid = -1;
std::mutex control_mutex;

size_t thread_count() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Threads:", 0) == 0) return std::stoul(line.substr(8));
  return 0;  // unknown: do not fork
}

bool send_message(int fd, const std::string& text, const int* fds, size_t fd_count) {
  iovec data{const_cast<char*>(text.data()), text.size()};
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))] = {};
  if (fd_count > 0) {
    message.msg_control = control;
    message.msg_controllen = CMSG_SPACE(fd_count * sizeof(int));
    cmsghdr* header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(fd_count * sizeof(int));
    std::memcpy(CMSG_DATA(header), fds, fd_count * sizeof(int));
  }
  ssize_t sent;
  do sent = ::sendmsg(fd, &message, MSG_NOSIGNAL);
  while (sent < 0 && errno == EINTR);
  return sent == static_cast<ssize_t>(text.size());
}

// One message; attached descriptors land in fds (at most 2). Empty text: the other end closed.
std::string receive_message(int fd, int* fds, size_t* fd_count) {
  char buffer[4096];
  iovec data{buffer, sizeof buffer};
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))] = {};
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  ssize_t got;
  do got = ::recvmsg(fd, &message, MSG_CMSG_CLOEXEC);
  while (got < 0 && errno == EINTR);
  if (got <= 0) return "";
  if (fd_count) *fd_count = 0;
  for (cmsghdr* header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
    const size_t n = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < n; ++i) {
      int received;
      std::memcpy(&received, CMSG_DATA(header) + i * sizeof(int), sizeof(int));
      if (fds && fd_count && *fd_count < 2)
        fds[(*fd_count)++] = received;
      else
        ::close(received);
    }
  }
  return std::string(buffer, static_cast<size_t>(got));
}

// In the forked worker: the descriptors in place, everything else of the zygote's closed.
[[noreturn]] void become_worker(int request_fd, int answer_fd, const std::string& log_path, int zygote_end,
                                pid_t zygote) {
  // A worker outlives nothing: if the zygote (so the parent) is gone, so is it.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != zygote) ::_exit(0);  // it died before prctl took effect
  ::close(zygote_end);
  const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (::dup2(request_fd, STDIN_FILENO) < 0 || ::dup2(answer_fd, STDOUT_FILENO) < 0 ||
      (log >= 0 && ::dup2(log, STDERR_FILENO) < 0))
    ::_exit(127);
  ::close_range(3, ~0U, 0);
  // Skip static destructors: libtorch's take a fifth of a second and there is nothing to save.
  ::_exit(serve_runner_requests());
}

[[noreturn]] void serve_as_zygote(int zygote_end, pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(0);  // the parent died before prctl took effect
  // Hold none of the parent's descriptors: a pipe to its stdout must close when the parent exits.
  const int null = ::open("/dev/null", O_RDWR);
  for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) ::dup2(null, fd);
  ::close_range(3, static_cast<unsigned>(zygote_end) - 1, 0);
  ::close_range(static_cast<unsigned>(zygote_end) + 1, ~0U, 0);
  for (;;) {
    int fds[2];
    size_t fd_count = 0;
    const std::string request = receive_message(zygote_end, fds, &fd_count);
    if (request.empty()) ::_exit(0);  // the parent closed its end: nothing more to serve
    std::string answer = "-1";
    if (request[0] == 'S' && fd_count == 2) {
      const pid_t zygote = ::getpid();
      const pid_t pid = fork_copy();
      if (pid == 0) become_worker(fds[0], fds[1], request.substr(1), zygote_end, zygote);
      answer = std::to_string(pid);
    } else if (request[0] == 'W') {
      answer = std::to_string(reap(static_cast<pid_t>(std::stol(request.substr(1)))));
    }
    for (size_t i = 0; i < fd_count; ++i) ::close(fds[i]);
    if (!send_message(zygote_end, answer, nullptr, 0)) ::_exit(0);
  }
}

// One request, one answer; the zygote is marked gone when it does not answer.
std::string ask(const std::string& request, const int* fds, size_t fd_count) {
  std::lock_guard<std::mutex> lock(control_mutex);
  if (control_fd < 0) throw std::runtime_error("the worker zygote is not running");
  std::string answer;
  if (send_message(control_fd, request, fds, fd_count)) answer = receive_message(control_fd, nullptr, nullptr);
  if (answer.empty()) {
    ::close(control_fd);
    control_fd = -1;
    throw std::runtime_error("the worker zygote is gone");
  }
  return answer;
}

}  // namespace

bool start() {
  if (control_fd >= 0) return true;
  if (thread_count() != 1) return false;
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends) != 0) return false;
  const pid_t parent = ::getpid();
  const pid_t pid = fork_copy();
  if (pid < 0) {
    ::close(ends[0]);
    ::close(ends[1]);
    return false;
  }
  if (pid == 0) {
    ::close(ends[0]);
    serve_as_zygote(ends[1], parent);
  }
  ::close(ends[1]);
  control_fd = ends[0];
  zygote_pid = pid;
  return true;
}

void stop() {
  {
    std::lock_guard<std::mutex> lock(control_mutex);
    if (control_fd >= 0) ::close(control_fd);  // the zygote reads the end of its socket and exits
    control_fd = -1;
  }
  if (zygote_pid > 0) reap(zygote_pid);
  zygote_pid = -1;
}

bool available() {
  std::lock_guard<std::mutex> lock(control_mutex);
  return control_fd >= 0;
}

pid_t spawn_worker(int request_fd, int answer_fd, const std::string& log_path) {
  const int fds[2] = {request_fd, answer_fd};
  const pid_t pid = static_cast<pid_t>(std::stol(ask("S" + log_path, fds, 2)));
  if (pid <= 0) throw std::runtime_error("the worker zygote could not fork");
  return pid;
}

int wait_for_worker(pid_t pid) { return std::stoi(ask("W" + std::to_string(pid), nullptr, 0)); }

}  // namespace tsrepro::zygote
