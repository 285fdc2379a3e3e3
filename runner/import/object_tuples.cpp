// created_objects_as_tuples: objects the graph creates and passes around as values become tuples
// of their attributes (runner/import/object_tuples.h says when and why).

#include "runner/import/object_tuples.h"

#include <functional>
#include <map>
#include <set>
#include <vector>

#include <torch/csrc/jit/ir/ir.h>

#include "runner/import/module_lifting.h"
#include "runner/graph/nested_nodes.h"

namespace tsrepro {
namespace {

using torch::jit::Block;
using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

// Through structural types only: another class (a module holding an Optional[C] attribute) is
// its own nominal type, and keeps its attributes' types.
bool mentions(const c10::TypePtr& type, const c10::ClassType* cls) {
  if (type.get() == cls) return true;
  if (type->cast<c10::ClassType>()) return false;
  for (const c10::TypePtr& inner : type->containedTypes())
    if (mentions(inner, cls)) return true;
  return false;
}

// `type` with `cls` replaced by `replacement` wherever it occurs (Optional[C], List[C], ...).
c10::TypePtr substituted(const c10::TypePtr& type, const c10::ClassType* cls, const c10::TypePtr& replacement) {
  if (type.get() == cls) return replacement;
  const auto contained = type->containedTypes();
  if (contained.empty() || !mentions(type, cls)) return type;
  std::vector<c10::TypePtr> replaced;
  for (const c10::TypePtr& inner : contained) replaced.push_back(substituted(inner, cls, replacement));
  return type->withContained(replaced);
}

void for_each_value(Block* block, const std::function<void(Value*)>& visit) {
  for (Value* input : block->inputs()) visit(input);
  for (Node* node : block->nodes()) {
    for (Value* output : node->outputs()) visit(output);
    for (Block* inner : node->blocks()) for_each_value(inner, visit);
  }
}

// Whether `node`, or a node or block output nested in it, uses `value`.
bool uses_within(Node* node, const Value* value) {
  for (const Value* input : node->inputs())
    if (input == value) return true;
  for (Block* block : node->blocks()) {
    if (uses_within(block->return_node(), value)) return true;
    for (Node* inner : block->nodes())
      if (uses_within(inner, value)) return true;
  }
  return false;
}

// One object's construction: the attribute writes right after prim::CreateObject, in its block,
// before anything else uses the object; the tuple goes in before that first other use.
struct Construction {
  Node* create = nullptr;
  std::vector<Node*> writes;
  Node* first_use = nullptr;  // the block's return node when nothing else uses it there
};

Construction construction_of(Node* create) {
  Construction found{create, {}, create->owningBlock()->return_node()};
  Value* object = create->output();
  for (Node* node = create->next(); node != create->owningBlock()->return_node(); node = node->next()) {
    if (node->kind() == c10::prim::SetAttr && node->input(0) == object) {
      found.writes.push_back(node);
    } else if (uses_within(node, object)) {
      found.first_use = node;
      break;
    }
  }
  return found;
}

// Nodes that would see a tuple where the program has an object: calls that were not inlined (their
// callee expects the class), isinstance tests and a with statement's enter and exit.
bool needs_the_object(const Node* node) {
  return node->kind() == c10::prim::CallMethod || node->kind() == c10::prim::CallFunction ||
         node->kind() == c10::prim::isinstance || node->kind() == c10::prim::Enter ||
         node->kind() == c10::prim::Exit;
}

class ClassAsTuple {
 public:
  ClassAsTuple(Graph& graph, c10::ClassTypePtr cls) : graph_(graph), cls_(std::move(cls)) {
    std::vector<c10::TypePtr> types;
    for (size_t i = 0; i < cls_->numAttributes(); ++i) types.push_back(cls_->getAttribute(i));
    tuple_ = c10::TupleType::create(types);
  }

  // Whether every object of the class is written only by its constructor and read only as a
  // value (see object_tuples.h).
  bool convertible(const std::vector<Node*>& creates) {
    std::set<Node*> constructor_writes;
    for (Node* create : creates) {
      constructions_.push_back(construction_of(create));
      constructor_writes.insert(constructions_.back().writes.begin(), constructions_.back().writes.end());
    }
    bool ok = true;
    for (Node* node : nested_nodes(graph_.block())) {
      for (const Value* input : node->inputs()) {
        if (!mentions(input->type(), cls_.get())) continue;
        if (needs_the_object(node)) ok = false;
        if (node->kind() == c10::prim::SetAttr && input == node->input(0) && !constructor_writes.count(node))
          ok = false;  // written after its constructor: a tuple would not see the write
      }
    }
    return ok;
  }

  void convert() {
    std::vector<Node*> reads;
    for (Node* node : nested_nodes(graph_.block()))
      if (node->kind() == c10::prim::GetAttr && node->input(0)->type().get() == cls_.get()) reads.push_back(node);
    for (const Construction& construction : constructions_) build_tuple(construction);
    for_each_value(graph_.block(),
                   [&](Value* value) { value->setType(substituted(value->type(), cls_.get(), tuple_)); });
    for (Node* read : reads) index_tuple(read);
  }

 private:
  void build_tuple(const Construction& construction) {
    std::map<std::string, Value*> last_written;
    for (Node* write : construction.writes) last_written[write->s(c10::attr::name)] = write->input(1);
    torch::jit::WithInsertPoint here(construction.first_use);
    std::vector<Value*> items;
    for (size_t i = 0; i < cls_->numAttributes(); ++i) {
      auto written = last_written.find(cls_->getAttributeName(i));
      items.push_back(written != last_written.end()
                          ? written->second
                          : graph_.insertNode(graph_.createUninitialized(cls_->getAttribute(i)))->output());
    }
    Value* tuple = graph_.insertNode(graph_.createTuple(items))->output();
    tuple->setType(tuple_);
    for (Node* write : construction.writes) write->destroy();
    construction.create->output()->replaceAllUsesWith(tuple);
    construction.create->destroy();
  }

  void index_tuple(Node* read) {
    torch::jit::WithInsertPoint here(read);
    const size_t slot = cls_->getAttributeSlot(read->s(c10::attr::name));
    Value* index = graph_.insertConstant(static_cast<int64_t>(slot));
    Value* item = graph_.insertNode(graph_.createTupleIndex(read->input(0), index, tuple_->elements().at(slot)))->output();
    read->output()->replaceAllUsesWith(item);
    read->destroy();
  }

  Graph& graph_;
  c10::ClassTypePtr cls_;
  c10::TupleTypePtr tuple_;
  std::vector<Construction> constructions_;
};

}  // namespace

void created_objects_as_tuples(Graph& graph) {
  // By class, in the order the graph first creates each (a deterministic order for the rewrite).
  std::vector<c10::ClassTypePtr> classes;
  std::map<const c10::ClassType*, std::vector<Node*>> creates;
  for (Node* create : nodes_of_kind(graph.block(), c10::prim::CreateObject)) {
    auto cls = create->output()->type()->cast<c10::ClassType>();
    if (!cls || cls->is_module()) continue;
    if (!creates.count(cls.get())) classes.push_back(cls);
    creates[cls.get()].push_back(create);
  }
  for (const c10::ClassTypePtr& cls : classes) {
    ClassAsTuple rewrite(graph, cls);
    if (rewrite.convertible(creates[cls.get()])) rewrite.convert();
  }
}

}  // namespace tsrepro
