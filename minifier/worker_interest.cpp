// WorkerInterest: candidates judged in tsrepro-runner workers, or by the user's --test command.

#include <chrono>
#include <filesystem>
#include <fstream>

#include <spdlog/spdlog.h>
#include <torch/script.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include "minifier/content_hash.h"
#include "minifier/worker_interest.h"
#include "process/child_process.h"
#include "runner/file_util.h"
#include "runner/formats/torch_save_writer.h"
#include "tsrepro/error.h"

namespace fs = std::filesystem;

namespace tsrepro {
namespace {

std::vector<char> pickled(const c10::IValue& value) {
  return torch::jit::pickle_save(c10::ivalue::Tuple::create(std::vector<c10::IValue>{value}));
}

// Names a small non-tensor value's file by its pickled bytes.
uint64_t content_hash(const std::vector<char>& bytes) {
  uint64_t h = kContentHashSeed;
  content_hash_update(h, bytes.data(), bytes.size());
  return h;
}

QueryCost cost_of(const Verdict& verdict) { return {verdict.compute_seconds, verdict.compile_seconds}; }

}  // namespace

std::unique_ptr<InterestTest> make_worker_interest(const MinifyOptions& options) {
  return std::make_unique<WorkerInterest>(options);
}

WorkerInterest::WorkerInterest(const MinifyOptions& options, const std::string& runner_path) : options_(options) {
  options_.validate();
  if (options_.interest == Interest::CheckStr) check_regex_ = std::regex(options_.check_str);
  scratch_ = ScratchDirectory::temporary("tsrepro-minify");
  for (int i = 0; i < std::max(1, options_.jobs); ++i) runners_.push_back(std::make_unique<RunnerProcess>(runner_path));
  costs_.assign(runners_.size(), QueryCost{});
}

WorkerInterest::~WorkerInterest() = default;

size_t WorkerInterest::next_serial() { return serial_++; }

bool WorkerInterest::judged_interesting(const Verdict& v) const {
  switch (options_.interest) {
    case Interest::SameFailure:
      return v.failed() && expected_.status == v.status && v.signature == expected_.signature;
    case Interest::Accuracy:
      return v.status == Status::Accuracy;
    case Interest::CheckStr:
      return v.failed() && std::regex_search(v.signature + "\n" + v.message, *check_regex_);
    case Interest::TestCommand:
      break;  // never asked: interesting() runs the command instead
  }
  return false;
}

// A tensor is written once, the first time a candidate uses it (tensor_memo.h); other values
// (ints, lists, ...) are small and named by a hash of their bytes.
std::string WorkerInterest::value_file(const c10::IValue& value) {
  if (value.isTensor() && value.toTensor().defined()) {
    if (auto known = tensor_files_.find(value.toTensor())) return *known;
    // A name of its own, complete before any request names it: streamed, never held in memory.
    const std::string path = scratch_.path() + "/tensor-" + std::to_string(next_serial()) + ".pt";
    write_torch_save(path, c10::ivalue::Tuple::create(std::vector<c10::IValue>{value}));
    tensor_files_.put(value.toTensor(), path);
    return path;
  }
  const std::vector<char> bytes = pickled(value);
  const std::string path = scratch_.path() + "/value-" + std::to_string(content_hash(bytes)) + ".pt";
  // Atomically: a slot running in parallel never reads half a file.
  if (!fs::exists(path)) write_file_atomically(path, std::string_view(bytes.data(), bytes.size()));
  return path;
}

void WorkerInterest::values_read_from(const std::string& file, const std::vector<c10::IValue>& values) {
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i].isTensor() && values[i].toTensor().defined())
      tensor_files_.put(values[i].toTensor(), input_file_element(file, i));
}

EvalRequest WorkerInterest::request_for(const Case& candidate) {
  RunSpec run = options_.run;
  run.fake_inputs = false;                                 // the minifier works on concrete values from the start
  EvalRequest request = eval_request(candidate, run, "");  // values by file, below
  for (const c10::IValue& value : *candidate.values) request.input_files.push_back(value_file(value));
  return request;
}

Verdict WorkerInterest::run_in_worker(const Case& candidate, size_t slot) {
  Verdict verdict = runners_[slot]->evaluate(request_for(candidate));
  costs_[slot] = cost_of(verdict);
  spdlog::debug("candidate: {} {}", status_name(verdict.status), verdict.signature);
  return verdict;
}

bool WorkerInterest::run_test_command(const Case& candidate) {
  const std::string dir = scratch_.path() + "/candidate-" + std::to_string(next_serial());
  write_case(candidate, dir, /*replace=*/true);
  // The directory goes in as "$1", never spliced into the command text.
  ChildSpec spec;
  spec.argv = {"/bin/sh", "-c", options_.test_command + " \"$1\"", "sh", dir};
  spec.out = spec.err = Stream::null();
  const bool passed =
      run_child(spec, std::chrono::duration<double>(options_.run.timeout_seconds)).exited_with(0);
  remove_tree(dir);
  return passed;
}

Verdict WorkerInterest::check_original(const Case& original) {
  // Every run of the series: the failure kept is the one seen most often, and its rate is recorded.
  const RepeatedVerdict series = evaluate_repeatedly(
      *runners_[0], request_for(original),
      [&](const Verdict& v) {
        return options_.interest == Interest::SameFailure || options_.interest == Interest::TestCommand
                   ? v.failed()
                   : judged_interesting(v);
      },
      /*stop_when_decided=*/false);
  const Verdict& verdict = series.verdict;
  costs_[0] = cost_of(verdict);
  expected_ = {options_.run, verdict.status, verdict.signature};
  expected_.run.fake_inputs = false;  // the minifier's states carry the values it started from
  expected_.runs = series.runs;
  expected_.failed_runs = verdict.failed() ? series.runs_failing_with(verdict.signature) : 0;
  const bool ok = options_.interest == Interest::TestCommand ? run_test_command(original)
                                                             : expected_.failed_runs >= options_.run.min_fails;
  if (!ok) {
    throw NotFailingError(options_.interest == Interest::TestCommand
                              ? "the test command does not find the original case interesting"
                              : "the original case does not fail as required under " + options_.run.backend,
                          verdict);
  }
  return verdict;
}

bool WorkerInterest::interesting(const Case& candidate, size_t slot) {
  if (options_.interest == Interest::TestCommand) {
    costs_[slot] = {};  // the user's command: no split of its time is known
    return run_test_command(candidate);
  }
  const RepeatedVerdict series = evaluate_repeatedly(
      *runners_[slot], request_for(candidate), [&](const Verdict& v) { return judged_interesting(v); },
      /*stop_when_decided=*/true);
  costs_[slot] = cost_of(series.verdict);
  return series.failing(options_.run);
}

std::optional<Verdict> WorkerInterest::verdict_of(const Case& candidate) {
  if (options_.interest == Interest::TestCommand) return std::nullopt;
  return run_in_worker(candidate, 0);
}

}  // namespace tsrepro
