// write_wrapped_numbers_as_scalars: runner/import/wrapped_numbers.h says which constants and why.

#include "runner/import/wrapped_numbers.h"

#include <vector>

#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>

namespace tsrepro {
namespace {

using torch::jit::Node;
using torch::jit::Value;

// The constant's tensor when it stands for a Python number; undefined otherwise.
at::Tensor python_number_tensor(const Value* value) {
  const Node* node = value->node();
  if (node->kind() != c10::prim::Constant || !value->type()->isSubtypeOf(*c10::TensorType::get())) return {};
  const at::Tensor t = node->t(c10::attr::value);
  if (t.dim() != 0 || !t.device().is_cpu() || t.requires_grad()) return {};
  return t.unsafeGetTensorImpl()->is_wrapped_number() ? t : at::Tensor();
}

void collect_users(torch::jit::Block* block, std::vector<Node*>& users) {
  for (Node* node : block->nodes()) {
    if (node->kind().is_aten())
      for (const Value* input : node->inputs())
        if (python_number_tensor(input).defined()) {
          users.push_back(node);
          break;
        }
    for (torch::jit::Block* inner : node->blocks()) collect_users(inner, users);
  }
}

// `user` again with each number-tensor input written as its number, when an overload of the
// same operator takes that; false (and the graph unchanged) otherwise.
bool rewrite_user(Node* user) {
  torch::jit::Graph& graph = *user->owningGraph();
  torch::jit::WithInsertPoint here(user);
  std::vector<Value*> inputs = user->inputs().vec();
  std::vector<Node*> scalars;
  for (Value*& input : inputs) {
    const at::Tensor number = python_number_tensor(input);
    if (!number.defined()) continue;
    input = graph.insertConstant(number.item());
    scalars.push_back(input->node());
  }
  Node* replacement = graph.create(user->kind(), inputs, user->outputs().size());
  const c10::FunctionSchema* schema = replacement->maybeSchema();
  bool same_results = schema != nullptr && schema->returns().size() == user->outputs().size();
  for (size_t i = 0; same_results && i < user->outputs().size(); ++i)
    same_results = user->output(i)->type()->isSubtypeOf(*schema->returns()[i].type());  // {2} * {3} is no int
  if (!same_results) {
    replacement->destroy();
    for (Node* scalar : scalars) scalar->destroy();
    return false;
  }
  graph.insertNode(replacement);
  replacement->copyMetadata(user);
  for (size_t i = 0; i < user->outputs().size(); ++i) {
    replacement->output(i)->copyMetadata(user->output(i));
    user->output(i)->replaceAllUsesWith(replacement->output(i));
  }
  user->destroy();
  return true;
}

void erase_unused_number_constants(torch::jit::Block* block) {
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    Node* node = *it++;
    for (torch::jit::Block* inner : node->blocks()) erase_unused_number_constants(inner);
    if (node->outputs().size() == 1 && !node->output()->hasUses() && python_number_tensor(node->output()).defined())
      node->destroy();
  }
}

}  // namespace

size_t write_wrapped_numbers_as_scalars(torch::jit::Graph& graph) {
  std::vector<Node*> users;
  collect_users(graph.block(), users);
  size_t rewritten = 0;
  for (Node* user : users) rewritten += rewrite_user(user);
  // The constants no use needs any more would become inputs nothing reads.
  if (rewritten > 0) erase_unused_number_constants(graph.block());
  return rewritten;
}

}  // namespace tsrepro
