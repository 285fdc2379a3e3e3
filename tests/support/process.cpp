// Running programs from the tests.

#include "tests/support/process.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <sstream>
#include <thread>

#include "tests/support/files.h"

extern char** environ;

namespace tsrepro_test {
namespace {

// Processes of a process group that are still alive (zombies excluded: PID 1 in a container need
// not reap orphans).
// The processes of group `pgid`; zombies too where `with_zombies`.
std::vector<pid_t> members_of_group(pid_t pgid, bool with_zombies) {
  std::vector<pid_t> members;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return members;
  while (const dirent* entry = ::readdir(proc)) {
    if (!std::isdigit(static_cast<unsigned char>(entry->d_name[0]))) continue;
    const std::string stat = read_text(std::string("/proc/") + entry->d_name + "/stat");
    const auto close_paren = stat.rfind(')');
    if (close_paren == std::string::npos) continue;
    std::istringstream fields(stat.substr(close_paren + 1));
    char state = 0;
    long ppid = 0, pgrp = 0;
    if (!(fields >> state >> ppid >> pgrp)) continue;
    if (pgrp == pgid && (with_zombies || (state != 'Z' && state != 'X')))
      members.push_back(static_cast<pid_t>(std::atol(entry->d_name)));
  }
  ::closedir(proc);
  return members;
}

std::vector<pid_t> live_members_of_group(pid_t pgid) { return members_of_group(pgid, /*with_zombies=*/false); }

std::string make_capture_file(int* fd) {
  std::string pattern = (fs::temp_directory_path() / "tsrepro-cli-capture-XXXXXX").string();
  *fd = ::mkstemp(pattern.data());
  if (*fd < 0) throw std::runtime_error("mkstemp failed: " + std::string(std::strerror(errno)));
  return pattern;
}

}  // namespace

std::string Result::describe() const {
  std::ostringstream s;
  s << "command: tsrepro";
  for (size_t i = 1; i < args.size(); ++i) s << " '" << args[i] << "'";
  s << "\n";
  if (exited)
    s << "exit status: " << exit_code << "\n";
  else
    s << "killed by signal " << term_signal << (watchdog_fired ? " (test watchdog)" : "") << "\n";
  s << "stdout (" << out.size() << " bytes):\n"
    << out.substr(0, 4000) << "\nstderr (" << err.size() << " bytes):\n"
    << err.substr(0, 4000) << "\n";
  return s.str();
}

Result run_cmd(const std::string& program, const Args& tail, const RunOptions& options) {
  Result r;
  r.args.push_back(program);
  r.args.insert(r.args.end(), tail.begin(), tail.end());

  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    if (kv.rfind("TSREPRO_", 0) == 0) continue;
    if (!options.tmpdir.empty() && kv.rfind("TMPDIR=", 0) == 0) continue;
    env.push_back(kv);
  }
  if (!options.tmpdir.empty()) env.push_back("TMPDIR=" + options.tmpdir);
  env.insert(env.end(), options.env.begin(), options.env.end());

  std::vector<char*> argv, envp;
  for (std::string& a : r.args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (std::string& kv : env) envp.push_back(kv.data());
  envp.push_back(nullptr);

  int out_fd = -1, err_fd = -1;
  const std::string out_path = make_capture_file(&out_fd);
  const std::string err_path = make_capture_file(&err_fd);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);

  const auto started = std::chrono::steady_clock::now();
  pid_t pid = -1;
  const int spawn_error = ::posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(out_fd);
  ::close(err_fd);
  if (spawn_error != 0) {
    ::unlink(out_path.c_str());
    ::unlink(err_path.c_str());
    r.err = "posix_spawn(" + program + ") failed: " + std::strerror(spawn_error);
    return r;
  }

  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) break;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (elapsed > options.watchdog_s && !r.watchdog_fired) {
      r.watchdog_fired = true;
      ::kill(-pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  r.exited = WIFEXITED(status);
  if (r.exited) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.term_signal = WTERMSIG(status);

  r.unreaped_at_exit = members_of_group(pid, /*with_zombies=*/true).size();
  // A worker may take a moment to notice its parent is gone; give it a second, then clean up.
  for (int i = 0; i < 100 && !live_members_of_group(pid).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  r.stray_processes = live_members_of_group(pid).size();
  if (r.stray_processes > 0) ::kill(-pid, SIGKILL);

  r.out = read_text(out_path);
  r.err = read_text(err_path);
  ::unlink(out_path.c_str());
  ::unlink(err_path.c_str());
  return r;
}

Result tsrepro(const Args& args, const RunOptions& options) { return run_cmd(kTsrepro, args, options); }

// Configures (Release; this build's libtorch where the test knows it) and builds a CMake
// project. Returns the failing step's result, or the build's.
Result cmake_build(const std::string& source, const std::string& build, std::vector<std::string> extra) {
  std::vector<std::string> configure = {"-S", source, "-B", build, "-DCMAKE_BUILD_TYPE=Release"};
#ifdef TSREPRO_TORCH_DIR
  configure.push_back(std::string("-DTorch_DIR=") + TSREPRO_TORCH_DIR);
#endif
  configure.insert(configure.end(), extra.begin(), extra.end());
  const Result cmake = run_cmd("/usr/bin/cmake", configure, {"", 300});
  if (cmake.exit_code != 0) return cmake;
  return run_cmd("/usr/bin/cmake", {"--build", build, "-j", "2"}, {"", 600});
}

// Runs several tsrepro commands concurrently (a few at a time); results in order.
std::vector<Result> tsrepro_all(const std::vector<Args>& commands, const RunOptions& options) {
  const size_t width = std::max(2u, std::min(8u, std::thread::hardware_concurrency()));
  std::vector<Result> results(commands.size());
  for (size_t begin = 0; begin < commands.size(); begin += width) {
    std::vector<std::future<Result>> batch;
    for (size_t i = begin; i < std::min(commands.size(), begin + width); ++i)
      batch.push_back(std::async(std::launch::async, [&, i] { return tsrepro(commands[i], options); }));
    for (size_t i = 0; i < batch.size(); ++i) results[begin + i] = batch[i].get();
  }
  return results;
}

ShellResult run_shell(const std::string& command) {
  ShellResult result;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;) result.output.append(buffer, n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::string shell_quoted(const std::string& text) { return "'" + text + "'"; }

bool system_python_has_torch() {
  static const bool has = [] {
    const Result r = run_cmd(kPython, {"-c", "import torch"});
    return r.exited && r.exit_code == 0;
  }();
  return has;
}

bool python_torch_required() {
  const char* required = std::getenv("TSREPRO_TEST_REQUIRE_PYTHON_TORCH");
  return required && std::string(required) == "1";
}

bool skip_libtorch_independent_tests() {
  const char* skip = std::getenv("TSREPRO_TEST_SKIP_LIBTORCH_INDEPENDENT");
  return skip && std::string(skip) == "1";
}

}  // namespace tsrepro_test
