#pragma once
// The minifier: shrinks a failing case to a 1-minimal graph that fails the same way.
// It knows nothing about output files: it reports every accepted state to a MinifyObserver
// (repro/ turns those into checkpoints on disk).

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tsrepro/backend.h"
#include "tsrepro/case.h"
#include "tsrepro/compare.h"
#include "tsrepro/verdict.h"

namespace tsrepro {

// What counts as "still failing".
enum class Interest {
  SameFailure,  // same verdict status and signature as the original (default)
  CheckStr,     // a regex over the verdict's signature + message matches
  Accuracy,     // an accuracy failure; exceptions and crashes are not interesting
  TestCommand,  // the user's command, given the candidate case directory, exits 0
};

struct MinifyOptions {
  std::string ref = "eager";
  std::string backend;
  BackendOptions backend_options;
  std::string device = "cpu";
  CompareOptions compare;
  bool backward = false;
  bool fake_inputs = false;
  uint64_t seed = 0;
  double timeout_seconds = 300;

  Interest interest = Interest::SameFailure;
  std::string check_str;      // Interest::CheckStr
  std::string test_command;   // Interest::TestCommand
  std::optional<ExpectedFailure> known_failure;  // skip the sanity run and match this instead

  int jobs = 1;
  std::vector<std::string> passes;  // empty: all, in the registry's order
  std::string runner_path;          // tsrepro-runner; empty: the default
  // Where cut-nodes keeps the reference values it feeds in: empty = in memory; otherwise a
  // folder under which each reference run writes its values, one file each (--offload).
  std::string offload_dir;
};

struct MinifyStats {
  size_t queries = 0;     // candidates actually run (cache hits excluded)
  size_t cache_hits = 0;
  double seconds = 0;
  double query_ms_median = 0;  // wall time of one candidate on a worker (write inputs, evaluate)
};

struct AcceptedStep {
  std::string pass;
  size_t nodes_before = 0;
  size_t nodes_after = 0;
  MinifyStats stats;       // totals at the moment of acceptance
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
  Case minimized;              // with values and expected failure filled in
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

// The case must carry real values or be fake (options.fake_inputs or no values): the minifier
// materializes inputs once and works with concrete values from then on.
MinifyResult minify(const Case& original, const MinifyOptions& options, MinifyObserver& observer);

struct PassInfo {
  std::string name;
  std::string description;
};
const std::vector<PassInfo>& list_passes();

}  // namespace tsrepro
