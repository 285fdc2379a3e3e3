// Runs backends/inductor_config_check.py (embedded as templates::inductor_config_check) in the
// compile server's Python, once per set of config entries.

#include "backends/inductor_config_check.h"

#include <chrono>
#include <mutex>
#include <set>
#include <string_view>

#include <nlohmann/json.hpp>

#include "backends/pt2_compile_server_script.h"
#include "backends/pt2_program.h"
#include "process/child_process.h"
#include "runner/word_lists.h"
#include "tsrepro/error.h"

namespace tsrepro {
namespace {

// Importing torch._inductor takes seconds; a stuck one is no answer.
constexpr std::chrono::seconds kConfigCheckLimit{300};

}  // namespace

void check_inductor_config(const BackendOptions& server_options) {
  constexpr std::string_view kPrefix = "config.";
  nlohmann::json entries = nlohmann::json::object();
  for (const auto& [key, literal] : server_options)
    if (key.rfind(kPrefix, 0) == 0) entries[key.substr(kPrefix.size())] = literal;
  if (entries.empty()) return;
  static std::mutex mutex;
  static std::set<std::string> checked;
  const std::string request = entries.dump();
  const std::lock_guard<std::mutex> lock(mutex);
  if (checked.count(request)) return;
  ChildSpec spec;
  spec.argv = {pt2_python_executable(), "-c", templates::inductor_config_check, request};
  spec.out = spec.err = Stream::pipe();
  const ChildRun run = run_child(spec, kConfigCheckLimit);
  const std::string refusal = last_nonempty_line(run.out);
  if (run.exited_with(1) && !refusal.empty()) throw UserError("--backend-opt config: " + refusal);
  if (!run.exited_with(0))
    throw UserError("--backend-opt config: cannot check it against torch._inductor.config: " +
                    pt2_python_executable() + " " + run.status_text() + ": " + last_nonempty_line(run.err));
  checked.insert(request);
}

}  // namespace tsrepro
