// Rewrites a graph so that its IR text reads back (see ir_representable.h).

#include <torch/script.h>

#include "runner/import/ir_representable.h"
#include "runner/import/module_lifting.h"
#include "tsrepro/error.h"

namespace tsrepro {
namespace {

using torch::jit::Block;
using torch::jit::Node;
using torch::jit::Value;

// Types IR text has no name for: user classes, interfaces, functions, named tuples.
bool is_nominal(const c10::TypePtr& type) {
  if (type->cast<c10::ClassType>() || type->cast<c10::InterfaceType>() || type->cast<c10::FunctionType>()) return true;
  if (auto tuple = type->cast<c10::TupleType>()) return tuple->name().has_value();
  return false;
}

bool mentions_nominal(const c10::TypePtr& type) {
  if (is_nominal(type)) return true;
  for (const c10::TypePtr& inner : type->containedTypes())
    if (mentions_nominal(inner)) return true;
  return false;
}

// The same type with every named tuple inside it made a plain tuple.
c10::TypePtr without_tuple_names(const c10::TypePtr& type) {
  std::vector<c10::TypePtr> contained;
  for (const c10::TypePtr& inner : type->containedTypes()) contained.push_back(without_tuple_names(inner));
  if (auto tuple = type->cast<c10::TupleType>()) return c10::TupleType::create(contained);
  return contained.empty() ? type : type->withContained(contained);
}

void drop_unused_nominal_constants(Block* block) {
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    Node* node = *it++;
    for (Block* inner : node->blocks()) drop_unused_nominal_constants(inner);
    if (node->kind() == c10::prim::Constant && !node->output()->hasUses() && is_nominal(node->output()->type()))
      node->destroy();
  }
}

void retype_values(Value* value, const std::string& origin, Node* owner) {
  const c10::TypePtr& type = value->type();
  if (!mentions_nominal(type)) return;
  c10::TypePtr plain = without_tuple_names(type);
  if (mentions_nominal(plain)) {
    const std::string where = owner ? describe_node(owner) : "graph input %" + value->debugName();
    throw UserError(origin + ": " + where + " has a value of type " + type->repr_str() +
                    ", which TorchScript IR text cannot name (a class, interface or function object)");
  }
  value->setType(plain);
}

void retype_block(Block* block, const std::string& origin) {
  for (Value* input : block->inputs()) retype_values(input, origin, block->owningNode());  // top block: graph inputs
  for (Node* node : block->nodes()) {
    for (Value* output : node->outputs()) retype_values(output, origin, node);
    for (Block* inner : node->blocks()) retype_block(inner, origin);
  }
}

// The interpreter pops aten::warn's stacklevel as if it were the message when the node has no
// source file (libtorch 1.13, WARN instruction), which every graph read from IR text lacks:
// "Expected String but got Int". The one-argument form has no schema for alias analysis, so the
// executor refuses it. A warning changes no value and raises nothing: it goes.
void drop_warnings(Block* block) {
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    Node* node = *it++;
    for (Block* inner : node->blocks()) drop_warnings(inner);
    if (node->kind() == c10::aten::warn) node->destroy();
  }
}

}  // namespace

void make_ir_representable(torch::jit::Graph& graph, const std::string& origin) {
  drop_unused_nominal_constants(graph.block());
  retype_block(graph.block(), origin);
  drop_warnings(graph.block());
}

}  // namespace tsrepro
