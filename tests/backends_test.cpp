// Backends, the in-process evaluation of a candidate, and the worker processes that survive
// whatever a candidate does.

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/script.h>
#include <torch/csrc/jit/jit_log.h>
#include <torch/csrc/jit/passes/canonicalize.h>
#include <torch/csrc/jit/passes/frozen_conv_add_relu_fusion.h>
#include <torch/csrc/jit/passes/frozen_linear_transpose.h>

#include "backends/executor_passes.h"
#include "backends/ofi/pass_sequence.h"
#include "runner/exec/evaluate.h"
#include "runner/import/import.h"
#include "runner/worker/worker_client.h"
#include "tests/support/cases.h"
#include "tsrepro/backend.h"
#include "tsrepro/case.h"
#include "tsrepro/error.h"
#include "tsrepro/torch_compat.h"

namespace tsrepro {
namespace {

using testing::example_case;
using testing::model_path;

BackendInput backend_input(const Case& c) {
  BackendInput input{c.graph, {}};
  for (const InputSpec& s : c.inputs) input.lifted.push_back(s.lifted);
  return input;
}

// A request for `name` whose inputs are read by the worker from a case written to `dir`.
EvalRequest request_for(const std::string& name, const std::string& backend, const testing::TempDir& dir) {
  static int cases_written = 0;
  const std::string case_dir = dir / (name + std::to_string(++cases_written));
  Case c = example_case(name);
  write_case(c, case_dir);
  EvalRequest r;
  r.graph_ir = graph_to_ir(*c.graph);
  r.specs = c.inputs;
  r.inputs_path = case_dir + "/inputs.pt";
  r.run.backend = backend;
  return r;
}

const PhaseCallback kIgnorePhases = [](Phase) {};

EvalRequest with_timeout(EvalRequest r, double seconds) {
  r.run.timeout_seconds = seconds;
  return r;
}

TEST(NncBackend, FormsATensorExprGroupForAnElementwiseChain) {
  Case c = example_case("elementwise_chain_scripted");
  auto prepared = make_backend("nnc", {})->prepare(backend_input(c), clone_values(*c.values));
  std::vector<c10::IValue> outputs = prepared->run(clone_values(*c.values));
  EXPECT_NE(prepared->executed_graph().find("prim::TensorExprGroup"), std::string::npos) << prepared->executed_graph();
  ASSERT_EQ(outputs.size(), 1u);
  // The jit backend on the same graph fuses on the CPU exactly where libtorch does by default (with
  // LLVM, as 2.6; not 1.13 without it): nnc's switches were restored.
  auto jit = make_backend("jit", {})->prepare(backend_input(c), clone_values(*c.values));
  jit->run(clone_values(*c.values));
  EXPECT_EQ(jit->executed_graph().find("prim::TensorExprGroup") != std::string::npos, nnc_has_llvm())
      << jit->executed_graph();
}

TEST(OfiBackend, FoldsLiftedParametersAndMatchesEager) {
  Case c = example_case("conv_bn_relu_linear_scripted");
  auto prepared = make_backend("ofi", {})->prepare(backend_input(c), clone_values(*c.values));
  std::vector<c10::IValue> res = prepared->run(clone_values(*c.values));
  EXPECT_EQ(prepared->executed_graph().find("aten::batch_norm"), std::string::npos) << prepared->executed_graph();
  auto eager = make_backend("eager", {})->prepare(backend_input(c), {});
  CompareResult same = compare_outputs(eager->run(clone_values(*c.values)), res, nullptr, CompareOptions{});
  EXPECT_TRUE(same.same);
}

TEST(InjectBackend, FaultsFireOnlyWhenEveryListedOpIsPresent) {
  Case c = example_case("chain100_scripted");  // has aten::relu and aten::tanh, no aten::abs
  const BackendInput input = backend_input(c);
  EXPECT_THROW(make_backend("inject:compile-error@aten::relu", {})->prepare(input, {}), c10::Error);
  EXPECT_NO_THROW(make_backend("inject:compile-error@aten::relu+aten::abs", {})->prepare(input, {}));
  EXPECT_THROW(make_backend("inject:compile-error@aten::relu+aten::tanh", {})->prepare(input, {}), c10::Error);
  auto runtime = make_backend("inject:runtime-error@aten::relu", {})->prepare(input, {});
  EXPECT_THROW(runtime->run(clone_values(*c.values)), c10::Error);
  auto accuracy = make_backend("inject:accuracy@aten::relu", {})->prepare(input, {});
  auto eager = make_backend("eager", {})->prepare(input, {});
  EXPECT_FALSE(
      compare_outputs(eager->run(clone_values(*c.values)), accuracy->run(clone_values(*c.values)), nullptr, {}).same);
}

TEST(BackendRegistry, RejectsUnknownBackendsFaultsAndOptions) {
  EXPECT_THROW(make_backend("tvm", {}), UserError);
  EXPECT_THROW(make_backend("inject:explode@aten::relu", {}), UserError);
  EXPECT_THROW(make_backend("inject:segfault@relu", {}), UserError);
  EXPECT_THROW(make_backend("nnc", {{"bogus", "1"}}), UserError);
  EXPECT_THROW(make_backend("nnc", {{"inline", "maybe"}}), UserError);
  EXPECT_NO_THROW(make_backend("nnc", {{"inline", "0"}, {"strategy", "dynamic"}}));
  for (const BackendInfo& info : backend_registry()) EXPECT_FALSE(info.description.empty());
}

TEST(Evaluator, ReportsExceptionPhaseSignatureAndPass) {
  testing::TempDir dir;
  Evaluator evaluator;
  std::vector<Phase> phases;
  Verdict pass =
      evaluator.evaluate(request_for("chain100_scripted", "jit", dir), [&](Phase p) { phases.push_back(p); });
  EXPECT_EQ(pass.status, Status::Pass);
  EXPECT_EQ(phases, (std::vector<Phase>{Phase::Reference, Phase::Compile, Phase::Run}));
  EXPECT_EQ(pass.outputs.size(), 1u);

  Verdict compile =
      evaluator.evaluate(request_for("chain100_scripted", "inject:compile-error@aten::relu", dir), kIgnorePhases);
  EXPECT_EQ(compile.status, Status::Exception);
  EXPECT_EQ(compile.phase, Phase::Compile);
  EXPECT_EQ(compile.signature, "exception:compile:RuntimeError: tsrepro injected compile error at aten::relu");
}

TEST(Evaluator, AccuracyFailureNamesTheOutputAndItsDtype) {
  testing::TempDir dir;
  Verdict v =
      Evaluator().evaluate(request_for("multi_output_scripted", "inject:accuracy@aten::mul", dir), kIgnorePhases);
  ASSERT_EQ(v.status, Status::Accuracy) << v.message;
  EXPECT_EQ(v.signature, "accuracy:float32");
  bool some_leaf_failed = false;
  for (const OutputDiff& d : v.outputs) some_leaf_failed |= !d.ok && d.max_abs >= 0.5;
  EXPECT_TRUE(some_leaf_failed);
}

TEST(Evaluator, ReferenceFailureIsInvalidNotABackendBug) {
  testing::TempDir dir;
  EvalRequest r = request_for("small_graph", "jit", dir);
  r.graph_ir = "graph(%x : Tensor, %y : Tensor):\n  %z : Tensor = aten::mm(%x, %y)\n  return (%z)\n";  // 2x3 @ 2x3
  Verdict v = Evaluator().evaluate(r, kIgnorePhases);
  EXPECT_EQ(v.status, Status::Invalid);
  EXPECT_FALSE(v.failed());
}

// A graph that draws random numbers (dropout with training=True, as Tacotron2's prenet in eval
// mode): every side starts its measured call from kRunSeed, so the backends draw what the
// reference drew. Unseeded, two of these 2x3 masks agree once in 64 runs.
TEST(Evaluator, RandomOpsDrawTheSameNumbersOnBothSides) {
  testing::TempDir dir;
  for (const std::string backend : {"jit", "nnc", "ofi"}) {
    EvalRequest r = request_for("small_graph", backend, dir);
    r.graph_ir =
        "graph(%x : Tensor, %y : Tensor):\n"
        "  %p : float = prim::Constant[value=0.5]()\n"
        "  %train : bool = prim::Constant[value=1]()\n"
        "  %one : int = prim::Constant[value=1]()\n"
        "  %d : Tensor = aten::dropout(%x, %p, %train)\n"
        "  %z : Tensor = aten::add(%d, %y, %one)\n"
        "  return (%z)\n";
    const Verdict v = Evaluator().evaluate(r, kIgnorePhases);
    EXPECT_EQ(v.status, Status::Pass) << backend << ": " << v.message;
    // Exactly: unseeded, the fp64 reference is a third draw, and same()'s fp64 rule excuses
    // whatever the backend returns as no worse than the reference.
    for (const OutputDiff& d : v.outputs) EXPECT_EQ(d.max_abs, 0.0) << backend;
  }
}

TEST(Evaluator, BackwardComparesInputGradients) {
  testing::TempDir dir;
  EvalRequest r = request_for("conv_bn_relu_linear_scripted", "jit", dir);
  r.run.backward = true;
  Verdict v = Evaluator().evaluate(r, kIgnorePhases);
  EXPECT_EQ(v.status, Status::Pass) << v.message;
  size_t gradients = 0;
  for (const OutputDiff& d : v.outputs) gradients += d.path.rfind("grad.", 0) == 0 && d.dtype == "float32";
  // x, conv weight and bias, bn weight and bias, linear weight and bias; not the bn buffers.
  EXPECT_EQ(gradients, 7u);
}

TEST(Evaluator, FakeInputsWhenNoInputsFile) {
  testing::TempDir dir;
  EvalRequest r = request_for("control_flow_scripted", "jit", dir);
  r.inputs_path.clear();
  EXPECT_EQ(Evaluator().evaluate(r, kIgnorePhases).status, Status::Pass);
}

TEST(Signatures, MaskNumbersAddressesAndPaths) {
  EXPECT_EQ(exception_signature(Phase::Run, "RuntimeError", "size 12 at 0x7ffe12 in /usr/lib/x.so\nsecond line"),
            exception_signature(Phase::Run, "RuntimeError", "size 7 at 0xdead in /opt/y.so\nother"));
  // A digit on a name is the name's: PyTorch's converter is not "TSNEPConverter".
  EXPECT_EQ(
      exception_signature(Phase::Compile, "RuntimeError", "TS2EPConverter: float32 conv2d got InvalidTag(16), 1.5e-3"),
      "exception:compile:RuntimeError: TS2EPConverter: float32 conv2d got InvalidTag(N), N");
  EXPECT_EQ(exception_signature(Phase::Run, "RuntimeError", "unit at 0x7ffe12"),
            "exception:run:RuntimeError: unit at 0x?");
  EXPECT_EQ(exception_signature(Phase::Compile, "RuntimeError", "Expected Tensor but got InvalidTag(-96)"),
            exception_signature(Phase::Compile, "RuntimeError", "Expected Tensor but got InvalidTag(16)"));
  EXPECT_NE(exception_signature(Phase::Run, "RuntimeError", "a"),
            exception_signature(Phase::Compile, "RuntimeError", "a"));
  EXPECT_EQ(crash_signature(11), "crash:SIGSEGV");
  EXPECT_EQ(signal_name(6), "SIGABRT");
}

TEST(RunnerProcess, CrashesAndHangsBecomeVerdictsAndTheNextRequestGetsAFreshWorker) {
  testing::TempDir dir;
  RunnerProcess runner(std::string(TSREPRO_BINARY_DIR) + "/tsrepro-runner");
  Verdict segv = runner.evaluate(with_timeout(request_for("chain100_scripted", "inject:segfault@aten::relu", dir), 60));
  EXPECT_EQ(segv.status, Status::Crash);
  EXPECT_EQ(segv.signature, "crash:SIGSEGV");
  EXPECT_EQ(segv.phase, Phase::Run);
  Verdict abort = runner.evaluate(with_timeout(request_for("chain100_scripted", "inject:abort@aten::relu", dir), 60));
  EXPECT_EQ(abort.signature, "crash:SIGABRT");
  const auto started = std::chrono::steady_clock::now();
  Verdict hang = runner.evaluate(with_timeout(request_for("chain100_scripted", "inject:hang@aten::relu", dir), 2));
  EXPECT_EQ(hang.status, Status::Timeout);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  Verdict fine = runner.evaluate(with_timeout(request_for("chain100_scripted", "jit", dir), 60));
  EXPECT_EQ(fine.status, Status::Pass);
  EXPECT_EQ(runner.starts(), 4);
  // A healthy worker is reused.
  runner.evaluate(with_timeout(request_for("small_graph", "jit", dir), 60));
  EXPECT_EQ(runner.starts(), 4);
}

TEST(RunnerProcess, ABadRequestIsAnErrorNotAVerdict) {
  testing::TempDir dir;
  RunnerProcess runner(std::string(TSREPRO_BINARY_DIR) + "/tsrepro-runner");
  EvalRequest r = request_for("small_graph", "jit", dir);
  r.inputs_path = dir / "missing.pt";
  EXPECT_THROW(runner.evaluate(with_timeout(r, 60)), UserError);
}

TEST(Devices, CudaRunsBothSidesOnTheGpu) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA in this libtorch / machine";
  testing::TempDir dir;
  EvalRequest r = request_for("chain100_scripted", "nnc", dir);
  r.run.device = "cuda";
  r.outputs_path = dir / "outputs.pkl";
  EXPECT_EQ(Evaluator().evaluate(r, kIgnorePhases).status, Status::Pass);
  // A pass says the sides agree, not where they ran: both sides' outputs are CUDA tensors.
  std::ifstream file(r.outputs_path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const auto sides = torch::jit::pickle_load(bytes).toTupleRef().elements();
  ASSERT_EQ(sides.size(), 2u);
  size_t tensors = 0;
  for (const c10::IValue& side : sides)
    for (const c10::IValue& output : side.toTupleRef().elements())
      if (output.isTensor()) {
        EXPECT_TRUE(output.toTensor().is_cuda()) << output.toTensor().device();
        ++tensors;
      }
  EXPECT_GE(tensors, 2u);
}

// ofi's passes one at a time (backends/ofi/pass_sequence.h) give the graph the public calls give:
// the sequence is this libtorch's (issue 54). The model folds a batch norm and a chain of muls and
// adds into its convolution (the foldings' fixpoint runs three rounds), fuses a conv-add-relu,
// and transposes a linear's weight.
TEST(FreezePasses, TheSequenceIsThePublicCall) {
  torch::jit::Module m("__torch__.FoldMe");
  m.register_parameter("w", torch::randn({4, 3, 3, 3}), false);
  m.register_parameter("b", torch::randn({4}), false);
  m.register_buffer("mean", torch::randn({4}));
  m.register_buffer("var", torch::rand({4}) + 0.5);
  m.register_buffer("scale", torch::randn({1, 4, 1, 1}));  // per output channel, as the foldings take it
  m.register_parameter("w2", torch::randn({4, 4, 3, 3}), false);
  m.register_parameter("lw", torch::randn({5, 4}), false);
  m.define(R"(
def forward(self, x):
    y = torch.conv2d(x, self.w, self.b)
    y = torch.batch_norm(y, None, None, self.mean, self.var, False, 0.1, 1e-5, False)
    y = (y * self.scale + self.scale) * self.scale + self.scale
    y = torch.relu(torch.conv2d(y, self.w2, None, 1, 1) + y)
    y = torch.dropout(y, 0.5, False)
    return torch.linear(y.mean([2, 3]), self.lw)
)");
  m.eval();
  const auto text = [](const torch::jit::Module& module) {  // without its first line: self's class is
    // mangled anew for each module
    const std::string graph = torch::jit::Canonicalize(module.get_method("forward").graph()->copy())->toString(false);
    return graph.substr(graph.find('\n'));
  };
  for (const bool mkldnn : {true, false}) {
    SCOPED_TRACE(mkldnn ? "with the MKLDNN conversion" : "without it");
    torch::jit::Module public_calls = torch::jit::freeze(m.clone());
    if (mkldnn) public_calls = torch::jit::optimize_for_inference(public_calls);
    PassBudget all;
    OfiOptions options;
    options.mkldnn = mkldnn;
    torch::jit::Module by_hand = freeze_pass_by_pass(m.clone(), options, all);
    if (!mkldnn) {  // the backend's mkldnn=0: optimize_for_inference's other two passes
      auto graph = public_calls.get_method("forward").graph();
      torch::jit::FuseFrozenConvAddRelu(graph);
      torch::jit::FrozenLinearTranspose(graph);
    }
    EXPECT_EQ(text(by_hand), text(public_calls));
    const std::vector<std::string>& applied = all.applied();
    EXPECT_EQ(applied.front(), "freeze_module");
    // mul, add, mul, add after the batch norm: a round folds at most one of each kind, so the
    // fixpoint takes more than the two rounds an older libtorch ran.
    EXPECT_GE(std::count(applied.begin(), applied.end(), "FoldFrozenConvMulOrDiv"), 3) << "rounds of the fixpoint";
    EXPECT_EQ(applied.back(), "FrozenLinearTranspose");
    // A budget stops the sequence where it says.
    PassBudget three(3);
    freeze_pass_by_pass(m.clone(), options, three);
    EXPECT_EQ(three.applied(), std::vector<std::string>(applied.begin(), applied.begin() + 3));
  }
}

// The profiling executor split at its passes (backends/executor_passes.h): the graph each logged
// pass left, parsed back from the JIT log and run by the interpreter, then each fusion group's kernel.
// On cases no pass breaks, every stop computes what the interpreter computes, control flow and
// several outputs included; nnc's stops run through its fuser and its kernels; and libtorch's
// logging is left as it was found.
TEST(ExecutorPasses, EveryStopOfAPassingCaseRunsRight) {
  const std::string levels_before = torch::jit::get_jit_logging_levels();
  for (const char* example : {"elementwise_chain_scripted", "control_flow_scripted", "multi_output_scripted"}) {
    Case c = example_case(example);
    auto eager = make_backend("eager", {})->prepare(backend_input(c), {});
    const std::vector<c10::IValue> expected = eager->run(clone_values(*c.values));
    for (const char* backend : {"jit", "nnc"}) {
      SCOPED_TRACE(std::string(example) + " under " + backend);
      const std::vector<std::string> stops =
          make_backend(backend, {})->pass_applications(backend_input(c), clone_values(*c.values));
      ASSERT_GE(stops.size(), 2u);
      const auto stop_named = [&](const std::string& start) {
        return std::any_of(stops.begin(), stops.end(), [&](const std::string& s) { return s.rfind(start, 0) == 0; });
      };
      EXPECT_TRUE(stop_named("the profiling executor's final passes"));
      if (std::string(backend) == "nnc" && std::string(example) == "elementwise_chain_scripted") {
        EXPECT_TRUE(stop_named("Fusion (in runNoGradOptimizations)")) << "the fuser's pass changes the graph";
        EXPECT_TRUE(stop_named("NNC's kernel of fusion group 1 (")) << "its kernel";
      }
      for (size_t k = 1; k <= stops.size(); ++k) {
        SCOPED_TRACE("stop " + std::to_string(k) + ": " + stops[k - 1]);
        auto stopped =
            make_backend(backend, {{"passes", std::to_string(k)}})->prepare(backend_input(c), clone_values(*c.values));
        const CompareResult same =
            compare_outputs(expected, stopped->run(clone_values(*c.values)), nullptr, CompareOptions{});
        EXPECT_TRUE(same.same) << stops[k - 1];
      }
    }
  }
  EXPECT_EQ(torch::jit::get_jit_logging_levels(), levels_before);
}

// A log read as libtorch writes it: the case's own executor only (an executor compiled meanwhile
// runs the no-optimization pipeline), a pass that changed nothing left out, and where the log
// stops inside the pipelines, the pass that was running.
TEST(ExecutorPasses, TheLogNamesEachPassThatChangedTheGraph) {
  const std::string log =
      "[DEBUG profiling_graph_executor_impl.cpp:600] Running ProfilingGraphExecutorImpl 0x1\n"
      "[DEBUG profiling_graph_executor_impl.cpp:522] Before inlining (beginning of "
      "runProfilingInsensitiveOptimizations)\n"
      "[DEBUG profiling_graph_executor_impl.cpp:522] graph(%x : Tensor):\n"
      "[DEBUG profiling_graph_executor_impl.cpp:522]   return (%x)\n"
      "[DEBUG profiling_graph_executor_impl.cpp:530] After inlining, before ClearProfilingInformation\n"
      "[DEBUG profiling_graph_executor_impl.cpp:530] graph(%x : Tensor):\n"
      "[DEBUG profiling_graph_executor_impl.cpp:530]   return (%x)\n"
      "[DEBUG profiling_graph_executor_impl.cpp:556] After EliminateDeadCode, before DecomposeOps\n"
      "[DEBUG profiling_graph_executor_impl.cpp:556] graph(%y : Tensor):\n"
      "[DEBUG profiling_graph_executor_impl.cpp:556]   return (%y)\n"
      "[DEBUG profiling_graph_executor_impl.cpp:600] Running ProfilingGraphExecutorImpl 0x2\n"
      "[DEBUG profiling_graph_executor_impl.cpp:607] Before LowerGradOf (beginning of runNooptPassPipeline)\n"
      "[DEBUG profiling_graph_executor_impl.cpp:607] graph(%z : Tensor):\n"
      "[DEBUG profiling_graph_executor_impl.cpp:607]   return (%z)\n"
      "[DEBUG profiling_graph_executor_impl.cpp:610] After LowerGradOf, before RemoveExpands\n"
      "[DEBUG profiling_graph_executor_impl.cpp:610] graph(%w : Tensor):\n"
      "[DEBUG profiling_graph_executor_impl.cpp:610]   return (%w)\n";
  const ExecutorLog read = read_executor_log(log);
  ASSERT_EQ(read.passes.size(), 1u);
  EXPECT_EQ(read.passes[0].pass, "EliminateDeadCode");
  EXPECT_EQ(read.passes[0].pipeline, "runProfilingInsensitiveOptimizations");
  EXPECT_FALSE(read.finished);
  EXPECT_EQ(read.next, "DecomposeOps (in runProfilingInsensitiveOptimizations)");
  // A printed fusion group is inlined where it is called; a profiling node is dropped.
  const auto graph = runnable_logged_graph(
      "graph(%x : Float(2, strides=[1], requires_grad=0, device=cpu)):\n"
      "  %p : Tensor = prim::profile[profiled_type=Float(2, strides=[1], requires_grad=0, device=cpu)](%x)\n"
      "  %y : Tensor = prim::TensorExprGroup_0(%p)\n"
      "  return (%y)\n"
      "with prim::TensorExprGroup_0 = graph(%a : Tensor):\n"
      "  %b : Tensor = aten::relu(%a)\n"
      "  return (%b)\n");
  const std::string text = graph->toString(false);
  EXPECT_NE(text.find("aten::relu(%x"), std::string::npos) << text;
  EXPECT_EQ(text.find("TensorExprGroup"), std::string::npos) << text;
  EXPECT_EQ(text.find("prim::profile"), std::string::npos) << text;
  EXPECT_THROW(runnable_logged_graph("graph():\n  %c : Tensor = prim::Constant[value=<Tensor>]()\n  return (%c)\n"),
               std::runtime_error);
}

}  // namespace
}  // namespace tsrepro
