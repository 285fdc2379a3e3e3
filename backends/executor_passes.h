#pragma once
// The profiling executor split at its passes, for `tsrepro explain --passes` (jit and nnc; issue 54).
//
// The executor's graph passes are not public one by one, but its JIT log is: at GRAPH_DEBUG level
// (PYTORCH_JIT_LOG_LEVEL=">>profiling_graph_executor_impl") it prints the whole graph after each pass
// of the pipelines its optimized plan runs ("After ConstantPropagation, before ConstantPooling").
// tsrepro captures that log while the executor prepares the case, keeps each pass that changed the
// graph, and runs the graph it left in the interpreter: parsed back, the fusion groups and fallback
// graphs inlined, the profiling nodes dropped. After the passes come the executor's final passes
// (its optimized plan run unfused, as the log does not print what runs after the pipelines), then
// NNC's kernel of each fusion group of the plan in turn (the first j groups fused, the rest inlined).
// The first stop whose run fails as the case does names the pass; where only a kernel does, the
// failure is inside that kernel.

#include <memory>
#include <string>
#include <vector>

#include "backends/profiling_executor.h"
#include "tsrepro/backend.h"

namespace tsrepro {

// A graph the executor's log printed after one of its passes.
struct LoggedPassGraph {
  std::string pass;      // "ConstantPropagation"
  std::string pipeline;  // "runPreAutodiffPassPipeline": a pass runs in several
  std::string text;      // the graph as printed, with its "with prim::TensorExprGroup_0 = graph(...)" parts
};

// What a captured log says of the case's own executor: each pass that changed the graph, in order,
// and where its pipelines did not finish (a pass raised), the pass that was running.
// Exposed for tests: the log's shape is libtorch's, and is checked on both lines.
struct ExecutorLog {
  std::vector<LoggedPassGraph> passes;
  bool finished = false;  // the log reached the end of runProfilingOptimizations
  std::string next;       // not finished: "DecomposeOps (in runProfilingInsensitiveOptimizations)", where known
};
ExecutorLog read_executor_log(const std::string& log);

// A printed graph as the interpreter can run it: its subgraphs (fusion groups, fallback graphs,
// differentiable graphs) inlined where they are called, its profiling nodes dropped. Throws
// std::runtime_error where the print lost a value (a tensor constant prints as <Tensor>).
std::shared_ptr<torch::jit::Graph> runnable_logged_graph(const std::string& text);

// The stops of the executor on `input`, in order: "<pass> (in <pipeline>)" for each logged pass that
// changed the graph, "the profiling executor's final passes", then "NNC's kernel of fusion group N
// (ops...)" for each group. Where preparing raises, the pass the log was in is the last stop (run
// as the whole executor: it raises as the case does).
std::vector<std::string> executor_stops(const std::shared_ptr<torch::jit::Graph>& graph,
                                        const std::vector<c10::IValue>& sample, const JitSwitches& switches);

// `graph` run as stop `k` (from 1) of executor_stops left it.
std::unique_ptr<PreparedGraph> prepare_executor_stop(const std::shared_ptr<torch::jit::Graph>& graph,
                                                     const std::vector<c10::IValue>& sample,
                                                     const JitSwitches& switches, size_t k);

}  // namespace tsrepro
