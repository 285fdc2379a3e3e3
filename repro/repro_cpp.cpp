// repro.cpp + CMakeLists.txt: a standalone libtorch program that runs a case's graph in the
// TorchScript interpreter (the reference) and with the tested backend, compares them as tsrepro
// does, and exits 1 when the recorded failure reproduces.
//
// The program is the same for every case except for three generated parts: the header comment,
// the case data (graph IR, input specs) and the recorded settings. The rest is fixed text below,
// written to read like a hand-written program, because it ends up pasted into bug reports.
// Everything that comes from the case goes through repro/cpp_literal.h: nothing in a graph or a
// command line can become code.

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include <sys/utsname.h>

#include <torch/script.h>
#include <torch/version.h>

#include "repro/cpp_literal.h"
#include "runner/extension_libraries.h"
#include "runner/inputs.h"
#include "tsrepro/error.h"
#include "tsrepro/writer.h"

#ifndef TSREPRO_VERSION
#define TSREPRO_VERSION "unknown"
#endif

namespace tsrepro {
namespace {

// ---- Fixed parts of the generated program -------------------------------------------------------

const char* const kIncludes = R"cpp(
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <dlfcn.h>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/irparser.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/passes/frozen_conv_add_relu_fusion.h>
#include <torch/csrc/jit/passes/frozen_linear_transpose.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/csrc/jit/runtime/interpreter.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/csrc/jit/tensorexpr/kernel.h>
#include <torch/script.h>
#include <torch/version.h>

#ifndef REPRO_DIR
#define REPRO_DIR "."  // CMakeLists.txt sets it to the case directory, where inputs.pt is
#endif

  // Declared in torch/csrc/jit/codegen/fuser/interface.h, which libtorch installs do not all ship.
  namespace torch {
  namespace jit {
  TORCH_API void overrideCanFuseOnCPU(bool value);
  }  // namespace jit
  }  // namespace torch

  namespace {

  using Values = std::vector<c10::IValue>;
)cpp";

const char* const kInputSpecDefinition = R"cpp(
  // One row per graph input, enough to make a fake value (--fake-inputs): a tensor is drawn
  // uniformly from [lo, hi] (the range of values seen) by a CPU generator seeded with seed + its
  // index; a scalar keeps its recorded value.
  enum class Origin {
    Argument,   // an input of the original graph
    Parameter,  // a module parameter that tsrepro made an input (ofi folds it back in)
    Constant,   // a buffer, attribute or tensor constant made an input (ofi folds it back in)
  };

  struct InputSpec {
    std::string name;
    std::string kind;  // "tensor", "scalar", or "opaque" (no fake value: needs inputs.pt)
    Origin origin = Origin::Argument;
    at::ScalarType dtype = at::kFloat;
    std::vector<int64_t> sizes, strides;  // no strides: the recorded layout was not dense
    double lo = 0, hi = 0;
    c10::IValue value;  // scalars
  };

  [[maybe_unused]] InputSpec tensor_input(std::string name, at::ScalarType dtype, std::vector<int64_t> sizes,
                                          std::vector<int64_t> strides, double lo, double hi,
                                          Origin origin = Origin::Argument) {
    InputSpec spec;
    spec.name = std::move(name);
    spec.kind = "tensor";
    spec.origin = origin;
    spec.dtype = dtype;
    spec.sizes = std::move(sizes);
    spec.strides = std::move(strides);
    spec.lo = lo;
    spec.hi = hi;
    return spec;
  }

  [[maybe_unused]] InputSpec scalar_input(std::string name, c10::IValue value, Origin origin = Origin::Argument) {
    InputSpec spec;
    spec.name = std::move(name);
    spec.kind = "scalar";
    spec.origin = origin;
    spec.value = std::move(value);
    return spec;
  }

  [[maybe_unused]] InputSpec opaque_input(std::string name, Origin origin = Origin::Argument) {
    InputSpec spec;
    spec.name = std::move(name);
    spec.kind = "opaque";
    spec.origin = origin;
    return spec;
  }
)cpp";

const char* const kInputsSection = R"cpp(
  // ---- Inputs -------------------------------------------------------------------------------------

  std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path + ": cannot read it (" + std::strerror(errno) + ")");
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  // inputs.pt holds one value per graph input: a tuple written by torch::jit::pickle_save.
  Values load_real_inputs(const std::string& path) {
    const std::string bytes = read_file(path);
    const c10::IValue stored = torch::jit::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
    if (stored.isTuple()) return stored.toTupleRef().elements().vec();
    if (stored.isList()) return stored.toListRef().vec();
    throw std::runtime_error(path + ": expected a tuple of input values");
  }

  at::Tensor fake_tensor(const InputSpec& spec, uint64_t seed) {
    auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
    const auto options = at::TensorOptions().dtype(spec.dtype);
    at::Tensor t =
        spec.strides.empty() ? at::empty(spec.sizes, options) : at::empty_strided(spec.sizes, spec.strides, options);
    if (spec.dtype == at::kBool) {
      t.random_(0, 2, generator);
    } else if (c10::isFloatingType(spec.dtype) || c10::isComplexType(spec.dtype)) {
      if (spec.lo == spec.hi)
        t.fill_(spec.lo);
      else
        t.uniform_(spec.lo, spec.hi, generator);
    } else {
      t.random_(static_cast<int64_t>(std::ceil(spec.lo)), static_cast<int64_t>(std::floor(spec.hi)) + 1, generator);
    }
    return t;
  }

  Values make_fake_inputs(uint64_t seed) {
    Values values;
    for (size_t i = 0; i < kInputs.size(); ++i) {
      const InputSpec& spec = kInputs[i];
      if (spec.kind == "opaque")
        throw std::runtime_error("input '" + spec.name + "' has no fake value: run with the real inputs (inputs.pt)");
      values.push_back(spec.kind == "tensor" ? c10::IValue(fake_tensor(spec, seed + i)) : spec.value);
    }
    return values;
  }

  // Every run gets its own deep copy: ops may change their inputs in place.
  c10::IValue clone_value(const c10::IValue& v) {
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      return t.detach().clone().requires_grad_(t.requires_grad());
    }
    if (v.isTuple()) {
      Values items;
      for (const c10::IValue& item : v.toTupleRef().elements()) items.push_back(clone_value(item));
      return c10::ivalue::Tuple::create(std::move(items));
    }
    if (v.isList()) {
      c10::impl::GenericList list(v.toList().elementType());
      for (const c10::IValue& item : v.toListRef()) list.push_back(clone_value(item));
      return list;
    }
    return v;
  }

  Values clone_values(const Values& values) {
    Values copies;
    for (const c10::IValue& v : values) copies.push_back(clone_value(v));
    return copies;
  }

  c10::IValue value_to_device(const c10::IValue& v, const c10::Device& device) {
    if (v.isTensor()) return v.toTensor().to(device);
    if (v.isTuple()) {
      Values items;
      for (const c10::IValue& item : v.toTupleRef().elements()) items.push_back(value_to_device(item, device));
      return c10::ivalue::Tuple::create(std::move(items));
    }
    if (v.isList()) {
      c10::impl::GenericList list(v.toList().elementType());
      for (const c10::IValue& item : v.toListRef()) list.push_back(value_to_device(item, device));
      return list;
    }
    return v;
  }

  Values values_to_device(const Values& values, const c10::Device& device) {
    Values moved;
    for (const c10::IValue& v : values) moved.push_back(value_to_device(v, device));
    return moved;
  }

  // --device: the graph's Device constants must name it too.
  void graph_constants_to_device(torch::jit::Block* block, const c10::Device& device) {
    for (torch::jit::Node* node : block->nodes()) {
      if (node->kind() == c10::prim::Constant && node->output()->type()->kind() == c10::TypeKind::DeviceObjType &&
          node->hasAttribute(c10::attr::value))
        node->s_(c10::attr::value, device.str());
      for (torch::jit::Block* inner : node->blocks()) graph_constants_to_device(inner, device);
    }
  }

  // --- Backward mode: gradients of a scalar loss with respect to the inputs are compared too.

  std::vector<bool> gradient_inputs(bool backward) {
    std::vector<bool> wanted;
    for (const InputSpec& spec : kInputs) wanted.push_back(backward && spec.origin != Origin::Constant);
    return wanted;
  }

  bool any_of(const std::vector<bool>& flags) {
    for (bool flag : flags)
      if (flag) return true;
    return false;
  }

  Values fresh_inputs(const Values& inputs, const std::vector<bool>& with_grad) {
    Values copy = clone_values(inputs);
    for (size_t i = 0; i < copy.size(); ++i)
      if (i < with_grad.size() && with_grad[i] && copy[i].isTensor() && copy[i].toTensor().is_floating_point())
        copy[i] = copy[i].toTensor().detach().requires_grad_(true);
    return copy;
  }

  // torch._dynamo.testing.reduce_to_scalar_loss: the mean of each floating tensor, averaged.
  std::optional<at::Tensor> reduce_to_scalar_loss(const c10::IValue& out) {
    if (out.isTensor()) {
      const at::Tensor& t = out.toTensor();
      if (!t.is_floating_point() || t.numel() == 0 || !t.requires_grad()) return std::nullopt;
      return t.sum() / t.numel();
    }
    Values items;
    if (out.isTuple())
      items = out.toTupleRef().elements().vec();
    else if (out.isList())
      items = out.toListRef().vec();
    std::optional<at::Tensor> total;
    for (const c10::IValue& item : items) {
      std::optional<at::Tensor> part = reduce_to_scalar_loss(item);
      if (part) total = total ? *total + *part : *part;
    }
    if (total && !items.empty()) *total = *total / static_cast<double>(items.size());
    return total;
  }

  // d loss / d input for every input (None where an input has no gradient).
  Values input_gradients(const Values& outputs, const Values& inputs) {
    std::optional<at::Tensor> loss = reduce_to_scalar_loss(c10::ivalue::Tuple::create(outputs));
    if (loss) loss->backward();
    Values grads;
    for (const c10::IValue& v : inputs) {
      const bool has_grad = v.isTensor() && v.toTensor().is_floating_point() && v.toTensor().grad().defined();
      grads.push_back(has_grad ? c10::IValue(v.toTensor().grad()) : c10::IValue());
    }
    return grads;
  }
)cpp";

const char* const kBackendsSection = R"cpp(
  // ---- Backends -----------------------------------------------------------------------------------
  // A backend compiles the graph (profiling backends run it on the sample inputs first) into a
  // function that runs it and returns one value per graph output. Compiling is the "compile"
  // phase of a failure, running the "run" phase.

  using Graph = std::shared_ptr<torch::jit::Graph>;
  using CompiledGraph = std::function<Values(Values)>;
  using Backend = std::function<CompiledGraph(const Graph& graph, const Values& sample)>;
  using BackendOptions = std::map<std::string, std::string>;

  bool option_flag(const BackendOptions& options, const std::string& key, bool fallback) {
    const auto found = options.find(key);
    if (found == options.end()) return fallback;
    if (found->second == "1" || found->second == "true" || found->second == "on") return true;
    if (found->second == "0" || found->second == "false" || found->second == "off") return false;
    throw std::invalid_argument("--backend-opt " + key + "=" + found->second + ": expected 0 or 1");
  }

  // eager: the TorchScript interpreter, no optimization passes at all.
  CompiledGraph interpret(const Graph& graph) {
    auto code = std::make_shared<torch::jit::Code>(graph, "repro");
    return [code](Values inputs) {
      torch::jit::Stack stack(std::move(inputs));
      torch::jit::InterpreterState(*code).run(stack);
      return stack;
    };
  }

  // The JIT's process-wide switches. Only the child process that runs the backend sets them.
  struct JitSwitches {
    bool fuse_on_cpu = false;  // NNC on the CPU
    bool te_fuser = true;
    bool fusion_group_inlining = true;
    bool dynamic_shape_fusion = false;
    bool reductions = false;
    std::string strategy;  // "static" or "dynamic" (depth 2); empty: libtorch's default
  };

  void apply_jit_switches(const JitSwitches& s) {
    torch::jit::getExecutorMode() = true;
    torch::jit::getProfilingMode() = true;
    torch::jit::setGraphExecutorOptimize(true);
    torch::jit::overrideCanFuseOnCPU(s.fuse_on_cpu);
    torch::jit::setTensorExprFuserEnabled(s.te_fuser);
    torch::jit::debugSetFusionGroupInlining(s.fusion_group_inlining);
    torch::jit::setTensorExprDynamicShapeFusionEnabled(s.dynamic_shape_fusion);
    torch::jit::setTexprReductionsEnabled(s.reductions);
    // Without LLVM (Debian's libtorch has none) NNC kernels must fall back to its IR interpreter.
    torch::jit::tensorexpr::getTEMustUseLLVMOnCPU() = false;
    if (!s.strategy.empty()) {
      const auto behavior =
          s.strategy == "dynamic" ? torch::jit::FusionBehavior::DYNAMIC : torch::jit::FusionBehavior::STATIC;
      torch::jit::FusionStrategy strategy = {{behavior, 2}};
      torch::jit::setFusionStrategy(strategy);
    }
  }

  // The graph executor needs exactly one output: several are packed into a tuple.
  Graph with_single_output(const Graph& original) {
    Graph graph = original->copy();
    if (graph->outputs().size() == 1) return graph;
    std::vector<torch::jit::Value*> outputs(graph->outputs().begin(), graph->outputs().end());
    torch::jit::Node* tuple = graph->insertNode(graph->createTuple(outputs));
    while (!graph->outputs().empty()) graph->eraseOutput(0);
    graph->registerOutput(tuple->output());
    return graph;
  }

  // jit, nnc, ofi: the profiling graph executor. The profiling runs record shapes and dtypes; the
  // plan asked for afterwards is the optimized one, where the fusers and other passes run.
  CompiledGraph profiling_executor(const Graph& graph, const Values& sample, const JitSwitches& switches) {
    apply_jit_switches(switches);
    const size_t output_count = graph->outputs().size();
    auto function = std::make_shared<torch::jit::GraphFunction>("repro", with_single_output(graph), nullptr);
    for (size_t i = 0; i < torch::jit::getNumProfiledRuns(); ++i) {
      torch::jit::Stack stack(clone_values(sample));
      function->run(stack);
    }
    torch::jit::Stack stack(clone_values(sample));
    const size_t bailout_depth = torch::jit::getBailoutDepth();
    function->get_executor().getPlanFor(stack, bailout_depth);
    return [function, output_count](Values inputs) {
      torch::jit::Stack stack(std::move(inputs));
      function->run(stack);
      return output_count == 1 ? Values{stack.at(0)} : stack.at(0).toTupleRef().elements().vec();
    };
  }

  // nnc: the profiling executor with the TensorExpr fuser forced on for the CPU.
  Backend nnc_backend(const BackendOptions& options) {
    JitSwitches switches;
    switches.fuse_on_cpu = true;
    switches.fusion_group_inlining = option_flag(options, "inline", true);
    switches.dynamic_shape_fusion = option_flag(options, "dynamic_shapes", false);
    switches.reductions = option_flag(options, "reductions", false);
    if (options.count("strategy")) {
      switches.strategy = options.at("strategy");
      if (switches.strategy != "static" && switches.strategy != "dynamic")
        throw std::invalid_argument("--backend-opt strategy=" + switches.strategy + ": expected static or dynamic");
    }
    return [switches](const Graph& graph, const Values& sample) { return profiling_executor(graph, sample, switches); };
  }

  // ofi: torch.jit.optimize_for_inference(torch.jit.freeze(m.eval())) through their C++ equivalents,
  // m being the graph as a module in eval mode whose lifted parameters are buffers read with
  // prim::GetAttr; the frozen forward then runs in the profiling executor.
  // Freezing needs m.eval(): lifted `training` flags (named after their path, %bn1_training) are False.
  c10::IValue as_in_eval_mode(const torch::jit::Value* input, const c10::IValue& value) {
    const std::string& name = input->debugName();
    const bool training_flag = value.isBool() && name.size() >= 8 && name.compare(name.size() - 8, 8, "training") == 0;
    return training_flag ? c10::IValue(false) : value;
  }

  torch::jit::Module module_of_graph(const Graph& original, const Values& values, const std::vector<bool>& lifted) {
    torch::jit::Module module(c10::QualifiedName("__torch__.tsrepro.CaseModule"));
    module.register_attribute("training", c10::BoolType::get(), false);
    Graph graph = with_single_output(original);
    torch::jit::Value* self = graph->insertInput(0, "self");
    self->setType(module.type());
    torch::jit::WithInsertPoint at_top(graph->param_node()->next());
    for (size_t i = lifted.size(); i-- > 0;) {
      if (!lifted[i]) continue;
      const std::string name = "lifted_" + std::to_string(i);
      if (values.at(i).isTensor())
        module.register_buffer(name, values.at(i).toTensor());
      else
        module.register_attribute(name, graph->inputs()[i + 1]->type(),
                                  as_in_eval_mode(graph->inputs()[i + 1], values.at(i)));
      graph->inputs()[i + 1]->replaceAllUsesWith(graph->insertGetAttr(self, name));
      graph->eraseInput(i + 1);
    }
    module.type()->addMethod(module._ivalue()->compilation_unit()->create_function(
        c10::QualifiedName(*module.type()->name(), "forward"), graph));
    return module;
  }

  Values drop_lifted(const Values& inputs, const std::vector<bool>& lifted) {
    Values kept;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (i >= lifted.size() || !lifted[i]) kept.push_back(inputs[i]);
    return kept;
  }

  Backend ofi_backend(const BackendOptions& options, const std::vector<bool>& lifted) {
    const bool numerics = option_flag(options, "numerics", true);
    const bool mkldnn = option_flag(options, "mkldnn", true);
    return [=](const Graph& original, const Values& sample) {
      const size_t output_count = original->outputs().size();
      torch::jit::Module frozen = torch::jit::freeze(module_of_graph(original, sample, lifted), c10::nullopt, numerics);
      if (mkldnn) {
        frozen = torch::jit::optimize_for_inference(frozen);
      } else {  // tsrepro's debugging knob: optimize_for_inference's passes without the MKLDNN conversion
        Graph graph = frozen.get_method("forward").graph();
        torch::jit::FuseFrozenConvAddRelu(graph);
        torch::jit::FrozenLinearTranspose(graph);
      }
      Graph graph = frozen.get_method("forward").graph()->copy();
      graph->eraseInput(0);  // the frozen forward keeps its %self, unused
      CompiledGraph run = profiling_executor(graph, drop_lifted(sample, lifted), JitSwitches{});
      return CompiledGraph([run, lifted, output_count](Values inputs) {
        Values outputs = run(drop_lifted(inputs, lifted));
        return output_count == 1 ? outputs : outputs.at(0).toTupleRef().elements().vec();
      });
    };
  }

  // inject:<fault>@<op>[+<op>...]: tsrepro's test backend. It is the interpreter, except when every
  // listed op is in the graph: then compile-error and runtime-error throw, accuracy adds 1 to the
  // first op's tensor outputs, abort and segfault kill the process, and hang never returns.
  void collect_nodes(torch::jit::Block* block, std::vector<torch::jit::Node*>& out) {
    for (torch::jit::Node* node : block->nodes()) {
      out.push_back(node);
      for (torch::jit::Block* inner : node->blocks()) collect_nodes(inner, out);
    }
  }

  bool graph_has_kind(torch::jit::Graph& graph, c10::Symbol kind) {
    std::vector<torch::jit::Node*> nodes;
    collect_nodes(graph.block(), nodes);
    for (torch::jit::Node* node : nodes)
      if (node->kind() == kind) return true;
    return false;
  }

  void perturb_outputs_of(torch::jit::Graph& graph, c10::Symbol op) {
    std::vector<torch::jit::Node*> nodes;
    collect_nodes(graph.block(), nodes);
    for (torch::jit::Node* node : nodes) {
      if (node->kind() != op) continue;
      for (torch::jit::Value* output : node->outputs()) {
        if (!output->type()->isSubtypeOf(*c10::TensorType::get())) continue;
        torch::jit::WithInsertPoint after(node->next());
        torch::jit::Value* one = graph.insertConstant(1);
        torch::jit::Node* add = graph.insertNode(graph.create(c10::aten::add, {output, one, one}));
        add->output()->setType(output->type());
        output->replaceAllUsesAfterNodeWith(add, add->output());
      }
    }
  }

  Backend inject_backend(const std::string& spec) {
    const size_t colon = spec.find(':'), at = spec.find('@');
    if (at == std::string::npos || at < colon)
      throw std::invalid_argument("--backend " + spec + ": write inject:<fault>@<op>, e.g. inject:segfault@aten::relu");
    const std::string fault = spec.substr(colon + 1, at - colon - 1);
    const std::string op_text = spec.substr(at + 1);
    static const char* const kFaults[] = {"compile-error", "runtime-error", "accuracy", "abort", "segfault", "hang"};
    if (std::find(std::begin(kFaults), std::end(kFaults), fault) == std::end(kFaults))
      throw std::invalid_argument("--backend " + spec + ": unknown fault '" + fault + "'");
    std::vector<c10::Symbol> ops;
    std::stringstream list(op_text);
    for (std::string op; std::getline(list, op, '+');) {
      if (op.find("::") == std::string::npos)
        throw std::invalid_argument("--backend " + spec + ": op '" + op + "' needs a namespace, e.g. aten::" + op);
      ops.push_back(c10::Symbol::fromQualString(op));
    }
    if (ops.empty()) throw std::invalid_argument("--backend " + spec + ": no op after '@'");

    return [fault, ops, op_text](const Graph& original, const Values&) {
      Graph graph = original->copy();
      bool triggered = true;
      for (c10::Symbol op : ops) triggered = triggered && graph_has_kind(*graph, op);
      if (triggered && fault == "compile-error") TORCH_CHECK(false, "tsrepro injected compile error at ", op_text);
      if (triggered && fault == "accuracy") perturb_outputs_of(*graph, ops.front());
      CompiledGraph run = interpret(graph);
      return CompiledGraph([run, fault, triggered, op_text](Values inputs) {
        if (triggered && fault == "runtime-error") TORCH_CHECK(false, "tsrepro injected runtime error at ", op_text);
        if (triggered && fault == "abort") std::abort();
        if (triggered && fault == "segfault") {
          std::signal(SIGSEGV, SIG_DFL);
          std::raise(SIGSEGV);
        }
        while (triggered && fault == "hang") std::this_thread::sleep_for(std::chrono::seconds(1));
        return run(std::move(inputs));
      });
    };
  }

  Backend make_backend(const std::string& spec, const BackendOptions& options, const std::vector<bool>& lifted) {
    const std::string family = spec.substr(0, spec.find(':'));
    static const std::map<std::string, std::vector<std::string>> kOptionKeys = {
        {"eager", {}},
        {"jit", {}},
        {"nnc", {"inline", "dynamic_shapes", "reductions", "strategy"}},
        {"ofi", {"numerics", "mkldnn"}},
        {"inject", {}}};
    const auto known = kOptionKeys.find(family);
    if (known == kOptionKeys.end())
      throw std::invalid_argument("--backend " + spec + ": unknown backend (eager, jit, nnc, ofi, inject:<fault>@<op>)");
    for (const auto& option : options)
      if (std::find(known->second.begin(), known->second.end(), option.first) == known->second.end())
        throw std::invalid_argument("--backend-opt " + option.first + ": backend '" + family + "' has no such option");

    if (family == "eager") return [](const Graph& graph, const Values&) { return interpret(graph->copy()); };
    if (family == "jit")
      return [](const Graph& graph, const Values& sample) { return profiling_executor(graph, sample, JitSwitches{}); };
    if (family == "nnc") return nnc_backend(options);
    if (family == "ofi") return ofi_backend(options, lifted);
    return inject_backend(spec);
  }
)cpp";

const char* const kFailuresSection = R"cpp(
  // ---- Failures and their signatures --------------------------------------------------------------
  // A signature names a failure so that the same bug is recognised across graphs: the exception
  // type and first message line with numbers, addresses and paths masked, crash:SIGSEGV, timeout,
  // accuracy:<dtype>.

  struct ErrorInfo {
    std::string type;  // the Python exception type it would be: RuntimeError, IndexError...
    std::string message;
  };

  std::string demangled(const char* name) {
    int status = 0;
    char* readable = abi::__cxa_demangle(name, nullptr, nullptr, &status);
    std::string result = status == 0 && readable ? readable : name;
    std::free(readable);
    return result;
  }

  // The interpreter wraps an op's error in a TorchScript traceback; its last "XError: ..." line is
  // the error itself.
  ErrorInfo unwrap_interpreter_traceback(ErrorInfo info) {
    if (info.message.find("The following operation failed in the TorchScript interpreter") == std::string::npos)
      return info;
    static const std::regex error_line("(^|\\n)([A-Za-z_.]*Error): ");
    std::smatch last;
    for (auto it = std::sregex_iterator(info.message.begin(), info.message.end(), error_line);
         it != std::sregex_iterator(); ++it)
      last = *it;
    if (last.empty()) return info;
    const auto start = static_cast<size_t>(last.position(0) + last.length(0));
    return {last[2].str(), info.message.substr(start)};
  }

  ErrorInfo describe_current_exception() {
    try {
      throw;
    } catch (const c10::IndexError& e) {
      return unwrap_interpreter_traceback({"IndexError", e.what_without_backtrace()});
    } catch (const c10::ValueError& e) {
      return unwrap_interpreter_traceback({"ValueError", e.what_without_backtrace()});
    } catch (const c10::TypeError& e) {
      return unwrap_interpreter_traceback({"TypeError", e.what_without_backtrace()});
    } catch (const c10::NotImplementedError& e) {
      return unwrap_interpreter_traceback({"NotImplementedError", e.what_without_backtrace()});
    } catch (const c10::OutOfMemoryError& e) {
      return unwrap_interpreter_traceback({"OutOfMemoryError", e.what_without_backtrace()});
    } catch (const c10::Error& e) {
      return unwrap_interpreter_traceback({"RuntimeError", e.what_without_backtrace()});
    } catch (const std::exception& e) {
      return unwrap_interpreter_traceback({demangled(typeid(e).name()), e.what()});
    } catch (...) {
      return {"unknown", "an exception that is not a std::exception"};
    }
  }

  std::string first_nonempty_line(const std::string& text) {
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
      if (line.find_first_not_of(" \t\r") != std::string::npos) return line;
    return "";
  }

  std::string mask_variable_parts(std::string text) {
    static const std::regex hex("0x[0-9a-fA-F]+");
    static const std::regex path("(/[^\\s:'\"(),]+)+");
    static const std::regex number("[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?");
    text = std::regex_replace(text, hex, "0x?");
    text = std::regex_replace(text, path, "<path>");
    return std::regex_replace(text, number, "N");
  }

  std::string exception_signature(const std::string& phase, const ErrorInfo& error) {
    return "exception:" + phase + ":" + error.type + ": " + mask_variable_parts(first_nonempty_line(error.message));
  }

  std::string signal_name(int number) {
    static const std::pair<int, const char*> kSignals[] = {
        {SIGSEGV, "SIGSEGV"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"}, {SIGILL, "SIGILL"},
        {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"}, {SIGTRAP, "SIGTRAP"}, {SIGSYS, "SIGSYS"}, {SIGPIPE, "SIGPIPE"}};
    for (const auto& known : kSignals)
      if (known.first == number) return known.second;
    return "signal " + std::to_string(number);
  }
)cpp";

const char* const kChildSection = R"cpp(
  // ---- Running the tested backend in a child process ----------------------------------------------
  // A crash or a hang of the backend must not take the repro with it: the backend compiles and runs
  // in a forked child, which passes its outputs back through a file (torch::jit::pickle_save). The
  // parent has not used any threads or CUDA before the fork, so the child can.

  struct BackendOutcome {
    std::string status = "pass";  // pass (outputs are valid), exception, crash, timeout
    std::string phase;            // compile, run or backward: where the child was
    ErrorInfo error;              // exception
    std::string death;            // crash: "SIGSEGV", or "exit 3" for an unexpected exit status
    Values outputs, grads;
  };

  // The child writes its current phase here, in memory shared with the parent, so that the parent
  // can tell where a crash or a hang happened.
  class SharedPhase {
   public:
    SharedPhase() {
      void* memory = mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
      if (memory == MAP_FAILED) throw std::runtime_error(std::string("mmap failed: ") + std::strerror(errno));
      text_ = static_cast<char*>(memory);
      text_[0] = '\0';
    }
    ~SharedPhase() { munmap(text_, kSize); }
    SharedPhase(const SharedPhase&) = delete;
    SharedPhase& operator=(const SharedPhase&) = delete;

    void set(const char* phase) { std::snprintf(text_, kSize, "%s", phase); }
    std::string get() const { return std::string(text_, strnlen(text_, kSize)); }

   private:
    static constexpr size_t kSize = 64;
    char* text_ = nullptr;
  };

  // A file for the child's report, removed when the parent is done with it.
  class TempFile {
   public:
    TempFile() {
      const char* dir = std::getenv("TMPDIR");
      std::string pattern = std::string(dir && *dir ? dir : "/tmp") + "/repro-outputs-XXXXXX";
      const int fd = mkstemp(&pattern[0]);
      if (fd < 0) throw std::runtime_error(pattern + ": cannot create it (" + std::strerror(errno) + ")");
      close(fd);
      path_ = pattern;
    }
    ~TempFile() { std::remove(path_.c_str()); }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    const std::string& path() const { return path_; }

   private:
    std::string path_;
  };

  c10::IValue as_tuple(const Values& values) { return c10::ivalue::Tuple::create(values); }

  // Everything the child needs to compile and run the graph with the tested backend.
  struct BackendRun {
    Backend backend;
    Graph graph;
    Values inputs;  // on the CPU: the child moves them to the device
    std::vector<bool> with_grad;
    c10::Device device = c10::kCPU;
    bool show_graph = false;  // print the graph the executor really ran
  };

  void print_executed_graph() {
    const std::shared_ptr<torch::jit::Graph> executed = torch::jit::lastExecutedOptimizedGraph();
    std::cout << "backend graph (the graph executor's last optimized plan):\n"
              << (executed ? executed->toString(false)
                           : std::string("  (none: the backend does not use the graph executor)\n"));
  }

  // The report: (status, phase, error type, error message, outputs, input gradients).
  c10::IValue compile_and_run(const BackendRun& job, SharedPhase& phase) {
    try {
      phase.set("compile");
      const Values inputs = values_to_device(job.inputs, job.device);
      CompiledGraph compiled = job.backend(job.graph, fresh_inputs(inputs, job.with_grad));
      phase.set("run");
      Values run_inputs = fresh_inputs(inputs, job.with_grad);
      Values outputs = compiled(run_inputs);
      if (job.show_graph) print_executed_graph();
      Values grads;
      if (any_of(job.with_grad)) {
        phase.set("backward");
        grads = input_gradients(outputs, run_inputs);
      }
      for (c10::IValue& v : outputs)
        if (v.isTensor()) v = v.toTensor().detach();
      const c10::Device cpu(c10::kCPU);
      return as_tuple(
          {"pass", "", "", "", as_tuple(values_to_device(outputs, cpu)), as_tuple(values_to_device(grads, cpu))});
    } catch (...) {
      const ErrorInfo error = describe_current_exception();
      return as_tuple({"exception", phase.get(), error.type, error.message, as_tuple({}), as_tuple({})});
    }
  }

  [[noreturn]] void child_main(const BackendRun& job, SharedPhase& phase, const std::string& report_path) {
    const rlimit no_core_file = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core_file);  // an expected crash needs no core dump
    std::vector<char> report;
    try {
      report = torch::jit::pickle_save(compile_and_run(job, phase));
    } catch (const std::exception& e) {
      // Outputs that pickle cannot write (sparse tensors, objects): say so instead.
      report = torch::jit::pickle_save(as_tuple({"unreportable", phase.get(), "", e.what(), as_tuple({}), as_tuple({})}));
    }
    std::ofstream(report_path, std::ios::binary).write(report.data(), static_cast<std::streamsize>(report.size()));
    std::cout.flush();
    std::fflush(nullptr);
    std::_Exit(0);  // no static destructors: they belong to the parent
  }

  // The child's wait status, or nothing when it ran past the deadline (it is killed then).
  std::optional<int> wait_for_exit(pid_t child, double timeout_seconds) {
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(std::min(timeout_seconds, 1e9)));
    for (;;) {
      int status = 0;
      const pid_t done = waitpid(child, &status, WNOHANG);
      if (done == child) return status;
      if (done < 0 && errno != EINTR) throw std::runtime_error(std::string("waitpid failed: ") + std::strerror(errno));
      if (Clock::now() >= deadline) {
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
        return std::nullopt;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  BackendOutcome read_report(const std::string& path) {
    const std::string bytes = read_file(path);
    if (bytes.empty()) throw std::runtime_error("the backend's child process exited without a report");
    const auto report =
        torch::jit::pickle_load(std::vector<char>(bytes.begin(), bytes.end())).toTupleRef().elements().vec();
    if (report.at(0).toStringRef() == "unreportable")
      throw std::runtime_error("the backend ran, but its outputs cannot be passed back for comparison: " +
                               report.at(3).toStringRef());
    BackendOutcome outcome;
    outcome.status = report.at(0).toStringRef();
    outcome.phase = report.at(1).toStringRef();
    outcome.error = {report.at(2).toStringRef(), report.at(3).toStringRef()};
    outcome.outputs = report.at(4).toTupleRef().elements().vec();
    outcome.grads = report.at(5).toTupleRef().elements().vec();
    return outcome;
  }

  BackendOutcome run_backend_in_child(const BackendRun& job, double timeout_seconds) {
    TempFile report;
    SharedPhase phase;
    std::cout.flush();
    std::fflush(nullptr);  // or the child would print the parent's buffered text again
    const pid_t child = fork();
    if (child < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
    if (child == 0) child_main(job, phase, report.path());

    const std::optional<int> status = wait_for_exit(child, timeout_seconds);
    BackendOutcome outcome;
    outcome.phase = phase.get();
    if (!status) {
      outcome.status = "timeout";
    } else if (WIFSIGNALED(*status)) {
      outcome.status = "crash";
      outcome.death = signal_name(WTERMSIG(*status));
    } else if (WEXITSTATUS(*status) != 0) {
      outcome.status = "crash";
      outcome.death = "exit " + std::to_string(WEXITSTATUS(*status));
    } else {
      outcome = read_report(report.path());
    }
    return outcome;
  }
)cpp";

const char* const kCompareSection = R"cpp(
  // ---- Comparing outputs, as torch._dynamo.utils.same() does --------------------------------------
  // allclose at tol; where that fails and an fp64 reference exists, a result still passes when
  // RMSE(res, fp64) <= multiplier * RMSE(ref, fp64) + tol / 10. Integer tensors must be equal
  // exactly; tuples, lists and dicts are compared element by element. (tsrepro's
  // runner/compare.cpp notes where this differs from same().)

  struct Mismatch {
    std::string path;   // which output: "0", "1.2" for element 2 of output 1, "grad.0"
    std::string dtype;  // of the reference value: "float32", "int64"; for non-tensors "int", "tuple"...
    std::string reason;
  };

  std::string format_number(double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), "%.6g", value);
    return buffer;
  }

  std::string dtype_name(at::ScalarType type) {
    switch (type) {
      case at::kFloat:
        return "float32";
      case at::kDouble:
        return "float64";
      case at::kHalf:
        return "float16";
      case at::kBFloat16:
        return "bfloat16";
      case at::kComplexFloat:
        return "complex64";
      case at::kComplexDouble:
        return "complex128";
      case at::kLong:
        return "int64";
      case at::kInt:
        return "int32";
      case at::kShort:
        return "int16";
      case at::kChar:
        return "int8";
      case at::kByte:
        return "uint8";
      case at::kBool:
        return "bool";
      default:
        return c10::toString(type);
    }
  }

  std::string kind_name(const c10::IValue& value) {
    if (value.isTensor()) return "Tensor";
    if (value.isDouble()) return "float";
    if (value.isComplexDouble()) return "complex";
    if (value.isInt()) return "int";
    if (value.isBool()) return "bool";
    if (value.isString()) return "str";
    if (value.isNone()) return "None";
    if (value.isDevice()) return "device";
    if (value.isTuple()) return "tuple";
    if (value.isList()) return "list";
    if (value.isGenericDict()) return "dict";
    return value.tagKind();
  }

  Values sequence_elements(const c10::IValue& value) {
    return value.isTuple() ? value.toTupleRef().elements().vec() : value.toListRef().vec();
  }

  // Compared on the CPU as plain dense values.
  at::Tensor comparable(const at::Tensor& tensor) {
    at::Tensor plain = tensor.detach();
    if (plain.is_sparse()) plain = plain.to_dense();
    if (plain.is_quantized()) plain = plain.dequantize();
    return plain.cpu();
  }

  double rmse(const at::Tensor& fp64_ref, const at::Tensor& tensor) {
    return (fp64_ref - tensor.to(at::kDouble)).square().mean().sqrt().item<double>();
  }

  class OutputComparison {
   public:
    explicit OutputComparison(const Settings& settings) : s_(settings) {}

    // `fp64` is the fp64 run's counterpart of `ref`, or `ref` itself when there is none.
    void compare(const c10::IValue& ref, const c10::IValue& res, const c10::IValue& fp64, const std::string& path) {
      if (mismatch) return;  // the first one is the one reported
      const bool ref_sequence = ref.isTuple() || ref.isList(), res_sequence = res.isTuple() || res.isList();
      if (ref_sequence && res_sequence) return compare_sequences(ref, res, fp64, path);
      if (ref.isGenericDict() && res.isGenericDict()) return compare_dicts(ref, res, fp64, path);
      if (ref.isTensor() && res.isTensor()) return compare_tensors(ref.toTensor(), res.toTensor(), fp64, path);
      if (kind_name(ref) != kind_name(res))
        return fail(path, kind_name(ref), "type mismatch: " + kind_name(ref) + " vs " + kind_name(res));
      compare_scalars(ref, res, path);
    }

    std::optional<Mismatch> mismatch;

   private:
    void fail(const std::string& path, const std::string& dtype, const std::string& reason) {
      mismatch = Mismatch{path, dtype, reason};
    }

    static std::string child_path(const std::string& parent, const std::string& child) {
      return parent.empty() ? child : parent + "." + child;
    }

    static std::string key_name(const c10::IValue& key) {
      if (key.isString()) return key.toStringRef();
      std::ostringstream text;
      text << key;
      return text.str();
    }

    void compare_sequences(const c10::IValue& ref, const c10::IValue& res, const c10::IValue& fp64,
                           const std::string& path) {
      const Values refs = sequence_elements(ref), results = sequence_elements(res);
      if (refs.size() != results.size())
        return fail(path, kind_name(ref),
                    "length mismatch: " + std::to_string(refs.size()) + " vs " + std::to_string(results.size()));
      Values fp64s = fp64.isTuple() || fp64.isList() ? sequence_elements(fp64) : refs;
      if (fp64s.size() != refs.size()) fp64s = refs;
      for (size_t i = 0; i < refs.size(); ++i)
        compare(refs[i], results[i], fp64s[i], child_path(path, std::to_string(i)));
    }

    void compare_dicts(const c10::IValue& ref, const c10::IValue& res, const c10::IValue& fp64, const std::string& path) {
      const auto ref_dict = ref.toGenericDict(), res_dict = res.toGenericDict();
      if (ref_dict.size() != res_dict.size())
        return fail(
            path, "dict",
            "key count mismatch: " + std::to_string(ref_dict.size()) + " vs " + std::to_string(res_dict.size()));
      for (const auto& entry : ref_dict) {
        const std::string key_path = child_path(path, key_name(entry.key()));
        const auto found = res_dict.find(entry.key());
        if (found == res_dict.end()) return fail(key_path, kind_name(entry.value()), "key missing from the result");
        c10::IValue fp64_value = entry.value();
        if (fp64.isGenericDict() && fp64.toGenericDict().contains(entry.key()))
          fp64_value = fp64.toGenericDict().at(entry.key());
        compare(entry.value(), found->value(), fp64_value, key_path);
      }
    }

    void compare_tensors(const at::Tensor& ref_in, const at::Tensor& res_in, const c10::IValue& fp64,
                         const std::string& path) {
      if (!ref_in.defined() || !res_in.defined()) {
        if (ref_in.defined() != res_in.defined())
          fail(path, ref_in.defined() ? dtype_name(ref_in.scalar_type()) : "undefined", "one tensor is undefined");
        return;
      }
      const at::Tensor ref = comparable(ref_in), res = comparable(res_in);
      if (std::optional<std::string> reason = tensor_mismatch(ref, res, fp64)) {
        if (ref.sizes() == res.sizes() && ref.numel() > 0 && !ref.is_complex() && !res.is_complex())
          *reason = "max_abs " + format_number(finite_max_abs(ref, res)) + ": " + *reason;
        fail(path, dtype_name(ref.scalar_type()), *reason);
      }
    }

    // max |res - ref| over the elements where both are finite (an inf says nothing of the rest).
    static double finite_max_abs(const at::Tensor& ref, const at::Tensor& res) {
      const at::Tensor a = ref.to(at::kDouble), b = res.to(at::kDouble);
      const at::Tensor diff = (b - a).abs().masked_select(a.isfinite().logical_and(b.isfinite()));
      return diff.numel() == 0 ? 0.0 : diff.max().item<double>();
    }

    std::optional<std::string> tensor_mismatch(const at::Tensor& ref, const at::Tensor& res,
                                               const c10::IValue& fp64) const {
      if (s_.exact_dtype && ref.scalar_type() != res.scalar_type())
        return "dtype mismatch: " + dtype_name(ref.scalar_type()) + " vs " + dtype_name(res.scalar_type());
      const bool exact_kind = c10::isIntegralType(res.scalar_type(), /*includeBool=*/true);
      if (exact_kind && s_.ignore_non_fp) return std::nullopt;
      if (ref.sizes() != res.sizes()) return "shape mismatch: " + c10::str(ref.sizes()) + " vs " + c10::str(res.sizes());
      if (res.scalar_type() == at::kBool) {
        // same(): bools are compared as uint8 under allclose.
        if (allclose(ref.to(at::kByte), res.to(at::kByte))) return std::nullopt;
        return "bool tensors differ at " + std::to_string(ref.to(at::kBool).ne(res).sum().item<int64_t>()) + " elements";
      }
      if (exact_kind) {
        if (at::equal(ref.to(res.scalar_type()), res)) return std::nullopt;
        return "integer tensors differ at " + std::to_string(ref.to(res.scalar_type()).ne(res).sum().item<int64_t>()) +
               " elements";
      }
      if (s_.cos_similarity) return cosine_mismatch(ref, res);
      return floating_mismatch(s_.exact_dtype ? ref : ref.to(res.scalar_type()), res, fp64);
    }

    bool allclose(const at::Tensor& ref, const at::Tensor& res) const {
      return at::allclose(ref, res, s_.tol, s_.tol, s_.equal_nan);
    }

    std::optional<std::string> cosine_mismatch(const at::Tensor& ref, const at::Tensor& res) const {
      const at::Tensor a = ref.flatten().to(at::kFloat), b = res.flatten().to(at::kFloat);
      if (at::allclose(a, b, s_.tol, s_.tol, /*equal_nan=*/true)) return std::nullopt;
      const double score = at::cosine_similarity(a, b, /*dim=*/0, /*eps=*/1e-6).item<double>();
      if (score >= 0.99) return std::nullopt;
      return "cosine similarity " + format_number(score) + " < 0.99";
    }

    std::optional<std::string> floating_mismatch(const at::Tensor& ref, const at::Tensor& res,
                                                 const c10::IValue& fp64_value) const {
      if (allclose(ref, res)) return std::nullopt;
      const std::string allclose_failed = "allclose failed at tol=" + format_number(s_.tol);
      // The fp64 run counts only where it produced float64 of the same shape.
      const bool has_fp64 = res.is_floating_point() && fp64_value.isTensor() && fp64_value.toTensor().defined() &&
                            fp64_value.toTensor().scalar_type() == at::kDouble &&
                            fp64_value.toTensor().sizes() == ref.sizes();
      if (!has_fp64) {
        if (s_.ignore_non_fp) return std::nullopt;
        return allclose_failed + " and there is no fp64 reference";
      }
      const at::Tensor fp64 = comparable(fp64_value.toTensor());
      // ref has NaNs where res and fp64 agree: res is better than ref.
      if (!fp64.isnan().any().item<bool>() && !res.isnan().any().item<bool>() && ref.isnan().any().item<bool>() &&
          at::allclose(fp64.to(res.scalar_type()), res, 4e-2, 4e-2, s_.equal_nan))
        return std::nullopt;
      // The RMSE rule over the elements where both references are finite; elsewhere res must
      // match ref's inf/NaN pattern (one inf in ref would otherwise excuse any result).
      const at::Tensor finite = ref.isfinite().logical_and(fp64.isfinite()), nonfinite = finite.logical_not();
      std::string failures;
      const int64_t nonfinite_count = nonfinite.sum().item<int64_t>();
      if (nonfinite_count > 0) {
        const at::Tensor a = ref.masked_select(nonfinite).to(at::kDouble),
                         b = res.masked_select(nonfinite).to(at::kDouble);
        at::Tensor agree = a.eq(b);
        if (s_.equal_nan) agree = agree.logical_or(a.isnan().logical_and(b.isnan()));
        if (const int64_t differing = agree.logical_not().sum().item<int64_t>())
          failures += " and " + std::to_string(differing) + " of the " + std::to_string(nonfinite_count) +
                      " elements where a reference is inf or NaN differ from it";
      }
      if (nonfinite_count < ref.numel()) {
        const at::Tensor fp64_finite = fp64.masked_select(finite);
        const double ref_error = rmse(fp64_finite, ref.masked_select(finite)),
                     res_error = rmse(fp64_finite, res.masked_select(finite));
        const double multiplier = rmse_multiplier(ref, res, fp64);
        const double threshold = multiplier * ref_error + s_.tol / 10.0;
        if (!(res_error <= threshold))
          failures += " and RMSE(res,fp64)=" + format_number(res_error) + " > " + format_number(multiplier) +
                      "*RMSE(ref,fp64)+tol/10=" + format_number(threshold);
      }
      if (failures.empty()) return std::nullopt;
      return allclose_failed + failures;
    }

    // same()'s get_multiplier(): 3 for half precision, small tensors, 1x1 kernels and a large tol.
    double rmse_multiplier(const at::Tensor& ref, const at::Tensor& res, const at::Tensor& fp64) const {
      const bool half = res.scalar_type() == at::kHalf || res.scalar_type() == at::kBFloat16;
      const bool one_by_one_kernel = ref.dim() == 4 && ref.size(-1) == 1 && ref.size(-2) == 1;
      return half || fp64.numel() < 1000 || one_by_one_kernel || s_.tol >= 2e-2 ? 3.0 : 2.0;
    }

    void compare_scalars(const c10::IValue& ref, const c10::IValue& res, const std::string& path) {
      if (ref.isDouble() || ref.isComplexDouble()) {
        if (!numbers_close(ref, res) && !s_.ignore_non_fp)
          fail(path, kind_name(ref), "values differ beyond tol=" + format_number(s_.tol));
        return;
      }
      if (s_.ignore_non_fp || values_equal(ref, res)) return;
      std::ostringstream text;
      text << "values differ: " << ref << " vs " << res;
      fail(path, kind_name(ref), text.str());
    }

    bool numbers_close(const c10::IValue& ref, const c10::IValue& res) const {
      const c10::complex<double> a = as_complex(ref), b = as_complex(res);
      const bool a_nan = std::isnan(a.real()) || std::isnan(a.imag()),
                 b_nan = std::isnan(b.real()) || std::isnan(b.imag());
      if (a_nan || b_nan) return a_nan && b_nan && s_.equal_nan;
      if (a == b) return true;  // equal infinities
      return std::abs(a - b) <= s_.tol + s_.tol * std::abs(b);
    }

    static c10::complex<double> as_complex(const c10::IValue& number) {
      if (number.isComplexDouble()) return number.toComplexDouble();
      if (number.isDouble()) return number.toDouble();
      return static_cast<double>(number.toInt());
    }

    static bool values_equal(const c10::IValue& ref, const c10::IValue& res) {
      if (ref.isInt()) return ref.toInt() == res.toInt();
      if (ref.isBool()) return ref.toBool() == res.toBool();
      if (ref.isString()) return ref.toStringRef() == res.toStringRef();
      if (ref.isNone()) return res.isNone();
      if (ref.isDevice()) return ref.toDevice() == res.toDevice();
      try {
        return ref == res;
      } catch (const std::exception&) {
        return false;
      }
    }

    const Settings& s_;
  };

  // A float64 copy of every floating tensor (nested ones too), for the fp64 reference run.
  c10::IValue cast_floating_to_fp64(const c10::IValue& value) {
    if (value.isTensor()) {
      const at::Tensor& t = value.toTensor();
      if (!t.defined() || !t.is_floating_point() || t.scalar_type() == at::kDouble) return t;
      return t.detach().to(at::kDouble).requires_grad_(t.requires_grad());
    }
    if (value.isTuple()) {
      Values items;
      for (const c10::IValue& item : value.toTupleRef().elements()) items.push_back(cast_floating_to_fp64(item));
      const auto type = value.toTupleRef().type();
      return type->name() ? c10::ivalue::Tuple::createNamed(std::move(items), type)
                          : c10::ivalue::Tuple::create(std::move(items));
    }
    if (value.isList()) {
      c10::impl::GenericList list(value.toList().elementType());
      for (const c10::IValue& item : value.toListRef()) list.push_back(cast_floating_to_fp64(item));
      return list;
    }
    if (value.isGenericDict()) {
      const auto dict = value.toGenericDict();
      c10::impl::GenericDict copy(dict.keyType(), dict.valueType());
      for (const auto& entry : dict) copy.insert(entry.key(), cast_floating_to_fp64(entry.value()));
      return copy;
    }
    return value;
  }

  struct SideResult {
    Values outputs, grads;
  };

  // Outputs, then input gradients (paths "grad.<i>"); the first mismatch, if any.
  std::optional<Mismatch> compare_sides(const SideResult& ref, const SideResult& res, const SideResult* fp64,
                                        const Settings& settings) {
    if (ref.outputs.size() != res.outputs.size())
      return Mismatch{
          "", "outputs",
          "output count mismatch: " + std::to_string(ref.outputs.size()) + " vs " + std::to_string(res.outputs.size())};
    OutputComparison comparison(settings);
    for (size_t i = 0; i < ref.outputs.size(); ++i) {
      const bool has_fp64 = fp64 && i < fp64->outputs.size();
      comparison.compare(ref.outputs[i], res.outputs[i], has_fp64 ? fp64->outputs[i] : ref.outputs[i], std::to_string(i));
    }
    for (size_t i = 0; i < ref.grads.size() && i < res.grads.size(); ++i) {
      const bool has_fp64 = fp64 && i < fp64->grads.size();
      comparison.compare(ref.grads[i], res.grads[i], has_fp64 ? fp64->grads[i] : ref.grads[i],
                         "grad." + std::to_string(i));
    }
    return comparison.mismatch;
  }
)cpp";

const char* const kMainSection = R"cpp(
  // ---- The verdict --------------------------------------------------------------------------------

  struct Verdict {
    std::string status = "pass";  // pass, exception, accuracy, crash, timeout, or invalid (the reference fails)
    std::string phase;            // compile, run, backward; "ref" for invalid
    std::string signature;        // tsrepro's identity of the failure
    std::string message;
  };

  Verdict make_verdict(const std::string& status, const std::string& phase, const std::string& signature,
                       const std::string& message) {
    Verdict v;
    v.status = status;
    v.phase = phase;
    v.signature = signature;
    v.message = message;
    return v;
  }

  SideResult run_reference(const Backend& reference, const Graph& graph, const Values& inputs,
                           const std::vector<bool>& with_grad) {
    Values run_inputs = fresh_inputs(inputs, with_grad);
    CompiledGraph compiled = reference(graph, fresh_inputs(inputs, with_grad));
    SideResult result;
    result.outputs = compiled(run_inputs);
    if (any_of(with_grad)) result.grads = input_gradients(result.outputs, run_inputs);
    for (c10::IValue& v : result.outputs)
      if (v.isTensor()) v = v.toTensor().detach();
    return result;
  }

  Values to_fp64(const Values& values) {
    Values out;
    for (const c10::IValue& v : values) out.push_back(cast_floating_to_fp64(v));
    return out;
  }

  Verdict judge(const BackendOutcome& tested, const Backend& reference, const Graph& graph, const Values& inputs,
                const std::vector<bool>& with_grad, const Settings& settings) {
    SideResult ref;
    try {
      ref = run_reference(reference, graph, inputs, with_grad);
    } catch (...) {
      const ErrorInfo error = describe_current_exception();
      return make_verdict(
          "invalid", "ref", "",
          "the reference (" + settings.ref + ") fails on this graph: " + error.type + ": " + error.message);
    }
    if (tested.status == "exception")
      return make_verdict("exception", tested.phase, exception_signature(tested.phase, tested.error),
                          tested.error.type + ": " + tested.error.message);
    if (tested.status == "crash")
      return make_verdict("crash", tested.phase, "crash:" + tested.death,
                          "the backend died by " + tested.death + " during " + tested.phase);
    if (tested.status == "timeout")
      return make_verdict("timeout", tested.phase, "timeout",
                          "no answer within " + format_number(settings.timeout_seconds) + " s during " + tested.phase);

    SideResult res;
    res.outputs = tested.outputs;
    res.grads = tested.grads;
    std::optional<Mismatch> mismatch = compare_sides(ref, res, nullptr, settings);
    if (mismatch && settings.use_fp64) {
      // Only now is the fp64 run worth its cost: it can excuse a result that is merely noisy.
      try {
        const SideResult fp64 = run_reference(reference, graph, to_fp64(inputs), with_grad);
        mismatch = compare_sides(ref, res, &fp64, settings);
      } catch (...) {
        // No fp64 run for this graph (dtype-specific ops): judge by allclose alone, as same() does.
      }
    }
    if (!mismatch) return make_verdict("pass", "", "", "outputs match");
    return make_verdict("accuracy", "run", "accuracy:" + mismatch->dtype,
                        "output " + mismatch->path + " (" + mismatch->dtype + "): " + mismatch->reason);
  }

  bool reproduces(const Verdict& verdict, const Settings& settings) {
    if (settings.expected_kind.empty()) return verdict.status != "pass" && verdict.status != "invalid";
    if (verdict.status != settings.expected_kind) return false;
    // A crash counts only by the same signal.
    return verdict.status != "crash" || settings.expected_signature.empty() ||
           verdict.signature == settings.expected_signature;
  }

  // ---- main ---------------------------------------------------------------------------------------

  const char* const kUsage =
      "usage: repro [CASE_DIR] [--backend SPEC] [--backend-opt KEY=VALUE]... [--fake-inputs | --real-inputs]\n"
      "             [--seed N] [--timeout SECONDS] [--device DEVICE] [--backward] [--show-graph]\n"
      "Runs the graph in the reference and the tested backend, compares them as tsrepro does and exits\n"
      "1 when the recorded failure reproduces, 0 when it does not, 2 when it cannot run.\n"
      "CASE_DIR holds inputs.pt (default: the directory this program was built from). --backend\n"
      "replaces the recorded backend and its options: eager, jit, nnc, ofi, inject:<fault>@<op>.\n"
      "--backward also compares input gradients; --show-graph prints the graph that the graph\n"
      "executor ran (jit, nnc, ofi).\n";

  double parse_seconds(const std::string& flag, const std::string& text) {
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(value > 0))
      throw std::invalid_argument(flag + " " + text + ": expected seconds > 0");
    return value;
  }

  uint64_t parse_count(const std::string& flag, const std::string& text) {
    char* end = nullptr;
    const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || text[0] == '-' || *end != '\0')
      throw std::invalid_argument(flag + " " + text + ": expected a whole number");
    return value;
  }

  void parse_command_line(int argc, char** argv, Settings& settings) {
    BackendOptions given_options;
    bool backend_given = false;
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
        return argv[++i];
      };
      if (arg == "-h" || arg == "--help") {
        std::cout << kUsage;
        std::exit(0);
      } else if (arg == "--backend") {
        settings.backend = value();
        backend_given = true;
      } else if (arg == "--backend-opt") {
        const std::string option = value();
        const size_t equals = option.find('=');
        if (equals == std::string::npos) throw std::invalid_argument("--backend-opt " + option + ": expected KEY=VALUE");
        given_options[option.substr(0, equals)] = option.substr(equals + 1);
      } else if (arg == "--fake-inputs") {
        settings.fake_inputs = true;
      } else if (arg == "--real-inputs") {
        settings.fake_inputs = false;
      } else if (arg == "--seed") {
        settings.seed = parse_count(arg, value());
      } else if (arg == "--timeout") {
        settings.timeout_seconds = parse_seconds(arg, value());
      } else if (arg == "--device") {
        settings.device = value();
      } else if (arg == "--backward") {
        settings.backward = true;
      } else if (arg == "--show-graph") {
        settings.show_graph = true;
      } else if (!arg.empty() && arg[0] == '-') {
        throw std::invalid_argument("unknown option " + arg);
      } else {
        settings.case_dir = arg;
      }
    }
    // The recorded options belong to the recorded backend.
    if (backend_given) settings.backend_options.clear();
    for (const auto& option : given_options) settings.backend_options[option.first] = option.second;
  }

  Graph parse_graph() {
    for (const char* const* library = kExtensionLibraries; *library; ++library)
      if (!dlopen(*library, RTLD_NOW | RTLD_GLOBAL))
        throw std::runtime_error(std::string("cannot load ") + *library + ": " + dlerror());
    auto graph = std::make_shared<torch::jit::Graph>();
    torch::jit::parseIR(kGraphIr, graph.get());
    graph->lint();
    return graph;
  }

  std::string describe_run(const Settings& settings) {
    std::string options;
    for (const auto& option : settings.backend_options) options += " " + option.first + "=" + option.second;
    std::ostringstream text;
    text << "repro: libtorch " << TORCH_VERSION << ", reference " << settings.ref << ", backend " << settings.backend
         << (options.empty() ? "" : " (" + options.substr(1) + ")") << ", device " << settings.device << ", "
         << (settings.fake_inputs ? "fake inputs (seed " + std::to_string(settings.seed) + ")"
                                  : "inputs from " + settings.case_dir + "/inputs.pt");
    return text.str();
  }

  int reproduce(const Settings& settings) {
    std::cout << describe_run(settings) << std::endl;
    const c10::Device device(settings.device);
    Graph graph = parse_graph();
    if (!device.is_cpu()) graph_constants_to_device(graph->block(), device);
    // Inputs stay on the CPU until after the fork: CUDA must not be initialized in the parent first.
    const Values inputs =
        settings.fake_inputs ? make_fake_inputs(settings.seed) : load_real_inputs(settings.case_dir + "/inputs.pt");
    if (inputs.size() != graph->inputs().size() || kInputs.size() != graph->inputs().size())
      throw std::runtime_error("the graph takes " + std::to_string(graph->inputs().size()) + " inputs, got " +
                               std::to_string(inputs.size()) + " values and " + std::to_string(kInputs.size()) +
                               " specs");
    std::vector<bool> lifted;
    for (const InputSpec& spec : kInputs) lifted.push_back(spec.origin != Origin::Argument);
    BackendRun tested;
    tested.backend = make_backend(settings.backend, settings.backend_options, lifted);
    tested.graph = graph;
    tested.inputs = inputs;
    tested.with_grad = gradient_inputs(settings.backward);
    tested.device = device;
    tested.show_graph = settings.show_graph;
    const Backend reference = make_backend(settings.ref, {}, lifted);

    const BackendOutcome outcome = run_backend_in_child(tested, settings.timeout_seconds);
    const Verdict verdict =
        judge(outcome, reference, graph, values_to_device(inputs, device), tested.with_grad, settings);
    const bool reproduced = reproduces(verdict, settings);
    std::cout << "verdict: " << verdict.status << (verdict.phase.empty() ? "" : " (" + verdict.phase + ")") << "\n"
              << "signature: " << verdict.signature << "\n"
              << "message: " << verdict.message << "\n"
              << "expected: " << settings.expected_kind << " (" << settings.expected_signature << ")\n"
              << "result: " << (reproduced ? "reproduced" : "not reproduced") << std::endl;
    return reproduced ? 1 : 0;
  }

  }  // namespace

  int main(int argc, char** argv) {
    Settings settings;
    try {
      parse_command_line(argc, argv, settings);
    } catch (const std::exception& e) {
      std::cerr << "repro: " << e.what() << "\n" << kUsage;
      return 2;
    }
    try {
      return reproduce(settings);
    } catch (const std::exception& e) {
      std::cerr << "repro: " << e.what() << "\n";
      return 2;
    }
  }
)cpp";

// ---- Generated parts ----------------------------------------------------------------------------

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    const size_t start = colon == std::string::npos ? std::string::npos : line.find_first_not_of(" \t", colon + 1);
    if (start != std::string::npos) return line.substr(start);
  }
  struct utsname names {};
  return uname(&names) == 0 ? std::string(names.machine) : "unknown";
}

std::string options_text(const BackendOptions& options) {
  std::string text;
  for (const auto& [key, value] : options) text += (text.empty() ? "" : " ") + key + "=" + value;
  return text;
}

std::string header_comment(const ReproSettings& s) {
  const std::string expected =
      s.expected_kind.empty() ? "any failure of the backend" : s.expected_kind + " (" + s.expected_signature + ")";
  std::ostringstream out;
  out << "// Reproducer for a TorchScript failure, written by tsrepro " << cpp_comment_text(TSREPRO_VERSION) << ".\n"
      << "//\n"
      << "//   expected:  " << cpp_comment_text(expected) << "\n"
      << "//   backend:   " << cpp_comment_text(s.run.backend)
      << (s.run.backend_options.empty() ? "" : " (" + cpp_comment_text(options_text(s.run.backend_options)) + ")")
      << "\n"
      << "//   inputs:    " << (s.run.fake_inputs ? "fake, seed " + std::to_string(s.run.seed) : "real (inputs.pt)")
      << ", device " << cpp_comment_text(s.run.device) << (s.run.backward ? ", with backward" : "") << "\n"
      << "//   made with: libtorch " << cpp_comment_text(TORCH_VERSION) << " on " << cpp_comment_text(cpu_model())
      << "\n"
      << "//   command:   " << cpp_comment_text(s.command_line.empty() ? "(not recorded)" : s.command_line) << "\n"
      << "//\n"
      << "// Build and run (CMakeLists.txt is beside this file; add -DCMAKE_PREFIX_PATH=<libtorch> for\n"
      << "// a libtorch outside the system paths):\n"
      << "//   cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build && ./build/repro\n"
      << "//\n"
      << "// It runs the graph below in the TorchScript interpreter (the reference) and with the tested\n"
      << "// backend, in a child process so that a crash or a hang is seen; compares the outputs as\n"
      << "// tsrepro does; prints the verdict; exits 1 when the expected failure reproduces, 0 when it\n"
      << "// does not, 2 when it cannot run. `./build/repro --help` lists the flags that override the\n"
      << "// recorded settings (another backend, fake inputs, a timeout).\n";
  return out.str();
}

// The custom-operator libraries the graph needs (tsrepro --load-library), loaded before parsing.
std::string extension_libraries_literal() {
  std::string out = "const char* const kExtensionLibraries[] = {";
  for (const std::string& library : loaded_extension_libraries()) out += cpp_string_literal(library) + ", ";
  return out + "nullptr};\n";
}

std::string case_section_intro(const Case& c) {
  return "\n// ---- The case -----------------------------------------------------------------------------------\n\n"
         "// The failing graph (the case's graph.ir holds the same text).\n"
         "const char* const kGraphIr =\n    " +
         cpp_string_lines(graph_to_ir(*c.graph), "    ") + ";\n" + extension_libraries_literal();
}

// The at:: constant that names a dtype in C++ source; nullopt for dtypes fake inputs cannot have.
std::optional<std::string> dtype_constant(c10::ScalarType type) {
  switch (type) {
    case at::kFloat:
      return "at::kFloat";
    case at::kDouble:
      return "at::kDouble";
    case at::kHalf:
      return "at::kHalf";
    case at::kBFloat16:
      return "at::kBFloat16";
    case at::kComplexFloat:
      return "at::kComplexFloat";
    case at::kComplexDouble:
      return "at::kComplexDouble";
    case at::kLong:
      return "at::kLong";
    case at::kInt:
      return "at::kInt";
    case at::kShort:
      return "at::kShort";
    case at::kChar:
      return "at::kChar";
    case at::kByte:
      return "at::kByte";
    case at::kBool:
      return "at::kBool";
    default:
      return std::nullopt;
  }
}

// runner/inputs.cpp's test: strides that describe each element exactly once can be kept.
bool strides_are_dense(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  if (strides.size() != sizes.size()) return false;
  std::vector<size_t> order(sizes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return strides[a] < strides[b]; });
  int64_t expected = 1;
  for (size_t dim : order) {
    if (sizes[dim] == 1) continue;
    if (strides[dim] != expected) return false;
    expected *= sizes[dim];
  }
  return true;
}

std::string int_list(const std::vector<int64_t>& values) {
  std::string text = "{";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "}";
}

std::string int64_literal(int64_t value) {
  // -9223372036854775808 is not a literal in C++: it is minus a literal that does not fit.
  if (value == std::numeric_limits<int64_t>::min()) return "std::numeric_limits<int64_t>::min()";
  return "int64_t{" + std::to_string(value) + "}";
}

const char* origin_of(const InputSpec& spec) {
  if (!spec.lifted) return "Origin::Argument";
  return spec.requires_grad ? "Origin::Parameter" : "Origin::Constant";
}

std::string opaque_row(const InputSpec& spec) {
  std::string row = "opaque_input(" + cpp_string_literal(spec.name);
  if (spec.lifted) row += std::string(", ") + origin_of(spec);
  return row + ")";
}

// The same range make_fake_value draws from: the recorded one, or a default per dtype.
std::string tensor_row(const InputSpec& spec) {
  std::optional<c10::ScalarType> type;
  try {
    type = scalar_type_from_name(spec.dtype, "input '" + spec.name + "'");
  } catch (const UserError&) {
    return opaque_row(spec);
  }
  const std::optional<std::string> dtype = dtype_constant(*type);
  if (!dtype) return opaque_row(spec);
  const bool floating = c10::isFloatingType(*type) || c10::isComplexType(*type);
  double lo = spec.min.value_or(floating ? -1.0 : 0.0);
  double hi = spec.max.value_or(floating ? 1.0 : *type == at::kBool ? 1.0 : 9.0);
  if (hi < lo) std::swap(lo, hi);
  const std::vector<int64_t> strides =
      strides_are_dense(spec.sizes, spec.strides) ? spec.strides : std::vector<int64_t>{};
  std::string row = "tensor_input(" + cpp_string_literal(spec.name) + ", " + *dtype + ", " + int_list(spec.sizes) +
                    ", " + int_list(strides) + ", " + cpp_double_literal(lo) + ", " + cpp_double_literal(hi);
  if (spec.lifted) row += std::string(", ") + origin_of(spec);
  return row + ")";
}

// A scalar's recorded value as C++; nullopt when it cannot be written (then only real inputs work).
std::optional<std::string> scalar_value(const InputSpec& spec) {
  const nlohmann::json& v = spec.value;
  try {
    if (spec.kind == "none") return std::string("c10::IValue()");
    if (spec.kind == "int" && v.is_number()) return int64_literal(v.get<int64_t>());
    if (spec.kind == "float" && v.is_number()) return cpp_double_literal(v.get<double>());
    if (spec.kind == "bool" && v.is_boolean()) return std::string(v.get<bool>() ? "true" : "false");
    if (spec.kind == "str" && v.is_string()) return "std::string(" + cpp_string_literal(v.get<std::string>()) + ")";
    if (spec.kind == "int[]" && v.is_array()) {
      std::string list;
      for (const nlohmann::json& item : v) list += (list.empty() ? "" : ", ") + int64_literal(item.get<int64_t>());
      return "std::vector<int64_t>{" + list + "}";
    }
  } catch (const nlohmann::json::exception&) {
  }
  return std::nullopt;
}

std::string input_row(const InputSpec& spec) {
  if (spec.kind == "tensor") return tensor_row(spec);
  if (auto value = scalar_value(spec))
    return "scalar_input(" + cpp_string_literal(spec.name) + ", " + *value +
           (spec.lifted ? std::string(", ") + origin_of(spec) : "") + ")";
  return opaque_row(spec);
}

std::string inputs_table(const Case& c) {
  std::string out = "\nconst std::vector<InputSpec> kInputs = {\n";
  for (const InputSpec& spec : c.inputs) out += "    " + input_row(spec) + ",\n";
  return out + "};\n";
}

std::string bool_text(bool value) { return value ? "true" : "false"; }

std::string options_initializer(const BackendOptions& options) {
  std::string text;
  for (const auto& [key, value] : options)
    text += (text.empty() ? "" : ", ") + std::string("{") + cpp_string_literal(key) + ", " + cpp_string_literal(value) +
            "}";
  return "{" + text + "}";
}

std::string settings_struct(const ReproSettings& s, bool fake_inputs) {
  std::ostringstream out;
  out << "\n// How tsrepro saw the failure. The command-line flags override these (--help).\n"
      << "struct Settings {\n"
      << "  std::string ref = " << cpp_string_literal(s.run.ref.empty() ? "eager" : s.run.ref) << ";\n"
      << "  std::string backend = " << cpp_string_literal(s.run.backend) << ";\n"
      << "  std::map<std::string, std::string> backend_options = " << options_initializer(s.run.backend_options)
      << ";\n"
      << "  std::string device = " << cpp_string_literal(s.run.device.empty() ? "cpu" : s.run.device) << ";\n"
      << "  bool fake_inputs = " << bool_text(fake_inputs) << ";\n"
      << "  uint64_t seed = " << s.run.seed << ";\n"
      << "  double timeout_seconds = " << cpp_double_literal(s.run.timeout_seconds)
      << ";  // a longer backend run is a hang\n"
      << "  bool backward = " << bool_text(s.run.backward) << ";  // also compare input gradients of a scalar loss\n"
      << "  // Output comparison, as torch._dynamo.utils.same() does it.\n"
      << "  double tol = " << cpp_double_literal(s.run.compare.tol) << ";\n"
      << "  bool cos_similarity = " << bool_text(s.run.compare.cos_similarity) << ";\n"
      << "  bool equal_nan = " << bool_text(s.run.compare.equal_nan) << ";\n"
      << "  bool exact_dtype = " << bool_text(s.run.compare.exact_dtype) << ";\n"
      << "  bool ignore_non_fp = " << bool_text(s.run.compare.ignore_non_fp) << ";\n"
      << "  bool use_fp64 = " << bool_text(s.run.compare.use_fp64)
      << ";  // an fp64 run may excuse an allclose failure\n"
      << "  // The verdict status that means \"reproduced\" (empty: any failure), and tsrepro's signature.\n"
      << "  std::string expected_kind = " << cpp_string_literal(s.expected_kind) << ";\n"
      << "  std::string expected_signature = " << cpp_string_literal(s.expected_signature) << ";\n"
      << "  std::string case_dir = REPRO_DIR;  // where inputs.pt is\n"
      << "  bool show_graph = false;  // print the graph the executor ran\n"
      << "};\n";
  return out.str();
}

}  // namespace

std::string repro_cpp_source(const Case& c, const ReproSettings& settings) {
  // A case without real values can only be run with fake ones.
  const bool fake_inputs = settings.run.fake_inputs || !c.values;
  return header_comment(settings) + kIncludes + case_section_intro(c) + kInputSpecDefinition + inputs_table(c) +
         settings_struct(settings, fake_inputs) + kInputsSection + kBackendsSection + kFailuresSection + kChildSection +
         kCompareSection + kMainSection;
}

std::string repro_cmake_source() {
  return R"cmake(# Builds repro.cpp against libtorch:
#   cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build && ./build/repro
# For a libtorch outside the system paths add -DCMAKE_PREFIX_PATH=/path/to/libtorch.
cmake_minimum_required(VERSION 3.18)
project(tsrepro_repro LANGUAGES CXX)

find_package(Torch REQUIRED)

add_executable(repro repro.cpp)
target_compile_features(repro PRIVATE cxx_std_17)
set_target_properties(repro PROPERTIES CXX_EXTENSIONS OFF)
target_link_libraries(repro PRIVATE ${TORCH_LIBRARIES})
# The case directory, where inputs.pt is: this one, unless the first argument names another.
target_compile_definitions(repro PRIVATE REPRO_DIR="${CMAKE_CURRENT_SOURCE_DIR}")
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(repro PRIVATE -Wall -Wextra)
endif()
)cmake";
}

}  // namespace tsrepro
