#pragma once
// The minifier: shrinks a failing case to a 1-minimal graph that fails the same way.
// It knows nothing about output files: it reports every accepted state to a MinifyObserver
// (repro/ turns those into checkpoints on disk).

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tsrepro/case.h"
#include "tsrepro/run_spec.h"
#include "tsrepro/verdict.h"

namespace tsrepro {

// What counts as "still failing" when candidates run in workers (WorkerInterest).
enum class Interest {
  SameFailure,  // same verdict status and signature as the original (default)
  CheckStr,     // a regex over the verdict's signature + message matches
  Accuracy,     // an accuracy failure; exceptions and crashes are not interesting
  TestCommand,  // the user's command, given the candidate case directory, exits 0
};

struct MinifyOptions {
  RunSpec run;  // how a candidate is judged

  Interest interest = Interest::SameFailure;
  std::string check_str;                         // Interest::CheckStr
  std::string test_command;                      // Interest::TestCommand
  std::optional<ExpectedFailure> known_failure;  // skip the sanity run and match this instead

  int jobs = 1;                     // candidates judged at once (worker processes)
  std::vector<std::string> passes;  // empty: all, in the registry's order
  // Keep the reference values the cutting passes feed in on disk (a temporary directory removed
  // at the end) instead of in memory.
  bool offload = false;
  // Minify a failure on the way into a PyTorch 2 compiler (a verdict of phase `route`: torch.export's
  // tracing, the TorchScript converter) as the failure asked about. Without it such a case is
  // refused: it says nothing of the compiler the backend names.
  bool keep_route_failure = false;
  // The torch.save file (a case's inputs.pt) the original case's values were read from, if they
  // were: workers read them there (InterestTest::values_read_from) instead of from new copies.
  std::string inputs_file;
  // Where every query's outcome is kept for a later --resume of the same minify (its output
  // directory's outcomes.tsv, minifier/outcome_store.h), so that a resumed run asks no candidate
  // it already asked. Empty: outcomes are kept in memory only.
  std::string outcomes_file;

  // The one check of the options, before any work: the run spec, --passes, --check-str.
  // Throws UserError naming the flag.
  void validate() const;
};

struct MinifyStats {
  size_t queries = 0;  // candidates actually run (cache hits excluded)
  size_t cache_hits = 0;
  double seconds = 0;
  double query_ms_median = 0;  // wall time of one candidate on a worker (write inputs, evaluate)
  // A query's wall time less the candidate's own compute (QueryCost::compute_seconds):
  // what tsrepro adds per query (graph text, value files, the request, parsing, loading inputs).
  double query_overhead_ms_median = 0;
  // The tested backend's compile per query (QueryCost::compile_seconds), where it is known: the
  // median and the last one. An Inductor or AOTInductor compile is most of a query's cost.
  double compile_ms_median = 0;
  double compile_ms_last = 0;
  size_t stored_outcomes = 0;  // outcomes an earlier run of this minify kept (MinifyOptions::outcomes_file)
};

struct AcceptedStep {
  std::string pass;
  size_t nodes_before = 0;
  size_t nodes_after = 0;
  MinifyStats stats;  // totals at the moment of acceptance
};

class MinifyObserver {
 public:
  virtual ~MinifyObserver() = default;
  // The state the minifier starts from (after the sanity run), and every accepted state.
  virtual void on_start(const Case& state, const Verdict& original) {}
  virtual void on_accepted(const Case& state, const AcceptedStep& step) {}
  // After every query: for a live progress line.
  virtual void on_query(const std::string& pass, const MinifyStats& stats, size_t nodes) {}
};

struct MinifyResult {
  Case minimized;  // with values and expected failure filled in
  Verdict original_verdict;
  size_t original_nodes = 0;
  size_t final_nodes = 0;
  bool one_minimal = false;
  MinifyStats stats;
  std::vector<AcceptedStep> steps;
};

// Thrown when the original case does not fail under the backend (exit 3 in the CLI).
class NotFailingError : public std::runtime_error {
 public:
  NotFailingError(const std::string& what, Verdict verdict) : std::runtime_error(what), verdict(std::move(verdict)) {}
  Verdict verdict;
};

// The question the minifier asks of every candidate: is it still interesting? The engine owns
// the outcome cache, the windows of candidates tried at once and the statistics; an
// InterestTest only answers. WorkerInterest runs candidates in tsrepro-runner workers under a
// RunSpec; PredicateInterest asks a function in this process (tests, fx_minifier-style).
// Of one query, the seconds the candidate's own work took.
struct QueryCost {
  double compute_seconds = 0;  // its reference and backend runs (Verdict::compute_seconds)
  double compile_seconds = 0;  // of those, the tested backend's compile (Verdict::compile_seconds)
};

class InterestTest {
 public:
  virtual ~InterestTest() = default;
  // How many candidates it judges at once: interesting() is then called from that many threads,
  // each with its own slot < parallelism().
  virtual size_t parallelism() const { return 1; }
  // The sanity run on the original state. Throws NotFailingError when it is not interesting;
  // returns what was seen (a default Verdict where the test does not judge by verdicts).
  virtual Verdict check_original(const Case& original) = 0;
  // Use a failure known from an earlier run (resume, --skip-sanity) instead of check_original().
  virtual void expect(const ExpectedFailure& failure) = 0;
  // The failure being kept (status Accuracy makes localize-divergence work).
  virtual const ExpectedFailure& expected() const = 0;
  virtual bool interesting(const Case& candidate, size_t slot) = 0;
  // Of the last interesting() call on `slot`, what the candidate's own work cost; zeros where
  // unknown. Only for the statistics and the progress line.
  virtual QueryCost cost(size_t slot) const { return {}; }
  // The starting case's values were read from `file` (its inputs.pt, a tuple of them): a test
  // that hands values to other processes may name them there instead of writing them again.
  virtual void values_read_from(const std::string& file, const std::vector<c10::IValue>& values) {}
  // One candidate's verdict, for passes that learn from it; nullopt where the test does not
  // judge by verdicts.
  virtual std::optional<Verdict> verdict_of(const Case& candidate) { return std::nullopt; }
};

// Interesting while `predicate` holds: no processes, no backends. The predicate must be safe to
// call from `parallelism` threads at once.
class PredicateInterest : public InterestTest {
 public:
  using Predicate = std::function<bool(const Case&)>;
  explicit PredicateInterest(Predicate predicate, size_t parallelism = 1, std::optional<Status> status = std::nullopt)
      : predicate_(std::move(predicate)), parallelism_(parallelism) {
    expected_.status = status;
  }
  size_t parallelism() const override { return parallelism_; }
  Verdict check_original(const Case& original) override;
  void expect(const ExpectedFailure& failure) override { expected_ = failure; }
  const ExpectedFailure& expected() const override { return expected_; }
  bool interesting(const Case& candidate, size_t slot) override { return predicate_(candidate); }

 private:
  Predicate predicate_;
  size_t parallelism_;
  ExpectedFailure expected_;
};

// The worker-backed test of options.interest under options.run, with options.jobs workers.
std::unique_ptr<InterestTest> make_worker_interest(const MinifyOptions& options);

// Shrinks `original`, asking `interest` about every candidate. The case must carry real values
// or be fake (options.run.fake_inputs or no values): the minifier materializes inputs once and
// works with concrete values from then on. Throws UserError for invalid options.
MinifyResult minify(const Case& original, const MinifyOptions& options, InterestTest& interest,
                    MinifyObserver& observer);
// The same with make_worker_interest(options).
MinifyResult minify(const Case& original, const MinifyOptions& options, MinifyObserver& observer);

struct PassInfo {
  std::string name;
  std::string description;
};
const std::vector<PassInfo>& list_passes();

}  // namespace tsrepro
