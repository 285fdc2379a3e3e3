// autograd_table.h: the reference's autograd nodes, matched to the case's forward nodes.

#include <algorithm>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include <ATen/SequenceNumber.h>
#include <torch/csrc/autograd/function.h>
#include <torch/script.h>

#include "runner/explain/autograd_table.h"
#include "backends/builtin.h"
#include "backends/profiling_executor.h"
#include "runner/case/inputs.h"
#include "runner/graph/written_inputs.h"
#include "tsrepro/backend.h"
#include "tsrepro/case.h"
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
    if (is_compute_node(*node)) nodes.push_back(node);  // as cuttable_nodes
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
  std::vector<bool> wanted = gradient_inputs(c.inputs);
  for (size_t i = 0; i < wanted.size() && i < written.size(); ++i) wanted[i] = wanted[i] && !written[i];
  return with_grad_leaves(fresh_copies(inputs, written), wanted);
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

}  // namespace

std::string node_text(const ForwardRow& row) {
  std::string text;
  for (size_t i = 0; i < row.outputs.size(); ++i) text += (i ? ", %" : "%") + row.outputs[i];
  return (text.empty() ? "" : text + " = ") + row.kind;
}

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
    if (const NodeOrigin* origin = origin_numbered(c.node_origins.get(), origin_index(*node))) row.origin = *origin;
    if (!seen.grad_fns[position].empty()) {  // the node of the op whose output the graph hands on
      row.sequence_nr = seen.grad_fns[position].front()->sequence_nr();
      row.backward = seen.grad_fns[position].front()->name();
    }
    table.forward.push_back(std::move(row));
  }

  std::vector<GradFn> roots;
  for (const c10::IValue& output : outputs) collect_output_grad_fns(output, roots);
  if (roots.empty())
    throw UserError(
        "no output of the graph depends on an input that requires grad (the graph's own inputs and "
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

namespace {

// The ops of a unit, in order, fusion groups' bodies included: each with its number where it kept
// one. Autodiff replaces every node it differentiates by its symbolic script's forward (new
// nodes, no numbers), and adds shape bookkeeping of its own.
struct UnitOp {
  std::string kind;
  std::optional<int64_t> number;
};

void ops_in(const torch::jit::Block* block, std::vector<UnitOp>& out) {
  static const std::set<std::string> bookkeeping = {"aten::size", "aten::_size_if_not_equal"};
  for (const torch::jit::Node* node : block->nodes()) {
    const std::string kind = node->kind().toQualString();
    if (kind.rfind("aten::", 0) == 0 && !bookkeeping.count(kind)) out.push_back({kind, origin_index(*node)});
    for (const torch::jit::Block* inner : node->blocks()) ops_in(inner, out);
    if (node->hasAttribute(torch::jit::attr::Subgraph)) ops_in(node->g(torch::jit::attr::Subgraph)->block(), out);
  }
}

// The forward rows a unit's ops stand for: by number where an op kept one, else by next_of_kind
// from `cursor` on (units and their ops follow the graph's order).
std::vector<size_t> forward_rows_of(const std::vector<UnitOp>& ops, const AutogradTable& table,
                                    const std::unordered_map<int64_t, size_t>& position_of_origin, size_t& cursor) {
  std::vector<std::string> kinds;
  for (const ForwardRow& row : table.forward) kinds.push_back(row.kind);
  std::vector<size_t> rows;
  for (const UnitOp& op : ops) {
    std::optional<size_t> row;
    if (op.number) {
      if (auto found = position_of_origin.find(*op.number); found != position_of_origin.end()) row = found->second;
    } else {
      row = next_of_kind(kinds, op.kind, cursor);
    }
    if (!row) continue;
    rows.push_back(*row);
    cursor = std::max(cursor, *row + 1);
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

void differentiable_graphs_in(const torch::jit::Block* block, std::vector<const torch::jit::Node*>& out) {
  for (const torch::jit::Node* node : block->nodes()) {
    if (node->kind() == c10::prim::DifferentiableGraph) out.push_back(node);
    for (const torch::jit::Block* inner : node->blocks()) differentiable_graphs_in(inner, out);
  }
}

}  // namespace

void add_backend_units(AutogradTable& table, const Case& c, const std::vector<c10::IValue>& inputs,
                       const std::string& backend, const BackendOptions& options) {
  table.backend = backend;
  std::unordered_map<int64_t, size_t> position_of_origin;
  for (const ForwardRow& row : table.forward)
    if (row.origin) position_of_origin[row.origin->index] = row.position;

  auto tested = make_backend(backend, options);
  std::vector<bool> lifted;
  for (const InputSpec& spec : c.inputs) lifted.push_back(spec.lifted);
  const BackendInput input{c.graph->copy(), lifted};
  torch::AutoGradMode with_grad(true);
  auto prepared = tested->prepare(input, leaves_with_grad(c, inputs));
  const std::vector<c10::IValue> outputs = prepared->run(leaves_with_grad(c, inputs));
  const std::shared_ptr<torch::jit::Graph> optimized = prepared->optimized_graph();
  if (!optimized) return;

  std::vector<uint64_t> unit_sequence_nrs;  // of the DifferentiableGraphBackward nodes, in forward order
  std::vector<GradFn> roots;
  for (const c10::IValue& output : outputs) collect_output_grad_fns(output, roots);
  for (const GradFn& node : backward_graph(roots))
    if (node->name().find("DifferentiableGraphBackward") != std::string::npos)
      unit_sequence_nrs.push_back(node->sequence_nr());
  std::sort(unit_sequence_nrs.begin(), unit_sequence_nrs.end());

  std::vector<const torch::jit::Node*> graphs;
  differentiable_graphs_in(optimized->block(), graphs);
  size_t cursor = 0;
  for (size_t u = 0; u < graphs.size(); ++u) {
    BackendUnit unit;
    unit.name = "DifferentiableGraph " + std::to_string(u);
    // Paired by order only when the counts agree: one backward node per differentiable graph.
    if (unit_sequence_nrs.size() == graphs.size()) unit.sequence_nr = unit_sequence_nrs[u];
    const std::shared_ptr<torch::jit::Graph> subgraph = graphs[u]->g(torch::jit::attr::Subgraph);
    for (const torch::jit::Node* node : subgraph->nodes()) {
      if (is_fusion_group(*node)) {
        std::vector<UnitOp> ops;
        ops_in(node->g(torch::jit::attr::Subgraph)->block(), ops);
        size_t group_cursor = cursor;
        const std::vector<size_t> rows = forward_rows_of(ops, table, position_of_origin, group_cursor);
        unit.fusion_groups.push_back(std::string(node->kind().toQualString()) + " (" + std::to_string(rows.size()) +
                                     " nodes)");
        for (size_t row : rows) table.forward[row].backend_unit = unit.name + ", " + node->kind().toQualString();
      }
    }
    std::vector<UnitOp> ops;
    ops_in(subgraph->block(), ops);
    unit.forward_positions = forward_rows_of(ops, table, position_of_origin, cursor);
    for (size_t position : unit.forward_positions)
      if (table.forward[position].backend_unit.empty()) table.forward[position].backend_unit = unit.name;
    table.units.push_back(std::move(unit));
  }
}

nlohmann::json autograd_table_to_json(const AutogradTable& table) {
  nlohmann::json forward = nlohmann::json::array();
  for (const ForwardRow& row : table.forward) {
    nlohmann::json j = {{"position", row.position},
                        {"kind", row.kind},
                        {"outputs", row.outputs},
                        {"sequence_nr", row.sequence_nr ? nlohmann::json(*row.sequence_nr) : nlohmann::json(nullptr)},
                        {"backward", row.backward}};
    j["origin"] = row.origin ? origin_to_json(*row.origin) : nlohmann::json(nullptr);
    if (!table.backend.empty()) j["backend_unit"] = row.backend_unit;
    forward.push_back(std::move(j));
  }
  auto rows = [](const std::vector<BackwardRow>& list) {
    nlohmann::json out = nlohmann::json::array();
    for (const BackwardRow& row : list)
      out.push_back({{"sequence_nr", row.sequence_nr}, {"name", row.name}, {"forward", row.forward_positions}});
    return out;
  };
  nlohmann::json units = nlohmann::json::array();
  for (const BackendUnit& unit : table.units)
    units.push_back({{"name", unit.name},
                     {"sequence_nr", unit.sequence_nr ? nlohmann::json(*unit.sequence_nr) : nlohmann::json(nullptr)},
                     {"forward", unit.forward_positions},
                     {"fusion_groups", unit.fusion_groups}});
  return {{"start_sequence_nr", table.start_sequence_nr},
          {"backend", table.backend},
          {"units", units},
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
  if (!table.backend.empty()) {
    out << "\nUnder " << table.backend << ", each differentiable subgraph is one backward node:\n"
        << "SeqNr|Unit|Forward nodes|Fusion groups\n";
    for (const BackendUnit& unit : table.units) {
      out << (unit.sequence_nr ? seq(*unit.sequence_nr) : "-") << "|" << unit.name << "|";
      for (size_t i = 0; i < unit.forward_positions.size(); ++i)
        out << (i ? ", " : "") << node_text(table.forward[unit.forward_positions[i]]);
      out << "|";
      for (size_t i = 0; i < unit.fusion_groups.size(); ++i) out << (i ? ", " : "") << unit.fusion_groups[i];
      out << "\n";
    }
    if (table.units.empty()) out << "(none: the backend made no differentiable subgraph of this graph)\n";
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
