// Job directories: written by the sweep, run by `tsrepro sweep-job DIR`, read back once finished.

#include "sweep/job.h"

#include <chrono>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "process/child_process.h"
#include "runner/file_util.h"
#include "runner/word_lists.h"
#include "tsrepro/error.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace tsrepro {
void prepare_job(const Job& job) {
  if (job_finished(job.dir)) return;
  fs::create_directories(job.dir);
  for (const char* stale : {"stdout", "stderr", "seconds", "result.json"})
    remove_tree((fs::path(job.dir) / stale).string());
  for (const std::string& output : job.outputs) remove_tree(output);
  write_file_atomically((fs::path(job.dir) / "job.json").string(), json{{"argv", job.argv}}.dump(1) + "\n");
}

std::string job_result_file(const std::string& dir) { return (fs::path(dir) / "result.json").string(); }

bool job_finished(const std::string& dir) { return fs::exists(fs::path(dir) / "exit_code"); }

std::optional<JobOutcome> job_outcome(const std::string& dir) {
  if (!job_finished(dir)) return std::nullopt;
  JobOutcome outcome;
  const std::string exit_code = read_file(dir + "/exit_code");
  try {
    outcome.exit_code = std::stoi(exit_code);
  } catch (const std::exception&) {
    throw UserError(dir + "/exit_code: not a number");
  }
  if (fs::exists(job_result_file(dir))) {
    std::ifstream in(job_result_file(dir));
    outcome.result = json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (outcome.result.is_discarded() || !outcome.result.is_object())
      throw UserError(job_result_file(dir) + ": not the JSON object its command writes");
  }
  outcome.last_error = last_nonempty_line(read_file(dir + "/stderr"));
  return outcome;
}

void run_job(const std::string& dir) {
  const fs::path job_file = fs::path(dir) / "job.json";
  std::ifstream in(job_file);
  const json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.contains("argv") || !j["argv"].is_array() || j["argv"].empty())
    throw UserError(job_file.string() + ": not a sweep job (a JSON object with an \"argv\" list)");
  const std::vector<std::string> argv = j["argv"].get<std::vector<std::string>>();
  const auto started = std::chrono::steady_clock::now();
  ChildSpec spec;
  spec.argv = argv;
  spec.out = Stream::file((fs::path(dir) / "stdout").string());
  spec.err = Stream::file((fs::path(dir) / "stderr").string());
  const ChildRun run = run_child(spec);
  if (!run.started) throw UserError(job_file.string() + ": " + run.status_text());
  const int code = run.exit_code();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  write_file_atomically((fs::path(dir) / "seconds").string(), std::to_string(seconds) + "\n");
  write_file_atomically((fs::path(dir) / "exit_code").string(), std::to_string(code) + "\n");
}

}  // namespace tsrepro
