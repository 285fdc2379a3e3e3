#pragma once
// Where each node of a case came from, kept through every graph edit.
//
// `tsrepro import` numbers the compute nodes of the imported graph (depth first, constants left
// out) and records, for each, the user's source line and the module path (NodeOrigin). The
// number rides on the node itself as an int attribute, `tsrepro_origin`: Graph::copy, cloning,
// cutting and inlining copy a node's attributes by value, so a surviving node keeps its number
// and a node made later (a cast, a cut's replacement input) has none. The records sit in a
// table the case holds (Case::node_origins), immutable once imported. Flags (backward, culprit,
// fused) are a second int attribute, `tsrepro_flags`, per node in the same way: no node's
// metadata is an object shared with another node.
//
// Neither attribute ever reaches a backend or a reproducer: graph_to_ir prints graphs without
// them (case.h). graph.ir shows the origin as a trailing comment, "# resnet.py:270:12 maxpool
// (node 17)", which parseIR skips and load_case reads back.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace torch::jit {
struct Graph;
struct Node;
}  // namespace torch::jit

namespace tsrepro {

struct NodeOrigin {
  int64_t index = -1;  // the node's number in the imported graph
  std::string kind;    // its kind there: "aten::max_pool2d"
  // The model's own line: the innermost frame (the node's own source range, then the call sites
  // that inlined it, outward) whose file is not part of torch itself. For resnet18's max_pool2d
  // that is resnet.py's "x = self.maxpool(x)", not torch/nn/functional.py where the op is
  // written. Empty when torch kept no source.
  std::string file;
  int64_t line = 0;     // 1-based
  int64_t column = 0;   // 0-based, as torch prints it
  std::string op_file;  // where the op itself is written (torch/nn/functional.py:782)
  int64_t op_line = 0;
  std::string module_path;  // "layer1.0.bn1"; empty at the model's top level
};

// The table of a case: entry i is node i's origin.
using NodeOrigins = std::vector<NodeOrigin>;

// Numbers the compute nodes of a just-imported graph and reads their origins from torch's own
// metadata: the source range that generated each node and the module instances of its inlined
// call stack (scripted modules) or its scope (traced ones).
std::shared_ptr<const NodeOrigins> record_import_origins(torch::jit::Graph& graph);

// Numbers a graph made from a case's graph (a subject of `tsrepro after`, a fusion group of it) as
// record_import_origins does, except that a node that carries a number already keeps that
// number's entry of `from`, the case's table: a graph read back from graph.ir has no source
// ranges left. Without `from`, record_import_origins itself.
std::shared_ptr<const NodeOrigins> renumber_origins(torch::jit::Graph& graph, const NodeOrigins* from);

// The node's number in the imported graph, if it has one.
std::optional<int64_t> origin_index(const torch::jit::Node& node);
// The table's entry for number `index`; null without a table, a number, or such an entry.
const NodeOrigin* origin_numbered(const NodeOrigins* table, std::optional<int64_t> index);
void set_origin_index(torch::jit::Node& node, int64_t index);

enum class NodeFlag : int64_t { Backward = 1, Culprit = 2, Fused = 4 };
bool has_flag(const torch::jit::Node& node, NodeFlag flag);
void set_flag(torch::jit::Node& node, NodeFlag flag);

// torch::jit::differentiate on a copy of `graph` (every node differentiable, isDifferentiable):
// the forward graph it returns keeps each node's number; every node of the backward graph is
// flagged Backward (whatever autodiff copied onto it from a forward node), no forward node is.
struct MarkedGradient {
  std::shared_ptr<torch::jit::Graph> forward;
  std::shared_ptr<torch::jit::Graph> backward;
};
MarkedGradient differentiate_marked(torch::jit::Graph& graph);

// Autodiff replaces each node it differentiates by its symbolic script's forward: new nodes,
// without numbers, of the same kind (what the scripts add, shape bookkeeping, has no original of
// its kind). Such a node stands for the next original node of its kind in graph order: the
// index in `kinds` (the originals' kinds, in order) at or after `cursor`, which moves past it.
std::optional<size_t> next_of_kind(const std::vector<std::string>& kinds, const std::string& kind, size_t& cursor);

// "resnet.py:270:12 maxpool (node 17)": what graph.ir shows after the node.
std::string origin_comment(const NodeOrigin& origin);
// The node number in such a comment (the text after '#'), if there is one.
std::optional<int64_t> index_in_origin_comment(const std::string& comment);

// The origins of the graph's numbered compute nodes (literals' packs left out), depth first: what
// summary.json and the reproducers' headers list for the minified graph.
std::vector<NodeOrigin> origins_in_graph(const torch::jit::Graph& graph, const NodeOrigins& table);

nlohmann::json origin_to_json(const NodeOrigin& origin);
NodeOrigin origin_from_json(const nlohmann::json& j);

// A whole table as JSON (an array, entry i numbered i): the origins.json libtsrepro_capture.so
// writes beside a captured graph. Reading throws UserError naming `where` for an entry out of
// place; entries are in number order, and numbers left out are holes (origin_numbered: none).
nlohmann::json origins_to_json(const NodeOrigins& table);
// The entries of the nodes `graph` still has, in number order: case.json's node_origins.
nlohmann::json origins_to_json(const torch::jit::Graph& graph, const NodeOrigins& table);
std::shared_ptr<const NodeOrigins> origins_from_json(const nlohmann::json& array, const std::string& where);

}  // namespace tsrepro
