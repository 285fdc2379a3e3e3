// The strict_fusion block's two forms: runner/graph/strict_fusion.h says which and why.

#include "runner/graph/strict_fusion.h"

#include <algorithm>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <torch/csrc/jit/api/compilation_unit.h>
#include <torch/csrc/jit/ir/constants.h>

#include "runner/graph/nested_nodes.h"

namespace tsrepro {
namespace {

using torch::jit::Block;
using torch::jit::Node;
using torch::jit::Value;

// The name CheckStrictFusion compares with (after dropping the ___torch_mangle_N a loaded
// module's classes may carry, as its getModuleName does).
const char* const kStrictFusionClassName = "__torch__.torch.jit.strict_fusion";

bool is_strict_fusion_type(const c10::TypePtr& type) {
  const auto cls = type->cast<c10::ClassType>();
  if (!cls || !cls->name()) return false;
  static const std::regex mangle("___torch_mangle_\\d+\\.");
  return std::regex_replace(cls->name()->qualifiedName(), mangle, "") == kStrictFusionClassName;
}

bool enters_or_exits(const Node* node) { return node->kind() == c10::prim::Enter || node->kind() == c10::prim::Exit; }

// Each use of `from` by an Enter or Exit reads `to` instead; those nodes' outputs become NoneType
// (the value of a strict_fusion's __enter__ and __exit__).
void redirect_block_uses(Value* from, Value* to) {
  for (const torch::jit::Use& use : std::vector<torch::jit::Use>(from->uses())) {
    if (!enters_or_exits(use.user)) continue;
    use.user->replaceInput(use.offset, to);
    for (Value* output : use.user->outputs()) output->setType(c10::NoneType::get());
  }
}

}  // namespace

c10::ClassTypePtr strict_fusion_class() {
  static const std::shared_ptr<torch::jit::CompilationUnit> unit = std::make_shared<torch::jit::CompilationUnit>();
  static const c10::ClassTypePtr cls = [] {
    c10::ClassTypePtr type = c10::ClassType::create(c10::QualifiedName(kStrictFusionClassName), unit);
    unit->register_type(type);
    auto add_method = [&](const std::string& name, size_t arguments) {
      auto graph = std::make_shared<torch::jit::Graph>();
      graph->addInput("self")->setType(type);
      for (size_t i = 0; i < arguments; ++i) graph->addInput()->setType(c10::AnyType::get());
      graph->registerOutput(graph->insertConstant(c10::IValue()));
      type->addMethod(unit->create_function(c10::QualifiedName(*type->name(), name), graph));
    };
    add_method("__init__", 0);
    add_method("__enter__", 0);
    add_method("__exit__", 3);  // type, value, traceback
    return type;
  }();
  return cls;
}

bool is_strict_fusion_marker(const Value* value) {
  if (value->node()->kind() != c10::prim::Constant || value->type()->kind() != c10::TypeKind::StringType) return false;
  const c10::optional<c10::IValue> text = torch::jit::toIValue(value);
  return text && text->isString() && text->toStringRef() == kStrictFusionMarker;
}

bool has_strict_fusion_blocks(const torch::jit::Graph& graph) {
  // nested_nodes walks a block it may hand out for editing; this walk only reads.
  const std::vector<Node*> nodes = nested_nodes(const_cast<torch::jit::Graph&>(graph).block());
  return std::any_of(nodes.begin(), nodes.end(), [](const Node* node) {
    return node->kind() == c10::prim::Enter && is_strict_fusion_marker(node->input(0));
  });
}

size_t mark_strict_fusion_blocks(torch::jit::Graph& graph) {
  size_t marked = 0;
  for (Node* enter : nested_nodes(graph.block())) {
    if (enter->kind() != c10::prim::Enter) continue;
    Value* object = enter->input(0);
    if (!is_strict_fusion_type(object->type())) continue;
    torch::jit::WithInsertPoint here(enter);
    redirect_block_uses(object, graph.insertConstant(std::string(kStrictFusionMarker)));
    if (!object->hasUses() && object->node()->kind() == c10::prim::CreateObject) object->node()->destroy();
    ++marked;
  }
  return marked;
}

void recreate_strict_fusion_objects(torch::jit::Graph& graph) {
  for (Node* constant : nested_nodes(graph.block())) {
    if (constant->outputs().size() != 1 || !is_strict_fusion_marker(constant->output())) continue;
    bool read_by_block = false;
    for (const torch::jit::Use& use : constant->output()->uses()) read_by_block |= enters_or_exits(use.user);
    if (!read_by_block) continue;
    torch::jit::WithInsertPoint here(constant);
    Node* create = graph.insertNode(graph.create(c10::prim::CreateObject));
    create->output()->setType(strict_fusion_class());
    redirect_block_uses(constant->output(), create->output());
  }
}

namespace {

bool drop_unpaired_in(Block* block) {
  bool dropped = false;
  std::vector<Node*> open;  // Enters not yet exited, innermost last
  std::vector<Node*> unpaired;
  for (Node* node : block->nodes()) {
    for (Block* inner : node->blocks()) dropped |= drop_unpaired_in(inner);
    if (node->kind() == c10::prim::Enter) {
      open.push_back(node);
    } else if (node->kind() == c10::prim::Exit) {
      if (!open.empty() && open.back()->input(0) == node->input(0))
        open.pop_back();
      else
        unpaired.push_back(node);
    }
  }
  unpaired.insert(unpaired.end(), open.begin(), open.end());
  for (Node* node : unpaired) {
    if (node->hasUses()) continue;  // its value is read: not the minifier's to drop
    node->destroy();
    dropped = true;
  }
  return dropped;
}

}  // namespace

bool drop_unpaired_block_ends(torch::jit::Graph& graph) { return drop_unpaired_in(graph.block()); }

}  // namespace tsrepro
