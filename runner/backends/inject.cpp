// `inject:<fault>@<op>[+<op>...]`: a test backend that behaves like the interpreter except that it
// fails when every listed op is present in the graph (nested blocks included). Faults:
// compile-error and runtime-error (a RuntimeError in the compile or run phase), accuracy (the
// first listed op's tensor outputs are off by one), abort (SIGABRT), segfault (SIGSEGV), hang.
// Needing all ops at once models bugs that take two nodes together.

#include <chrono>
#include <csignal>
#include <sstream>
#include <thread>

#include <torch/script.h>

#include "runner/backends/builtin.h"
#include "runner/backends/inject.h"
#include "tsrepro/error.h"

namespace tsrepro {
namespace {

enum class Fault { CompileError, RuntimeError, Accuracy, Abort, Segfault, Hang };

Fault fault_from_name(const std::string& name, const std::string& spec) {
  if (name == "compile-error") return Fault::CompileError;
  if (name == "runtime-error") return Fault::RuntimeError;
  if (name == "accuracy") return Fault::Accuracy;
  if (name == "abort") return Fault::Abort;
  if (name == "segfault") return Fault::Segfault;
  if (name == "hang") return Fault::Hang;
  throw UserError("--backend " + spec + ": unknown fault '" + name +
                  "' (compile-error, runtime-error, accuracy, abort, segfault, hang)");
}

void collect_nodes(torch::jit::Block* block, std::vector<torch::jit::Node*>& out) {
  for (torch::jit::Node* node : block->nodes()) {
    out.push_back(node);
    for (torch::jit::Block* inner : node->blocks()) collect_nodes(inner, out);
  }
}

bool graph_has_kind(torch::jit::Graph& graph, c10::Symbol kind) {
  std::vector<torch::jit::Node*> nodes;
  collect_nodes(graph.block(), nodes);
  return std::any_of(nodes.begin(), nodes.end(), [&](torch::jit::Node* n) { return n->kind() == kind; });
}

// After every `op` node, its tensor outputs get +1: a wrong answer that changes no dtype.
void perturb_outputs_of(torch::jit::Graph& graph, c10::Symbol op) {
  std::vector<torch::jit::Node*> nodes;
  collect_nodes(graph.block(), nodes);
  for (torch::jit::Node* node : nodes) {
    if (node->kind() != op) continue;
    for (torch::jit::Value* output : node->outputs()) {
      if (!output->type()->isSubtypeOf(*c10::TensorType::get())) continue;
      torch::jit::WithInsertPoint after(node->next());
      torch::jit::Value* one = graph.insertConstant(1);
      torch::jit::Node* add = graph.create(c10::aten::add, {output, one, one});
      graph.insertNode(add);
      add->output()->setType(output->type());
      output->replaceAllUsesAfterNodeWith(add, add->output());
    }
  }
}

bool all_ops_present(torch::jit::Graph& graph, const std::vector<c10::Symbol>& ops) {
  return std::all_of(ops.begin(), ops.end(), [&](c10::Symbol op) { return graph_has_kind(graph, op); });
}

struct ParsedSpec {
  Fault fault;
  std::string fault_name;
  std::vector<c10::Symbol> ops;
  std::string op_text;
};

ParsedSpec parse_spec(const std::string& spec) {
  const auto colon = spec.find(':'), at = spec.find('@');
  if (colon == std::string::npos || at == std::string::npos || at < colon)
    throw UserError("--backend " + spec + ": write inject:<fault>@<op>, e.g. inject:segfault@aten::relu");
  ParsedSpec parsed;
  parsed.fault_name = spec.substr(colon + 1, at - colon - 1);
  parsed.fault = fault_from_name(parsed.fault_name, spec);
  parsed.op_text = spec.substr(at + 1);
  std::stringstream list(parsed.op_text);
  for (std::string op; std::getline(list, op, '+');) {
    if (op.find("::") == std::string::npos)
      throw UserError("--backend " + spec + ": op '" + op + "' needs a namespace, e.g. aten::" + op);
    parsed.ops.push_back(c10::Symbol::fromQualString(op));
  }
  if (parsed.ops.empty()) throw UserError("--backend " + spec + ": no op after '@'");
  return parsed;
}

[[noreturn]] void hang_forever() {
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

class FaultyGraph : public PreparedGraph {
 public:
  FaultyGraph(std::unique_ptr<PreparedGraph> inner, Fault fault, bool triggered, std::string ops)
      : inner_(std::move(inner)), fault_(fault), triggered_(triggered), ops_(std::move(ops)) {}

  std::vector<c10::IValue> run(std::vector<c10::IValue> inputs) override {
    if (triggered_) {
      switch (fault_) {
        case Fault::RuntimeError:
          TORCH_CHECK(false, "tsrepro injected runtime error at ", ops_);
        case Fault::Abort:
          std::abort();
        case Fault::Segfault:
          std::signal(SIGSEGV, SIG_DFL);
          std::raise(SIGSEGV);
          break;
        case Fault::Hang:
          hang_forever();
        default:
          break;
      }
    }
    return inner_->run(std::move(inputs));
  }
  std::string executed_graph() const override { return inner_->executed_graph(); }
  std::shared_ptr<torch::jit::Graph> optimized_graph() const override { return inner_->optimized_graph(); }

 private:
  std::unique_ptr<PreparedGraph> inner_;
  Fault fault_;
  bool triggered_;
  std::string ops_;
};

class InjectBackend : public Backend {
 public:
  InjectBackend(std::string spec, Fault fault, std::vector<c10::Symbol> ops, std::string op_text)
      : spec_(std::move(spec)), fault_(fault), ops_(std::move(ops)), op_text_(std::move(op_text)) {}
  std::string name() const override { return spec_; }

  std::unique_ptr<PreparedGraph> prepare(const BackendInput& input, const std::vector<c10::IValue>&) override {
    auto graph = input.graph->copy();
    const bool triggered = all_ops_present(*graph, ops_);
    if (triggered && fault_ == Fault::CompileError) TORCH_CHECK(false, "tsrepro injected compile error at ", op_text_);
    if (triggered && fault_ == Fault::Accuracy) perturb_outputs_of(*graph, ops_.front());
    return std::make_unique<FaultyGraph>(interpret_graph(graph), fault_, triggered, op_text_);
  }

 private:
  std::string spec_;
  Fault fault_;
  std::vector<c10::Symbol> ops_;
  std::string op_text_;
};

}  // namespace

std::unique_ptr<Backend> make_inject_backend(const std::string& spec, const BackendOptions&) {
  ParsedSpec parsed = parse_spec(spec);
  return std::make_unique<InjectBackend>(spec, parsed.fault, std::move(parsed.ops), parsed.op_text);
}

InjectPlan plan_inject(const std::string& spec, torch::jit::Graph& graph) {
  const ParsedSpec parsed = parse_spec(spec);
  InjectPlan plan;
  plan.fault = parsed.fault_name;
  plan.op_text = parsed.op_text;
  plan.graph = graph.copy();
  plan.triggered = all_ops_present(*plan.graph, parsed.ops);
  if (plan.triggered && parsed.fault == Fault::Accuracy) perturb_outputs_of(*plan.graph, parsed.ops.front());
  return plan;
}

}  // namespace tsrepro
