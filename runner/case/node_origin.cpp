// node_origin.h: numbering the imported graph's nodes and reading where each came from.

#include <algorithm>

#include <torch/csrc/jit/ir/scope.h>
#include <torch/csrc/jit/runtime/autodiff.h>
#include <torch/script.h>

#include "runner/formats/ir_comment_text.h"
#include "tsrepro/case.h"
#include "tsrepro/error.h"
#include "tsrepro/limits.h"
#include "tsrepro/node_origin.h"

namespace tsrepro {
namespace {

const c10::Symbol kOriginAttribute = c10::Symbol::attr("tsrepro_origin");
const c10::Symbol kFlagsAttribute = c10::Symbol::attr("tsrepro_flags");

void numbered_nodes(torch::jit::Block* block, std::vector<torch::jit::Node*>& out) {
  for (torch::jit::Node* node : block->nodes()) {
    if (node->kind() != c10::prim::Constant) out.push_back(node);
    for (torch::jit::Block* inner : node->blocks()) numbered_nodes(inner, out);
  }
}

void numbered_nodes(const torch::jit::Block* block, std::vector<const torch::jit::Node*>& out) {
  for (const torch::jit::Node* node : block->nodes()) {
    if (node->kind() != c10::prim::Constant) out.push_back(node);
    for (const torch::jit::Block* inner : node->blocks()) numbered_nodes(inner, out);
  }
}

// How far call_frames looks for a sibling that tells a node's call stack.
constexpr int kSiblingSearch = 64;

using Frames = std::vector<torch::jit::InlinedCallStackEntry>;  // outermost first

// The part of `other`'s call stack that leads into the code `source` holds: all of it when
// `other` is written there too, else the frames before its first call made from there.
std::optional<Frames> frames_into(const torch::jit::Node& other, const std::shared_ptr<torch::jit::Source>& source) {
  if (other.kind() == c10::prim::Constant || !other.callstack()) return std::nullopt;
  Frames all = (*other.callstack())->vec();
  if (other.sourceRange().source() == source) return all;
  for (size_t k = 0; k < all.size(); ++k)
    if (std::get<1>(all[k]).source() == source)
      return Frames(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k));
  return std::nullopt;
}

// The nearest node of the same block, before or after, whose call stack tells this one's.
std::optional<Frames> frames_from_siblings(const torch::jit::Node& node) {
  const auto source = node.sourceRange().source();
  if (!source) return std::nullopt;
  const torch::jit::Node* before = node.prev();
  const torch::jit::Node* after = node.next();
  for (int step = 0; step < kSiblingSearch && (before != nullptr || after != nullptr); ++step) {
    if (before != nullptr && before->kind() == c10::prim::Param) before = nullptr;
    if (after != nullptr && after->kind() == c10::prim::Return) after = nullptr;
    if (before != nullptr) {
      if (auto frames = frames_into(*before, source)) return frames;
      before = before->prev();
    }
    if (after != nullptr) {
      if (auto frames = frames_into(*after, source)) return frames;
      after = after->next();
    }
  }
  return std::nullopt;
}

// The frames of `frames` (the call stack of a node written in `frames_source`) that lead into
// the code `target` holds: all of them when that node is written there too, else those before
// the first call made from there. Sources are per file, so two functions of one file pass for
// one: at worst a method call inside the same file is left out.
Frames leading_into(const Frames& frames, const std::shared_ptr<torch::jit::Source>& frames_source,
                    const std::shared_ptr<torch::jit::Source>& target) {
  if (frames_source == target) return frames;
  for (size_t k = 0; k < frames.size(); ++k)
    if (std::get<1>(frames[k]).source() == target)
      return Frames(frames.begin(), frames.begin() + static_cast<std::ptrdiff_t>(k));
  return frames;
}

// The call stack of the node, outermost call first. libtorch 1.13's inliner gives a complete one
// only to the nodes with outputs in an inlined body's own block. A top-level node without one
// (a batch norm's output-less `if self.training:`) takes it from a sibling of the same body, or
// from a sibling that body called into. A node inside a block keeps the stack it had before its
// function was inlined (`_verify_batch_size` inside `F.batch_norm`, but not the module that
// called `F.batch_norm`), or none: the frames that lead to the If/Loop around it come first.
Frames call_frames(const torch::jit::Node& node) {
  const torch::jit::Node* owner = node.owningBlock()->owningNode();
  if (owner == nullptr) {
    if (node.callstack()) return (*node.callstack())->vec();
    return frames_from_siblings(node).value_or(Frames{});
  }
  const Frames outer = call_frames(*owner);
  const auto owner_source = owner->sourceRange().source();
  if (!node.callstack()) return leading_into(outer, owner_source, node.sourceRange().source());
  const Frames own = (*node.callstack())->vec();
  if (own.empty()) return outer;
  Frames all = leading_into(outer, owner_source, std::get<1>(own.front()).source());
  all.insert(all.end(), own.begin(), own.end());
  return all;
}

// A scripted module's node, inlined: the module instances its call stack went through, outer
// first ("layer1", "0", "bn1"). A call of a method on the same module adds no name.
std::string module_path_from_call_stack(const Frames& frames) {
  std::string path;
  for (const torch::jit::InlinedCallStackEntry& entry : frames) {
    const auto& instance = std::get<2>(entry);
    if (!instance) continue;
    const std::string name = instance->instance_name();
    if (name.empty() || name == "self" || name == "SELF") continue;  // a method of the same module
    path += (path.empty() ? "" : ".") + name;
  }
  return path;
}

// A traced module's node: its scope's last name, "__module.layer1.0.bn1" (the tracer writes the
// full attribute path into each name).
std::string module_path_from_scope(torch::jit::Node& node) {  // Node::scope() is not const
  const torch::jit::ScopePtr scope = node.scope();
  if (!scope || scope->isBlank()) return "";
  std::string name = scope->name().toUnqualString();
  const std::string prefix = "__module.";
  if (name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
  return name == "__module" ? "" : name;
}

struct Frame {
  std::string file;
  int64_t line = 0;
  int64_t column = 0;
};

// A loaded module's ranges point into its serialized code; the range that generated that code is
// the user's own line.
std::optional<Frame> frame_of(const torch::jit::SourceRange& range) {
  const auto generated_by = range.findSourceRangeThatGenerated();
  const auto location = (generated_by ? *generated_by : range).file_line_col();
  if (!location || std::get<0>(*location).empty()) return std::nullopt;
  return Frame{std::get<0>(*location), static_cast<int64_t>(std::get<1>(*location)),
               static_cast<int64_t>(std::get<2>(*location))};
}

// torch's own Python files (torch/nn/modules/conv.py, torch/nn/functional.py): where a module's
// op is written, not where the model uses it.
bool in_torch_itself(const std::string& file) {
  return file.find("/torch/") != std::string::npos || file.rfind("torch/", 0) == 0;
}

void read_source_locations(const torch::jit::Node& node, const Frames& calls, NodeOrigin& origin) {
  std::vector<Frame> frames;  // innermost first
  if (auto own = frame_of(node.sourceRange())) frames.push_back(*own);
  for (auto entry = calls.rbegin(); entry != calls.rend(); ++entry)
    if (auto call_site = frame_of(std::get<1>(*entry))) frames.push_back(*call_site);
  if (frames.empty()) return;
  origin.op_file = frames.front().file;
  origin.op_line = frames.front().line;
  const auto model_frame =
      std::find_if(frames.begin(), frames.end(), [](const Frame& f) { return !in_torch_itself(f.file); });
  const Frame& chosen = model_frame != frames.end() ? *model_frame : frames.front();
  origin.file = chosen.file;
  origin.line = chosen.line;
  origin.column = chosen.column;
}

}  // namespace

std::shared_ptr<const NodeOrigins> record_import_origins(torch::jit::Graph& graph) {
  std::vector<torch::jit::Node*> nodes;
  numbered_nodes(graph.block(), nodes);
  auto table = std::make_shared<NodeOrigins>();
  table->reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeOrigin origin;
    origin.index = static_cast<int64_t>(i);
    origin.kind = nodes[i]->kind().toQualString();
    const Frames calls = call_frames(*nodes[i]);
    read_source_locations(*nodes[i], calls, origin);
    origin.module_path = module_path_from_call_stack(calls);
    if (origin.module_path.empty()) origin.module_path = module_path_from_scope(*nodes[i]);
    set_origin_index(*nodes[i], origin.index);
    table->push_back(std::move(origin));
  }
  return table;
}

std::shared_ptr<const NodeOrigins> renumber_origins(torch::jit::Graph& graph, const NodeOrigins* from) {
  std::vector<torch::jit::Node*> nodes;
  numbered_nodes(graph.block(), nodes);
  std::vector<std::optional<int64_t>> earlier(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) earlier[i] = origin_index(*nodes[i]);
  std::shared_ptr<const NodeOrigins> read = record_import_origins(graph);
  if (from == nullptr) return read;
  auto table = std::make_shared<NodeOrigins>(*read);
  for (size_t i = 0; i < table->size(); ++i)
    if (const NodeOrigin* kept = origin_numbered(from, earlier[i])) {
      (*table)[i] = *kept;
      (*table)[i].index = static_cast<int64_t>(i);
    }
  return table;
}

std::optional<int64_t> origin_index(const torch::jit::Node& node) {
  if (!node.hasAttribute(kOriginAttribute)) return std::nullopt;
  return node.i(kOriginAttribute);
}

const NodeOrigin* origin_numbered(const NodeOrigins* table, std::optional<int64_t> index) {
  if (table == nullptr || !index || *index < 0 || static_cast<size_t>(*index) >= table->size()) return nullptr;
  const NodeOrigin& origin = (*table)[static_cast<size_t>(*index)];
  return origin.index == *index ? &origin : nullptr;  // a hole of a table read for fewer nodes
}

void set_origin_index(torch::jit::Node& node, int64_t index) { node.i_(kOriginAttribute, index); }

bool has_flag(const torch::jit::Node& node, NodeFlag flag) {
  return node.hasAttribute(kFlagsAttribute) && (node.i(kFlagsAttribute) & static_cast<int64_t>(flag)) != 0;
}

void set_flag(torch::jit::Node& node, NodeFlag flag) {
  const int64_t flags = node.hasAttribute(kFlagsAttribute) ? node.i(kFlagsAttribute) : 0;
  node.i_(kFlagsAttribute, flags | static_cast<int64_t>(flag));
}

std::optional<size_t> next_of_kind(const std::vector<std::string>& kinds, const std::string& kind, size_t& cursor) {
  for (size_t k = cursor; k < kinds.size(); ++k) {
    if (kinds[k] != kind) continue;
    cursor = k + 1;
    return k;
  }
  return std::nullopt;
}

MarkedGradient differentiate_marked(torch::jit::Graph& graph) {
  std::vector<const torch::jit::Node*> originals;
  numbered_nodes(static_cast<const torch::jit::Block*>(graph.block()), originals);
  std::shared_ptr<torch::jit::Graph> copy = graph.copy();
  torch::jit::Gradient gradient = torch::jit::differentiate(copy);

  // The forward nodes autodiff made anew take their originals' numbers (next_of_kind).
  std::vector<std::string> kinds;
  for (const torch::jit::Node* original : originals) kinds.push_back(original->kind().toQualString());
  std::vector<torch::jit::Node*> forward_nodes;
  numbered_nodes(gradient.f->block(), forward_nodes);
  size_t cursor = 0;
  for (torch::jit::Node* node : forward_nodes) {
    if (origin_index(*node)) continue;
    if (const std::optional<size_t> k = next_of_kind(kinds, node->kind().toQualString(), cursor))
      if (const std::optional<int64_t> index = origin_index(*originals[*k])) set_origin_index(*node, *index);
  }
  std::vector<torch::jit::Node*> backward_nodes;
  numbered_nodes(gradient.df->block(), backward_nodes);
  for (torch::jit::Node* node : backward_nodes) set_flag(*node, NodeFlag::Backward);
  return {gradient.f, gradient.df};
}

std::string origin_comment(const NodeOrigin& origin) {
  std::string text;
  if (!origin.file.empty())
    text = ir_comment_text(origin.file) + ":" + std::to_string(origin.line) + ":" + std::to_string(origin.column) + " ";
  if (!origin.module_path.empty()) text += ir_comment_text(origin.module_path) + " ";
  return text + "(node " + std::to_string(origin.index) + ")";
}

std::optional<int64_t> index_in_origin_comment(const std::string& comment) {
  static const std::string marker = "(node ";
  const size_t at = comment.rfind(marker);
  if (at == std::string::npos) return std::nullopt;
  const size_t digits = at + marker.size();
  const size_t close = comment.find(')', digits);
  if (close == std::string::npos || close == digits) return std::nullopt;
  const std::string number = comment.substr(digits, close - digits);
  if (number.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoll(number);
}

std::vector<NodeOrigin> origins_in_graph(const torch::jit::Graph& graph, const NodeOrigins& table) {
  std::vector<const torch::jit::Node*> nodes;
  numbered_nodes(graph.block(), nodes);
  std::vector<NodeOrigin> out;
  for (const torch::jit::Node* node : nodes) {
    if (packs_constants_only(*node)) continue;  // a literal, not one of the nodes left
    if (const NodeOrigin* origin = origin_numbered(&table, origin_index(*node))) out.push_back(*origin);
  }
  return out;
}

nlohmann::json origin_to_json(const NodeOrigin& o) {
  return {{"index", o.index},   {"kind", o.kind},       {"file", o.file},       {"line", o.line},
          {"column", o.column}, {"op_file", o.op_file}, {"op_line", o.op_line}, {"module_path", o.module_path}};
}

NodeOrigin origin_from_json(const nlohmann::json& j) {
  NodeOrigin o;
  o.index = j.at("index").get<int64_t>();
  o.kind = j.value("kind", "");
  o.file = j.value("file", "");
  o.line = j.value("line", int64_t{0});
  o.column = j.value("column", int64_t{0});
  o.op_file = j.value("op_file", "");
  o.op_line = j.value("op_line", int64_t{0});
  o.module_path = j.value("module_path", "");
  return o;
}

nlohmann::json origins_to_json(const NodeOrigins& table) {
  nlohmann::json array = nlohmann::json::array();
  for (const NodeOrigin& o : table) array.push_back(origin_to_json(o));
  return array;
}

nlohmann::json origins_to_json(const torch::jit::Graph& graph, const NodeOrigins& table) {
  std::vector<const torch::jit::Node*> nodes;
  numbered_nodes(graph.block(), nodes);
  std::vector<int64_t> numbers;
  for (const torch::jit::Node* node : nodes)
    if (const NodeOrigin* origin = origin_numbered(&table, origin_index(*node))) numbers.push_back(origin->index);
  std::sort(numbers.begin(), numbers.end());
  numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
  nlohmann::json array = nlohmann::json::array();
  for (int64_t number : numbers) array.push_back(origin_to_json(table[static_cast<size_t>(number)]));
  return array;
}

std::shared_ptr<const NodeOrigins> origins_from_json(const nlohmann::json& array, const std::string& where) {
  if (!array.is_array()) throw UserError(where + ": node origins must be a JSON array");
  auto table = std::make_shared<NodeOrigins>();
  int64_t last = -1;
  for (const nlohmann::json& entry : array) {
    NodeOrigin origin = origin_from_json(entry);
    // Entries in number order; numbers left out (nodes a minified graph no longer has) are holes.
    if (origin.index <= last || origin.index >= static_cast<int64_t>(limits::kMaxGraphNodes))
      throw UserError(where + ": node origin entry " + std::to_string(table->size()) + " is numbered " +
                      std::to_string(origin.index) +
                      (origin.index <= last ? ", not after " + std::to_string(last) : ""));
    last = origin.index;
    table->resize(static_cast<size_t>(origin.index) + 1);
    (*table)[static_cast<size_t>(origin.index)] = std::move(origin);
  }
  return table;
}

}  // namespace tsrepro
