#pragma once
// The values a graph's nodes computed in the reference run, by debug name: what the cutting
// passes (bisect-window, cut-ranges, cut-nodes, the 1-minimal check) feed in where they turn nodes
// into inputs. Kept in memory up to a budget and written to disk one file per value beyond it
// (everything on disk with --offload), as the reference run produces them: a real model's
// activations, all of them at once, would otherwise weigh as much as its parameters.

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <ATen/core/ivalue.h>

#include "tsrepro/case.h"

namespace torch::jit {
struct Graph;
struct Value;
}  // namespace torch::jit

namespace tsrepro {

class ReferenceValues {
 public:
  // In memory.
  ReferenceValues() = default;
  // In memory while they hold at most `memory_budget` bytes of tensor data, the rest on disk in
  // a fresh folder under offload_root (made when first needed), removed with the last copy of
  // this object. Budget 0: all on disk.
  explicit ReferenceValues(const std::filesystem::path& offload_root, size_t memory_budget = 0);

  void put(const std::string& name, const c10::IValue& value);
  // The value (read back from disk when offloaded); nullopt if the run did not make it.
  std::optional<c10::IValue> find(const std::string& name) const;
  size_t size() const;
  bool offloaded() const { return !on_disk_.empty(); }

  // A container that `count` nodes write into (graph_edit.h, top_level_writers) is recorded as it
  // stood after each of them: find(name) after the last, find_after_writers(name, k) after the
  // first k (0: as its own node made it). A cut that removes the first k writers feeds the k-th
  // value, and the writers it keeps write into that input as they wrote into the container.
  void set_writers(const std::string& name, size_t count) { writers_[name] = count; }
  size_t writers(const std::string& name) const {
    const auto it = writers_.find(name);
    return it == writers_.end() ? 0 : it->second;
  }
  std::optional<c10::IValue> find_after_writers(const std::string& name, size_t k) const;
  // The name the reference run records that value under (k < writers(name)).
  static std::string name_after_writers(const std::string& name, size_t k);

 private:
  class Folder;  // owns the files; shared, so copies of an offloaded store stay valid
  std::unordered_map<std::string, c10::IValue> in_memory_;
  size_t memory_bytes_ = 0;
  size_t memory_budget_ = SIZE_MAX;
  std::filesystem::path offload_root_;
  std::shared_ptr<Folder> folder_;
  std::unordered_map<std::string, std::filesystem::path> on_disk_;
  std::unordered_map<std::string, size_t> writers_;
};

// What the minifier keeps of reference values in memory before the rest goes to disk.
inline constexpr size_t kReferenceValuesMemoryBudget = size_t{32} << 20;

// Runs the state's graph in the interpreter, in this process, and records every top-level value
// as it is made (the reference is known to run: the sanity check passed it). Values are handed
// to the store one by one while the run goes on, and the interpreter frees each after its last
// use, so with an offloaded store the peak is the live set, not the whole graph.
// offload_root empty: in memory; else as ReferenceValues(offload_root, memory_budget).
ReferenceValues compute_reference_values(const Case& state, const std::filesystem::path& offload_root = {},
                                         size_t memory_budget = 0);

// The pieces, for other instrumented runs (TSREPRO_AFTER=fusion records what flows into each
// fusion group): a tsrepro::record_reference node at the graph's insert point, and a run of a
// graph holding such nodes in the interpreter, recording into `into`.
void insert_recording(torch::jit::Graph& graph, torch::jit::Value* value, const std::string& name);
void run_recording(const std::shared_ptr<torch::jit::Graph>& graph, std::vector<c10::IValue> inputs,
                   ReferenceValues& into);

}  // namespace tsrepro
