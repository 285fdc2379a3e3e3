// Checkpoints and the final minified case, each with its reproducers.

#include "repro/checkpoints.h"

#include <dirent.h>

#include <climits>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "runner/file_util.h"
#include "tsrepro/error.h"

namespace fs = std::filesystem;

namespace tsrepro {
namespace {

constexpr const char* kCheckpointSuffix = "_nodes";

// Directory entries by name, without "." and "..". (readdir, not std::filesystem iteration:
// see runner/file_util.h on PyTorch 2.x interposing filesystem symbols.)
std::vector<std::string> entries_of(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return names;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(d);
  return names;
}

// "12_nodes" -> 12; anything else (a temporary ".12_nodes.tmp-..." included) -> nullopt.
std::optional<long> checkpoint_nodes(const std::string& name) {
  const size_t suffix = name.size() - std::string(kCheckpointSuffix).size();
  if (name.size() <= std::string(kCheckpointSuffix).size() ||
      name.compare(suffix, std::string::npos, kCheckpointSuffix) != 0)
    return std::nullopt;
  const std::string digits = name.substr(0, suffix);
  if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) return std::nullopt;
  return std::stol(digits);
}

void remove_unfinished_writes(const std::string& dir) {
  for (const std::string& name : entries_of(dir))
    if (name.rfind('.', 0) == 0 && name.find(".tmp-") != std::string::npos) {
      spdlog::info("removing {}/{}: a write that a killed run left unfinished", dir, name);
      remove_tree(dir + "/" + name);
    }
}

}  // namespace

ReproSettings repro_settings_for(const MinifyOptions& options, const std::string& command_line) {
  ReproSettings s;
  s.failure.run = options.run;
  s.failure.run.fake_inputs = false;  // a minify state always carries real values
  s.command_line = command_line;
  return s;
}

CheckpointWriter::CheckpointWriter(std::string out_dir, ReproSettings settings)
    : out_dir_(std::move(out_dir)), settings_(std::move(settings)) {
  std::error_code ec;
  fs::create_directories(out_dir_ + "/checkpoints", ec);
  if (ec) throw UserError(out_dir_ + ": cannot create the output directory: " + ec.message());
  remove_unfinished_writes(out_dir_);
  remove_unfinished_writes(out_dir_ + "/checkpoints");
}

std::string CheckpointWriter::write(const Case& state, const std::string& dir, const std::string& inputs_source) const {
  std::map<std::string, std::string> files;
  if (state.expected && state.expected->is_failure()) {
    // The state's failure as the minify judged it: its RunSpec, status, signature and rate.
    ReproSettings settings = settings_;
    settings.failure = *state.expected;
    settings.failure.run.fake_inputs = false;  // a minify state always carries real values
    files = reproducer_files(state, settings);
  }
  write_case(state, dir, /*replace=*/true, files, inputs_source);
  return dir;
}

std::string CheckpointWriter::write_checkpoint(const Case& state, const std::string& inputs_source) const {
  return write(state,
               out_dir_ + "/checkpoints/" + std::to_string(count_compute_nodes(*state.graph)) + kCheckpointSuffix,
               inputs_source);
}

std::string CheckpointWriter::write_final(const Case& state) const { return write(state, out_dir_ + "/minified"); }

std::optional<std::string> smallest_checkpoint(const std::string& out_dir) {
  const std::string dir = out_dir + "/checkpoints";
  std::optional<std::string> best;
  long best_nodes = LONG_MAX;
  for (const std::string& name : entries_of(dir)) {
    const auto nodes = checkpoint_nodes(name);
    if (nodes && *nodes < best_nodes) {
      best_nodes = *nodes;
      best = dir + "/" + name;
    }
  }
  return best;
}

}  // namespace tsrepro
