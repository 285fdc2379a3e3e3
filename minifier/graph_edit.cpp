// Graph surgery for the minifier's passes.

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include <torch/script.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <spdlog/spdlog.h>

#include "minifier/graph_edit.h"
#include "backends/builtin.h"
#include "runner/graph/strict_fusion.h"
#include "runner/graph/written_inputs.h"
#include "tsrepro/node_origin.h"

namespace tsrepro {
namespace {

using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

// Values that can be fed in as graph inputs and survive inputs.pt.
bool can_be_graph_input(const c10::IValue& v) {
  // An undefined tensor (the None an op returns for an output it skipped, such as
  // _native_multi_head_attention's weights) is no value a Tensor input can hold.
  if (v.isTensor() && !v.toTensor().defined()) return false;
  if (v.isTensor() || v.isInt() || v.isDouble() || v.isBool() || v.isNone() || v.isString() || v.isDevice())
    return true;
  if (v.isIntList() || v.isDoubleList() || v.isBoolList() || v.isTensorList()) return true;
  if (v.isTuple()) {
    for (const c10::IValue& item : v.toTupleRef().elements())
      if (!can_be_graph_input(item)) return false;
    return true;
  }
  // A dict of such values by str or int keys (FPN's features), as a Dict(str, Tensor) input holds it.
  if (v.isGenericDict()) {
    for (const auto& entry : v.toGenericDict())
      if (!(entry.key().isString() || entry.key().isInt()) || !can_be_graph_input(entry.value())) return false;
    return true;
  }
  return false;
}

void drop_unused_inputs(Case& c) {
  for (size_t i = c.graph->inputs().size(); i-- > 0;) {
    if (c.graph->inputs()[i]->hasUses()) continue;
    c.graph->eraseInput(i);
    c.inputs.erase(c.inputs.begin() + static_cast<std::ptrdiff_t>(i));
    if (c.values) c.values->erase(c.values->begin() + static_cast<std::ptrdiff_t>(i));
  }
}

}  // namespace

Node* top_level_owner(Node* node, const Graph& graph) {
  while (node->owningBlock() != graph.block()) node = node->owningBlock()->owningNode();
  return node;
}

std::map<const Value*, std::string> names_in_source(const Graph& copy, const Graph& source) {
  std::map<const Value*, std::string> names;
  for (size_t i = 0; i < copy.inputs().size(); ++i) names[copy.inputs()[i]] = source.inputs()[i]->debugName();
  auto in_source = source.nodes().begin();
  for (const Node* node : copy.nodes()) {
    for (size_t k = 0; k < node->outputs().size(); ++k)
      names[node->outputs()[k]] = in_source->outputs()[k]->debugName();
    ++in_source;
  }
  return names;
}

void hoist_nodes(torch::jit::Block* block, Node* anchor) {
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    Node* node = *it;
    ++it;
    node->moveBefore(anchor);
  }
}

void inline_branch(Node* conditional, size_t branch) {
  torch::jit::Block* block = conditional->blocks().at(branch);
  hoist_nodes(block, conditional);
  for (size_t i = 0; i < conditional->outputs().size(); ++i)
    conditional->outputs()[i]->replaceAllUsesWith(block->outputs()[i]);
  conditional->destroy();
}

// prim::Loop(max_trips, cond, carried...) with body(iter, carried...) -> (cond, carried...).
void inline_first_iteration(torch::jit::Graph& graph, Node* loop) {
  torch::jit::Block* body = loop->blocks().at(0);
  torch::jit::WithInsertPoint before(loop);
  body->inputs()[0]->replaceAllUsesWith(graph.insertConstant(0));
  for (size_t i = 1; i < body->inputs().size(); ++i) body->inputs()[i]->replaceAllUsesWith(loop->inputs()[i + 1]);
  hoist_nodes(body, loop);
  for (size_t i = 0; i < loop->outputs().size(); ++i) loop->outputs()[i]->replaceAllUsesWith(body->outputs()[i + 1]);
  loop->destroy();
}

void inline_no_iteration(Node* loop) {
  for (size_t i = 0; i < loop->outputs().size(); ++i) loop->outputs()[i]->replaceAllUsesWith(loop->inputs()[i + 2]);
  loop->destroy();
}

Case with_copy_numbering(Case c) {
  c.graph = c.graph->copy();
  return c;
}

Case copy_case(const Case& c) {
  Case copy = c;
  copy.graph = c.graph->copy();
  return copy;
}

std::vector<Node*> cuttable_nodes(const Graph& graph) {
  std::vector<Node*> nodes;
  // Graph's const API hands out const nodes; the graph itself is the caller's to edit.
  for (const Node* node : graph.nodes())
    if (is_compute_node(*node)) nodes.push_back(const_cast<Node*>(node));
  return nodes;
}

bool normalize(Case& c) {
  drop_unpaired_block_ends(*c.graph);  // a cut through a with block keeps neither end alone
  torch::jit::EliminateDeadCode(c.graph);
  drop_unused_inputs(c);
  try {
    c.graph->lint();
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

namespace {

// Whether `user` writes its input at `offset` in place, as its schema says.
bool writes_input(const Node* user, size_t offset) {
  const c10::FunctionSchema* schema = user->maybeSchema();
  if (schema == nullptr || offset >= schema->arguments().size()) return false;
  const c10::AliasInfo* alias = schema->arguments()[offset].alias_info();
  return alias != nullptr && alias->isWrite();
}

}  // namespace

std::vector<Node*> top_level_writers(Value* value, const Graph& graph) {
  std::vector<Node*> writers;
  const c10::TypeKind kind = value->type()->kind();
  if (kind != c10::TypeKind::ListType && kind != c10::TypeKind::DictType) return writers;
  for (const torch::jit::Use& use : value->uses()) {
    if (!writes_input(use.user, use.offset)) continue;
    Node* owner = top_level_owner(use.user, graph);
    if (owner != graph.return_node() && std::find(writers.begin(), writers.end(), owner) == writers.end())
      writers.push_back(owner);
  }
  std::sort(writers.begin(), writers.end(), [](Node* a, Node* b) { return a->isBefore(b); });
  return writers;
}

namespace {

// Whether the node making `value`, a list or dict it makes from nothing (aten::dict(), an empty
// prim::ListConstruct), stays where the cut keeps its first writer: the writers get the fresh
// empty container the model hands them, not an input. Fed in, an empty container is a different
// program to a compiler (an input may alias; PyTorch 2's export converter refuses an empty dict
// input outright, "Expected Tensor but got InvalidTag", where the model's own dict raised the
// failure asked about: export_dict_item_set took 19 queries for 6). The node reads nothing, so
// keeping it keeps nothing else.
bool stays_with_its_writers(Value* value, const Graph& graph, const std::function<bool(Node*)>& is_cut) {
  if (!value->node()->inputs().empty()) return false;
  const std::vector<Node*> writers = top_level_writers(value, graph);
  return !writers.empty() && !is_cut(writers.front());
}

// What a cut feeds in for `value` (named `name` in the reference run), whose node it removes with
// those `is_cut` says: its reference value. A container goes with the first of its writers: it
// is fed as it stood after those the cut removes, and those that stay write into the input as they
// wrote into the container. The graph holds the first writers the reference run saw (a window
// truncates only after itself), so k cut writers, the graph's first, are the run's first k.
// nullopt where no input can stand for it, saying why at debug level.
std::optional<c10::IValue> value_to_feed(Value* value, const std::string& name, const Graph& graph,
                                         const ReferenceValues& refs, const std::function<bool(Node*)>& is_cut) {
  if (stays_with_its_writers(value, graph, is_cut)) {
    spdlog::debug("cut: %{} ({}) is not fed: its node makes it empty and stays with its first writer", name,
                  value->type()->repr_str());
    return std::nullopt;
  }
  const std::vector<Node*> writers = top_level_writers(value, graph);
  size_t cut_writers = 0;
  while (cut_writers < writers.size() && is_cut(writers[cut_writers])) ++cut_writers;
  const bool first_writers_cut =
      std::none_of(writers.begin() + static_cast<std::ptrdiff_t>(cut_writers), writers.end(), is_cut);
  if (!first_writers_cut || writers.size() > refs.writers(name)) {
    spdlog::debug("cut: %{} ({}) cannot be fed: a node that writes it stays before one that goes", name,
                  value->type()->repr_str());
    return std::nullopt;
  }
  std::optional<c10::IValue> ref = refs.find_after_writers(name, cut_writers);
  if (!ref || !can_be_graph_input(*ref)) {
    spdlog::debug("cut: %{} ({}) cannot be fed: {}", name, value->type()->repr_str(),
                  ref ? "no input holds such a value" : "the reference run did not make it");
    return std::nullopt;
  }
  return ref;
}

// Every value the nodes (and their blocks) read.
void collect_values_read(Node* node, std::vector<Value*>& out) {
  for (Value* input : node->inputs()) out.push_back(input);
  for (torch::jit::Block* block : node->blocks())
    for (Node* inner : block->nodes()) collect_values_read(inner, out);
}

}  // namespace

std::optional<Case> with_nodes_cut(const Case& state, const std::vector<size_t>& indices, const ReferenceValues& refs,
                                   CutMode mode) {
  Case cut = copy_case(state);
  const std::vector<Node*> nodes = cuttable_nodes(*cut.graph);
  const std::map<const Value*, std::string> name_in_state = names_in_source(*cut.graph, *state.graph);
  std::set<Node*> removed;
  for (size_t i : indices) removed.insert(nodes.at(i));
  const auto is_removed = [&](Node* node) { return removed.count(node) > 0; };
  for (Node* node : nodes)
    if (removed.count(node) && node->outputs().size() == 1 &&
        stays_with_its_writers(node->output(), *cut.graph, is_removed))
      removed.erase(node);
  if (removed.empty()) return std::nullopt;  // the cut would change nothing
  std::set<const Value*> fed;                // the inputs this cut adds

  for (Node* node : nodes) {
    if (!removed.count(node)) continue;
    for (Value* output : node->outputs()) {
      const bool needed_outside =
          std::any_of(output->uses().begin(), output->uses().end(), [&](const torch::jit::Use& use) {
            return use.user->kind() == c10::prim::Return || !removed.count(top_level_owner(use.user, *cut.graph));
          });
      if (!needed_outside) continue;
      const std::string& name = name_in_state.at(output);
      const std::optional<c10::IValue> ref = value_to_feed(output, name, *cut.graph, refs, is_removed);
      if (!ref) return std::nullopt;
      Value* input = cut.graph->addInput();
      input->setType(output->type());
      output->replaceAllUsesWith(input);
      // Printed names like %3 are not names a value can be given; those inputs get a fresh one.
      if (!name.empty() && !std::all_of(name.begin(), name.end(), ::isdigit)) input->setDebugName(name);
      cut.inputs.push_back(spec_from_value(input->debugName(), *ref));
      cut.values->push_back(*ref);
      fed.insert(input);
    }
  }
  // The top-level values the cut nodes read and that survive the cut (KeepFeeders exposes them).
  // Filtered now: values made by the removed nodes themselves die with them.
  std::vector<Value*> read_by_removed;
  {
    std::vector<Value*> all_read;
    for (Node* node : removed) collect_values_read(node, all_read);
    for (Value* v : all_read)
      if (v->node()->owningBlock() == cut.graph->block() && !removed.count(v->node())) read_by_removed.push_back(v);
  }
  // Users before their producers: destroy from the back.
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    if (!removed.count(*it)) continue;
    (*it)->destroy();
  }
  if (mode == CutMode::KeepFeeders) {
    bool kept_any = false;
    std::set<Value*> seen;
    for (Value* v : read_by_removed) {
      if (!seen.insert(v).second || v->hasUses() || v->node()->kind() == c10::prim::Param) continue;
      if (!is_compute_node(*v->node())) continue;
      cut.graph->registerOutput(v);
      kept_any = true;
    }
    if (!kept_any) return std::nullopt;
  }
  // An output the cut turned into one of its own inputs, returned as it came (no node writes it),
  // goes: both sides return that value alike, and keeping it only cost remove-outputs a query and
  // the 1-minimality check another (a relu -> cos chain cut to the relu took 6 queries, now 4; a
  // window of ssd300's expand_as returned the anchors it reads as well). One output stays.
  const std::vector<bool> written = inputs_maybe_written(*cut.graph);
  for (size_t i = cut.graph->outputs().size(); i-- > 0 && cut.graph->outputs().size() > 1;) {
    Value* output = cut.graph->outputs()[i];
    if (fed.count(output) && !written.at(output->offset())) cut.graph->eraseOutput(i);
  }
  if (!normalize(cut)) return std::nullopt;
  return cut;
}

namespace {

// Whether a value of this type can carry a tensor: a tensor, or a list, tuple, dict or
// optional with one inside.
bool holds_tensor(const c10::TypePtr& type) {
  if (type->isSubtypeOf(*c10::TensorType::get())) return true;
  const auto contained = type->containedTypes();
  return std::any_of(contained.begin(), contained.end(), [](const c10::TypePtr& inner) { return holds_tensor(inner); });
}

// The prefix's outputs: `last`'s own, then every tensor (with `windows`, every value holding one,
// and every other value computed from the graph's inputs) that a node before it hands to a later
// node (or to the graph's outputs). With all of them as outputs the prefix keeps every node it
// holds, so "the prefix up to k fails" can only go from false to true as k grows, which the
// search needs. Node k's outputs alone were not enough on real models: where k is a list or a
// shape check, or sits on one path of a residual block, a culprit on the other path was dead code
// and the search concluded that the culprit lay after k.
//
// Of `last`'s outputs, those the model reads: an output nothing read stays unread, as a compiler
// sees it in the model (aten::_native_multi_head_attention's unread weights output, returned,
// took AOTInductor past the bug the model hits, and bisect-window lost its window).
// A window also hands on the shapes and scalars it computed from the inputs (export_shape_slice:
// `x.shape[-2:]`, read only at the model's end, left every window dead code, and bisect-window
// found none in 4 queries); a list or number built from constants alone is not handed on: the
// window after it rebuilds it from its reference value, and as an output it only kept alive the
// argument lists of every convolution.
std::vector<Value*> prefix_outputs(Graph& graph, Node* last, bool windows) {
  std::vector<Value*> outputs;
  for (Value* value : last->outputs())
    if (value->hasUses()) outputs.push_back(value);
  std::set<const Value*> from_inputs(graph.inputs().begin(), graph.inputs().end());
  const auto computed_from_inputs = [&](Node* node) {
    std::vector<Value*> read;
    collect_values_read(node, read);
    return std::any_of(read.begin(), read.end(), [&](Value* v) { return from_inputs.count(v) > 0; });
  };
  for (Node* node : graph.nodes()) {
    if (node == last) break;
    const bool from_input = windows && computed_from_inputs(node);
    for (Value* value : node->outputs()) {
      if (from_input) from_inputs.insert(value);
      const bool carries =
          windows ? holds_tensor(value->type()) || from_input : value->type()->isSubtypeOf(*c10::TensorType::get());
      if (!carries) continue;
      for (const torch::jit::Use& use : value->uses()) {
        Node* user = top_level_owner(use.user, graph);
        if (user == graph.return_node() || user->isAfter(last)) {
          outputs.push_back(value);
          break;
        }
      }
    }
  }
  // Nothing read at all (a check, an Exit, at the end of what the prefix hands on): `last`'s own.
  if (outputs.empty()) outputs.assign(last->outputs().begin(), last->outputs().end());
  return outputs;
}

}  // namespace

std::optional<Case> truncated_after(const Case& state, size_t index, PrefixOutputs which) {
  Case truncated = copy_case(state);
  Node* last = cuttable_nodes(*truncated.graph).at(index);
  const std::vector<Value*> outputs =
      which == PrefixOutputs::LastNode
          ? std::vector<Value*>(last->outputs().begin(), last->outputs().end())
          : prefix_outputs(*truncated.graph, last, which == PrefixOutputs::FrontierWithContainers);
  if (outputs.empty()) return std::nullopt;
  while (!truncated.graph->outputs().empty()) truncated.graph->eraseOutput(0);
  for (Value* output : outputs) truncated.graph->registerOutput(output);
  // The suffix goes whole: dead-code elimination keeps nodes with side effects (real models
  // hold a shape check that may raise every few nodes), and everything they read with them.
  while (last->next() != truncated.graph->return_node()) {
    Node* suffix_end = truncated.graph->return_node()->prev();
    suffix_end->destroy();
  }
  if (!normalize(truncated)) return std::nullopt;
  return truncated;
}

void drop_outputs_untouched_from(Case& c, size_t begin) {
  const std::vector<Node*> nodes = cuttable_nodes(*c.graph);
  const std::set<Node*> before(nodes.begin(),
                               nodes.begin() + static_cast<std::ptrdiff_t>(std::min(begin, nodes.size())));
  std::vector<Value*> read;
  for (size_t i = begin; i < nodes.size(); ++i) collect_values_read(nodes[i], read);
  const std::set<Value*> touched(read.begin(), read.end());
  for (size_t i = c.graph->outputs().size(); i-- > 0 && c.graph->outputs().size() > 1;) {
    Value* output = c.graph->outputs()[i];
    if (before.count(output->node()) && !touched.count(output)) c.graph->eraseOutput(i);
  }
}

std::optional<Case> without_outputs(const Case& state, const std::vector<size_t>& indices) {
  if (indices.empty() || indices.size() >= state.graph->outputs().size()) return std::nullopt;
  Case fewer = copy_case(state);
  std::vector<size_t> sorted = indices;
  std::sort(sorted.rbegin(), sorted.rend());
  for (size_t i : sorted) fewer.graph->eraseOutput(i);
  if (!normalize(fewer)) return std::nullopt;
  return fewer;
}

std::optional<Case> graph_from(const Case& state, size_t begin, const ReferenceValues& refs) {
  if (begin == 0) return copy_case(state);
  const size_t n = cuttable_nodes(*state.graph).size();
  std::vector<size_t> before(begin);
  for (size_t i = 0; i < begin; ++i) before[i] = i;
  std::optional<Case> from = with_nodes_cut(state, before, refs, CutMode::DropFeeders);
  // The cut keeps every node from `begin` on, so node k is now node k - begin. Where it is not
  // (an edit libtorch normalized further), no candidate rather than a wrong one.
  if (!from || cuttable_nodes(*from->graph).size() != n - begin) return std::nullopt;
  return from;
}

std::optional<Case> graph_from_folding(const Case& state, size_t begin, const ReferenceValues& refs) {
  const std::vector<Node*> nodes = cuttable_nodes(*state.graph);
  std::map<Node*, size_t> index_of;
  std::set<int64_t> origins;
  for (size_t i = 0; i < nodes.size(); ++i) {
    index_of[nodes[i]] = i;
    const std::optional<int64_t> origin = origin_index(*nodes[i]);
    // A graph whose nodes cannot be told apart (IR text has no origins): only the exact cut.
    if (!origin || !origins.insert(*origin).second) return graph_from(state, begin, refs);
  }
  // Nodes before `begin` whose value a later node needs and no input can hold (SSD's list of
  // image sizes, a list of tuples its transform appends to) stay; so does every node that reads
  // what stays (it may write into it: the loop that appends), and, in turn, what they need that
  // no input can hold. An empty container's node, which stays with its first writer, keeps only
  // the nodes that write into it: one that only reads it (fcos's cat of the boxes a loop appended)
  // goes as any other, its value fed. Kept, such a reader brought what it computes into every
  // window after it (the culprit too, and windows after it failed: fcos's cat took 18 queries for 11).
  std::set<size_t> cut;
  for (size_t i = 0; i < begin; ++i) cut.insert(i);
  const auto is_cut = [&](Node* node) {
    const auto at = index_of.find(node);
    return at != index_of.end() && cut.count(at->second) > 0;
  };
  const auto reads_a_kept_value = [&](size_t i) {
    std::vector<Value*> read;
    collect_values_read(nodes[i], read);
    return std::any_of(read.begin(), read.end(), [&](Value* v) {
      const auto producer = index_of.find(v->node());
      if (producer == index_of.end() || producer->second >= begin || cut.count(producer->second)) return false;
      if (!stays_with_its_writers(v, *state.graph, is_cut)) return true;
      const std::vector<Node*> writers = top_level_writers(v, *state.graph);
      return std::find(writers.begin(), writers.end(), nodes[i]) != writers.end();
    });
  };
  for (bool kept_one = true; kept_one;) {
    kept_one = false;
    for (auto it = cut.rbegin(); it != cut.rend() && !kept_one; ++it) {
      if (reads_a_kept_value(*it)) {
        cut.erase(*it);
        kept_one = true;
        break;
      }
      for (Value* output : nodes[*it]->outputs()) {
        const bool needed = std::any_of(output->uses().begin(), output->uses().end(), [&](const torch::jit::Use& use) {
          Node* owner = top_level_owner(use.user, *state.graph);
          return owner == state.graph->return_node() || !cut.count(index_of.at(owner));
        });
        if (needed && !value_to_feed(output, output->debugName(), *state.graph, refs, is_cut)) {
          cut.erase(*it);
          kept_one = true;
          break;
        }
      }
    }
  }
  if (cut.empty()) return copy_case(state);
  return with_nodes_cut(state, std::vector<size_t>(cut.begin(), cut.end()), refs);
}

std::optional<Case> with_every_node_isolated(const Case& state, const ReferenceValues& refs,
                                             std::vector<IsolatedInput>& leaves) {
  Case iso = copy_case(state);
  const std::vector<Node*> nodes = cuttable_nodes(*iso.graph);
  const std::map<const Value*, std::string> name_in_state = names_in_source(*iso.graph, *state.graph);
  std::map<Value*, IsolatedInput> made;
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::vector<Value*> read;
    collect_values_read(nodes[i], read);
    std::set<Value*> seen;
    for (Value* v : read) {
      const bool made_by_a_node = v->node()->owningBlock() == iso.graph->block() &&
                                  v->node()->kind() != c10::prim::Constant && v->node()->kind() != c10::prim::Param;
      if (!made_by_a_node || !v->type()->isSubtypeOf(*c10::TensorType::get()) || !seen.insert(v).second) continue;
      const std::string& name = name_in_state.at(v);
      const std::optional<c10::IValue> ref = refs.find(name);
      if (!ref || !can_be_graph_input(*ref)) continue;  // stays connected
      Value* leaf = iso.graph->addInput();
      leaf->setType(v->type());
      const std::vector<torch::jit::Use> uses = v->uses();
      for (const torch::jit::Use& use : uses)
        if (top_level_owner(use.user, *iso.graph) == nodes[i]) use.user->replaceInput(use.offset, leaf);
      iso.inputs.push_back(spec_from_value(leaf->debugName(), *ref));
      iso.values->push_back(*ref);
      made[leaf] = IsolatedInput{i, name};
    }
  }
  // A leaf that requires grad cannot be written in place (resnet's relu_ on a batch norm's
  // output): the reader gets a copy of it, still a leaf's gradient away.
  const std::vector<bool> written = inputs_maybe_written(*iso.graph);
  for (size_t i = 0; i < written.size(); ++i) {
    Value* input = iso.graph->inputs()[i];
    if (!written[i] || !made.count(input)) continue;
    torch::jit::WithInsertPoint at_start(iso.graph->block()->nodes().front());
    Node* copy =
        iso.graph->insertNode(iso.graph->create(c10::aten::clone, {input, iso.graph->insertConstant(c10::IValue())}));
    copy->output()->setType(input->type());
    input->replaceAllUsesAfterNodeWith(copy, copy->output());
  }
  std::set<Value*> returned(iso.graph->outputs().begin(), iso.graph->outputs().end());
  for (Node* node : nodes)
    for (Value* v : node->outputs())
      if (v->type()->isSubtypeOf(*c10::TensorType::get()) && returned.insert(v).second) iso.graph->registerOutput(v);
  if (made.empty() || !normalize(iso)) return std::nullopt;
  leaves.clear();
  for (Value* input : iso.graph->inputs()) {
    const auto leaf = made.find(input);
    leaves.push_back(leaf != made.end() ? leaf->second : IsolatedInput{});
  }
  return iso;
}

}  // namespace tsrepro
