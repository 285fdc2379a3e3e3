#include "runner/graph/written_inputs.h"

#include <set>
#include <unordered_map>

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/operator.h>

namespace tsrepro {
namespace {

using torch::jit::Block;
using torch::jit::Node;
using torch::jit::Value;
using InputSet = std::set<size_t>;  // indices of graph inputs a value may alias or contain

class WriteAnalysis {
 public:
  explicit WriteAnalysis(const torch::jit::Graph& graph) : written_(graph.inputs().size(), false) {
    for (size_t i = 0; i < graph.inputs().size(); ++i) holds_[graph.inputs()[i]] = {i};
    // Passes over the whole graph until no loop body's inputs may hold more than the last pass
    // gave them. Each pass visits every block once: iterating each loop on its own, inside
    // whatever encloses it, made nested blocks cost 2^depth visits.
    do {
      grew_ = false;
      visit(graph.block());
    } while (grew_);
  }
  std::vector<bool> written() const { return written_; }

 private:
  InputSet held_by(const Value* v) const {
    auto found = holds_.find(v);
    return found == holds_.end() ? InputSet{} : found->second;
  }
  InputSet held_by_inputs(const Node* node) const {
    InputSet all;
    for (const Value* input : node->inputs()) {
      const InputSet held = held_by(input);
      all.insert(held.begin(), held.end());
    }
    return all;
  }
  void mark_written(const InputSet& inputs) {
    for (size_t i : inputs) written_[i] = true;
  }

  void visit(const Block* block) {
    for (const Node* node : block->nodes()) visit(node);
  }

  void visit(const Node* node) {
    if (node->kind() == c10::prim::Constant) return;
    const InputSet from_inputs = held_by_inputs(node);
    if (from_inputs.empty() && node->blocks().empty()) return;  // touches no input: fresh values
    const torch::jit::Operator* op = node->maybeOperator();
    const c10::FunctionSchema* schema = node->maybeSchema();
    if (op && schema && op->aliasAnalysisKind() != c10::AliasAnalysisKind::CONSERVATIVE) {
      // The schema says it: arguments annotated (a!) are written, returns annotated (a) alias.
      // Where it does not say it (batch norm's running statistics), the list below does.
      for (size_t i : written_though_unannotated(node->kind())) {
        if (i < node->inputs().size()) mark_written(held_by(node->inputs()[i]));
      }
      for (size_t i = 0; i < node->inputs().size() && i < schema->arguments().size(); ++i) {
        const c10::AliasInfo* alias = schema->arguments()[i].alias_info();
        if (!alias || !alias->isWrite()) continue;
        mark_written(held_by(node->inputs()[i]));
        // A written container may now hold what the op was given (aten::append).
        holds_[node->inputs()[i]].insert(from_inputs.begin(), from_inputs.end());
      }
      for (size_t i = 0; i < node->outputs().size() && i < schema->returns().size(); ++i)
        if (schema->returns()[i].alias_info()) holds_[node->outputs()[i]] = from_inputs;
      return;
    }
    // Control flow and the prim ops that build, take apart and pass on values (lists, tuples,
    // If/Loop results): their outputs may hold whatever their inputs and blocks hold.
    InputSet all = from_inputs;
    for (const Block* inner : node->blocks()) {
      // A loop's body sees its own outputs again as its inputs: what they held in the last pass
      // joins what the loop is given, and a body input that grows asks for another pass.
      InputSet carried = from_inputs;
      for (const Value* block_output : inner->outputs()) {
        const InputSet held = held_by(block_output);
        carried.insert(held.begin(), held.end());
      }
      for (const Value* block_input : inner->inputs()) {
        InputSet& held = holds_[block_input];
        const size_t before = held.size();
        held.insert(carried.begin(), carried.end());
        grew_ = grew_ || held.size() != before;
      }
      visit(inner);
      for (const Value* block_output : inner->outputs()) {
        const InputSet held = held_by(block_output);
        all.insert(held.begin(), held.end());
      }
    }
    for (const Value* output : node->outputs()) holds_[output] = all;
    // Anything else without a trustworthy schema (a custom op of conservative aliasing, an
    // unknown prim) may write to whatever it is given.
    if (!node->blocks().empty() || is_pass_through(node->kind())) return;
    mark_written(from_inputs);
  }

  // Ops whose schema carries no (a!) on arguments they write: batch and instance norm update
  // running_mean and running_var (arguments 3 and 4) in place when training. A case's lifted
  // buffers written by them must be copied for each run, or the reference's run would leave
  // updated statistics for the backend's (a model loaded anew for each run has none).
  static std::vector<size_t> written_though_unannotated(c10::Symbol kind) {
    static const std::set<c10::Symbol> running_stats_writers = {
        c10::aten::batch_norm, c10::aten::instance_norm, c10::aten::_batch_norm_impl_index,
        c10::aten::native_batch_norm};
    if (running_stats_writers.count(kind) > 0) return {3, 4};
    return {};
  }

  static bool is_pass_through(c10::Symbol kind) {
    static const std::set<c10::Symbol> kinds = {
        c10::prim::ListConstruct, c10::prim::ListUnpack,    c10::prim::TupleConstruct, c10::prim::TupleUnpack,
        c10::prim::TupleIndex,    c10::prim::DictConstruct, c10::prim::unchecked_cast, c10::prim::RaiseException,
        c10::prim::Uninitialized, c10::prim::GetAttr,       c10::prim::dtype,          c10::prim::device,
        c10::prim::requires_grad, c10::prim::is_cuda,       c10::aten::__is__,         c10::aten::__isnot__,
        c10::prim::isinstance,    c10::prim::NumToTensor,
    };
    return kinds.count(kind) > 0;
  }

  std::unordered_map<const Value*, InputSet> holds_;
  std::vector<bool> written_;
  bool grew_ = false;
};

}  // namespace

std::vector<bool> inputs_maybe_written(const torch::jit::Graph& graph) { return WriteAnalysis(graph).written(); }

}  // namespace tsrepro
