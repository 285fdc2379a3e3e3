#include "backends/executor_passes.h"

#include <map>
#include <sstream>
#include <stdexcept>

#include <torch/csrc/jit/ir/irparser.h>
#include <torch/csrc/jit/jit_log.h>
#include <torch/csrc/jit/passes/utils/subgraph_utils.h>
#include <torch/csrc/jit/tensorexpr/kernel.h>

#include "backends/builtin.h"
#include "backends/fusion_group.h"

namespace tsrepro {
namespace {

using torch::jit::Block;
using torch::jit::Graph;
using torch::jit::Node;

// ---- the log ---------------------------------------------------------------------------------

// One message of the log: "[DEBUG profiling_graph_executor_impl.cpp:363] After X, before Y" and the
// graph printed with it (each of its lines carries the same prefix).
struct LogEntry {
  std::string header;
  int line = 0;  // the source line that logged it
  std::string graph;
};

std::vector<LogEntry> log_entries(const std::string& log) {
  std::vector<LogEntry> entries;
  std::istringstream in(log);
  for (std::string text; std::getline(in, text);) {
    // GRAPH_DUMP's messages ("Optimized Graph:") repeat what the debug ones print.
    if (text.rfind("[DEBUG ", 0) != 0) continue;
    const size_t close = text.find("] ");
    if (close == std::string::npos) continue;
    const size_t colon = text.rfind(':', close);
    const std::string body = text.substr(close + 2);
    const bool graph_line = body.rfind("graph(", 0) == 0 || body.rfind("with ", 0) == 0 ||
                            (!body.empty() && (body[0] == ' ' || body[0] == '\t'));
    if (graph_line && !entries.empty()) {
      entries.back().graph += body + "\n";
      continue;
    }
    LogEntry entry;
    entry.header = body;
    if (colon != std::string::npos) entry.line = std::atoi(text.c_str() + colon + 1);
    // A message logged without a newline before its graph ("After EliminateDeadCodegraph(%x ...").
    const size_t glued = body.find("graph(");
    if (glued != std::string::npos && glued > 0) {
      entry.header = body.substr(0, glued);
      entry.graph = body.substr(glued) + "\n";
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

bool contains(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

// "After ConstantPropagation, before ConstantPooling" -> "ConstantPropagation".
std::string pass_of(const std::string& header) {
  std::string pass = header.substr(6);  // after "After "
  const size_t end = pass.find_first_of(",(:");
  if (end != std::string::npos) pass = pass.substr(0, end);
  while (!pass.empty() && pass.back() == ' ') pass.pop_back();
  return pass;
}

// ---- a printed graph, runnable again --------------------------------------------------------------

// Each node of `block` (nested blocks too) that calls a printed subgraph, replaced by its body.
bool inline_printed_subgraphs(Block* block, const std::map<std::string, std::shared_ptr<Graph>>& subgraphs) {
  bool inlined = false;
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    Node* node = *it++;
    for (Block* inner : node->blocks()) inlined |= inline_printed_subgraphs(inner, subgraphs);
    const auto found = subgraphs.find(node->kind().toQualString());
    if (found == subgraphs.end()) continue;
    torch::jit::WithInsertPoint here(node);
    const std::vector<torch::jit::Value*> outputs =
        torch::jit::insertGraph(*block->owningGraph(), *found->second, node->inputs());
    for (size_t i = 0; i < outputs.size(); ++i) node->outputs()[i]->replaceAllUsesWith(outputs[i]);
    node->destroy();
    inlined = true;
  }
  return inlined;
}

// Profiling nodes record what flows through them and pass it on; their callbacks do not print.
void drop_profiling_nodes(Block* block) {
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    Node* node = *it++;
    for (Block* inner : node->blocks()) drop_profiling_nodes(inner);
    const std::string kind = node->kind().toQualString();
    if (kind != "prim::profile" && kind != "prim::profile_ivalue") continue;
    for (size_t i = 0; i < node->outputs().size() && i < node->inputs().size(); ++i)
      node->outputs()[i]->replaceAllUsesWith(node->inputs()[i]);
    node->destroy();
  }
}

std::shared_ptr<Graph> parsed(const std::string& text) {
  auto graph = std::make_shared<Graph>();
  torch::jit::parseIR(text, graph.get());
  return graph;
}

// ---- the executor, logged -------------------------------------------------------------------

// The executor's GRAPH_DEBUG messages, captured for its lifetime (libtorch's logging is
// process-wide: the levels and stream before are restored).
class CapturedExecutorLog {
 public:
  CapturedExecutorLog()
      : levels_before_(torch::jit::get_jit_logging_levels()),
        stream_before_(&torch::jit::get_jit_logging_output_stream()) {
    torch::jit::set_jit_logging_output_stream(out_);
    torch::jit::set_jit_logging_levels(">>profiling_graph_executor_impl");
  }
  ~CapturedExecutorLog() {
    torch::jit::set_jit_logging_levels(levels_before_);
    torch::jit::set_jit_logging_output_stream(*stream_before_);
  }
  std::string text() const { return out_.str(); }

 private:
  std::ostringstream out_;
  std::string levels_before_;
  std::ostream* stream_before_;
};

// NNC allowed to fall back to the interpreter wherever it cannot compile a kernel: the graphs the
// passes made are had even where a kernel's compile raises (a failure no graph pass may take for its own).
struct KernelFallbackAllowed {
  bool before = torch::jit::tensorexpr::setFallbackAllowed(true);
  ~KernelFallbackAllowed() { torch::jit::tensorexpr::setFallbackAllowed(before); }
};

// What preparing the case shows: the executor's log, and its optimized plan (null where a pass raised).
struct LoggedPreparation {
  std::string log;
  std::shared_ptr<Graph> plan;
};

LoggedPreparation prepare_logged(const std::shared_ptr<Graph>& graph, const std::vector<c10::IValue>& sample,
                                 const JitSwitches& switches) {
  KernelFallbackAllowed allowed;
  CapturedExecutorLog captured;
  LoggedPreparation prepared;
  try {
    prepared.plan = prepare_with_profiling_executor(graph, sample, switches)->optimized_graph()->copy();
  } catch (const std::exception&) {
    // The log says which pass was running (executor_stops); the whole backend raises as it did.
  }
  prepared.log = captured.text();
  return prepared;
}

// A pass whose graph tsrepro can run, with the passes before it whose graphs it cannot ("A + B + C
// (in ...)": their changes are in its graph too, so its stop is theirs).
struct RunnablePass {
  std::string name;
  std::shared_ptr<Graph> graph;
};

struct RunnablePasses {
  std::vector<RunnablePass> passes;
  std::string unrunnable;  // "A + B + ": the last passes, whose graphs tsrepro cannot run
};

RunnablePasses runnable_passes(const ExecutorLog& log) {
  RunnablePasses runnable;
  for (const LoggedPassGraph& logged : log.passes) {
    try {
      runnable.passes.push_back(
          {runnable.unrunnable + logged.pass + " (in " + logged.pipeline + ")", runnable_logged_graph(logged.text)});
      runnable.unrunnable.clear();
    } catch (const std::exception&) {
      runnable.unrunnable += logged.pass + " + ";
    }
  }
  return runnable;
}

// "fusion group 2 (aten::round, aten::add)": the ops NNC lowers into its kernel.
std::string fusion_group_text(Node* group, size_t number) {
  std::string ops;
  for (Node* op : group->g(c10::attr::Subgraph)->nodes())
    if (op->kind() != c10::prim::Constant) ops += (ops.empty() ? "" : ", ") + std::string(op->kind().toQualString());
  return "fusion group " + std::to_string(number) + " (" + ops + ")";
}

const char* const kFinalPasses = "the profiling executor's final passes";

// A graph of the executor (one output: a tuple where the case has several) run by the interpreter
// with the backend's switches (a fusion group left in it compiles as the executor's would).
class InterpretedStop : public PreparedGraph {
 public:
  InterpretedStop(std::shared_ptr<Graph> graph, size_t outputs, const JitSwitches& switches)
      : outputs_(outputs), switches_(switches) {
    ScopedJitSwitches scope(switches_);  // kernels compile as the interpreter's code is made
    interpreted_ = interpret_graph(std::move(graph));
  }
  std::vector<c10::IValue> run(std::vector<c10::IValue> inputs) override {
    ScopedJitSwitches scope(switches_);
    std::vector<c10::IValue> out = interpreted_->run(std::move(inputs));
    if (outputs_ == 1) return out;
    return out.at(0).toTupleRef().elements().vec();
  }
  std::string executed_graph() const override { return interpreted_->executed_graph(); }

 private:
  std::unique_ptr<PreparedGraph> interpreted_;
  size_t outputs_;
  JitSwitches switches_;
};

}  // namespace

ExecutorLog read_executor_log(const std::string& log) {
  ExecutorLog read;
  std::string pipeline, previous, last_header;
  bool started = false;
  int noopt_line = 0;
  for (const LogEntry& entry : log_entries(log)) {
    // The case's executor starts with the passes that need no profile; the first fallback
    // function's executor starts after its plan is made.
    if (contains(entry.header, "(beginning of runProfilingInsensitiveOptimizations)")) started = true;
    if (!started) continue;
    if (entry.header.rfind("After runProfilingOptimizations", 0) == 0) {
      read.finished = true;
      break;
    }
    // Executors compiled meanwhile (DecomposeOps' scripted decompositions) run the no-optimization
    // pipeline, which both 1.13 and 2.6 define after the pipelines of a plan: its messages, and any
    // logged from lines below them, are not the case's.
    if (contains(entry.header, "(beginning of runNooptPassPipeline)")) noopt_line = entry.line;
    if (noopt_line > 0 && entry.line >= noopt_line) continue;
    // "Running ProfilingGraphExecutorImpl 0x...": an executor starts running, no pass.
    if (entry.header.rfind("After ", 0) == 0 || entry.header.rfind("Before ", 0) == 0) last_header = entry.header;
    const size_t begins = entry.header.find("(beginning of ");
    if (begins != std::string::npos) {
      pipeline = entry.header.substr(begins + 14);
      pipeline = pipeline.substr(0, pipeline.find(')'));
    } else if (entry.header.rfind("Before runProfilingOptimizations", 0) == 0) {
      pipeline = "runProfilingOptimizations";
    }
    if (entry.graph.empty()) continue;
    const bool changed = entry.graph != previous;
    previous = entry.graph;
    if (entry.header.rfind("After ", 0) == 0 && changed)
      read.passes.push_back({pass_of(entry.header), pipeline, entry.graph});
  }
  // "After EliminateDeadCode, before DecomposeOps" last: DecomposeOps was running.
  const size_t before = last_header.find(", before ");
  if (!read.finished && before != std::string::npos)
    read.next = pass_of("After " + last_header.substr(before + 9)) + " (in " + pipeline + ")";
  return read;
}

std::shared_ptr<Graph> runnable_logged_graph(const std::string& text) {
  if (contains(text, "<Tensor>"))
    throw std::runtime_error("the logged graph holds a tensor constant its print does not show");
  // "graph(...)\n...\nwith prim::TensorExprGroup_0 = graph(...)\n...": the graph, then its subgraphs.
  std::vector<std::string> parts{""};
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("with ", 0) == 0) parts.emplace_back();
    parts.back() += line + "\n";
  }
  std::shared_ptr<Graph> graph = parsed(parts.front());
  std::map<std::string, std::shared_ptr<Graph>> subgraphs;
  for (size_t i = 1; i < parts.size(); ++i) {
    const size_t equals = parts[i].find(" = ");
    if (equals == std::string::npos) throw std::runtime_error("unexpected subgraph in the logged graph");
    subgraphs[parts[i].substr(5, equals - 5)] = parsed(parts[i].substr(equals + 3));
  }
  // A subgraph may call another (a fusion group inside a differentiable graph): inlined until none is left.
  while (inline_printed_subgraphs(graph->block(), subgraphs)) {
  }
  drop_profiling_nodes(graph->block());
  graph->lint();
  return graph;
}

std::vector<std::string> executor_stops(const std::shared_ptr<Graph>& graph, const std::vector<c10::IValue>& sample,
                                        const JitSwitches& switches) {
  const LoggedPreparation prepared = prepare_logged(graph, sample, switches);
  const ExecutorLog log = read_executor_log(prepared.log);
  const RunnablePasses runnable = runnable_passes(log);
  std::vector<std::string> stops;
  for (const RunnablePass& pass : runnable.passes) stops.push_back(pass.name);
  // Where a pass raised, the log says which: that is the stop, whatever ran before it.
  const std::string raised_in = prepared.plan ? "" : log.next;
  stops.push_back(!raised_in.empty() ? raised_in : runnable.unrunnable + kFinalPasses);
  if (!prepared.plan) return stops;
  std::vector<Node*> groups;
  collect_fusion_groups(prepared.plan->block(), groups);
  for (size_t i = 0; i < groups.size(); ++i) stops.push_back("NNC's kernel of " + fusion_group_text(groups[i], i + 1));
  return stops;
}

std::unique_ptr<PreparedGraph> prepare_executor_stop(const std::shared_ptr<Graph>& graph,
                                                     const std::vector<c10::IValue>& sample,
                                                     const JitSwitches& switches, size_t k) {
  const LoggedPreparation prepared = prepare_logged(graph, sample, switches);
  const size_t outputs = graph->outputs().size();
  const std::vector<RunnablePass> passes = runnable_passes(read_executor_log(prepared.log)).passes;
  if (k <= passes.size()) return std::make_unique<InterpretedStop>(passes[k - 1].graph, outputs, switches);
  // The pass that raised: the executor whole, which raises there.
  if (!prepared.plan) return prepare_with_profiling_executor(graph, sample, switches);
  // The plan, its fusion groups from the (k - passes - 1)-th on inlined back into plain ops.
  const size_t fused = k - passes.size() - 1;
  std::vector<Node*> groups;
  collect_fusion_groups(prepared.plan->block(), groups);
  for (size_t i = fused; i < groups.size(); ++i) torch::jit::SubgraphUtils::unmergeSubgraph(groups[i]);
  return std::make_unique<InterpretedStop>(prepared.plan, outputs, switches);
}

}  // namespace tsrepro
