// `inject:<fault>@<op>[+<op>...]`: a test backend that behaves like the interpreter except that it
// fails when every listed op is present in the graph (nested blocks included). Faults:
// compile-error and runtime-error (a RuntimeError in the compile or run phase), accuracy (the
// first listed op's tensor outputs are off by one), abort (SIGABRT), segfault (SIGSEGV), hang,
// and two that only the backward pass sees: backward-accuracy (the first listed op's gradient is
// doubled, its forward exact) and backward-error (a RuntimeError when the backward pass reaches
// it). flaky-accuracy is accuracy on every second evaluation of a worker process only (the 1st,
// 3rd, ...): a nondeterministic bug whose rate is known, for --repeat. Needing all ops at once
// models bugs that take two nodes together.
//
// Every fault that changes numbers is an edit of the graph the interpreter runs (InjectPlan::graph),
// so repro.py and repro.cpp run the very same graph without tsrepro: the backward error calls
// tsrepro::backward_error, which both writers define in a few lines.

#include <atomic>
#include <chrono>
#include <csignal>
#include <sstream>
#include <thread>

#include <torch/library.h>
#include <torch/script.h>
#include <torch/csrc/autograd/custom_function.h>

#include "backends/builtin.h"
#include "backends/inject/inject.h"
#include "runner/graph/nested_nodes.h"
#include "runner/graph/typed_nodes.h"
#include "tsrepro/error.h"

namespace tsrepro {
namespace {

enum class Fault {
  CompileError,
  RuntimeError,
  Accuracy,
  FlakyAccuracy,
  Abort,
  Segfault,
  Hang,
  BackwardAccuracy,
  BackwardError
};

Fault fault_from_name(const std::string& name, const std::string& spec) {
  if (name == "compile-error") return Fault::CompileError;
  if (name == "runtime-error") return Fault::RuntimeError;
  if (name == "accuracy") return Fault::Accuracy;
  if (name == "flaky-accuracy") return Fault::FlakyAccuracy;
  if (name == "abort") return Fault::Abort;
  if (name == "segfault") return Fault::Segfault;
  if (name == "hang") return Fault::Hang;
  if (name == "backward-accuracy") return Fault::BackwardAccuracy;
  if (name == "backward-error") return Fault::BackwardError;
  throw UserError(
      "--backend " + spec + ": unknown fault '" + name +
      "' (compile-error, runtime-error, accuracy, flaky-accuracy, abort, segfault, hang, backward-accuracy, "
      "backward-error)");
}

bool graph_has_kind(torch::jit::Graph& graph, c10::Symbol kind) {
  const std::vector<torch::jit::Node*> nodes = nested_nodes(graph.block());
  return std::any_of(nodes.begin(), nodes.end(), [&](torch::jit::Node* n) { return n->kind() == kind; });
}

// Every tensor output of every `op` node, in graph order (nested blocks included).
std::vector<torch::jit::Value*> tensor_outputs_of(torch::jit::Graph& graph, c10::Symbol op) {
  const std::vector<torch::jit::Node*> nodes = nested_nodes(graph.block());
  std::vector<torch::jit::Value*> outputs;
  for (torch::jit::Node* node : nodes)
    if (node->kind() == op)
      for (torch::jit::Value* output : node->outputs())
        if (output->type()->isSubtypeOf(*c10::TensorType::get())) outputs.push_back(output);
  return outputs;
}

// Inserts `make(output)` right after output's node and hands it every later use of output.
template <typename Make>
void replace_after(torch::jit::Graph& graph, torch::jit::Value* output, const Make& make) {
  torch::jit::WithInsertPoint after(output->node()->next());
  torch::jit::Value* replacement = make(output);
  output->replaceAllUsesAfterNodeWith(replacement->node(), replacement);
}

// accuracy: y + 1, a wrong answer that changes no dtype.
void perturb_outputs_of(torch::jit::Graph& graph, c10::Symbol op) {
  for (torch::jit::Value* y : tensor_outputs_of(graph, op))
    replace_after(graph, y, [&](torch::jit::Value* v) {
      torch::jit::Value* one = graph.insertConstant(1);
      return insert_typed(graph, c10::aten::add, {v, one, one}, v->type());
    });
}

// backward-accuracy: y + (y - y.detach()), which is y exactly, but whose gradient is twice y's.
void double_gradients_of(torch::jit::Graph& graph, c10::Symbol op) {
  for (torch::jit::Value* y : tensor_outputs_of(graph, op))
    replace_after(graph, y, [&](torch::jit::Value* v) { return with_scaled_gradient(graph, v); });
}

// backward-error: y through tsrepro::backward_error, an identity whose backward raises.
void fail_backward_of(torch::jit::Graph& graph, c10::Symbol op, const std::string& op_text) {
  for (torch::jit::Value* y : tensor_outputs_of(graph, op))
    replace_after(graph, y, [&](torch::jit::Value* v) {
      torch::jit::Value* where = graph.insertConstant(op_text);
      return insert_typed(graph, c10::Symbol::fromQualString("tsrepro::backward_error"), {v, where}, v->type());
    });
}

// tsrepro::backward_error(x, where): returns a copy of x; its backward raises "tsrepro injected
// backward error at <where>". (A copy, not x itself: the schema promises a fresh tensor.)
class BackwardError : public torch::autograd::Function<BackwardError> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const std::string& where) {
    ctx->saved_data["where"] = where;
    return x.clone();
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list) {
    TORCH_CHECK(false, "tsrepro injected backward error at ", ctx->saved_data["where"].toStringRef());
  }
};

at::Tensor backward_error(const at::Tensor& x, c10::string_view where) {
  return BackwardError::apply(x, std::string(where));
}

TORCH_LIBRARY(tsrepro, m) {
  m.def("backward_error(Tensor x, str where) -> Tensor");
  m.impl("backward_error", c10::DispatchKey::CompositeImplicitAutograd, TORCH_FN(backward_error));
}

// The graph the interpreter runs for `fault` once it is triggered.
void apply_fault(torch::jit::Graph& graph, Fault fault, c10::Symbol first_op, const std::string& op_text) {
  if (fault == Fault::Accuracy || fault == Fault::FlakyAccuracy) perturb_outputs_of(graph, first_op);
  if (fault == Fault::BackwardAccuracy) double_gradients_of(graph, first_op);
  if (fault == Fault::BackwardError) fail_backward_of(graph, first_op, op_text);
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
          TORCH_CHECK(false, inject_error_message("runtime-error", ops_));
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
    bool triggered = all_ops_present(*graph, ops_);
    // flaky-accuracy: every second evaluation in this process is healthy (one prepare each).
    static std::atomic<int64_t> flaky_evaluations{0};
    if (triggered && fault_ == Fault::FlakyAccuracy && flaky_evaluations++ % 2 == 1) triggered = false;
    if (triggered && fault_ == Fault::CompileError) TORCH_CHECK(false, inject_error_message("compile-error", op_text_));
    if (triggered) apply_fault(*graph, fault_, ops_.front(), op_text_);
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

std::string inject_edit_text(const std::string& fault) {
  if (fault == "accuracy") return "1 added to what it returns";
  if (fault == "flaky-accuracy") return "1 added to what it returns, on every second run";
  if (fault == "backward-accuracy")
    return "its outputs y replaced by y + (y - y.detach()): the same values, twice the gradient";
  if (fault == "backward-error") return "its outputs passed through tsrepro::backward_error, whose backward raises";
  return "";
}

InjectPlan plan_inject(const std::string& spec, torch::jit::Graph& graph) {
  const ParsedSpec parsed = parse_spec(spec);
  InjectPlan plan;
  plan.fault = parsed.fault_name;
  plan.op_text = parsed.op_text;
  plan.graph = graph.copy();
  plan.triggered = all_ops_present(*plan.graph, parsed.ops);
  if (plan.triggered) apply_fault(*plan.graph, parsed.fault, parsed.ops.front(), parsed.op_text);
  return plan;
}

}  // namespace tsrepro
