// The reference values store, and the reference run that fills it while it goes.

#include <atomic>

#include <torch/script.h>
#include <torch/csrc/jit/runtime/custom_operator.h>
#include <malloc.h>
#include <unistd.h>

#include "minifier/reference_values.h"
#include "minifier/graph_edit.h"
#include "backends/builtin.h"
#include "runner/file_util.h"
#include "runner/case/inputs.h"
#include "tsrepro/backend.h"  // clone_values
#include "runner/formats/torch_save_reader.h"
#include "runner/formats/torch_save_writer.h"
#include "runner/graph/written_inputs.h"
#include "tsrepro/error.h"

namespace tsrepro {

namespace fs = std::filesystem;

class ReferenceValues::Folder {
 public:
  explicit Folder(const fs::path& root) {
    static std::atomic<int> counter{0};
    path_ = root / ("reference-values-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(path_);
  }
  ~Folder() { remove_tree(path_.string()); }
  Folder(const Folder&) = delete;
  Folder& operator=(const Folder&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

ReferenceValues::ReferenceValues(const fs::path& offload_root, size_t memory_budget)
    : memory_budget_(memory_budget), offload_root_(offload_root) {}

void ReferenceValues::put(const std::string& name, const c10::IValue& value) {
  const size_t bytes = tensor_data_bytes(value);
  if (memory_bytes_ + bytes <= memory_budget_) {
    // A copy, as the file below is: the value as the node made it. Kept as it is, a later in-place
    // node of the run (resnet's relu_ after each batch norm) would change it, and a cut fed from
    // memory would get other values than one fed from disk.
    in_memory_[name] = clone_values({value}).front();
    memory_bytes_ += bytes;
    return;
  }
  if (!folder_) folder_ = std::make_shared<Folder>(offload_root_);
  // The torch.save format that inputs.pt uses, so one reader serves both.
  const fs::path file = folder_->path() / (std::to_string(on_disk_.size()) + ".pt");
  write_torch_save(file.string(), c10::ivalue::Tuple::create({value}));
  on_disk_[name] = file;
  // Each value was a tensor and a pickle buffer on the heap, now freed, between small long-lived
  // allocations (this map's entries): glibc cannot hand that memory back by itself, and a
  // 5000-value run would keep most of what it offloaded resident. Give the free pages back now
  // and then (a walk over the heap: well under a millisecond here).
  if (on_disk_.size() % 64 == 0) ::malloc_trim(0);
}

std::optional<c10::IValue> ReferenceValues::find(const std::string& name) const {
  if (auto in_memory = in_memory_.find(name); in_memory != in_memory_.end()) return in_memory->second;
  auto it = on_disk_.find(name);
  if (it == on_disk_.end()) return std::nullopt;
  return read_torch_save(it->second.string()).toTupleRef().elements().at(0);
}

std::string ReferenceValues::name_after_writers(const std::string& name, size_t k) {
  // '@' is in no TorchScript value name, so no value of the graph is recorded under it.
  return name + "@" + std::to_string(k);
}

std::optional<c10::IValue> ReferenceValues::find_after_writers(const std::string& name, size_t k) const {
  const size_t count = writers(name);
  if (k > count) return std::nullopt;
  return find(k == count ? name : name_after_writers(name, k));
}

size_t ReferenceValues::size() const { return in_memory_.size() + on_disk_.size(); }

namespace {

// Where tsrepro::record_reference puts what it is given. The interpreter gives an operator
// nothing but its stack, so the run in progress is named here; one run per thread at a time.
thread_local ReferenceValues* recording_into = nullptr;

// tsrepro::record_reference(str name, Any value) -> (): inserted after every top-level node of
// the reference run's copy of the graph. CONSERVATIVE: it has an effect the graph cannot see.
const torch::jit::RegisterOperators record_reference_op({torch::jit::Operator(
    "tsrepro::record_reference(str name, Any value) -> ()",
    [](torch::jit::Stack& stack) {
      c10::IValue value = torch::jit::pop(stack);
      const std::string name = torch::jit::pop(stack).toStringRef();
      if (recording_into) recording_into->put(name, value);
    },
    c10::AliasAnalysisKind::CONSERVATIVE)});

struct RecordingScope {
  explicit RecordingScope(ReferenceValues& into) { recording_into = &into; }
  ~RecordingScope() { recording_into = nullptr; }
};

}  // namespace

void insert_recording(torch::jit::Graph& graph, torch::jit::Value* value, const std::string& name) {
  static const c10::Symbol record = c10::Symbol::fromQualString("tsrepro::record_reference");
  torch::jit::Value* name_constant = graph.insertConstant(name);
  graph.insertNode(graph.create(record, {name_constant, value}, 0));
}

void run_recording(const std::shared_ptr<torch::jit::Graph>& graph, std::vector<c10::IValue> inputs,
                   ReferenceValues& into) {
  RecordingScope scope(into);
  interpret_graph(graph)->run(std::move(inputs));
}

ReferenceValues compute_reference_values(const Case& state, const fs::path& offload_root, size_t memory_budget) {
  auto graph = state.graph->copy();
  // Recorded under the state's names: a copy numbers unnamed values afresh (%43 there may be %41
  // here where an edit left gaps), and the cutting passes look values up by the state's names.
  std::vector<torch::jit::Node*> nodes(graph->nodes().begin(), graph->nodes().end());
  std::vector<const torch::jit::Node*> state_nodes(state.graph->nodes().begin(), state.graph->nodes().end());
  std::vector<std::pair<std::string, size_t>> written;  // containers and how many nodes write them
  for (size_t i = 0; i < nodes.size(); ++i) {
    // A with block's Enter leaves its object on the stack as its value: not a value of the model.
    if (nodes[i]->kind() == c10::prim::Enter || nodes[i]->kind() == c10::prim::Exit) continue;
    for (size_t k = 0; k < nodes[i]->outputs().size(); ++k) {
      torch::jit::Value* value = nodes[i]->outputs()[k];
      // A container later nodes write into is recorded as it is after its own node and after each
      // of them (ReferenceValues::set_writers), the last under its own name: what a cut feeds in
      // where it removes the node and the first writers (graph_edit.h, top_level_writers).
      const std::vector<torch::jit::Node*> writers = top_level_writers(value, *graph);
      const std::string& name = state_nodes[i]->outputs()[k]->debugName();
      for (size_t w = 0; w < writers.size(); ++w) {
        torch::jit::WithInsertPoint after(w == 0 ? nodes[i]->next() : writers[w - 1]->next());
        insert_recording(*graph, value, ReferenceValues::name_after_writers(name, w));
      }
      torch::jit::WithInsertPoint after(writers.empty() ? nodes[i]->next() : writers.back()->next());
      insert_recording(*graph, value, name);
      if (!writers.empty()) written.emplace_back(name, writers.size());
    }
  }
  ReferenceValues refs = offload_root.empty() ? ReferenceValues() : ReferenceValues(offload_root, memory_budget);
  for (const auto& [name, count] : written) refs.set_writers(name, count);
  // The state's own graph says which inputs a run may write (the recording nodes only read).
  run_recording(graph, fresh_copies(*state.values, inputs_maybe_written(*state.graph)), refs);
  return refs;
}

}  // namespace tsrepro
