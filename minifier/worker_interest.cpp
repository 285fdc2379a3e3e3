// WorkerInterest: candidates judged in tsrepro-runner workers, or by the user's --test command.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <boost/process.hpp>
#include <spdlog/spdlog.h>
#include <torch/script.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include "minifier/worker_interest.h"
#include "runner/file_util.h"
#include "tsrepro/error.h"

namespace bp = boost::process;
namespace fs = std::filesystem;

namespace tsrepro {
namespace {

void write_values(const std::vector<c10::IValue>& values, const std::string& path) {
  std::vector<char> bytes = torch::jit::pickle_save(c10::ivalue::Tuple::create(values));
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

std::unique_ptr<InterestTest> make_worker_interest(const MinifyOptions& options) {
  return std::make_unique<WorkerInterest>(options);
}

WorkerInterest::WorkerInterest(const MinifyOptions& options, const std::string& runner_path) : options_(options) {
  options_.validate();
  if (options_.interest == Interest::CheckStr) check_regex_ = std::regex(options_.check_str);
  std::string pattern = (fs::temp_directory_path() / "tsrepro-minify-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) throw UserError(pattern + ": cannot create a scratch directory");
  scratch_dir_ = pattern;
  for (int i = 0; i < std::max(1, options_.jobs); ++i) runners_.push_back(std::make_unique<RunnerProcess>(runner_path));
}

WorkerInterest::~WorkerInterest() { remove_tree(scratch_dir_); }

size_t WorkerInterest::next_serial() { return serial_++; }

bool WorkerInterest::judged_interesting(const Verdict& v) const {
  switch (options_.interest) {
    case Interest::SameFailure:
      return v.failed() && status_name(v.status) == expected_.kind && v.signature == expected_.signature;
    case Interest::Accuracy:
      return v.status == Status::Accuracy;
    case Interest::CheckStr:
      return v.failed() && std::regex_search(v.signature + "\n" + v.message, *check_regex_);
    case Interest::TestCommand:
      break;  // never asked: interesting() runs the command instead
  }
  return false;
}

Verdict WorkerInterest::run_in_worker(const Case& candidate, size_t slot) {
  EvalRequest request;
  request.graph_ir = graph_to_ir(*candidate.graph);
  request.specs = candidate.inputs;
  request.inputs_path = scratch_dir_ + "/inputs-" + std::to_string(next_serial()) + ".pt";
  request.run = options_.run;
  request.run.fake_inputs = false;  // the minifier works on concrete values from the start
  write_values(*candidate.values, request.inputs_path);
  Verdict verdict = runners_[slot]->evaluate(request);
  fs::remove(request.inputs_path);
  spdlog::debug("candidate: {} {}", status_name(verdict.status), verdict.signature);
  return verdict;
}

bool WorkerInterest::run_test_command(const Case& candidate) {
  const std::string dir = scratch_dir_ + "/candidate-" + std::to_string(next_serial());
  write_case(candidate, dir, /*replace=*/true);
  // The directory goes in as "$1", never spliced into the command text.
  bp::child child("/bin/sh", "-c", options_.test_command + " \"$1\"", "sh", dir, bp::std_out > bp::null,
                  bp::std_err > bp::null);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(options_.run.timeout_seconds);
  while (child.running() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  bool passed = false;
  if (child.running()) {
    child.terminate();
  } else {
    child.wait();
    passed = child.exit_code() == 0;
  }
  remove_tree(dir);
  return passed;
}

Verdict WorkerInterest::check_original(const Case& original) {
  const Verdict verdict = run_in_worker(original, 0);
  expected_ = {options_.run.ref, options_.run.backend, options_.run.backend_options, status_name(verdict.status),
               verdict.signature};
  const bool ok = options_.interest == Interest::TestCommand   ? run_test_command(original)
                  : options_.interest == Interest::SameFailure ? verdict.failed()
                                                               : judged_interesting(verdict);
  if (!ok) {
    throw NotFailingError(options_.interest == Interest::TestCommand
                              ? "the test command does not find the original case interesting"
                              : "the original case does not fail as required under " + options_.run.backend,
                          verdict);
  }
  return verdict;
}

bool WorkerInterest::interesting(const Case& candidate, size_t slot) {
  if (options_.interest == Interest::TestCommand) return run_test_command(candidate);
  return judged_interesting(run_in_worker(candidate, slot));
}

std::optional<Verdict> WorkerInterest::verdict_of(const Case& candidate) {
  if (options_.interest == Interest::TestCommand) return std::nullopt;
  return run_in_worker(candidate, 0);
}

}  // namespace tsrepro
