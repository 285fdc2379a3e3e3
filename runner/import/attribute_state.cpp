// thread_attribute_writes: a module's attribute writes as values threaded through the graph
// (runner/import/attribute_state.h says why and how).

#include "runner/import/attribute_state.h"

#include <set>
#include <vector>

#include <torch/csrc/jit/ir/ir.h>

#include "runner/import/module_lifting.h"
#include "tsrepro/error.h"

namespace tsrepro {
namespace {

using torch::jit::Block;
using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

class AttributeThreader {
 public:
  AttributeThreader(const AttributeResolver& resolver, std::string path, c10::TypePtr type, std::string origin)
      : resolver_(resolver), path_(std::move(path)), type_(std::move(type)), origin_(std::move(origin)) {}

  // Rewrites `block` given the attribute's value on entry; returns its value on exit.
  Value* thread(Block* block, Value* current) {
    const std::vector<Node*> nodes(block->nodes().begin(), block->nodes().end());
    for (Node* node : nodes) {
      if (accesses_this(node, c10::prim::GetAttr)) {
        node->output()->replaceAllUsesWith(current);
        node->destroy();
      } else if (accesses_this(node, c10::prim::SetAttr)) {
        current = node->input(1);
        node->destroy();
      } else if (!node->blocks().empty()) {
        current = thread_through(node, current);
      }
    }
    return current;
  }

 private:
  bool accesses_this(Node* node, c10::Symbol kind) const {
    return node->kind() == kind && resolver_.path_of(node) == path_;
  }

  bool writes_inside(Node* node) const {
    for (Block* block : node->blocks())
      for (Node* write : nodes_of_kind(block, c10::prim::SetAttr))
        if (resolver_.path_of(write) == path_) return true;
    return false;
  }

  Value* thread_through(Node* node, Value* current) {
    if (!writes_inside(node)) {  // reads only: every block sees the value on entry
      for (Block* block : node->blocks()) thread(block, current);
      return current;
    }
    if (node->kind() == c10::prim::If) {
      for (Block* branch : node->blocks()) branch->registerOutput(thread(branch, current));
      return node->addOutput()->setType(type_);
    }
    if (node->kind() == c10::prim::Loop) {
      // Loop inputs (trip count, condition, carried...), body inputs (iteration, carried...) and
      // body outputs (condition, carried...) each get the attribute as their last carried value.
      Block* body = node->blocks().at(0);
      node->addInput(current);
      Value* on_entry = body->addInput()->setType(type_);
      body->registerOutput(thread(body, on_entry));
      return node->addOutput()->setType(type_);
    }
    throw UserError(origin_ + ": the attribute " + path_ + " is written inside " + describe_node(node) +
                    ", whose blocks tsrepro cannot thread a value through");
  }

  const AttributeResolver& resolver_;
  std::string path_;
  c10::TypePtr type_;
  std::string origin_;
};

// Whether every use of `object` reads or writes one of its attributes directly.
bool only_attribute_accesses(const Value* object) {
  for (const torch::jit::Use& use : object->uses())
    if ((use.user->kind() != c10::prim::GetAttr && use.user->kind() != c10::prim::SetAttr) || use.offset != 0)
      return false;
  return true;
}

// A tuple that packs an object only to unpack it again (a function returning (image_list,
// targets), inlined) is no use of the object: each unpacked value becomes the packed one. Only
// tuples that hold `object` are touched; the rest of the graph stays as the model wrote it.
void unpack_tuples_holding(Value* object) {
  const std::vector<torch::jit::Use> uses = object->uses();
  for (const torch::jit::Use& use : uses) {
    Node* tuple = use.user;
    if (tuple->kind() != c10::prim::TupleConstruct) continue;
    const std::vector<torch::jit::Use> unpacks = tuple->output()->uses();
    for (const torch::jit::Use& unpack : unpacks) {
      if (unpack.user->kind() != c10::prim::TupleUnpack) continue;
      for (size_t i = 0; i < unpack.user->outputs().size(); ++i)
        unpack.user->output(i)->replaceAllUsesWith(tuple->input(i));
      unpack.user->destroy();
    }
    if (!tuple->output()->hasUses()) tuple->destroy();
  }
}

}  // namespace

void thread_created_object_attributes(Graph& graph, const std::string& origin) {
  for (Node* create : nodes_of_kind(graph.block(), c10::prim::CreateObject)) {
    Value* object = create->output();
    unpack_tuples_holding(object);
    if (!only_attribute_accesses(object)) continue;  // it escapes: left as it is (and refused later)
    const auto class_type = object->type()->expect<c10::ClassType>();
    std::set<std::string> names;
    for (const torch::jit::Use& use : object->uses()) names.insert(use.user->s(c10::attr::name));
    for (const std::string& name : names) {
      AttributeResolver resolver;
      resolver.path_of = [object](Node* access) -> std::optional<std::string> {
        if (access->input(0) != object) return std::nullopt;
        return access->s(c10::attr::name);
      };
      const c10::TypePtr type = class_type->getAttribute(name);
      resolver.declared_type = [type](Node*) { return type; };
      // The object lives in the block that creates it (it does not escape): its attributes are
      // threaded there, from the constructor on. Before the constructor writes one, it holds
      // nothing; that value stays only where a write sits in a branch of its own.
      torch::jit::WithInsertPoint at_creation(create);
      Value* unset = graph.insertNode(graph.createUninitialized(type))->output();
      AttributeThreader(resolver, name, type, origin).thread(create->owningBlock(), unset);
      if (!unset->hasUses()) unset->node()->destroy();
    }
    create->destroy();
  }
}

namespace {

// The writes to modules' attributes. An object of a plain class the graph creates is written by
// its constructor: runner/import/object_tuples.h makes it a tuple once the module writes are threaded.
std::vector<Node*> module_attribute_writes(Graph& graph) {
  std::vector<Node*> writes;
  for (Node* write : nodes_of_kind(graph.block(), c10::prim::SetAttr)) {
    const auto cls = write->input(0)->type()->cast<c10::ClassType>();
    if (!cls || cls->is_module()) writes.push_back(write);
  }
  return writes;
}

}  // namespace

void thread_attribute_writes(Graph& graph, const AttributeResolver& resolver, const std::string& origin) {
  // One attribute at a time, each pass destroying that attribute's writes, until none is left.
  for (std::vector<Node*> writes = module_attribute_writes(graph); !writes.empty();
       writes = module_attribute_writes(graph)) {
    Node* write = writes.front();
    const std::optional<std::string> path = resolver.path_of(write);
    if (!path)
      throw UserError(origin + ": " + describe_node(write) + " writes an attribute of a module that cannot be known " +
                      "before the program runs");
    Value* initial = nullptr;
    {
      torch::jit::WithInsertPoint top(graph.block()->nodes().front());
      initial = resolver.initial_value(*path, write);
    }
    AttributeThreader(resolver, *path, resolver.declared_type(write), origin).thread(graph.block(), initial);
  }
}

}  // namespace tsrepro
