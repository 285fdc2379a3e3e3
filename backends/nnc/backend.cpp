// `nnc`: the profiling executor with the TensorExpr (NNC) fuser forced on for the CPU, with the
// options of backends/nnc/options.h.
//
// Its passes, for `tsrepro explain --passes`: first the profiling executor's graph passes (its
// optimized graph, every fusion group inlined back into plain ops and run in the interpreter), then
// NNC's kernel of each fusion group in turn (passes=K: the first K-1 groups fused, the rest
// inlined). A failure that first shows with group k fused is inside that kernel, and the stage's
// name lists the ops lowered into it.

#include <torch/csrc/jit/passes/utils/subgraph_utils.h>
#include <torch/csrc/jit/tensorexpr/kernel.h>

#include "backends/builtin.h"
#include "backends/nnc/options.h"
#include "backends/profiling_executor.h"

namespace tsrepro {
namespace {

using torch::jit::Block;
using torch::jit::Node;

bool is_fusion_group(const Node* node) { return node->kind() == c10::Symbol::fromQualString("prim::TensorExprGroup"); }

// The fusion groups of `block`, nested ones too, in the order the graph prints them.
void collect_fusion_groups(Block* block, std::vector<Node*>& out) {
  for (Node* node : block->nodes()) {
    if (is_fusion_group(node)) out.push_back(node);
    for (Block* inner : node->blocks()) collect_fusion_groups(inner, out);
  }
}

// "fusion group 2 (aten::round, aten::add)": the ops NNC lowers into its kernel.
std::string fusion_group_text(Node* group, size_t number) {
  std::string ops;
  for (Node* op : group->g(c10::attr::Subgraph)->nodes())
    if (op->kind() != c10::prim::Constant) ops += (ops.empty() ? "" : ", ") + std::string(op->kind().toQualString());
  return "fusion group " + std::to_string(number) + " (" + ops + ")";
}

// The executor's optimized graph with NNC allowed to fall back to the interpreter wherever it cannot
// compile a kernel: the graph its passes made is had even where a kernel's compile raises (a
// failure the graph passes' stage must not take for its own).
std::shared_ptr<torch::jit::Graph> optimized_plan(const BackendInput& input, const std::vector<c10::IValue>& sample,
                                                  const JitSwitches& switches) {
  struct AllowFallback {
    bool before = torch::jit::tensorexpr::setFallbackAllowed(true);
    ~AllowFallback() { torch::jit::tensorexpr::setFallbackAllowed(before); }
  } allowed;
  return prepare_with_profiling_executor(input.graph, sample, switches)->optimized_graph()->copy();
}

// The executor's optimized graph, its fusion groups from the `fused`-th on inlined back into plain
// ops, run by the interpreter with the backend's switches (the groups left compile as the executor's
// would).
class PartlyFusedPlan : public PreparedGraph {
 public:
  PartlyFusedPlan(std::shared_ptr<torch::jit::Graph> plan, size_t fused, size_t outputs, const JitSwitches& switches)
      : outputs_(outputs), switches_(switches) {
    std::vector<Node*> groups;
    collect_fusion_groups(plan->block(), groups);
    for (size_t i = fused; i < groups.size(); ++i) torch::jit::SubgraphUtils::unmergeSubgraph(groups[i]);
    ScopedJitSwitches scope(switches_);  // the kernels compile as the interpreter's code is made
    interpreted_ = interpret_graph(std::move(plan));
  }
  std::vector<c10::IValue> run(std::vector<c10::IValue> inputs) override {
    ScopedJitSwitches scope(switches_);
    std::vector<c10::IValue> out = interpreted_->run(std::move(inputs));
    if (outputs_ == 1) return out;
    return out.at(0).toTupleRef().elements().vec();  // the executor's graph returns one tuple
  }
  std::string executed_graph() const override { return interpreted_->executed_graph(); }

 private:
  std::unique_ptr<PreparedGraph> interpreted_;
  size_t outputs_;
  JitSwitches switches_;
};

class NncBackend : public Backend {
 public:
  NncBackend(JitSwitches switches, std::optional<size_t> passes) : switches_(switches), passes_(passes) {}
  std::string name() const override { return "nnc"; }
  std::unique_ptr<PreparedGraph> prepare(const BackendInput& input, const std::vector<c10::IValue>& sample) override {
    if (!passes_) return prepare_with_profiling_executor(input.graph, sample, switches_);
    return std::make_unique<PartlyFusedPlan>(optimized_plan(input, sample, switches_), *passes_ - 1,
                                             input.graph->outputs().size(), switches_);
  }
  std::unique_ptr<PreparedGraph> prepare_module(const torch::jit::Module& module,
                                                const std::vector<c10::IValue>& sample) override {
    return prepare_module_with_profiling_executor(module, sample, switches_);
  }
  std::vector<std::string> pass_applications(const BackendInput& input,
                                             const std::vector<c10::IValue>& sample) override {
    std::vector<Node*> groups;
    std::shared_ptr<torch::jit::Graph> plan = optimized_plan(input, sample, switches_);
    collect_fusion_groups(plan->block(), groups);
    std::vector<std::string> stages{"the profiling executor's graph passes"};
    for (size_t i = 0; i < groups.size(); ++i)
      stages.push_back("NNC's kernel of " + fusion_group_text(groups[i], i + 1));
    return stages;
  }

 private:
  JitSwitches switches_;
  std::optional<size_t> passes_;
};

}  // namespace

std::unique_ptr<Backend> make_nnc_backend(const std::string&, const BackendOptions& options) {
  const NncOptions o = NncOptions::from(options);
  JitSwitches switches;
  switches.fuse_on_cpu = true;
  switches.te_fuser = true;
  switches.fusion_group_inlining = o.fusion_group_inlining;
  switches.dynamic_shape_fusion = o.dynamic_shapes;
  switches.reductions = o.reductions;
  switches.strategy = o.strategy;
  return std::make_unique<NncBackend>(switches, o.passes);
}

}  // namespace tsrepro
