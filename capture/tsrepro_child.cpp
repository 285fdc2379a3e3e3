// The capture's child processes (tsrepro_child.h): posix_spawn, so that a program with many threads
// or much memory forks nothing of itself.

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include "capture/capture_voice.h"
#include "capture/tsrepro_child.h"

extern char** environ;

namespace tsrepro::capture {

namespace fs = std::filesystem;

namespace {

// The environment of a check: this one, without the preload (the tsrepro executable must not
// capture itself) and with the run directory the child writes into.
std::vector<std::string> child_environment(const std::string& run) {
  std::vector<std::string> env;
  for (char** entry = environ; *entry; ++entry) {
    const std::string text = *entry;
    if (text.rfind("LD_PRELOAD=", 0) == 0 || text.rfind("TSREPRO_RUN_DIR=", 0) == 0) continue;
    env.push_back(text);
  }
  env.push_back("TSREPRO_RUN_DIR=" + run);
  env.push_back(std::string(kChildVariable) + "=1");
  return env;
}

}  // namespace

std::string tsrepro_executable() {
  if (const char* bin = std::getenv("TSREPRO_BIN"); bin && *bin) return bin;
  // Installed beside this library: PREFIX/lib/libtsrepro_capture_torch.so and PREFIX/bin/tsrepro; in
  // the build tree both sit in the build directory.
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&tsrepro_executable), &self) && self.dli_fname) {
    const fs::path dir = fs::path(self.dli_fname).parent_path();
    for (const fs::path& candidate : {dir / "tsrepro", dir.parent_path() / "bin" / "tsrepro"})
      if (fs::exists(candidate)) return candidate.string();
  }
  return "tsrepro";  // from PATH
}

ChildResult run_tsrepro(const std::vector<std::string>& args, const std::string& run, const std::string& log_path) {
  std::vector<std::string> argv_text = {tsrepro_executable()};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_text = child_environment(run);
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&files, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, argv[0], &files, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&files);
  ChildResult result;
  if (spawned != 0) return result;
  result.started = true;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

std::string quoted_command(const std::vector<std::string>& args) {
  std::string text = tsrepro_executable();
  for (const std::string& a : args) text += " '" + a + "'";
  return text;
}

}  // namespace tsrepro::capture
