// The profiling graph executor (what TorchScript runs by default) behind PreparedGraph.

#include <algorithm>

#include <torch/script.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/csrc/jit/tensorexpr/kernel.h>

#include "backends/builtin.h"
#include "backends/profiling_executor.h"
#include "runner/graph/written_inputs.h"
#include "tsrepro/error.h"
#include "tsrepro/torch_compat.h"

// Declared in torch/csrc/jit/codegen/fuser/interface.h, which Debian's libtorch-dev does not ship.
namespace torch::jit {
TORCH_API void overrideCanFuseOnCPU(bool value);
TORCH_API bool canFuseOnCPU();
}  // namespace torch::jit

namespace tsrepro {
namespace {

using torch::jit::Graph;

void densify_mkldnn_constants(torch::jit::Block* block) {
  for (torch::jit::Node* node : block->nodes()) {
    if (node->hasAttribute(c10::attr::value) && node->kindOf(c10::attr::value) == torch::jit::AttributeKind::t &&
        node->t(c10::attr::value).is_mkldnn())
      node->t_(c10::attr::value, node->t(c10::attr::value).to_dense());
    for (torch::jit::Block* inner : node->blocks()) densify_mkldnn_constants(inner);
  }
}

// The graph as text. optimize_for_inference leaves MKLDNN tensor constants in the graph, and
// libtorch's printer reads a one-element tensor's value through a view, which an MKLDNN tensor
// refuses ("Mkldnn tensor does not support view"): those are printed from dense copies.
std::string graph_text(const std::shared_ptr<Graph>& graph) {
  if (!graph) return "";
  std::shared_ptr<Graph> copy = graph->copy();
  densify_mkldnn_constants(copy->block());
  return copy->toString(false);
}

struct ProfiledFunction : PreparedGraph {
  ProfiledFunction(std::shared_ptr<Graph> graph, size_t output_count, const JitSwitches& switches)
      : function("tsrepro_candidate", std::move(graph), nullptr), outputs(output_count), switches(switches) {}

  std::vector<c10::IValue> run(std::vector<c10::IValue> inputs) override {
    ScopedJitSwitches scope(switches);
    torch::jit::Stack stack(std::move(inputs));
    seed_random_generators();
    function.run(stack);
    if (auto last = torch::jit::lastExecutedOptimizedGraph()) optimized = last;
    return unpack(stack.at(0));
  }

  // Printed only when asked for (--explain-backend): the text of a large graph costs, and a
  // failure to print it is no failure of the backend.
  std::string executed_graph() const override { return graph_text(optimized); }
  std::shared_ptr<Graph> optimized_graph() const override { return optimized; }

  // The executor needs exactly one output: several were packed into a tuple before compiling.
  std::vector<c10::IValue> unpack(const c10::IValue& packed) const {
    if (outputs == 1) return {packed};
    return packed.toTupleRef().elements().vec();
  }

  torch::jit::GraphFunction function;
  size_t outputs;
  JitSwitches switches;
  std::shared_ptr<Graph> optimized;
};

std::shared_ptr<Graph> with_single_output(const std::shared_ptr<Graph>& original) {
  auto graph = original->copy();
  if (graph->outputs().size() == 1) return graph;
  std::vector<torch::jit::Value*> outputs(graph->outputs().begin(), graph->outputs().end());
  auto* tuple = graph->insertNode(graph->createTuple(outputs));
  while (!graph->outputs().empty()) graph->eraseOutput(0);
  graph->registerOutput(tuple->output());
  return graph;
}

// A module's forward called as a program calls it: on a fresh deep copy for each call.
struct ModuleCalls : PreparedGraph {
  ModuleCalls(torch::jit::Module module, const JitSwitches& switches)
      : pristine(std::move(module)), switches(switches) {}

  c10::IValue call(std::vector<c10::IValue> inputs) {
    ScopedJitSwitches scope(switches);
    torch::jit::Module copy = pristine.deepcopy();
    seed_random_generators();
    c10::IValue output = copy.forward(std::move(inputs));
    if (auto last = torch::jit::lastExecutedOptimizedGraph()) optimized = last;
    return output;
  }
  std::vector<c10::IValue> run(std::vector<c10::IValue> inputs) override { return {call(std::move(inputs))}; }
  std::string executed_graph() const override { return graph_text(optimized); }
  std::shared_ptr<Graph> optimized_graph() const override { return optimized; }

  torch::jit::Module pristine;
  JitSwitches switches;
  std::shared_ptr<Graph> optimized;
};

}  // namespace

struct ScopedJitSwitches::Saved {
  bool can_fuse_on_cpu, te_fuser, inlining, dynamic_shapes, reductions, must_use_llvm, executor_mode, profiling_mode;
  bool optimize;
  torch::jit::FusionStrategy strategy;
};

ScopedJitSwitches::ScopedJitSwitches(const JitSwitches& s)
    : saved_(new Saved{torch::jit::canFuseOnCPU(), torch::jit::tensorExprFuserEnabled(),
                       torch::jit::getFusionGroupInlining(), torch::jit::tensorExprDynamicShapeFusionEnabled(),
                       torch::jit::texprReductionsEnabled(), torch::jit::tensorexpr::getTEMustUseLLVMOnCPU(),
                       torch::jit::getExecutorMode().load(), torch::jit::getProfilingMode().load(),
                       torch::jit::getGraphExecutorOptimize(), torch::jit::getFusionStrategy()}) {
  torch::jit::getExecutorMode() = true;
  torch::jit::getProfilingMode() = true;
  torch::jit::setGraphExecutorOptimize(s.optimize);
  if (s.fuse_on_cpu) torch::jit::overrideCanFuseOnCPU(*s.fuse_on_cpu);
  torch::jit::setTensorExprFuserEnabled(s.te_fuser);
  torch::jit::debugSetFusionGroupInlining(s.fusion_group_inlining);
  torch::jit::setTensorExprDynamicShapeFusionEnabled(s.dynamic_shape_fusion);
  torch::jit::setTexprReductionsEnabled(s.reductions);
  // NNC as users run it: LLVM kernels where this libtorch has LLVM, its IR interpreter where not.
  if (!nnc_has_llvm()) torch::jit::tensorexpr::getTEMustUseLLVMOnCPU() = false;
  if (s.strategy) {
    torch::jit::FusionStrategy strategy = {
        {*s.strategy == "dynamic" ? torch::jit::FusionBehavior::DYNAMIC : torch::jit::FusionBehavior::STATIC, 2}};
    torch::jit::setFusionStrategy(strategy);
  }
}

ScopedJitSwitches::~ScopedJitSwitches() {
  torch::jit::overrideCanFuseOnCPU(saved_->can_fuse_on_cpu);
  torch::jit::setTensorExprFuserEnabled(saved_->te_fuser);
  torch::jit::debugSetFusionGroupInlining(saved_->inlining);
  torch::jit::setTensorExprDynamicShapeFusionEnabled(saved_->dynamic_shapes);
  torch::jit::setTexprReductionsEnabled(saved_->reductions);
  torch::jit::tensorexpr::getTEMustUseLLVMOnCPU() = saved_->must_use_llvm;
  torch::jit::getExecutorMode() = saved_->executor_mode;
  torch::jit::getProfilingMode() = saved_->profiling_mode;
  torch::jit::setGraphExecutorOptimize(saved_->optimize);
  torch::jit::setFusionStrategy(saved_->strategy);
}

std::unique_ptr<PreparedGraph> prepare_with_profiling_executor(std::shared_ptr<Graph> graph,
                                                               const std::vector<c10::IValue>& sample_inputs,
                                                               const JitSwitches& switches) {
  const size_t output_count = graph->outputs().size();
  auto prepared = std::make_unique<ProfiledFunction>(with_single_output(graph), output_count, switches);
  ScopedJitSwitches scope(switches);
  // Profiling runs record shapes and dtypes; the plan asked for afterwards is the optimized one.
  const std::vector<bool> written = inputs_maybe_written(*graph);
  for (size_t i = 0; i < torch::jit::getNumProfiledRuns(); ++i) {
    torch::jit::Stack stack(fresh_copies(sample_inputs, written));
    prepared->function.run(stack);
  }
  torch::jit::Stack stack(fresh_copies(sample_inputs, written));
  prepared->optimized = prepared->function.get_executor().getPlanFor(stack, torch::jit::getBailoutDepth()).graph;
  return prepared;
}

std::unique_ptr<PreparedGraph> prepare_module_with_profiling_executor(const torch::jit::Module& module,
                                                                      const std::vector<c10::IValue>& sample_inputs,
                                                                      const JitSwitches& switches) {
  auto prepared = std::make_unique<ModuleCalls>(module.deepcopy(), switches);
  if (!switches.optimize) return prepared;
  // As for a graph: the profiling runs, then the optimized plan asked for (the compile phase).
  for (size_t i = 0; i < torch::jit::getNumProfiledRuns(); ++i) prepared->call(clone_values(sample_inputs));
  ScopedJitSwitches scope(switches);
  torch::jit::Module copy = prepared->pristine.deepcopy();
  torch::jit::Stack stack{copy._ivalue()};
  for (const c10::IValue& value : clone_values(sample_inputs)) stack.push_back(value);
  torch::jit::GraphFunction& forward = torch::jit::toGraphFunction(copy.get_method("forward").function());
  prepared->optimized = forward.get_executor().getPlanFor(stack, torch::jit::getBailoutDepth()).graph;
  return prepared;
}

}  // namespace tsrepro
