#pragma once
// The oracle answers the passes' "is this candidate still interesting?" through an
// InterestTest, and keeps what every answer shares: the outcome cache, candidates tried a
// window of parallelism() at a time (the same answer for every -j), statistics and progress.

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "minifier/outcome_store.h"
#include "tsrepro/minify.h"

namespace tsrepro {

class Oracle {
 public:
  Oracle(InterestTest& test, MinifyObserver& observer);

  // How many candidates run at once (-j).
  size_t parallelism() const { return test_.parallelism(); }

  // The sanity run on the original state; throws NotFailingError if it is not interesting.
  Verdict check_original(const Case& original);
  // Use a failure known from an earlier run (resume, --skip-sanity) instead.
  void expect(const ExpectedFailure& failure) { test_.expect(failure); }
  // Keeps every outcome in `path` from now on, and answers from what an earlier run judged the
  // same way (`judging`) kept there.
  void keep_outcomes_in(const std::string& path, const std::string& judging);

  // Runs `candidates` in windows of parallelism() (in parallel) and returns the index of the
  // first interesting one in list order — the same answer for every window size.
  std::optional<size_t> first_interesting(const std::vector<Case>& candidates);

  // One candidate's verdict (a query, not cached); nullopt where the test has none.
  std::optional<Verdict> verdict_of(const Case& candidate);

  void set_progress_context(const std::string& pass, size_t nodes) {
    pass_ = pass;
    nodes_ = nodes;
  }
  const MinifyStats& stats() const { return stats_; }
  const ExpectedFailure& expected() const { return test_.expected(); }

 private:
  void record_queries(const std::vector<double>& latencies_ms, const std::vector<QueryCost>& costs);

  InterestTest& test_;
  MinifyObserver& observer_;
  std::unordered_map<std::string, bool> cache_;
  std::unique_ptr<OutcomeStore> store_;  // null: outcomes in memory only
  MinifyStats stats_;
  std::vector<double> query_ms_;     // per candidate run, for the median in stats_
  std::vector<double> overhead_ms_;  // per candidate run whose compute time is known
  std::vector<double> compile_ms_;   // per candidate run whose compile time is known
  std::string pass_;
  size_t nodes_ = 0;
  double started_ = 0;
};

}  // namespace tsrepro
