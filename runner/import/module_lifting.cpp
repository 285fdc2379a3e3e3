// A module's method as a standalone graph (see module_lifting.h).
//
// Unlike freeze_module this keeps training-mode semantics (in-place buffer updates hit the lifted
// input) and leaves the graph as the program runs it: no folding, no loop unrolling.

#include <optional>
#include <unordered_map>

#include <torch/script.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/passes/constant_pooling.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/peephole_dict_idioms.h>
#include <torch/csrc/jit/passes/peephole_list_idioms.h>
#include <torch/csrc/jit/passes/inliner.h>

#include "runner/import/attribute_state.h"
#include "runner/graph/ivalue_tensors.h"
#include "runner/import/module_lifting.h"
#include "runner/graph/strict_fusion.h"
#include "runner/import/object_tuples.h"
#include "tsrepro/error.h"

namespace tsrepro {
namespace {

using torch::jit::Block;
using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;
using ObjectPtr = c10::intrusive_ptr<c10::ivalue::Object>;

// Calls inlined from each callee's graph as written. torch::jit::Inline (and inlineCallTo's
// default) inline a callee's optimized_graph(), which libtorch has already run through
// preoptimizeGraph (peephole, constant propagation): there a method's `(x > 0) * 1` arrives as
// the bool tensor itself (the peephole takes `x * 1` for x on a tensor of unknown dtype), and the
// case would compute other dtypes than the model, which torch.jit.load runs as written. As Inline
// does, a callee is inlined whole: its own calls first (each callee once, kept here), so that the
// call stacks come out as Inline's (inlineCallTo gives the nodes it inserts the stack of the
// callee, not that of the call they replace: a call inlined from an inlined body would lose the
// frames above it, and with them the module path).
class WrittenInliner {
 public:
  // What libtorch's preoptimizeGraph does to a callee before Inline takes it, less the rewrites
  // of tensor ops: PeepholeOptimize's alias-sensitive rules (`x * 1` is x, `x + 0` is x, whatever
  // x's dtype) are the ones that change results. The rest (None checks of values that cannot be
  // None, list and dict idioms, the constant folding of values no tensor holds) changes nothing
  // computed, and keeps the graph the profiling executor runs what stock's is (the corpus test
  // compares them op by op).
  // `x is None` and `x is not None` where x's type decides it (PeepholeOptimizeNonTensor's rule;
  // libtorch 1.13 does not export that pass): None is None, and a value whose type holds no None
  // is not.
  static void fold_none_checks(Block* block) {
    const auto may_be_none = [](const Value* v) {
      const c10::TypeKind kind = v->type()->kind();
      return kind == c10::TypeKind::NoneType || kind == c10::TypeKind::OptionalType || kind == c10::TypeKind::AnyType ||
             kind == c10::TypeKind::UnionType;
    };
    for (Node* node : block->nodes()) {
      for (Block* inner : node->blocks()) fold_none_checks(inner);
      const bool is = node->kind() == c10::aten::__is__;
      if ((!is && node->kind() != c10::aten::__isnot__) || node->inputs().size() != 2) continue;
      const Value* a = node->input(0);
      const Value* b = node->input(1);
      const bool a_none = a->type()->kind() == c10::TypeKind::NoneType;
      const bool b_none = b->type()->kind() == c10::TypeKind::NoneType;
      std::optional<bool> same;
      if (a_none && b_none) same = true;
      else if ((a_none && !may_be_none(b)) || (b_none && !may_be_none(a))) same = false;
      if (!same) continue;
      torch::jit::WithInsertPoint here(node);
      node->output()->replaceAllUsesWith(node->owningGraph()->insertConstant(is ? *same : !*same));
    }
  }
  static void preoptimize_without_tensor_rewrites(std::shared_ptr<Graph>& graph) {
    fold_none_checks(graph->block());
    torch::jit::PeepholeOptimizeListIdioms(graph);
    torch::jit::PeepholeOptimizeDictIdioms(graph);
    torch::jit::ConstantPropagationImmutableTypes(graph);
    torch::jit::ConstantPooling(graph);
  }

  // Every call in `block` whose callee is known from its type (functions, methods of classes).
  void inline_calls(Block* block) {
    for (auto it = block->nodes().begin(); it != block->nodes().end();) {
      Node* node = *it++;  // before inlining destroys it
      if (node->kind() == c10::prim::CallFunction || node->kind() == c10::prim::CallMethod) {
        if (torch::jit::GraphFunction* callee = torch::jit::tryToGraphFunction(node)) {
          inline_call(node, callee);
          continue;
        }
      }
      for (Block* inner : node->blocks()) inline_calls(inner);
    }
  }

  // `callee`, its own calls inlined, in place of `call`.
  void inline_call(Node* call, torch::jit::GraphFunction* callee) {
    std::shared_ptr<Graph>& body = bodies_[callee];
    if (!body) {
      body = callee->graph()->copy();
      inline_calls(body->block());
      preoptimize_without_tensor_rewrites(body);
    }
    if (call->kind() == c10::prim::CallFunction) call->removeInput(0);  // the function constant
    torch::jit::inlineCallTo(call, callee, body.get());
  }

 private:
  std::unordered_map<torch::jit::GraphFunction*, std::shared_ptr<Graph>> bodies_;
};

// "self.layer1.conv.weight" -> "layer1_conv_weight": a name parseIR accepts as a value name.
std::string input_name_for_path(const std::string& path) {
  std::string name = path.rfind("self.", 0) == 0 ? path.substr(5) : path;
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "p_" + name;
  return name;
}

bool all_tensors(const c10::List<c10::IValue>& list) {
  // By index: a c10::List's iterator yields proxies, and a reference bound to one dangles (gcc 14
  // warns), while a copy of each is what gcc 12 warns about.
  for (size_t i = 0; i < list.size(); ++i)
    if (!list.get(i).isTensor()) return false;
  return true;
}

bool holds_tensor(const c10::IValue& value) {
  return any_tensor(value, [](const at::Tensor&) { return true; });
}

// Attribute values a case input can hold and describe (InputSpec kinds int, float, bool, str,
// none, int[]).
bool is_liftable_scalar(const c10::IValue& value) {
  return value.isBool() || value.isInt() || value.isDouble() || value.isString() || value.isNone() || value.isIntList();
}

class ModuleLifter {
 public:
  ModuleLifter(const torch::jit::Module& module, std::shared_ptr<Graph> graph, std::string origin)
      : module_(module._ivalue()),
        graph_(std::move(graph)),
        self_(graph_->inputs().at(0)),
        origin_(std::move(origin)) {}

  LiftedGraph lift() {
    inline_calls_on_known_objects();
    mark_strict_fusion_blocks(*graph_);  // kept as blocks, not inlined (runner/graph/strict_fusion.h)
    inline_with_statements();
    thread_created_object_attributes(*graph_, origin_);
    thread_attribute_writes(*graph_, attribute_resolver(), origin_);
    created_objects_as_tuples(*graph_);  // those the attribute writes left as plain values
    replace_attribute_reads();
    drop_self();
    return {graph_, std::move(lifted_)};
  }

 private:
  // The module object a value stands for: %self, or a chain of submodule reads from it. The
  // static type may be an interface; the object behind it is what the program would call.
  std::optional<ObjectPtr> object_of(Value* value) const {
    if (value == self_) return module_;
    Node* node = value->node();
    if (node->kind() != c10::prim::GetAttr) return std::nullopt;
    auto owner = object_of(node->input());
    if (!owner) return std::nullopt;
    c10::IValue attribute = (*owner)->getAttr(node->s(c10::attr::name));
    if (!attribute.isObject()) return std::nullopt;
    return attribute.toObject();
  }

  std::string path_of(Value* value) const {
    if (value == self_) return "self";
    Node* node = value->node();
    return path_of(node->input()) + "." + node->s(c10::attr::name);
  }

  // Inline leaves prim::CallMethod on interface-typed values (and on submodules that reached a
  // call through a function argument of interface type). The concrete submodule is known here,
  // so its method is inlined like any other call, until no such call is left.
  void inline_calls_on_known_objects() {
    for (bool inlined = true; inlined;) {
      inlined = false;
      const std::vector<Node*> calls = nodes_of_kind(graph_->block(), c10::prim::CallMethod);
      for (Node* call : calls) {
        auto object = object_of(call->input(0));
        if (!object) continue;
        torch::jit::Function* method = (*object)->type()->findMethod(call->s(c10::attr::name));
        torch::jit::GraphFunction* body = method ? torch::jit::tryToGraphFunction(*method) : nullptr;
        if (!body) continue;
        inliner_.inline_call(call, body);
        inlined = true;
      }
    }
  }

  // `with torch.no_grad():` (any with statement but torch.jit.strict_fusion's, which
  // mark_strict_fusion_blocks keeps) is prim::Enter/prim::Exit on an object of a TorchScript class whose
  // __enter__ and __exit__ the interpreter calls (torchvision's complete-IoU loss, in RetinaNet's
  // training branch). IR text cannot name the class: both calls are inlined, as every other call
  // is, and what is left of the object is its attributes (`prev`: the grad mode to restore).
  // What the interpreter adds, an __exit__ on the way out of a raise, is left out: a raise ends
  // the run, and each evaluation starts with grad mode on (runner/exec/evaluate.cpp).
  void inline_with_statements() {
    bool inlined = false;
    for (Node* enter : nodes_of_kind(graph_->block(), c10::prim::Enter)) {
      const auto cls = enter->input()->type()->cast<c10::ClassType>();
      if (!cls || !cls->findMethod("__enter__") || !cls->findMethod("__exit__")) continue;
      torch::jit::WithInsertPoint here(enter);
      Node* call = graph_->insertNode(graph_->create(c10::prim::CallMethod, {enter->input()}));
      call->s_(c10::attr::name, "__enter__");
      call->output()->setType(cls->getMethod("__enter__").getSchema().returns().at(0).type());
      enter->output()->replaceAllUsesWith(call->output());
      enter->destroy();
      inlined = true;
    }
    for (Node* exit : nodes_of_kind(graph_->block(), c10::prim::Exit)) {
      const auto cls = exit->input()->type()->cast<c10::ClassType>();
      if (!cls || !cls->findMethod("__exit__") || exit->output()->hasUses()) continue;
      torch::jit::WithInsertPoint here(exit);
      Value* none = graph_->insertConstant(c10::IValue());
      Node* call = graph_->insertNode(graph_->create(c10::prim::CallMethod, {exit->input(), none, none, none}));
      call->s_(c10::attr::name, "__exit__");
      call->output()->setType(cls->getMethod("__exit__").getSchema().returns().at(0).type());
      exit->destroy();
      inlined = true;
    }
    if (inlined) inliner_.inline_calls(graph_->block());
  }

  // How runner/import/attribute_state.cpp sees this module: attributes of objects known from %self.
  AttributeResolver attribute_resolver() {
    AttributeResolver resolver;
    resolver.path_of = [this](Node* access) -> std::optional<std::string> {
      if (!object_of(access->input(0))) return std::nullopt;
      return path_of(access->input(0)) + "." + access->s(c10::attr::name);
    };
    resolver.declared_type = [this](Node* write) {
      return (*object_of(write->input(0)))->type()->getAttribute(write->s(c10::attr::name));
    };
    resolver.initial_value = [this](const std::string& path, Node* write) {
      const ObjectPtr owner = *object_of(write->input(0));
      const std::string& name = write->s(c10::attr::name);
      return value_for(owner->getAttr(name), path, owner->type()->getAttribute(name), write);
    };
    return resolver;
  }

  void replace_attribute_reads() {
    const std::vector<Node*> reads = nodes_of_kind(graph_->block(), c10::prim::GetAttr);
    for (Node* read : reads) {
      auto owner = object_of(read->input());
      if (!owner)
        throw UserError(origin_ + ": " + describe_node(read) + " reads an attribute of a module that cannot be known " +
                        "before the program runs (a submodule chosen at run time)");
      c10::IValue attribute = (*owner)->getAttr(read->s(c10::attr::name));
      if (attribute.isObject()) continue;  // a submodule: the reads from it are handled on their own
      torch::jit::WithInsertPoint here(read);
      read->output()->replaceAllUsesWith(value_for(attribute, path_of(read->output()), read->output()->type(), read));
    }
    for (auto it = reads.rbegin(); it != reads.rend(); ++it)
      if (!(*it)->output()->hasUses()) (*it)->destroy();
  }

  // Tensors become inputs; lists and tuples holding tensors are rebuilt from such inputs where
  // they are read (nn.LSTM's _flat_weights); everything else becomes a constant.
  // `type` is what the program reads it as; `access` names it in errors.
  Value* value_for(const c10::IValue& attribute, const std::string& path, const c10::TypePtr& type, Node* access) {
    if (attribute.isTensor()) return input_for_tensor(attribute.toTensor(), path);
    if (attribute.isList() && holds_tensor(attribute) && all_tensors(attribute.toList())) {
      std::vector<Value*> items;
      const c10::List<c10::IValue> list = attribute.toList();
      for (size_t i = 0; i < list.size(); ++i)
        items.push_back(input_for_tensor(list.get(i).toTensor(), path + "." + std::to_string(i)));
      return graph_->insertNode(graph_->createList(c10::TensorType::get(), items))->output();
    }
    if (attribute.isTuple() && holds_tensor(attribute)) {
      std::vector<Value*> items;
      const auto& elements = attribute.toTupleRef().elements();
      const auto element_types = type->containedTypes();
      for (size_t i = 0; i < elements.size(); ++i) {
        const c10::TypePtr element_type = i < element_types.size() ? element_types[i] : elements[i].type();
        items.push_back(value_for(elements[i], path + "." + std::to_string(i), element_type, access));
      }
      return graph_->insertNode(graph_->createTuple(items))->output();
    }
    if (is_liftable_scalar(attribute)) return input_for_scalar(attribute, path, type);
    if (attribute.isObject() && !attribute.toObjectRef().type()->is_module())
      return recreated_object(attribute.toObject(), path, access);
    auto constant = torch::jit::tryInsertConstant(*graph_, attribute);
    if (!constant)
      throw UserError(origin_ + ": " + describe_node(access) + ": attribute " + path + " of type " +
                      attribute.type()->repr_str() + " cannot become a constant or a graph input");
    return *constant;
  }

  // An object of a plain class held by a module attribute the graph writes (torchvision's
  // LevelMapper, once the module has been called): created again at the top of the graph, its
  // constructor writing each attribute's value, so that runner/import/object_tuples.h makes it a tuple
  // like the objects the graph creates itself.
  Value* recreated_object(const ObjectPtr& object, const std::string& path, Node* access) {
    const c10::ClassTypePtr cls = object->type();
    Value* created = graph_->insertNode(graph_->createObject(cls))->output();
    for (size_t i = 0; i < cls->numAttributes(); ++i) {
      const std::string& name = cls->getAttributeName(i);
      Value* item = value_for(object->getSlot(i), path + "." + name, cls->getAttribute(i), access);
      graph_->insertNode(graph_->createSetAttr(created, name, item));
    }
    return created;
  }

  // One input per attribute path. A module's executor reads `self.training` or `self.eps` with
  // prim::GetAttr, which no pass folds: as inputs they stay just as opaque (`if self.training`
  // branches stay, and split fusion regions where the program's do). A freezing backend folds
  // them, like the tensors; the minifier's consolidate-inputs makes them constants if it can.
  Value* input_for_scalar(const c10::IValue& value, const std::string& path, const c10::TypePtr& type) {
    auto known = inputs_by_path_.find(path);
    if (known != inputs_by_path_.end()) return known->second;
    Value* input = graph_->addInput(input_name_for_path(path));
    input->setType(type);
    inputs_by_path_[path] = input;
    lifted_.push_back({value, path});
    return input;
  }

  // One input per distinct tensor: tied weights stay tied.
  Value* input_for_tensor(const at::Tensor& tensor, const std::string& path) {
    auto known = inputs_by_impl_.find(tensor.unsafeGetTensorImpl());
    if (known != inputs_by_impl_.end()) return known->second;
    Value* input = graph_->addInput(input_name_for_path(path));
    input->setType(c10::TensorType::get());
    inputs_by_impl_[tensor.unsafeGetTensorImpl()] = input;
    lifted_.push_back({tensor, path});
    return input;
  }

  // What is left of %self are submodule reads used as values: name the first real user.
  void drop_self() {
    std::vector<Value*> pending{self_};
    while (!pending.empty()) {
      Value* value = pending.back();
      pending.pop_back();
      for (const torch::jit::Use& use : value->uses()) {
        if (use.user->kind() == c10::prim::GetAttr) {
          pending.push_back(use.user->output());
          continue;
        }
        throw UserError(
            origin_ + ": the module " + path_of(value) + " is used as a value by " + describe_node(use.user) +
            " (submodules stored, returned or chosen at run time are not supported)");
      }
    }
    graph_->eraseInput(0);
  }

  ObjectPtr module_;
  std::shared_ptr<Graph> graph_;
  WrittenInliner inliner_;  // the bodies of interface calls and `with` objects' methods
  Value* self_;
  std::string origin_;
  std::unordered_map<const c10::TensorImpl*, Value*> inputs_by_impl_;
  std::unordered_map<std::string, Value*> inputs_by_path_;
  std::vector<LiftedInput> lifted_;
};

}  // namespace

namespace {

// "file.py:12: source text" of a node's own source range, if it has one. A loaded module's nodes
// point into its serialized code; the range that generated that code is the user's own line.
std::optional<std::string> own_location(const Node* node) {
  const auto original = node->sourceRange().findSourceRangeThatGenerated();
  const torch::jit::SourceRange& range = original ? *original : node->sourceRange();
  auto location = range.file_line_col();
  if (!location) return std::nullopt;
  auto [file, line, column] = *location;
  // The whole source line the range starts on, trimmed: "self.calls = self.calls + 1".
  const std::string text = range.source()->text_str().str();
  const size_t begin = text.rfind('\n', range.start() == 0 ? 0 : range.start() - 1);
  std::string source = text.substr(begin == std::string::npos ? 0 : begin + 1);
  source = source.substr(0, source.find('\n'));
  source.erase(0, std::min(source.find_first_not_of(" \t"), source.size()));
  return file + ":" + std::to_string(line) + (source.empty() ? "" : ": " + source);
}

}  // namespace

std::vector<Node*> nodes_of_kind(Block* block, c10::Symbol kind) {
  std::vector<Node*> found;
  for (Node* node : block->nodes()) {
    if (node->kind() == kind) found.push_back(node);
    for (Block* inner : node->blocks())
      for (Node* nested : nodes_of_kind(inner, kind)) found.push_back(nested);
  }
  return found;
}

std::string describe_node(const Node* node) {
  std::string text = "'" + std::string(node->kind().toQualString()) + "'";
  if (node->outputs().size() == 1) text = "%" + node->output()->debugName() + " = " + text;
  if (auto location = own_location(node)) return text + " (" + *location + ")";
  // prim::GetAttr / prim::SetAttr carry no source range: the statement that computed their
  // operands, or the next one, is on (or right by) the same line.
  for (const Value* input : node->inputs())
    if (auto location = own_location(input->node())) return text + " (near " + *location + ")";
  for (const Node* next = node->next(); next->kind() != c10::prim::Return; next = next->next())
    if (auto location = own_location(next)) return text + " (near " + *location + ")";
  return text;
}

LiftedGraph lift_module_method(const torch::jit::Module& module, const std::string& method_name,
                               const std::string& origin) {
  auto method = module.find_method(method_name);
  if (!method) throw UserError(origin + ": the module has no method '" + method_name + "'");
  auto graph = method->graph()->copy();
  WrittenInliner().inline_calls(graph->block());
  // What the callees' arguments decide once inlined (F.relu's `if inplace:` on a constant False),
  // folded as a callee's own are. The printed module form needs it too: libtorch's frontend drops
  // an `if False:` it compiles.
  torch::jit::ConstantPropagationImmutableTypes(graph);
  return ModuleLifter(module, graph, origin).lift();
}

}  // namespace tsrepro
