// The oracle: cache, parallel in-order evaluation, statistics.

#include <chrono>
#include <future>

#include <spdlog/spdlog.h>
#include <torch/csrc/jit/passes/canonicalize.h>
#include <torch/script.h>

#include "minifier/content_hash.h"
#include "minifier/graph_edit.h"
#include "minifier/oracle.h"
#include "minifier/tensor_memo.h"

namespace tsrepro {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void hash_bytes(uint64_t& h, const void* data, size_t size) { content_hash_update(h, data, size); }

// A tensor's content hash: dtype, sizes, strides and every byte. Computed once per tensor
// (tensor_memo.h): candidates share their unchanged inputs.
uint64_t tensor_hash(const at::Tensor& tensor) {
  static TensorMemo<uint64_t> memo;
  if (auto known = memo.find(tensor)) return *known;
  uint64_t h = kContentHashSeed;
  const at::Tensor t = tensor.detach().to(at::kCPU).contiguous();
  const std::string layout =
      std::string(c10::toString(t.scalar_type())) + c10::str(t.sizes()) + c10::str(tensor.strides());
  hash_bytes(h, layout.data(), layout.size());
  hash_bytes(h, t.data_ptr(), t.numel() * t.element_size());
  memo.put(tensor, h);
  return h;
}

void hash_value(uint64_t& h, const c10::IValue& v) {
  if (v.isTensor() && v.toTensor().defined()) {
    const uint64_t content = tensor_hash(v.toTensor());
    hash_bytes(h, &content, sizeof content);
  } else {
    std::ostringstream text;
    text << v.tagKind() << ":" << v;
    const std::string s = text.str();
    hash_bytes(h, s.data(), s.size());
  }
}

// Value names do not change a verdict, and two passes reach the same graph under different names
// (bisect-window's window and truncate-suffix's prefix): the key is the graph renumbered.
std::string cache_key(const Case& candidate) {
  uint64_t h = kContentHashSeed;
  const std::string ir = graph_to_ir(*torch::jit::Canonicalize(candidate.graph, /*keep_unique_names=*/false));
  hash_bytes(h, ir.data(), ir.size());
  // A graph left with no operation returns its inputs as they came: no operator reads their
  // numbers, so one verdict serves it whatever they hold (the 1-minimality check asks this graph
  // again after shrink-inputs made the inputs smaller: a compile for an answer already known).
  // Each value's kind and dtype still count.
  const bool computes_nothing = count_compute_nodes(*candidate.graph) == 0;
  for (const c10::IValue& v : *candidate.values) {
    if (!computes_nothing) {
      hash_value(h, v);
      continue;
    }
    const std::string kind =
        v.tagKind() +
        (v.isTensor() && v.toTensor().defined() ? std::string(":") + c10::toString(v.toTensor().scalar_type()) : "");
    hash_bytes(h, kind.data(), kind.size());
  }
  return std::to_string(h) + ":" + std::to_string(ir.size());
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

}  // namespace

Oracle::Oracle(InterestTest& test, MinifyObserver& observer)
    : test_(test), observer_(observer), started_(now_seconds()) {}

Verdict Oracle::check_original(const Case& original) {
  Verdict verdict = test_.check_original(original);
  ++stats_.queries;
  return verdict;
}

void Oracle::keep_outcomes_in(const std::string& path, const std::string& judging) {
  store_ = std::make_unique<OutcomeStore>(path, judging);
  cache_.insert(store_->stored().begin(), store_->stored().end());
  stats_.stored_outcomes = store_->stored().size();
}

void Oracle::record_queries(const std::vector<double>& latencies_ms, const std::vector<QueryCost>& costs) {
  stats_.queries += latencies_ms.size();
  query_ms_.insert(query_ms_.end(), latencies_ms.begin(), latencies_ms.end());
  // Only queries whose compute is known (a crash or a --test command has none) say what the
  // overhead is; only those that reached the backend's compile say what it costs.
  for (size_t i = 0; i < latencies_ms.size(); ++i) {
    const double compute_ms = costs[i].compute_seconds * 1000, compile_ms = costs[i].compile_seconds * 1000;
    if (compute_ms > 0) overhead_ms_.push_back(std::max(0.0, latencies_ms[i] - compute_ms));
    if (compile_ms > 0) {
      compile_ms_.push_back(compile_ms);
      stats_.compile_ms_last = compile_ms;
    }
  }
  stats_.seconds = now_seconds() - started_;
  stats_.query_ms_median = median(query_ms_);
  stats_.query_overhead_ms_median = median(overhead_ms_);
  stats_.compile_ms_median = median(compile_ms_);
  observer_.on_query(pass_, stats_, nodes_);
}

std::optional<Verdict> Oracle::verdict_of(const Case& candidate) {
  const double started = now_seconds();
  std::optional<Verdict> verdict = test_.verdict_of(candidate);
  if (verdict)
    record_queries({(now_seconds() - started) * 1000}, {{verdict->compute_seconds, verdict->compile_seconds}});
  return verdict;
}

std::optional<size_t> Oracle::first_interesting(const std::vector<Case>& candidates) {
  const size_t window = std::max<size_t>(1, test_.parallelism());
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
      // One candidate runs on this thread; the others of the window on their own.
      const auto policy = window == 1 ? std::launch::deferred : std::launch::async;
      running[i - start] =
          std::async(policy, [this, &candidates, i, slot] { return test_.interesting(candidates[i], slot); });
      ++slot;
    }
    std::vector<double> latencies_ms;
    std::vector<QueryCost> costs;
    std::vector<std::pair<std::string, bool>> answered;
    for (size_t i = start, slot_of_i = 0; i < end; ++i) {
      if (outcomes[i - start]) continue;
      outcomes[i - start] = running[i - start].get();
      latencies_ms.push_back((now_seconds() - window_started) * 1000);
      costs.push_back(test_.cost(slot_of_i++));
      cache_[keys[i - start]] = *outcomes[i - start];
      if (spdlog::should_log(spdlog::level::debug))  // counting the nodes walks the graph
        spdlog::debug("query {} ({}): {} nodes, {}", stats_.queries + latencies_ms.size(), pass_,
                      cuttable_nodes(*candidates[i].graph).size(),
                      *outcomes[i - start] ? "interesting" : "not interesting");
      answered.emplace_back(keys[i - start], *outcomes[i - start]);
    }
    if (store_) store_->append(answered);
    record_queries(latencies_ms, costs);
    for (size_t i = start; i < end; ++i)
      if (*outcomes[i - start]) return i;
  }
  return std::nullopt;
}

}  // namespace tsrepro
