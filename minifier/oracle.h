#pragma once
// The oracle answers "is this candidate still interesting?". It hides from the passes how:
// the outcome cache, the pool of tsrepro-runner workers (-j N), the scratch files candidates
// travel through, and the interest rule (same failure, --check-str, --accuracy, --test).

#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <unordered_map>
#include <vector>

#include "runner/worker_client.h"
#include "tsrepro/minify.h"

namespace tsrepro {

class Oracle {
 public:
  Oracle(const MinifyOptions& options, MinifyObserver& observer);
  ~Oracle();

  // How many candidates run at once (-j).
  size_t parallelism() const { return runners_.size(); }

  // The sanity run on the original state; throws NotFailingError if it is not interesting.
  Verdict check_original(const Case& original);
  // Use a failure known from an earlier run (resume, --skip-sanity) instead.
  void expect(const ExpectedFailure& failure);

  // Runs `candidates` in windows of `jobs` (in parallel) and returns the index of the first
  // interesting one in list order — the same answer for every `jobs`.
  std::optional<size_t> first_interesting(const std::vector<Case>& candidates);

  // One candidate's verdict (a query, not cached); nullopt under --test.
  std::optional<Verdict> verdict_of(const Case& candidate);

  void set_progress_context(const std::string& pass, size_t nodes) {
    pass_ = pass;
    nodes_ = nodes;
  }
  const MinifyStats& stats() const { return stats_; }
  const ExpectedFailure& expected() const { return expected_; }

 private:
  bool interesting(const Verdict& verdict) const;
  bool run_candidate(const Case& candidate, size_t slot, size_t serial);
  bool run_test_command(const Case& candidate, size_t serial);
  std::string cache_key(const Case& candidate) const;
  EvalRequest request_for(const std::string& graph_ir, const std::vector<InputSpec>& specs,
                          const std::string& inputs_path) const;

  MinifyOptions options_;
  MinifyObserver& observer_;
  ExpectedFailure expected_;
  std::optional<std::regex> check_regex_;
  std::vector<std::unique_ptr<RunnerProcess>> runners_;
  std::unordered_map<std::string, bool> cache_;
  std::string scratch_dir_;
  size_t serial_ = 0;
  MinifyStats stats_;
  std::vector<double> query_ms_;  // per candidate run, for the median in stats_
  std::string pass_;
  size_t nodes_ = 0;
  double started_ = 0;
};

}  // namespace tsrepro
