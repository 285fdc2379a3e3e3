#pragma once
// Graph surgery on minifier states. A state is a Case whose values are always present; every
// candidate is a modified deep copy, normalized (dead code and unused inputs removed) and linted.
// Reference values go by the state's value names. A copy keeps the names a value was given but
// numbers the others afresh (%43 of the state is %41 of a copy where an edit left gaps), so an
// edit looks its values' names up in the graph it copied (names_in_source).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "minifier/reference_values.h"
#include "tsrepro/case.h"

namespace torch::jit {
struct Block;
struct Graph;
struct Node;
struct Value;
}  // namespace torch::jit

namespace tsrepro {

Case copy_case(const Case& c);

// What becomes a minifier state: `c` with its graph copied once more, so that its unnamed values
// are numbered as any copy of it numbers them (an edit's dead-code elimination leaves gaps). The
// edits on a state's copy then find the state's names on the values they keep.
Case with_copy_numbering(Case c);

// For a fresh copy of `source` (same nodes, same order): the name each input and top-level node
// output of the copy has in `source`.
std::map<const torch::jit::Value*, std::string> names_in_source(const torch::jit::Graph& copy,
                                                                const torch::jit::Graph& source);

// Moves the nodes of `block` right before `anchor`, in order.
void hoist_nodes(torch::jit::Block* block, torch::jit::Node* anchor);
// Replaces a prim::If by the nodes of one of its branches.
void inline_branch(torch::jit::Node* conditional, size_t branch);
// Replaces a prim::Loop by one pass through its body: iteration 0, from the loop's initial values.
void inline_first_iteration(torch::jit::Graph& graph, torch::jit::Node* loop);
// Replaces a prim::Loop that runs no iteration by what it hands on then: its initial values.
void inline_no_iteration(torch::jit::Node* loop);

// The top-level node a (possibly nested) user belongs to.
torch::jit::Node* top_level_owner(torch::jit::Node* node, const torch::jit::Graph& graph);

// A mutable container and the nodes that write it are one unit for the cutting passes. A list or
// dict that a node makes and later nodes write into (`out[name] = x` of torchvision's
// IntermediateLayerGetter, FPN's list of results that `append` grows) holds its final contents
// only after its last writer. The reference run records it after each (reference_values.h); a cut
// that feeds it in removes its first writers with it and feeds it as it stood after them (the
// writers that stay write into the input), never a later writer alone, which would make the
// container's value hold writes the graph no longer makes, or an earlier one twice. Returns
// the top-level nodes (in graph order) holding a node that writes `value` in place (an argument
// its schema marks as written: aten::append, aten::_set_item, ...); empty for a value nothing writes.
std::vector<torch::jit::Node*> top_level_writers(torch::jit::Value* value, const torch::jit::Graph& graph);

// The nodes a pass may remove or cut: top-level, not prim::Constant, not a node that only packs
// constants (a literal, which stays with its readers as a constant does). A node with blocks
// (prim::If, prim::Loop) counts as one and goes as a whole.
std::vector<torch::jit::Node*> cuttable_nodes(const torch::jit::Graph& graph);

// How a cut treats the nodes that fed only the cut ones.
enum class CutMode {
  DropFeeders,  // they become dead code and go too: the most a cut can remove
  KeepFeeders,  // their orphaned values become graph outputs: "this node alone became an input",
                // which keeps two culprits with harmless nodes between them together
};

// Nodes `indices` (into cuttable_nodes) replaced by new graph inputs that carry their reference
// values; nodes without outputs are simply dropped; an output that would only return such an
// input as it came goes (while another output stays). A node that makes an empty list or dict
// from nothing stays while its first writer does (the writers get a fresh container, not an
// input). nullopt when a needed value has no reference value (or one a graph input cannot hold),
// when the cut would remove nothing, or when KeepFeeders changes nothing that DropFeeders would not.
std::optional<Case> with_nodes_cut(const Case& state, const std::vector<size_t>& indices, const ReferenceValues& refs,
                                   CutMode mode = CutMode::DropFeeders);

// Cuttable nodes `begin`.. of `state` alone: the nodes before `begin` cut (DropFeeders), their
// values fed in. nullopt where the cut cannot keep every node from `begin` on.
std::optional<Case> graph_from(const Case& state, size_t begin, const ReferenceValues& refs);

// The same, where the cut may also fold some of those nodes away (a value fed in decides what
// reads it: SSD's `targets`, None in eval mode, fed to the branches that test it), and keeps a
// node before `begin` whose value no graph input can hold. Where the nodes have no import
// origins, or share one, this is graph_from.
std::optional<Case> graph_from_folding(const Case& state, size_t begin, const ReferenceValues& refs);

// One input of an isolated graph (below): which node reads it, standing for which value.
struct IsolatedInput {
  std::optional<size_t> reader;  // index in the state's cuttable_nodes; none: an input the state had
  std::string value;             // the state's value it replaces
};
// Every node on its own: each tensor a node reads from another node becomes an input of its own
// for that reader (fed its reference value), and every node's tensors become outputs. With
// gradients, input i's gradient is then what node leaves[i].reader's backward makes of the
// outputs' gradients, whatever the other nodes do. nullopt when nothing could be isolated.
std::optional<Case> with_every_node_isolated(const Case& state, const ReferenceValues& refs,
                                             std::vector<IsolatedInput>& leaves);

// What a truncated graph returns.
enum class PrefixOutputs {
  Frontier,                // the last node's outputs the model reads and every tensor the nodes before it
                           // hand on to later ones: no node of the prefix is dead (truncate-suffix's
                           // search needs that)
  FrontierWithContainers,  // the same, lists, tuples and dicts holding a tensor included, and shapes
                           // and scalars computed from the inputs: a window (bisect-window) then
                           // keeps a culprit whose value leaves it only in a list (SSD's feature
                           // list) or as a shape (export_shape_slice). Not for truncate-suffix:
                           // every list-building node stays alive with them, and on RetinaNet
                           // cut-ranges then spent 140 queries where it spends 3.
  LastNode,                // the last node's outputs alone: what feeds nothing of it is dead code
};

// The graph up to and including cuttable node `index`.
std::optional<Case> truncated_after(const Case& state, size_t index, PrefixOutputs outputs = PrefixOutputs::Frontier);

// In place: the outputs made by cuttable nodes before `begin` that no node from `begin` on reads
// (or writes) go, one output staying; no normalization, so node indices stay. A window
// (bisect-window) then hands on what it touches: a container kept before it because no input can
// hold it, which only nodes after it filled (a detection model's dict of feature maps), returned
// untouched, cost remove-outputs two queries on the window's one node.
void drop_outputs_untouched_from(Case& c, size_t begin);

// The graph without the outputs at `indices` (at least one output is kept).
std::optional<Case> without_outputs(const Case& state, const std::vector<size_t>& indices);

// Dead code out, unused inputs out, lint. Returns false if the graph no longer lints.
bool normalize(Case& c);

}  // namespace tsrepro
