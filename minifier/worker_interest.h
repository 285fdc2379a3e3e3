#pragma once
// The interest test of `tsrepro minify`: every candidate runs in a tsrepro-runner worker under
// the options' RunSpec (one worker per -j slot), and its verdict is judged by the interest rule
// (same failure, --check-str, --accuracy); under --test the user's command decides instead.

#include <atomic>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "minifier/tensor_memo.h"
#include "runner/worker/repeated_evaluation.h"
#include "runner/worker/worker_client.h"
#include "runner/file_util.h"
#include "tsrepro/minify.h"

namespace tsrepro {

class WorkerInterest : public InterestTest {
 public:
  // `runner_path`: the tsrepro-runner to exec; empty: workers forked from the zygote, or the
  // default runner (runner/worker/worker_client.h).
  explicit WorkerInterest(const MinifyOptions& options, const std::string& runner_path = "");
  ~WorkerInterest() override;

  size_t parallelism() const override { return runners_.size(); }
  Verdict check_original(const Case& original) override;
  void expect(const ExpectedFailure& failure) override { expected_ = failure; }
  const ExpectedFailure& expected() const override { return expected_; }
  bool interesting(const Case& candidate, size_t slot) override;
  QueryCost cost(size_t slot) const override { return costs_[slot]; }
  // Their tensors become "FILE#I" entries of EvalRequest::input_files.
  void values_read_from(const std::string& file, const std::vector<c10::IValue>& values) override;
  std::optional<Verdict> verdict_of(const Case& candidate) override;

 private:
  bool judged_interesting(const Verdict& verdict) const;
  // The candidate's request, its values named by file.
  EvalRequest request_for(const Case& candidate);
  Verdict run_in_worker(const Case& candidate, size_t slot);
  bool run_test_command(const Case& candidate);
  size_t next_serial();
  // The content-addressed file (EvalRequest::input_files) that holds `value`, written if new.
  std::string value_file(const c10::IValue& value);

  MinifyOptions options_;
  ExpectedFailure expected_;
  std::optional<std::regex> check_regex_;
  std::vector<std::unique_ptr<RunnerProcess>> runners_;
  ScratchDirectory scratch_;              // the candidates' case directories and offloaded values
  std::atomic<size_t> serial_{0};         // names each candidate's scratch files; slots run in threads
  TensorMemo<std::string> tensor_files_;  // the file each tensor was written to
  std::vector<QueryCost> costs_;          // per slot: the last verdict's compute and compile seconds
};

}  // namespace tsrepro
