// The oracle: cache, parallel in-order evaluation, interest rules.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>

#include <boost/process.hpp>
#include <spdlog/spdlog.h>
#include <torch/script.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include "minifier/oracle.h"
#include "runner/file_util.h"
#include "tsrepro/error.h"

namespace bp = boost::process;
namespace fs = std::filesystem;

namespace tsrepro {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// FNV-1a: stable, and good enough to tell candidates apart.
void hash_bytes(uint64_t& h, const void* data, size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) {
    h ^= bytes[i];
    h *= 1099511628211ull;
  }
}

void hash_value(uint64_t& h, const c10::IValue& v) {
  if (v.isTensor()) {
    at::Tensor t = v.toTensor().detach().to(at::kCPU).contiguous();
    const std::string layout = std::string(c10::toString(t.scalar_type())) + c10::str(t.sizes()) + c10::str(v.toTensor().strides());
    hash_bytes(h, layout.data(), layout.size());
    hash_bytes(h, t.data_ptr(), t.numel() * t.element_size());
  } else {
    std::ostringstream text;
    text << v.tagKind() << ":" << v;
    const std::string s = text.str();
    hash_bytes(h, s.data(), s.size());
  }
}

void write_values(const std::vector<c10::IValue>& values, const std::string& path) {
  std::vector<char> bytes = torch::jit::pickle_save(c10::ivalue::Tuple::create(values));
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

Oracle::Oracle(const MinifyOptions& options, MinifyObserver& observer)
    : options_(options), observer_(observer), started_(now_seconds()) {
  if (options_.interest == Interest::CheckStr) {
    try {
      check_regex_ = std::regex(options_.check_str);
    } catch (const std::regex_error& e) {
      throw UserError("--check-str " + options_.check_str + ": not a valid regex (" + e.what() + ")");
    }
  }
  std::string pattern = (fs::temp_directory_path() / "tsrepro-minify-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) throw UserError(pattern + ": cannot create a scratch directory");
  scratch_dir_ = pattern;
  const int jobs = std::max(1, options_.jobs);
  for (int i = 0; i < jobs; ++i)
    runners_.push_back(options_.runner_path.empty() ? std::make_unique<RunnerProcess>()
                                                    : std::make_unique<RunnerProcess>(options_.runner_path));
}

Oracle::~Oracle() { remove_tree(scratch_dir_); }

EvalRequest Oracle::request_for(const std::string& graph_ir, const std::vector<InputSpec>& specs,
                                const std::string& inputs_path) const {
  EvalRequest r;
  r.graph_ir = graph_ir;
  r.specs = specs;
  r.inputs_path = inputs_path;
  r.seed = options_.seed;
  r.ref = options_.ref;
  r.backend = options_.backend;
  r.backend_options = options_.backend_options;
  r.device = options_.device;
  r.compare = options_.compare;
  r.backward = options_.backward;
  return r;
}

bool Oracle::interesting(const Verdict& v) const {
  switch (options_.interest) {
    case Interest::SameFailure:
      return v.failed() && status_name(v.status) == expected_.kind && v.signature == expected_.signature;
    case Interest::Accuracy:
      return v.status == Status::Accuracy;
    case Interest::CheckStr:
      return v.failed() && std::regex_search(v.signature + "\n" + v.message, *check_regex_);
    case Interest::TestCommand:
      return false;  // decided by the command, not by a verdict
  }
  return false;
}

Verdict Oracle::check_original(const Case& original) {
  const std::string dir = scratch_dir_ + "/original";
  fs::create_directory(dir);
  write_values(*original.values, dir + "/inputs.pt");
  Verdict verdict = runners_.front()->evaluate(request_for(graph_to_ir(*original.graph), original.inputs, dir + "/inputs.pt"),
                                               options_.timeout_seconds);
  ++stats_.queries;
  expected_ = {options_.ref, options_.backend, options_.backend_options, status_name(verdict.status), verdict.signature};
  const bool ok = options_.interest == Interest::TestCommand ? run_test_command(original, serial_++)
                : options_.interest == Interest::SameFailure ? verdict.failed()
                                                             : interesting(verdict);
  if (!ok) {
    throw NotFailingError(options_.interest == Interest::TestCommand
                              ? "the test command does not find the original case interesting"
                              : "the original case does not fail as required under " + options_.backend,
                          verdict);
  }
  return verdict;
}

void Oracle::expect(const ExpectedFailure& failure) { expected_ = failure; }

std::string Oracle::cache_key(const Case& candidate) const {
  uint64_t h = 1469598103934665603ull;
  const std::string ir = graph_to_ir(*candidate.graph);
  hash_bytes(h, ir.data(), ir.size());
  for (const c10::IValue& v : *candidate.values) hash_value(h, v);
  return std::to_string(h) + ":" + std::to_string(ir.size());
}

bool Oracle::run_test_command(const Case& candidate, size_t serial) {
  const std::string dir = scratch_dir_ + "/candidate-" + std::to_string(serial);
  write_case(candidate, dir, /*replace=*/true);
  // The directory goes in as "$1", never spliced into the command text.
  bp::child child("/bin/sh", "-c", options_.test_command + " \"$1\"", "sh", dir, bp::std_out > bp::null,
                  bp::std_err > bp::null);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(options_.timeout_seconds);
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

std::optional<Verdict> Oracle::verdict_of(const Case& candidate) {
  if (options_.interest == Interest::TestCommand) return std::nullopt;
  const std::string inputs = scratch_dir_ + "/inputs-" + std::to_string(serial_++) + ".pt";
  write_values(*candidate.values, inputs);
  const double started = now_seconds();
  Verdict verdict = runners_.front()->evaluate(request_for(graph_to_ir(*candidate.graph), candidate.inputs, inputs),
                                               options_.timeout_seconds);
  fs::remove(inputs);
  query_ms_.push_back((now_seconds() - started) * 1000);
  ++stats_.queries;
  stats_.seconds = now_seconds() - started_;
  observer_.on_query(pass_, stats_, nodes_);
  return verdict;
}

bool Oracle::run_candidate(const Case& candidate, size_t slot, size_t serial) {
  if (options_.interest == Interest::TestCommand) return run_test_command(candidate, serial);
  const std::string inputs = scratch_dir_ + "/inputs-" + std::to_string(serial) + ".pt";
  write_values(*candidate.values, inputs);
  const Verdict verdict =
      runners_[slot]->evaluate(request_for(graph_to_ir(*candidate.graph), candidate.inputs, inputs), options_.timeout_seconds);
  fs::remove(inputs);
  spdlog::debug("candidate {}: {} {}", serial, status_name(verdict.status), verdict.signature);
  return interesting(verdict);
}

std::optional<size_t> Oracle::first_interesting(const std::vector<Case>& candidates) {
  const size_t window = runners_.size();
  for (size_t start = 0; start < candidates.size(); start += window) {
    const size_t end = std::min(candidates.size(), start + window);
    std::vector<std::string> keys;
    std::vector<std::optional<bool>> outcomes(end - start);
    std::vector<std::future<bool>> running(end - start);
    const double window_started = now_seconds();  // a candidate's latency: its window's start to its answer
    size_t slot = 0;
    for (size_t i = start; i < end; ++i) {
      keys.push_back(cache_key(candidates[i]));
      auto cached = cache_.find(keys.back());
      if (cached != cache_.end()) {
        outcomes[i - start] = cached->second;
        ++stats_.cache_hits;
        continue;
      }
      const size_t serial = serial_++;
      running[i - start] = std::async(std::launch::async, [this, &candidates, i, slot, serial] {
        return run_candidate(candidates[i], slot, serial);
      });
      ++slot;
    }
    for (size_t i = start; i < end; ++i) {
      if (outcomes[i - start]) continue;
      outcomes[i - start] = running[i - start].get();
      query_ms_.push_back((now_seconds() - window_started) * 1000);
      cache_[keys[i - start]] = *outcomes[i - start];
      ++stats_.queries;
    }
    stats_.seconds = now_seconds() - started_;
    if (!query_ms_.empty()) {
      std::vector<double> sorted = query_ms_;
      std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
      stats_.query_ms_median = sorted[sorted.size() / 2];
    }
    observer_.on_query(pass_, stats_, nodes_);
    for (size_t i = start; i < end; ++i)
      if (*outcomes[i - start]) return i;
  }
  return std::nullopt;
}

}  // namespace tsrepro
