// Import, case-directory I/O and inputs: the round trip from a Python module to a case that the
// interpreter runs with the same result, and every way the input can be wrong.

#include <cfloat>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include <gtest/gtest.h>
#include <torch/csrc/jit/runtime/interpreter.h>
#include <torch/script.h>

#include "runner/import/import.h"
#include "runner/case/inputs.h"
#include "runner/formats/torch_save_reader.h"
#include "runner/worker/worker_client.h"
#include "tests/support/cases.h"
#include "tsrepro/backend.h"
#include "tsrepro/case.h"
#include "tsrepro/compare.h"
#include "tsrepro/error.h"

namespace tsrepro {
namespace {

using testing::model_path;
using testing::TempDir;

std::vector<c10::IValue> run_eager(const Case& c, const std::vector<c10::IValue>& values) {
  BackendInput input{c.graph, {}};
  for (const InputSpec& s : c.inputs) input.lifted.push_back(s.lifted);
  return make_backend("eager", {})->prepare(input, values)->run(values);
}

Case import_example(const nlohmann::json& entry) {
  ImportOptions o;
  o.source = model_path(entry["model"]);
  o.inputs_path = model_path(entry["inputs"]);
  return import_case(o);
}

std::string user_error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no UserError thrown";
  return "";
}

// The promise of `tsrepro import`: CASE/graph.ir with CASE/inputs.pt, run in the interpreter,
// gives what the Python module returned — for every example, written and read back from disk.
TEST(ImportRoundTrip, EveryExampleMatchesThePythonModuleAfterWritingAndReloading) {
  for (const auto& entry : testing::example_manifest()) {
    SCOPED_TRACE(entry["name"].get<std::string>());
    TempDir dir;
    write_case(import_example(entry), dir / "case");
    Case loaded = load_case(dir / "case");
    ASSERT_TRUE(loaded.values.has_value());
    std::vector<c10::IValue> outputs = run_eager(loaded, clone_values(*loaded.values));
    c10::IValue expected = read_torch_save(model_path(entry["expected"])).toTupleRef().elements().at(0);
    // Exact with the libtorch that made the examples; other versions may differ in the last ulp.
    CompareOptions close;
    close.tol = 1e-5;
    CompareResult result = compare_outputs(outputs, {expected}, nullptr, close);
    EXPECT_TRUE(result.same) << (result.first_failure() ? result.first_failure()->reason : "");
  }
}

TEST(Import, LiftsParametersAndBuffersAsMarkedInputsAndDropsSelf) {
  ImportOptions o{model_path("conv_bn_relu_linear_scripted.pt"), "forward",
                  model_path("conv_bn_relu_linear_scripted.inputs.pt"), ""};
  Case c = import_case(o);
  EXPECT_FALSE(c.inputs.front().lifted);
  std::set<std::string> lifted_from;
  for (const InputSpec& s : c.inputs)
    if (s.lifted) lifted_from.insert(s.lifted_from);
  EXPECT_TRUE(lifted_from.count("self.conv.weight"));
  EXPECT_TRUE(lifted_from.count("self.bn.running_mean"));
  EXPECT_EQ(c.graph->inputs().size(), c.inputs.size());
  EXPECT_EQ(c.graph->toString().find("prim::GetAttr"), std::string::npos);
  EXPECT_EQ(c.graph->toString().find("ClassType"), std::string::npos);
}

// Training semantics: batch norm in training mode updates its running stats in place, and
// after import those are lifted inputs — so the update must land on the input tensor.
TEST(Import, TrainingModeModuleKeepsUpdatingItsBuffers) {
  ImportOptions o{model_path("conv_bn_train_scripted.pt"), "forward", model_path("conv_bn_train_scripted.inputs.pt"),
                  ""};
  Case c = import_case(o);
  size_t mean_index = 0;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (c.inputs[i].lifted_from == "self.bn.running_mean") mean_index = i;
  ASSERT_NE(mean_index, 0u);
  std::vector<c10::IValue> values = clone_values(*c.values);
  const at::Tensor before = values[mean_index].toTensor().clone();
  run_eager(c, values);
  EXPECT_FALSE(at::equal(before, values[mean_index].toTensor()));
}

// Runs a model-making script with /usr/bin/python3, its one argument the directory it writes its
// files to (model.pt, inputs.pt, expected.pt, ...).
void make_with_python(const TempDir& dir, const std::string& script_text) {
  const std::string script = dir / "make.py";
  std::ofstream(script) << script_text;
  const testing::ShellResult made = testing::run_shell(testing::kPython + " " + testing::shell_quoted(script) + " " +
                                                       testing::shell_quoted(dir.path()));
  ASSERT_EQ(made.exit_code, 0) << made.output;
}

// The first output of `c` written to `case_dir` and read back, run by the interpreter.
at::Tensor first_output_after_a_round_trip(const Case& c, const std::string& case_dir) {
  write_case(c, case_dir);
  const Case reloaded = load_case(case_dir);
  return run_eager(reloaded, clone_values(*reloaded.values))[0].toTensor();
}

// The one output a script saved as torch.save((out,), file).
at::Tensor saved_output(const std::string& file) { return read_torch_save(file).toTupleRef().elements()[0].toTensor(); }

// A module that writes attributes in forward (prim::SetAttr): its own tensor state in a loop, a
// counter in a branch inside the loop, and a submodule's list before a loop that reads it (as
// torchvision's RAFT does with its correlation pyramid). The case runs as the module did.
TEST(Import, AttributeWritesBecomeStateThreadedThroughTheGraph) {
  SKIP_WITHOUT_PYTHON_TORCH();
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(make_with_python(dir, R"(import sys, torch
from typing import List
class Pyramid(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.levels: List[torch.Tensor] = [torch.zeros(1)]  # as RAFT's CorrBlock
    def build(self, x: torch.Tensor):
        self.levels = [x, x * 2.0]
class Stateful(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.pyramid = Pyramid()
        self.state = torch.ones(3)
        self.calls = 0
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.pyramid.build(x)
        total = torch.zeros(3)
        for i in range(4):
            self.state = self.state * 0.5 + x
            if i % 2 == 1:
                self.calls = self.calls + 1
            total = total + self.pyramid.levels[i % 2] + self.state
        return total * self.calls
out = sys.argv[1]
m = torch.jit.script(Stateful().eval())
torch.jit.save(m, out + "/model.pt")
x = torch.tensor([1.0, -2.0, 0.25])
torch.save((x,), out + "/inputs.pt")
torch.save((torch.jit.load(out + "/model.pt")(x),), out + "/expected.pt")
)"));

  const Case c = import_case({dir / "model.pt", "forward", dir / "inputs.pt", ""});
  EXPECT_EQ(graph_to_ir(*c.graph).find("SetAttr"), std::string::npos);
  const std::vector<c10::IValue> got = run_eager(c, clone_values(*c.values));
  const at::Tensor expected = saved_output(dir / "expected.pt");
  ASSERT_EQ(got.size(), 1U);
  EXPECT_TRUE(at::equal(got[0].toTensor(), expected)) << got[0] << " vs " << expected;
  // The same after the case is written and read back (graph.ir holds the threaded state).
  EXPECT_TRUE(at::equal(first_output_after_a_round_trip(c, dir / "case"), expected));
}

// An object the graph creates and stores on the module on its first call (torchvision's
// MultiScaleRoIAlign keeps a LevelMapper so, in every R-CNN): once the write is threaded, the
// object is a value that an If makes and the inlined __call__ reads. It becomes a tuple of its
// attributes (runner/import/object_tuples.h), and the case computes what the module's first call does;
// saved after a call, the module holds the object, and the case computes its next call.
TEST(Import, AnObjectStoredOnTheModuleOnItsFirstCallBecomesATuple) {
  SKIP_WITHOUT_PYTHON_TORCH();
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(make_with_python(dir, R"(import sys, torch
from typing import Optional
@torch.jit.script
class Mapper:
    def __init__(self, k: int, eps: float):
        self.k = k
        self.eps = eps
    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(x + self.eps, max=float(self.k))
def apply(x: torch.Tensor, mapper: Optional[Mapper]) -> torch.Tensor:
    if mapper is None:
        raise ValueError("no mapper")
    return mapper(x)
class FirstCallSetup(torch.nn.Module):
    __annotations__ = {"mapper": Optional[Mapper]}
    def __init__(self):
        super().__init__()
        self.mapper = None
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.mapper is None:
            self.mapper = Mapper(int(x.numel()), 0.5)
        return apply(x, self.mapper) * 2
out = sys.argv[1]
torch.jit.save(torch.jit.script(FirstCallSetup()), out + "/model.pt")
x = torch.tensor([1.0, 2.0, 4.0])
torch.save((x,), out + "/inputs.pt")
torch.save((torch.jit.load(out + "/model.pt")(x),), out + "/expected.pt")
called = torch.jit.script(FirstCallSetup())
called(torch.ones(2))  # its mapper now holds k = 2
torch.jit.save(called, out + "/called.pt")
torch.save((called(x),), out + "/called_expected.pt")
)"));

  // A module saved after a call holds the object: the case creates it again from its attributes.
  const Case after_a_call = import_case({dir / "called.pt", "forward", dir / "inputs.pt", ""});
  const at::Tensor called_expected = saved_output(dir / "called_expected.pt");
  EXPECT_TRUE(at::equal(called_expected, at::tensor({3.0F, 4.0F, 4.0F})));  // clamp(x + 0.5, max=2) * 2
  EXPECT_TRUE(at::equal(run_eager(after_a_call, clone_values(*after_a_call.values))[0].toTensor(), called_expected));

  const Case c = import_case({dir / "model.pt", "forward", dir / "inputs.pt", ""});
  const std::string text = graph_to_ir(*c.graph);
  EXPECT_EQ(text.find("prim::CreateObject"), std::string::npos) << text;
  EXPECT_NE(text.find("prim::TupleIndex"), std::string::npos) << text;
  const at::Tensor expected = saved_output(dir / "expected.pt");
  EXPECT_TRUE(at::equal(expected, at::tensor({3.0F, 5.0F, 6.0F})));  // clamp(x + 0.5, max=3) * 2
  EXPECT_TRUE(at::equal(run_eager(c, clone_values(*c.values))[0].toTensor(), expected));
  EXPECT_TRUE(at::equal(first_output_after_a_round_trip(c, dir / "case"), expected));
}

// `with torch.no_grad():` (prim::Enter/prim::Exit on an object whose class IR text cannot name;
// RetinaNet's complete-IoU loss has one) becomes the inlined __enter__ and __exit__: the case
// computes the same values, and the part inside the block records no gradient.
TEST(Import, AWithStatementBecomesItsEnterAndExit) {
  SKIP_WITHOUT_PYTHON_TORCH();
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(make_with_python(dir, R"(import sys, torch
class Detached(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            scale = x.abs().max() + 1
        return x * scale
out = sys.argv[1]
torch.jit.save(torch.jit.script(Detached()), out + "/model.pt")
x = torch.tensor([1.0, -3.0, 2.0])
torch.save((x,), out + "/inputs.pt")
torch.save((torch.jit.load(out + "/model.pt")(x),), out + "/expected.pt")
)"));

  const Case c = import_case({dir / "model.pt", "forward", dir / "inputs.pt", ""});
  const std::string text = graph_to_ir(*c.graph);
  EXPECT_EQ(text.find("prim::Enter"), std::string::npos) << text;
  EXPECT_NE(text.find("aten::set_grad_enabled"), std::string::npos) << text;
  const at::Tensor expected = saved_output(dir / "expected.pt");
  std::vector<c10::IValue> inputs = clone_values(*c.values);
  inputs[0] = inputs[0].toTensor().requires_grad_();
  const at::Tensor got = run_eager(c, inputs)[0].toTensor();
  EXPECT_TRUE(at::equal(got.detach(), expected));
  got.sum().backward();  // d/dx (x * scale) with scale = 4 held constant: 4 everywhere
  EXPECT_TRUE(at::equal(inputs[0].toTensor().grad(), at::full({3}, 4.0F)));
  EXPECT_TRUE(at::GradMode::is_enabled());
}

TEST(Import, ControlFlowSurvivesTheIrRoundTrip) {
  ImportOptions o{model_path("control_flow_scripted.pt"), "forward", model_path("control_flow_scripted.inputs.pt"), ""};
  Case c = import_case(o);
  const std::string text = graph_to_ir(*c.graph);
  EXPECT_NE(text.find("prim::If"), std::string::npos);
  EXPECT_NE(text.find("prim::Loop"), std::string::npos);
  EXPECT_EQ(graph_to_ir(*graph_from_ir(text, "test")),
            graph_to_ir(*graph_from_ir(graph_to_ir(*graph_from_ir(text, "t")), "t")));
  EXPECT_EQ(c.inputs.at(1).kind, "int");
}

// ---- Constants through IR text -----------------------------------------------------------------

// Equal down to the bits: -0.0 is not 0.0, every NaN equals every NaN, a list's element type counts.
bool identical(const c10::IValue& a, const c10::IValue& b) {
  auto same_double = [](double x, double y) {
    return (std::isnan(x) && std::isnan(y)) || std::memcmp(&x, &y, sizeof x) == 0;
  };
  if (a.isDouble()) return b.isDouble() && same_double(a.toDouble(), b.toDouble());
  if (a.isComplexDouble())
    return b.isComplexDouble() && same_double(a.toComplexDouble().real(), b.toComplexDouble().real()) &&
           same_double(a.toComplexDouble().imag(), b.toComplexDouble().imag());
  if (a.isList()) {
    if (!b.isList() || *a.toList().elementType() != *b.toList().elementType()) return false;
    const auto x = a.toListRef(), y = b.toListRef();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!identical(x[i], y[i])) return false;
    return true;
  }
  if (a.isTuple()) {
    if (!b.isTuple()) return false;
    const auto& x = a.toTupleRef().elements();
    const auto& y = b.toTupleRef().elements();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!identical(x[i], y[i])) return false;
    return true;
  }
  if (a.isGenericDict()) {
    if (!b.isGenericDict() || a.toGenericDict().size() != b.toGenericDict().size()) return false;
    auto x = a.toGenericDict().begin();
    for (auto y = b.toGenericDict().begin(); y != b.toGenericDict().end(); ++x, ++y)
      if (!identical(x->key(), y->key()) || !identical(x->value(), y->value())) return false;
    return true;
  }
  if (a.isString()) return b.isString() && a.toStringRef() == b.toStringRef();
  return a.tagKind() == b.tagKind() && a == b;
}

// One value of every kind a constant can hold, with the edge values of each.
std::vector<c10::IValue> constant_samples() {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> doubles = {
      inf, -inf, nan, -0.0, 0.0, 0.1, 1.0 / 3, 5e-324, -2.2250738585072009e-308, DBL_MIN, DBL_MAX, -DBL_MAX, 1e300};
  const std::vector<std::string> strings = {"",
                                            "plain",
                                            "tab\t nl\n quote\" back\\ apos' brace}",
                                            "\x01\x7f",
                                            "é日本",
                                            "\xff\xfe not utf-8",
                                            "%x : int = ]()"};
  std::vector<c10::IValue> samples;
  for (double d : doubles) samples.emplace_back(d);
  for (int64_t i : {int64_t{0}, int64_t{-1}, int64_t{1} << 32, std::numeric_limits<int64_t>::max(),
                    std::numeric_limits<int64_t>::min()})
    samples.emplace_back(i);
  samples.emplace_back(true);
  samples.emplace_back(false);
  for (const std::string& text : strings) samples.emplace_back(text);
  samples.emplace_back(c10::IValue());
  samples.emplace_back(c10::Device("cpu"));
  samples.emplace_back(c10::complex<double>(1.5, -2.0));
  samples.emplace_back(c10::complex<double>(0.0, inf));
  samples.emplace_back(c10::complex<double>(-nan, 5e-324));
  samples.emplace_back(c10::List<int64_t>());
  samples.emplace_back(c10::List<int64_t>({1, 2}));
  samples.emplace_back(c10::List<double>(doubles));
  samples.emplace_back(c10::List<double>({0.5}));
  samples.emplace_back(c10::List<double>());
  samples.emplace_back(c10::List<bool>({true, false}));
  samples.emplace_back(c10::List<bool>());
  samples.emplace_back(c10::List<std::string>(strings));
  samples.emplace_back(c10::List<std::string>({"a", "b"}));
  samples.emplace_back(c10::List<c10::List<int64_t>>({c10::List<int64_t>({1}), c10::List<int64_t>()}));
  samples.emplace_back(c10::ivalue::Tuple::create({}));
  samples.emplace_back(c10::ivalue::Tuple::create({c10::IValue(1), c10::IValue(2.5)}));
  samples.emplace_back(
      c10::ivalue::Tuple::create({c10::IValue(-inf), c10::IValue("é"), c10::IValue(c10::List<bool>({true})),
                                  c10::IValue(c10::ivalue::Tuple::create({c10::IValue(nan)})), c10::IValue()}));
  c10::Dict<std::string, std::string> names;
  names.insert("layer4", "out");
  names.insert("layer3", "aux");
  samples.emplace_back(names);
  samples.emplace_back(c10::Dict<std::string, int64_t>());
  c10::Dict<int64_t, double> by_int;
  by_int.insert(1, -inf);
  by_int.insert(-7, 0.25);
  samples.emplace_back(by_int);
  c10::Dict<double, c10::List<int64_t>> by_float;
  by_float.insert(2.5, c10::List<int64_t>({3}));
  samples.emplace_back(by_float);
  c10::Dict<bool, std::string> by_bool;
  by_bool.insert(true, "\n");
  samples.emplace_back(by_bool);
  return samples;
}

// Issue 27: whatever graph_to_ir prints parses back (libtorch's own parser, as repro.py's
// torch._C.parse_ir) to a graph that the interpreter runs to the very same value, and prints the
// same text again.
TEST(IrText, EveryConstantSurvivesPrintParseAndInterpret) {
  for (const c10::IValue& value : constant_samples()) {
    auto graph = std::make_shared<torch::jit::Graph>();
    graph->registerOutput(graph->insertConstant(value));
    const std::string text = graph_to_ir(*graph);
    std::shared_ptr<torch::jit::Graph> parsed;
    try {
      parsed = graph_from_ir(text, "constant");
    } catch (const std::exception& e) {
      ADD_FAILURE() << value << " printed as\n" << text << "does not parse: " << e.what();
      continue;
    }
    torch::jit::Stack stack;
    try {
      torch::jit::Code code(parsed, "constant");
      torch::jit::InterpreterState(code).run(stack);
    } catch (const std::exception& e) {
      ADD_FAILURE() << value << " printed as\n" << text << "does not run: " << e.what();
      continue;
    }
    ASSERT_EQ(stack.size(), 1U);
    EXPECT_TRUE(identical(value, stack[0])) << value << " came back as " << stack[0] << " from\n" << text;
    EXPECT_EQ(graph_to_ir(*parsed), graph_to_ir(*graph_from_ir(graph_to_ir(*parsed), "again"))) << text;
  }
}

TEST(Import, TensorConstantsBecomeLiftedInputs) {
  Case c;
  c.graph = std::make_shared<torch::jit::Graph>();
  torch::jit::Value* x = c.graph->addInput("x");
  x->setType(c10::TensorType::get());
  torch::jit::Value* constant = c.graph->insertConstant(at::arange(3.0));
  c.graph->registerOutput(c.graph->insert(c10::aten::mul, {x, constant}));
  c.inputs.push_back(spec_from_value("x", at::ones(3)));
  c.values = std::vector<c10::IValue>{at::ones(3)};
  lift_tensor_constants(c);
  ASSERT_EQ(c.inputs.size(), 2u);
  EXPECT_TRUE(c.inputs[1].lifted);
  EXPECT_EQ(c.inputs[1].lifted_from, "constant");
  EXPECT_TRUE(at::equal(c.values->at(1).toTensor(), at::arange(3.0)));
  // Now the text reads back: parseIR cannot read tensor constants, lifted inputs are fine.
  EXPECT_NO_THROW(graph_from_ir(graph_to_ir(*c.graph), "test"));
}

TEST(Import, IrFileWithInputs) {
  ImportOptions o{model_path("small_graph.ir"), "forward", model_path("small_graph.inputs.pt"), ""};
  Case c = import_case(o);
  EXPECT_EQ(c.inputs.size(), 2u);
  EXPECT_EQ(count_compute_nodes(*c.graph), 3u);
  EXPECT_EQ(c.provenance["source_kind"], "ir");
}

TEST(Import, FakeInputSpecStoresShapesAndRangesButNoValues) {
  ImportOptions o{model_path("small_graph.ir"), "forward", "", "2x3:float32[0,5), 2x3:float64"};
  Case c = import_case(o);
  EXPECT_FALSE(c.values.has_value());
  EXPECT_EQ(c.inputs[0].sizes, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(c.inputs[0].strides, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(c.inputs[1].dtype, "float64");
  EXPECT_DOUBLE_EQ(*c.inputs[0].max, 5.0);
  TempDir dir;
  write_case(c, dir / "case");
  EXPECT_FALSE(std::filesystem::exists(dir / "case/inputs.pt"));
  EXPECT_FALSE(load_case(dir / "case").values.has_value());
}

TEST(InputSpec, ParsesTensorsRangesAndScalars) {
  auto specs = parse_input_spec("1x3x8x8:float32,4:int64[0,10),scalar:float64,int=3,float=0.5,bool=true");
  ASSERT_EQ(specs.size(), 6u);
  EXPECT_EQ(specs[0].sizes, (std::vector<int64_t>{1, 3, 8, 8}));
  EXPECT_EQ(specs[1].dtype, "int64");
  EXPECT_DOUBLE_EQ(*specs[1].min, 0);
  EXPECT_DOUBLE_EQ(*specs[1].max, 9);  // half-open for integers
  EXPECT_TRUE(specs[2].sizes.empty());
  EXPECT_EQ(specs[3].value, 3);
  EXPECT_EQ(specs[4].value, 0.5);
  EXPECT_EQ(specs[5].value, true);
  EXPECT_THROW(parse_input_spec("2x3:float99"), UserError);
  EXPECT_THROW(parse_input_spec("2xq:float32"), UserError);
  EXPECT_THROW(parse_input_spec("int=abc"), UserError);
  EXPECT_THROW(parse_input_spec("4:int64[0;10)"), UserError);
}

TEST(FakeInputs, AreDeterministicShapedAndInRange) {
  auto specs = parse_input_spec("4x5:float32[-2,3),50:int64[3,7),6:bool,int=4");
  auto first = make_fake_inputs(specs, 7), again = make_fake_inputs(specs, 7), other = make_fake_inputs(specs, 8);
  EXPECT_TRUE(at::equal(first[0].toTensor(), again[0].toTensor()));
  EXPECT_FALSE(at::equal(first[0].toTensor(), other[0].toTensor()));
  EXPECT_EQ(first[0].toTensor().sizes(), (at::IntArrayRef{4, 5}));
  EXPECT_GE(first[0].toTensor().min().item<double>(), -2);
  EXPECT_LT(first[0].toTensor().max().item<double>(), 3);
  EXPECT_EQ(first[1].toTensor().scalar_type(), at::kLong);
  EXPECT_GE(first[1].toTensor().min().item<int64_t>(), 3);
  EXPECT_LE(first[1].toTensor().max().item<int64_t>(), 6);
  EXPECT_EQ(first[2].toTensor().scalar_type(), at::kBool);
  EXPECT_EQ(first[3].toInt(), 4);
}

TEST(FakeInputs, KeepRecordedNonContiguousStrides) {
  InputSpec spec = spec_from_value("t", at::arange(12.0).reshape({3, 4}).t());
  at::Tensor fake = make_fake_value(spec, 0, 0).toTensor();
  EXPECT_EQ(fake.strides(), (at::IntArrayRef{1, 4}));
  EXPECT_DOUBLE_EQ(*spec.min, 0);
  EXPECT_DOUBLE_EQ(*spec.max, 11);
}

TEST(Import, BadInputsAreUserErrorsNamingTheFile) {
  const std::string chain = model_path("chain100_scripted.pt");
  EXPECT_NE(user_error_of([&] {
              import_case({chain, "forward", model_path("small_graph.inputs.pt"), ""});
            }).find("small_graph.inputs.pt: the graph takes 1 inputs"),
            std::string::npos);
  EXPECT_NE(user_error_of([&] {
              import_case({"/nonexistent/model.pt", "forward", model_path("small_graph.inputs.pt"), ""});
            }).find("/nonexistent/model.pt: no such file"),
            std::string::npos);
  EXPECT_NE(user_error_of([&] {
              import_case({chain, "nope", model_path("chain100_scripted.inputs.pt"), ""});
            }).find("no method 'nope'"),
            std::string::npos);
  // A torch.save file is a zip too, but not a TorchScript archive.
  EXPECT_NE(user_error_of([&] {
              import_case({model_path("small_graph.inputs.pt"), "forward", model_path("small_graph.inputs.pt"), ""});
            }).find("not a TorchScript archive"),
            std::string::npos);
  // Traced graphs record dtypes: an int64 image does not fit.
  TempDir dir;
  std::vector<char> bytes = torch::jit::pickle_save(c10::ivalue::Tuple::create({at::ones({1, 2, 3, 3}, at::kLong)}));
  std::ofstream(dir / "ints.pt", std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  // (libtorch's convolution segfaults on int64 inputs: the check runs in a worker.)
  RunnerProcess runner(std::string(TSREPRO_BINARY_DIR) + "/tsrepro-runner");
  Case traced = import_case({model_path("conv_bn_relu_linear_traced.pt"), "forward", dir / "ints.pt", ""});
  EXPECT_NE(user_error_of([&] {
              check_inputs_run(traced, dir / "ints.pt", runner);
            }).find("ints.pt: the inputs do not fit the graph"),
            std::string::npos);
  Case fine = import_case({model_path("small_graph.ir"), "forward", model_path("small_graph.inputs.pt"), ""});
  EXPECT_NO_THROW(check_inputs_run(fine, "small_graph.inputs.pt", runner));
  Case wrong_spec = import_case({model_path("small_graph.ir"), "forward", "", "2x3:float32,3x4:float32"});
  EXPECT_NE(user_error_of([&] {
              check_inputs_run(wrong_spec, "--input-spec", runner);
            }).find("--input-spec: the inputs do not fit"),
            std::string::npos);
  // A scripted int input given a tensor.
  EXPECT_NE(user_error_of([&] {
              import_case({model_path("control_flow_scripted.pt"), "forward", dir / "ints.pt", ""});
            }).find("the graph takes 2 inputs"),
            std::string::npos);
}

TEST(CaseDir, WriteRefusesAnExistingDirectoryAndLeavesNoTemporaries) {
  TempDir dir;
  Case c = import_case({model_path("small_graph.ir"), "forward", model_path("small_graph.inputs.pt"), ""});
  write_case(c, dir / "case");
  EXPECT_THROW(write_case(c, dir / "case"), UserError);
  write_case(c, dir / "case", /*replace=*/true);
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1u);
  nlohmann::json meta = nlohmann::json::parse(std::ifstream(dir / "case/case.json"));
  EXPECT_EQ(meta["format"], "tsrepro-case");
  EXPECT_EQ(meta["inputs"].size(), 2u);
  EXPECT_EQ(meta["inputs"][0]["dtype"], "float32");
}

// case.json keeps the whole RunSpec the failure was judged under: `report`, `minify --skip-sanity`
// and the writers judge again with its tolerances, device, backward and timeout, not the defaults.
TEST(CaseDir, TheExpectedFailureKeepsItsWholeRunSpec) {
  TempDir dir;
  Case c = import_case({model_path("small_graph.ir"), "forward", model_path("small_graph.inputs.pt"), ""});
  ExpectedFailure seen;
  seen.run.backend = "nnc";
  seen.run.backend_options = {{"inline", "0"}};
  seen.run.compare.tol = 0.25;
  seen.run.compare.exact_dtype = false;
  seen.run.backward = true;
  seen.run.seed = 3;
  seen.run.timeout_seconds = 7;
  seen.status = Status::Accuracy;
  seen.signature = "accuracy:float32";
  c.expected = seen;
  write_case(c, dir / "case");
  const Case back = load_case(dir / "case");
  ASSERT_TRUE(back.expected);
  EXPECT_EQ(run_spec_to_json(back.expected->run), run_spec_to_json(seen.run));
  EXPECT_EQ(back.expected->status, Status::Accuracy);
  EXPECT_EQ(back.expected->signature, seen.signature);

  // "Any failure" (minify --check-str) has no status.
  c.expected->status.reset();
  write_case(c, dir / "case", /*replace=*/true);
  EXPECT_FALSE(load_case(dir / "case").expected->status);
}

TEST(CaseDir, OlderExpectedFailuresReadIntoARunSpecAndUnknownStatusesAreRefused) {
  TempDir dir;
  write_case(import_case({model_path("small_graph.ir"), "forward", model_path("small_graph.inputs.pt"), ""}),
             dir / "case");
  nlohmann::json meta = nlohmann::json::parse(std::ifstream(dir / "case/case.json"));
  meta["expected_failure"] = {{"ref", "eager"},
                              {"backend", "jit"},
                              {"options", {{"inline", "0"}}},
                              {"kind", "exception"},
                              {"signature", "exception:run:RuntimeError: N"}};
  meta["comparison"] = nlohmann::json::object();
  std::ofstream(dir / "case/case.json") << meta.dump();
  const Case old = load_case(dir / "case");
  ASSERT_TRUE(old.expected);
  EXPECT_EQ(old.expected->run.backend, "jit");
  EXPECT_EQ(old.expected->run.backend_options, (BackendOptions{{"inline", "0"}}));
  EXPECT_EQ(old.expected->run.compare.tol, CompareOptions{}.tol);
  EXPECT_EQ(old.expected->status, Status::Exception);

  meta["expected_failure"] = {{"run", {{"backend", "jit"}}}, {"status", "sometimes"}};
  std::ofstream(dir / "case/case.json") << meta.dump();
  EXPECT_NE(user_error_of([&] { load_case(dir / "case"); }).find("case.json: expected_failure: unknown status"),
            std::string::npos);
}

TEST(CaseDir, LoadRejectsBrokenCasesWithTheFileName) {
  TempDir dir;
  EXPECT_NE(user_error_of([&] { load_case(dir / "missing"); }).find("missing"), std::string::npos);
  std::filesystem::create_directory(dir / "bad");
  std::ofstream(dir / "bad/case.json") << "{ not json";
  EXPECT_NE(user_error_of([&] { load_case(dir / "bad"); }).find("case.json: not valid JSON"), std::string::npos);
}

}  // namespace
}  // namespace tsrepro
