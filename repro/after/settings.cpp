// TSREPRO_AFTER / TSREPRO_LEVEL / TSREPRO_DIR, read and checked, and the run directory. Torch-free:
// libtsrepro_capture.so compiles this file too.

#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <string>

#include "tsrepro/after_settings.h"
#include "tsrepro/error.h"

namespace fs = std::filesystem;

namespace tsrepro {
namespace {

std::string variable(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

AfterSettings AfterSettings::from_environment() {
  AfterSettings s;
  const std::string after = variable("TSREPRO_AFTER");
  if (after.empty() || after == "0" || after == "off")
    s.stage = Stage::Off;
  else if (after == "graph")
    s.stage = Stage::Graph;
  else if (after == "fusion")
    s.stage = Stage::Fusion;
  else
    throw UserError("TSREPRO_AFTER=" + after + ": expected graph or fusion");

  const std::string level = variable("TSREPRO_LEVEL");
  if (!level.empty()) {
    if (level.size() != 1 || level[0] < '1' || level[0] > '4')
      throw UserError("TSREPRO_LEVEL=" + level + ": expected 1, 2, 3 or 4");
    s.level = level[0] - '0';
  }
  const std::string dir = variable("TSREPRO_DIR");
  if (!dir.empty()) s.dir = dir;
  return s;
}

std::string claim_run_directory(const std::string& root, bool& made_now, int owner) {
  const pid_t named_after = owner > 0 ? static_cast<pid_t>(owner) : ::getpid();
  static std::mutex mutex;
  static std::string made;
  static pid_t made_by = 0;
  std::lock_guard<std::mutex> lock(mutex);
  made_now = false;
  if (!made.empty() && made_by == ::getpid()) return made;
  made_by = ::getpid();  // a forked child's cases are its own
  // A helper process of a run that already has its directory (`tsrepro after`, started by the
  // Python shim or by libtsrepro_capture.so) writes into that one.
  if (const char* given = std::getenv("TSREPRO_RUN_DIR"); given && *given) {
    made = fs::absolute(given).string();
    fs::create_directories(made);
    return made;
  }
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  const std::string base =
      (fs::absolute(root) / ("run_" + std::string(stamp) + "-pid_" + std::to_string(named_after))).string();
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) throw UserError("TSREPRO_DIR=" + root + ": cannot create it (" + ec.message() + ")");
  // create_directory is the claim: it fails when another run holds the name.
  for (int attempt = 1;; ++attempt) {
    const std::string candidate = attempt == 1 ? base : base + "-" + std::to_string(attempt);
    if (fs::create_directory(candidate, ec)) {
      made = candidate;
      made_now = true;
      return made;
    }
    if (ec) throw UserError("TSREPRO_DIR=" + root + ": cannot write here (" + ec.message() + ")");
  }
}

}  // namespace tsrepro
