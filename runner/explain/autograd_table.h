#pragma once
// `tsrepro explain`'s tables: which autograd node differentiates each forward node of a case.
//
// PyTorch links the two by the autograd sequence number: each forward op's autograd node takes
// at::sequence_number::get_and_increment() when it is made, and its backward reports the same
// number. The reference runs the graph in the interpreter, where every differentiable op makes
// its own node; a tsrepro::record_grad_fn node after each top-level node notes the grad_fn of
// its outputs as it is made (a later in-place op gives the tensor a new one). The backward
// graph is then walked from the outputs along next_edges().

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>
#include <nlohmann/json.hpp>

#include "tsrepro/backend.h"
#include "tsrepro/case.h"

namespace tsrepro {

// One top-level node of the case's graph, in forward order.
struct ForwardRow {
  size_t position = 0;                  // among the graph's top-level compute nodes
  std::string kind;                     // "aten::conv2d"
  std::vector<std::string> outputs;     // its output values' names
  std::optional<NodeOrigin> origin;     // where the model made it (node_origin.h)
  std::optional<uint64_t> sequence_nr;  // of the autograd node made for it; none: not differentiated
  std::string backward;                 // that node's name: "ConvolutionBackward0"
  std::string backend_unit;             // with a backend: the unit that differentiates it there
};

// A backend's unit of differentiation: the profiling executor puts each differentiable subgraph
// into one prim::DifferentiableGraph, differentiated as a whole by one
// DifferentiableGraphBackward with a single sequence number.
struct BackendUnit {
  std::string name;                        // "DifferentiableGraph 0"
  std::optional<uint64_t> sequence_nr;     // of its DifferentiableGraphBackward, when matched
  std::vector<size_t> forward_positions;   // the case's forward nodes inside it
  std::vector<std::string> fusion_groups;  // "prim::TensorExprGroup (3 nodes)" inside it
};

// One autograd node of the backward graph.
struct BackwardRow {
  uint64_t sequence_nr = 0;
  std::string name;                       // "ReluBackward0", "AccumulateGrad"
  std::vector<size_t> forward_positions;  // the forward nodes it differentiates (ForwardRow::position)
};

struct AutogradTable {
  uint64_t start_sequence_nr = 0;  // the thread's counter when the graph started (it runs on)
  std::vector<ForwardRow> forward;
  std::vector<BackwardRow> backward;  // in the order the engine runs them: sequence_nr descending
  // Nodes with no forward counterpart (sequence_nr UINT64_MAX: AccumulateGrad, error nodes):
  // listed apart, never matched to a forward node.
  std::vector<BackwardRow> without_forward;
  std::string backend;             // empty: the reference alone
  std::vector<BackendUnit> units;  // the backend's, in its graph's order
};

// Runs the case's graph in the interpreter with gradients: every floating-point tensor input a
// leaf that requires grad, the backward pass started from every output that has a gradient
// (with ones). Throws UserError when no output depends on a differentiable input.
AutogradTable autograd_table(const Case& c, const std::vector<c10::IValue>& inputs);

// Runs the case under `backend` (in this process, with the same gradients) and says which of its
// units covers each forward node: the nodes are found in the backend's optimized graph by the
// numbers import gave them (node_origin.h), so a case without origins gets none.
void add_backend_units(AutogradTable& table, const Case& c, const std::vector<c10::IValue>& inputs,
                       const std::string& backend, const BackendOptions& options);

nlohmann::json autograd_table_to_json(const AutogradTable& table);
// "%x, %y = aten::op": a forward node as the tables show it.
std::string node_text(const ForwardRow& row);
// Two tables, forward order then backward order, in the spirit of PyTorch's own
// (SeqNr|OrigAten|SrcFn).
std::string autograd_table_text(const AutogradTable& table);

}  // namespace tsrepro
