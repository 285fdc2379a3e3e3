// autograd_table.h: the reference's autograd nodes, matched to the case's forward nodes.

#include <algorithm>
#include <iomanip>
#include <map>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include <ATen/SequenceNumber.h>
#include <torch/csrc/autograd/function.h>
#include <torch/script.h>

#include "runner/autograd_table.h"
#include "runner/backends/builtin.h"
#include "runner/inputs.h"
#include "runner/written_inputs.h"
#include "tsrepro/backend.h"
#include "tsrepro/error.h"

namespace tsrepro {
namespace {

using GradFn = std::shared_ptr<torch::autograd::Node>;

// What tsrepro::record_grad_fn sees during one run: per forward position, the sequence number
// the next autograd node will take once that node has run, and the grad_fns of its tensor
// outputs at that moment. One run per thread at a time (sequence numbers are per thread too).
struct Recording {
  uint64_t start = 0;  // the next sequence number when the graph started
  std::vector<uint64_t> next_after;
  std::vector<std::vector<GradFn>> grad_fns;
};
thread_local Recording* recording = nullptr;

// tsrepro::record_grad_fn(int position, Any value) -> (): after each top-level node of the
// explained run's copy of the graph, once per output (or once with None for a node without
// tensor outputs). CONSERVATIVE: it has an effect the graph cannot see.
const torch::jit::RegisterOperators record_grad_fn_op({torch::jit::Operator(
    "tsrepro::record_grad_fn(int position, Any value) -> ()",
    [](torch::jit::Stack& stack) {
      const c10::IValue value = torch::jit::pop(stack);
      const int64_t position = torch::jit::pop(stack).toInt();
      if (recording == nullptr) return;
      if (position < 0) {
        recording->start = at::sequence_number::peek();
        return;
      }
      recording->next_after.at(static_cast<size_t>(position)) = at::sequence_number::peek();
      if (!value.isTensor()) return;
      const at::Tensor& tensor = value.toTensor();
      if (!tensor.defined() || !tensor.grad_fn()) return;
      auto& slot = recording->grad_fns.at(static_cast<size_t>(position));
      if (std::find(slot.begin(), slot.end(), tensor.grad_fn()) == slot.end()) slot.push_back(tensor.grad_fn());
    },
    c10::AliasAnalysisKind::CONSERVATIVE)});

struct RecordingScope {
  explicit RecordingScope(Recording& into) { recording = &into; }
  ~RecordingScope() { recording = nullptr; }
};

std::vector<torch::jit::Node*> top_level_compute_nodes(torch::jit::Graph& graph) {
  std::vector<torch::jit::Node*> nodes;
  for (torch::jit::Node* node : graph.nodes())
    if (node->kind() != c10::prim::Constant) nodes.push_back(node);
  return nodes;
}

// A copy of the graph with record_grad_fn nodes: one at the start, and after each top-level node
// one per tensor output (one with None where it has none).
std::shared_ptr<torch::jit::Graph> recording_copy(torch::jit::Graph& graph) {  // Graph::copy is not const
  static const c10::Symbol record = c10::Symbol::fromQualString("tsrepro::record_grad_fn");
  auto copy = graph.copy();
  const std::vector<torch::jit::Node*> nodes = top_level_compute_nodes(*copy);
  auto insert_record = [&](int64_t position, torch::jit::Value* value) {
    copy->insertNode(copy->create(record, {copy->insertConstant(position), value}, 0));
  };
  {
    torch::jit::WithInsertPoint at_start(copy->block()->nodes().front());
    insert_record(-1, copy->insertConstant(c10::IValue()));
  }
  for (size_t position = 0; position < nodes.size(); ++position) {
    torch::jit::WithInsertPoint after(nodes[position]->next());
    bool recorded = false;
    for (torch::jit::Value* output : nodes[position]->outputs()) {
      if (!output->type()->cast<c10::TensorType>()) continue;
      insert_record(static_cast<int64_t>(position), output);
      recorded = true;
    }
    if (!recorded) insert_record(static_cast<int64_t>(position), copy->insertConstant(c10::IValue()));
  }
  return copy;
}

// The inputs gradient_inputs names become leaves that require grad (floating-point tensors
// only); inputs the graph may write keep none (an in-place op on such a leaf is an error).
std::vector<c10::IValue> leaves_with_grad(const Case& c, const std::vector<c10::IValue>& inputs) {
  const std::vector<bool> written = inputs_maybe_written(*c.graph);
  const std::vector<bool> wanted = gradient_inputs(c.inputs);
  std::vector<c10::IValue> out = clone_values(inputs);
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i].isTensor() || (i < written.size() && written[i]) || (i < wanted.size() && !wanted[i])) continue;
    const at::Tensor tensor = out[i].toTensor();
    if (tensor.defined() && tensor.is_floating_point()) out[i] = tensor.detach().requires_grad_(true);
  }
  return out;
}

void collect_output_grad_fns(const c10::IValue& value, std::vector<GradFn>& roots) {
  if (value.isTensor()) {
    if (value.toTensor().defined() && value.toTensor().grad_fn()) roots.push_back(value.toTensor().grad_fn());
  } else if (value.isTuple()) {
    for (const c10::IValue& element : value.toTupleRef().elements()) collect_output_grad_fns(element, roots);
  } else if (value.isList()) {
    for (const c10::IValue& element : value.toListRef()) collect_output_grad_fns(element, roots);
  }
}

// Every node reachable from the roots along next_edges().
std::vector<GradFn> backward_graph(const std::vector<GradFn>& roots) {
  std::vector<GradFn> seen_order;
  std::unordered_set<const torch::autograd::Node*> seen;
  std::vector<GradFn> todo(roots.begin(), roots.end());
  while (!todo.empty()) {
    GradFn node = todo.back();
    todo.pop_back();
    if (!node || !seen.insert(node.get()).second) continue;
    seen_order.push_back(node);
    for (const torch::autograd::Edge& edge : node->next_edges())
      if (edge.is_valid()) todo.push_back(edge.function);
  }
  return seen_order;
}

std::string node_text(const ForwardRow& row) {
  std::string text;
  for (size_t i = 0; i < row.outputs.size(); ++i) text += (i ? ", %" : "%") + row.outputs[i];
  return (text.empty() ? "" : text + " = ") + row.kind;
}

}  // namespace

AutogradTable autograd_table(const Case& c, const std::vector<c10::IValue>& inputs) {
  const std::shared_ptr<torch::jit::Graph> recorded_graph = recording_copy(*c.graph);
  const std::vector<torch::jit::Node*> originals = top_level_compute_nodes(*c.graph);
  Recording seen;
  seen.next_after.assign(originals.size(), 0);
  seen.grad_fns.resize(originals.size());
  std::vector<c10::IValue> outputs;
  {
    RecordingScope scope(seen);
    torch::AutoGradMode with_grad(true);
    outputs = interpret_graph(recorded_graph)->run(leaves_with_grad(c, inputs));
  }

  // Forward node k made the autograd nodes numbered from where node k-1 left the counter up to
  // where it left it itself: its own op's, and those of the ops inside it (aten::linear's t
  // and addmm, the body of a prim::If).
  auto position_of = [&](uint64_t sequence_nr) -> std::optional<size_t> {
    uint64_t from = seen.start;
    for (size_t k = 0; k < seen.next_after.size(); ++k) {
      if (sequence_nr >= from && sequence_nr < seen.next_after[k]) return k;
      from = std::max(from, seen.next_after[k]);
    }
    return std::nullopt;
  };

  AutogradTable table;
  table.start_sequence_nr = seen.start;
  for (size_t position = 0; position < originals.size(); ++position) {
    const torch::jit::Node* node = originals[position];
    ForwardRow row;
    row.position = position;
    row.kind = node->kind().toQualString();
    for (const torch::jit::Value* output : node->outputs()) row.outputs.push_back(output->debugName());
    if (const std::optional<int64_t> index = origin_index(*node);
        index && c.node_origins && *index >= 0 && static_cast<size_t>(*index) < c.node_origins->size())
      row.origin = (*c.node_origins)[static_cast<size_t>(*index)];
    if (!seen.grad_fns[position].empty()) {  // the node of the op whose output the graph hands on
      row.sequence_nr = seen.grad_fns[position].front()->sequence_nr();
      row.backward = seen.grad_fns[position].front()->name();
    }
    table.forward.push_back(std::move(row));
  }

  std::vector<GradFn> roots;
  for (const c10::IValue& output : outputs) collect_output_grad_fns(output, roots);
  if (roots.empty())
    throw UserError("no output of the graph depends on an input that requires grad (the graph's own inputs and "
                    "the parameters that required grad): there is no backward to explain");
  for (const GradFn& node : backward_graph(roots)) {
    BackwardRow row{node->sequence_nr(), node->name(), {}};
    if (row.sequence_nr == UINT64_MAX) {
      table.without_forward.push_back(std::move(row));
      continue;
    }
    if (const std::optional<size_t> position = position_of(row.sequence_nr)) row.forward_positions.push_back(*position);
    table.backward.push_back(std::move(row));
  }
  std::stable_sort(table.backward.begin(), table.backward.end(),
                   [](const BackwardRow& a, const BackwardRow& b) { return a.sequence_nr > b.sequence_nr; });
  return table;
}

nlohmann::json autograd_table_to_json(const AutogradTable& table) {
  nlohmann::json forward = nlohmann::json::array();
  for (const ForwardRow& row : table.forward) {
    nlohmann::json j = {{"position", row.position}, {"kind", row.kind}, {"outputs", row.outputs},
                        {"sequence_nr", row.sequence_nr ? nlohmann::json(*row.sequence_nr) : nlohmann::json(nullptr)},
                        {"backward", row.backward}};
    j["origin"] = row.origin ? origin_to_json(*row.origin) : nlohmann::json(nullptr);
    forward.push_back(std::move(j));
  }
  auto rows = [](const std::vector<BackwardRow>& list) {
    nlohmann::json out = nlohmann::json::array();
    for (const BackwardRow& row : list)
      out.push_back({{"sequence_nr", row.sequence_nr}, {"name", row.name}, {"forward", row.forward_positions}});
    return out;
  };
  return {{"start_sequence_nr", table.start_sequence_nr},
          {"forward", forward},
          {"backward", rows(table.backward)},
          {"without_forward", rows(table.without_forward)}};
}

std::string autograd_table_text(const AutogradTable& table) {
  // PyTorch's counter runs on through the process: numbers are shown from where the graph began.
  const uint64_t first = table.start_sequence_nr;
  auto seq = [&](uint64_t n) { return std::to_string(n - first); };

  std::ostringstream out;
  out << "Forward, in the order the graph runs (SeqNr counted from the graph's first autograd node, " << first
      << " in this thread):\n"
      << "SeqNr|Node|Source|Module|Backward\n";
  for (const ForwardRow& row : table.forward) {
    out << (row.sequence_nr ? seq(*row.sequence_nr) : "-") << "|" << node_text(row) << "|";
    if (row.origin && !row.origin->file.empty()) out << row.origin->file << ":" << row.origin->line;
    out << "|" << (row.origin ? row.origin->module_path : "") << "|" << row.backward << "\n";
  }
  out << "\nBackward, in the order the engine runs it:\nSeqNr|Backward|Forward nodes\n";
  for (const BackwardRow& row : table.backward) {
    out << seq(row.sequence_nr) << "|" << row.name << "|";
    for (size_t i = 0; i < row.forward_positions.size(); ++i)
      out << (i ? ", " : "") << node_text(table.forward[row.forward_positions[i]]);
    if (row.forward_positions.empty()) out << "(no forward node of this graph made it)";
    out << "\n";
  }
  std::map<std::string, size_t> apart;
  for (const BackwardRow& row : table.without_forward) ++apart[row.name];
  if (!apart.empty()) {
    out << "\nWithout a forward node (sequence number UINT64_MAX):";
    for (const auto& [name, count] : apart) out << " " << name << " x" << count;
    out << "\n";
  }
  return out.str();
}

}  // namespace tsrepro
