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

#include "tsrepro/case.h"

namespace tsrepro {

// One top-level node of the case's graph, in forward order.
struct ForwardRow {
  size_t position = 0;               // among the graph's top-level compute nodes
  std::string kind;                  // "aten::conv2d"
  std::vector<std::string> outputs;  // its output values' names
  std::optional<NodeOrigin> origin;  // where the model made it (node_origin.h)
  std::optional<uint64_t> sequence_nr;  // of the autograd node made for it; none: not differentiated
  std::string backward;                 // that node's name: "ConvolutionBackward0"
};

// One autograd node of the backward graph.
struct BackwardRow {
  uint64_t sequence_nr = 0;
  std::string name;                     // "ReluBackward0", "AccumulateGrad"
  std::vector<size_t> forward_positions;  // the forward nodes it differentiates (ForwardRow::position)
};

struct AutogradTable {
  uint64_t start_sequence_nr = 0;  // the thread's counter when the graph started (it runs on)
  std::vector<ForwardRow> forward;
  std::vector<BackwardRow> backward;  // in the order the engine runs them: sequence_nr descending
  // Nodes with no forward counterpart (sequence_nr UINT64_MAX: AccumulateGrad, error nodes):
  // listed apart, never matched to a forward node.
  std::vector<BackwardRow> without_forward;
};

// Runs the case's graph in the interpreter with gradients: every floating-point tensor input a
// leaf that requires grad, the backward pass started from every output that has a gradient
// (with ones). Throws UserError when no output depends on a differentiable input.
AutogradTable autograd_table(const Case& c, const std::vector<c10::IValue>& inputs);

nlohmann::json autograd_table_to_json(const AutogradTable& table);
// Two tables, forward order then backward order, in the spirit of PyTorch's own
// (SeqNr|OrigAten|SrcFn).
std::string autograd_table_text(const AutogradTable& table);

}  // namespace tsrepro
