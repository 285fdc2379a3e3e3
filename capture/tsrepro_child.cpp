// The capture's child processes (tsrepro_child.h), through the one child-process module: it
// spawns (posix_spawn), so that a program with many threads or much memory forks nothing of itself.

#include <dlfcn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>

#include "capture/capture_voice.h"
#include "capture/tsrepro_child.h"
#include "process/child_process.h"

namespace tsrepro::capture {

namespace fs = std::filesystem;

namespace {

// The environment of a check: this one, without the preload (the tsrepro executable must not
// capture itself) and with the run directory the child writes into.
std::vector<std::string> environment_changes(const std::string& run) {
  return {"LD_PRELOAD", "TSREPRO_RUN_DIR=" + run, std::string(kChildVariable) + "=1"};
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
  ChildSpec spec;
  spec.argv = {tsrepro_executable()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.environment = environment_changes(run);
  spec.out = Stream::file(log_path, /*append=*/true);
  spec.err = Stream::as_stdout();
  const ChildRun child = run_child(spec);
  ChildResult result;
  result.started = child.started;
  if (child.started && WIFEXITED(child.wait_status)) result.exit_code = WEXITSTATUS(child.wait_status);
  if (child.started && WIFSIGNALED(child.wait_status)) result.signal = WTERMSIG(child.wait_status);
  return result;
}

std::string quoted_command(const std::vector<std::string>& args) {
  std::string text = tsrepro_executable();
  for (const std::string& a : args) text += " '" + a + "'";
  return text;
}

}  // namespace tsrepro::capture
