// contains_pattern: a small backtracking search, pattern ops in graph order.

#include "sweep/pattern_match.h"

#include <map>
#include <unordered_map>

#include "runner/graph/nested_nodes.h"

namespace tsrepro {
namespace {

// Enough for patterns of a few ops in graphs of thousands of nodes; a pattern that needs more is
// no longer a minified bug.
constexpr size_t kMaxSteps = 200000;

bool is_op(const torch::jit::Node* node) { return std::string(node->kind().ns().toUnqualString()) != "prim"; }

class Matcher {
 public:
  Matcher(torch::jit::Graph& graph, torch::jit::Graph& pattern) {
    for (torch::jit::Node* node : nested_nodes(pattern.block()))
      if (is_op(node)) ops_.push_back(node);
    for (torch::jit::Node* node : nested_nodes(graph.block()))
      if (is_op(node)) by_kind_[node->kind()].push_back(node);
  }

  bool matches() { return !ops_.empty() && extend(0); }

 private:
  // Whether `candidate` can stand for ops_[i], given the ops matched before it.
  bool consistent(size_t i, torch::jit::Node* candidate) const {
    const torch::jit::Node* op = ops_[i];
    if (candidate->inputs().size() != op->inputs().size()) return false;
    for (size_t k = 0; k < op->inputs().size(); ++k) {
      const torch::jit::Node* producer = op->inputs()[k]->node();
      auto matched = chosen_.find(producer);
      if (matched == chosen_.end()) continue;  // an input from outside the pattern's ops: anything
      const torch::jit::Value* wanted = matched->second->outputs()[op->inputs()[k]->offset()];
      if (candidate->inputs()[k] != wanted) return false;
    }
    for (const auto& [pattern_node, graph_node] : chosen_)
      if (graph_node == candidate) return false;  // one graph node stands for one op
    return true;
  }

  bool extend(size_t i) {
    if (i == ops_.size()) return true;
    auto candidates = by_kind_.find(ops_[i]->kind());
    if (candidates == by_kind_.end()) return false;
    for (torch::jit::Node* candidate : candidates->second) {
      if (++steps_ > kMaxSteps) return false;
      if (!consistent(i, candidate)) continue;
      chosen_[ops_[i]] = candidate;
      if (extend(i + 1)) return true;
      chosen_.erase(ops_[i]);
    }
    return false;
  }

  std::vector<torch::jit::Node*> ops_;
  std::map<c10::Symbol, std::vector<torch::jit::Node*>> by_kind_;
  std::unordered_map<const torch::jit::Node*, torch::jit::Node*> chosen_;
  size_t steps_ = 0;
};

}  // namespace

bool contains_pattern(torch::jit::Graph& graph, torch::jit::Graph& pattern) {
  return Matcher(graph, pattern).matches();
}

}  // namespace tsrepro
