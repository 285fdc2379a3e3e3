// repro.py: the generated script runs under Debian's /usr/bin/python3 (stock PyTorch), judges a
// case the way tsrepro's runner does, and keeps whatever text a case holds as data.

#include <sys/wait.h>

#include <csignal>
#include <map>

#include <cstdio>
#include <cstring>
#include <limits>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/script.h>

#include "runner/formats/python_literal.h"
#include "repro/python_value_literal.h"
#include "repro/markdown.h"
#include "repro/template_fill.h"
#include "runner/exec/evaluate.h"
#include "runner/import/import.h"
#include "runner/case/inputs.h"
#include "tests/support/cases.h"
#include "tests/support/expectations.h"
#include "tsrepro/case.h"
#include "tsrepro/error.h"
#include "tsrepro/writer.h"

namespace tsrepro {
namespace {

using testing::bug_case;
using testing::example_case;
using testing::kPython;
using testing::model_path;
using testing::run_shell;
using testing::shell_quoted;
using testing::ShellResult;
using testing::source_path;
using testing::system_python_has_torch;

using testing::settings_for;

// Writes the case with its repro.py into `dir` and returns the script's path.
std::string write_repro(const Case& c, const ReproSettings& settings, const std::string& dir) {
  write_case(c, dir, false, {{"repro.py", repro_py_source(c, settings)}});
  return dir + "/repro.py";
}

ShellResult run_repro(const std::string& script) { return run_shell(kPython + " " + shell_quoted(script)); }

// The "verdict: <status>" line the script prints after comparing outputs.
std::string printed_status(const ShellResult& r) {
  const auto at = r.output.find("verdict: ");
  if (at == std::string::npos) return "";
  const auto start = at + 9;
  return r.output.substr(start, r.output.find_first_of(" ,\n", start) - start);
}

// Whether the short repro.py reproduced `expected_kind`: exit status 1, or (a crash and a hang
// being left to happen) death by the signature's signal, or by SIGALRM for a timeout.
bool reproduced(const ShellResult& r, const std::string& expected_kind, const std::string& expected_signature) {
  if (r.exit_code == 1) return true;
  if (r.exit_code <= 128) return false;
  const int signal_number = r.exit_code - 128;
  if (expected_kind == "timeout") return signal_number == SIGALRM;
  if (expected_kind != "crash") return false;
  static const std::map<std::string, int> kSignals = {{"crash:SIGSEGV", SIGSEGV}, {"crash:SIGABRT", SIGABRT},
                                                      {"crash:SIGBUS", SIGBUS},   {"crash:SIGFPE", SIGFPE},
                                                      {"crash:SIGILL", SIGILL},   {"crash:SIGKILL", SIGKILL}};
  const auto found = kSignals.find(expected_signature);
  return found == kSignals.end() ? signal_number != SIGALRM : found->second == signal_number;
}

TEST(ReproPySource, TheOneNodeCaseFitsFiftyLinesOfCode) {
  Case c;
  c.graph = graph_from_ir("graph(%x : Tensor):\n  %y : Tensor = aten::relu(%x)\n  return (%y)\n", "relu");
  c.values = std::vector<c10::IValue>{torch::tensor({0.5f, -1.25f, 3.0f, -0.0f})};
  c.inputs = {spec_from_value("x", c.values->front())};
  for (const auto& [backend, kind] :
       std::vector<std::pair<std::string, std::string>>{{"inject:accuracy@aten::relu", "accuracy"},
                                                        {"inject:segfault@aten::relu", "crash"},
                                                        {"jit", "accuracy"},
                                                        {"nnc", "accuracy"},
                                                        {"ofi", "exception"}}) {
    const std::string source = repro_py_source(c, settings_for(backend, kind));
    EXPECT_LE(testing::repro_py_code_lines(source), 50u) << backend << "\n" << source;
  }
}

TEST(Markdown, CaseTextCannotEndItsBlockOrBecomeMarkup) {
  EXPECT_EQ(markdown_code_block("a ``` b\n", "python"), "````python\na ``` b\n````\n");
  EXPECT_EQ(markdown_code_block("x"), "```\nx\n```\n");
  EXPECT_EQ(markdown_code_span("a`b\nc"), "``a`b c``");
  EXPECT_EQ(markdown_code_span("`x"), "`` `x ``");
  EXPECT_EQ(markdown_text("aten::_conv <b>*x*</b> [JIT] #1\n# h"),
            "aten::\\_conv \\<b\\>\\*x\\*\\</b\\> [JIT] \\#1 \\# h");
  // A dict key or a file name that would be a link or an image (issue 42).
  EXPECT_EQ(markdown_text("k[a](http://x) ![i](y.png)"), "k[a\\](http://x) ![i\\](y.png)");
}

// ---- Escaping (no Python needed) ---------------------------------------------------------------

TEST(PythonLiteral, EscapesEverythingThatCouldEndTheLiteral) {
  EXPECT_EQ(python_string_literal("a\"b'c\\d\ne\rf\tg"), R"("a\"b'c\\d\ne\rf\tg")");
  EXPECT_EQ(python_string_literal(std::string("nul\0del\x7f", 8)), R"("nul\x00del\x7f")");
  EXPECT_EQ(python_string_literal("caf\xc3\xa9 \xf0\x9f\x90\x8d"), R"("caf\u00e9 \U0001f40d")");
  EXPECT_EQ(python_string_literal("bad \xff\xc3("), R"("bad \xff\xc3(")");  // not UTF-8: byte by byte
  EXPECT_EQ(python_string_literal("\xed\xa0\x80"), R"("\xed\xa0\x80")");    // a surrogate is not valid UTF-8
}

TEST(PythonLiteral, CommentTextStaysOnOneLine) {
  const std::string text = python_comment_text("x\nimport os\r\n\x0c\u2028\"q\"");
  EXPECT_EQ(text.find_first_of("\n\r\x0c"), std::string::npos) << text;
  EXPECT_EQ(text, R"(x\nimport os\r\n\x0c\u2028"q")");
}

TEST(PythonLiteral, NumbersAndJsonValuesReadBackExactly) {
  EXPECT_EQ(python_float_literal(2.0), "2.0");
  EXPECT_EQ(python_float_literal(0.1), "0.1");
  EXPECT_EQ(python_float_literal(-1e300), "-1e+300");
  EXPECT_EQ(python_float_literal(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(python_float_literal(INFINITY), "math.inf");
  EXPECT_EQ(python_float_literal(-INFINITY), "-math.inf");
  EXPECT_EQ(python_float_literal(NAN), "math.nan");
  const nlohmann::json value = {{"a", {1, -2, 2.5, true, nullptr}}, {"b\"", "x"}};
  EXPECT_EQ(python_literal(value), R"({"a": [1, -2, 2.5, True, None], "b\"": "x"})");
}

// ---- The generated source (no Python needed) ---------------------------------------------------

// Same dtype, sizes, strides and bytes.
void expect_bit_identical(const c10::IValue& expected, const c10::IValue& got, const std::string& what) {
  if (!expected.isTensor()) {
    EXPECT_EQ(expected.tagKind(), got.tagKind()) << what;
    if (expected.isDouble() && got.isDouble()) {
      const double a = expected.toDouble(), b = got.toDouble();
      EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0) << what << ": " << a << " vs " << b;
    } else if (expected.isTuple() || expected.isList()) {
      const auto a = expected.isTuple() ? expected.toTupleRef().elements().vec() : expected.toListRef().vec();
      const auto b = got.isTuple() ? got.toTupleRef().elements().vec() : got.toListRef().vec();
      ASSERT_EQ(a.size(), b.size()) << what;
      for (size_t i = 0; i < a.size(); ++i) expect_bit_identical(a[i], b[i], what + "." + std::to_string(i));
    } else {
      EXPECT_EQ(c10::str(expected), c10::str(got)) << what;
    }
    return;
  }
  ASSERT_TRUE(got.isTensor()) << what;
  const at::Tensor a = expected.toTensor(), b = got.toTensor();
  ASSERT_EQ(a.scalar_type(), b.scalar_type()) << what;
  ASSERT_EQ(a.sizes(), b.sizes()) << what;
  EXPECT_EQ(a.strides(), b.strides()) << what;
  const at::Tensor ac = a.contiguous(), bc = b.contiguous();
  EXPECT_EQ(std::memcmp(ac.data_ptr(), bc.data_ptr(), ac.numel() * ac.element_size()), 0) << what << "\n"
                                                                                          << a << "\n"
                                                                                          << b;
}

TEST(PythonValueLiteral, EveryValueReadsBackBitForBit) {
  SKIP_WITHOUT_PYTHON_TORCH();
  const float nan_payload = [] {
    const uint32_t bits = 0x7fa00001u;  // a signalling-free NaN with a payload: needs the bytes form
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }();
  const at::Tensor specials =
      at::tensor({0.5f, -0.0f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                  std::nanf(""), -std::nanf(""), std::numeric_limits<float>::denorm_min(), 3.4028235e38f, 1.0f / 3.0f});
  std::vector<c10::IValue> values = {
      specials,
      specials.to(at::kDouble) / 7,
      at::tensor({1e-8, 65504.0, -0.0, 6e-5}).to(at::kHalf),
      at::tensor({1e-30, -3.0, 1.0 / 3.0}).to(at::kBFloat16),
      at::tensor({nan_payload, 1.0f}),
      at::arange(-5, 7, at::kLong).reshape({3, 4}),
      at::arange(-5, 7, at::kInt).reshape({3, 4}).t(),  // strided
      at::tensor({-128, 0, 127}).to(at::kChar),
      at::tensor({0, 255}).to(at::kByte),
      at::tensor({-7, 9}).to(at::kShort),
      at::tensor({1, 0, 1}).to(at::kBool),
      at::randn({2, 3}, at::kComplexFloat),
      at::empty({0, 3}),
      at::tensor(2.5),
      at::tensor(int64_t{-3}),
      at::randn({2, 3, 4}).permute({2, 0, 1}),
      int64_t{-9},
      -0.0,
      -std::nan(""),
      true,
      c10::IValue(),
      c10::IValue(std::string("quote \" and \\ and \n")),
      c10::ivalue::Tuple::create({at::tensor({1.5f}), int64_t{2}}),
  };
  testing::TempDir dir;
  std::string script = "import math\nimport torch\nvalues = [\n";
  for (const c10::IValue& v : values) script += "    " + python_value_literal(v) + ",\n";
  script += "]\ntorch.save(values, " + python_string_literal(dir / "values.pt") + ")\n";
  testing::write_text(dir / "values.py", script);
  const ShellResult r = run_shell(kPython + " " + shell_quoted(dir / "values.py"));
  ASSERT_EQ(r.exit_code, 0) << r.output << "\n" << script;
  const std::vector<c10::IValue> back = read_input_values(dir / "values.pt");
  ASSERT_EQ(back.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) expect_bit_identical(values[i], back[i], "value " + std::to_string(i));
  // Readable where decimals are exact: no bytes form for ordinary floats, ints and bools.
  EXPECT_EQ(python_value_literal(values[0]).find("b64decode"), std::string::npos) << python_value_literal(values[0]);
  EXPECT_NE(python_value_literal(values[4]).find("b64decode"), std::string::npos);
}

TEST(ReproPySource, HoldsOnlyTheBackendsItUses) {
  Case c = example_case("small_graph");
  const std::string nnc = repro_py_source(c, settings_for("nnc", "accuracy"));
  EXPECT_NE(nnc.find("def backend(inputs, fp64=False):  # nnc"), std::string::npos) << nnc;
  EXPECT_NE(nnc.find("_jit_override_can_fuse_on_cpu(True)"), std::string::npos);
  EXPECT_NE(nnc.find("def difference("), std::string::npos);
  EXPECT_EQ(nnc.find("CaseModule"), std::string::npos);
  EXPECT_EQ(nnc.find("EDITED"), std::string::npos);
  const std::string inject = repro_py_source(c, settings_for("inject:hang@aten::relu", "timeout"));
  EXPECT_NE(inject.find("signal.pause()"), std::string::npos) << inject;
  EXPECT_EQ(inject.find("def profiled("), std::string::npos);
  EXPECT_EQ(inject.find("def difference("), std::string::npos);  // only an accuracy failure compares outputs
  // The graph is a module's source: every op a call in forward, no IR text.
  EXPECT_NE(nnc.find("class Repro(torch.nn.Module):"), std::string::npos) << nnc;
  EXPECT_EQ(nnc.find("parse_ir"), std::string::npos) << nnc;
  for (const torch::jit::Node* node : c.graph->nodes()) {
    if (!node->kind().is_aten()) continue;
    EXPECT_NE(nnc.find("torch.ops.aten." + std::string(node->kind().toUnqualString()) + "("), std::string::npos)
        << node->kind().toQualString() << "\n"
        << nnc;
  }
}

TEST(ReproPySource, RefusesBackendsWithoutAPythonVersion) {
  Case c = example_case("small_graph");
  EXPECT_THROW(repro_py_source(c, settings_for("tensorrt", "accuracy")), UserError);
  EXPECT_THROW(repro_py_source(c, settings_for("inject:segfault", "crash")), UserError);
}

// The generated scripts are clean Python: no unused import, no undefined name (pyflakes3).
TEST(ReproPySource, GeneratedScriptsPassPyflakes) {
  if (run_shell("pyflakes3 --version").exit_code != 0)
    GTEST_SKIP() << "no pyflakes3 (scripts/bootstrap.sh installs it)";
  testing::TempDir dir;
  Case c = example_case("multi_output_scripted");
  std::vector<ReproSettings> all = {settings_for("nnc", "accuracy"), settings_for("ofi", "exception"),
                                    settings_for("inject:segfault@aten::add", "crash"),
                                    settings_for("inject:accuracy@aten::add", "accuracy")};
  all.push_back(settings_for("jit", "accuracy"));
  all.back().failure.run.backward = true;
  all.push_back(settings_for("jit", "accuracy"));
  all.back().failure.run.fake_inputs = true;
  for (const std::string fault : {"backward-error", "backward-accuracy"}) {  // the fault op's definition too
    all.push_back(settings_for("inject:" + fault + "@aten::add", fault == "backward-error" ? "exception" : "accuracy"));
    all.back().failure.run.backward = true;
  }
  for (size_t i = 0; i < all.size(); ++i) {
    const std::string script = write_repro(c, all[i], dir / ("case" + std::to_string(i)));
    const ShellResult r = run_shell("pyflakes3 " + shell_quoted(script));
    EXPECT_EQ(r.exit_code, 0) << all[i].failure.run.backend << "\n" << r.output;
  }
}

// ---- Running repro.py ----------------------------------------------------------------------------

struct InjectedFault {
  std::string backend;
  std::string expected_kind;
  std::string expected_signature;
};

class ReproPyInjectedFault : public ::testing::TestWithParam<InjectedFault> {};

TEST_P(ReproPyInjectedFault, ReproducesAndExitsOne) {
  SKIP_WITHOUT_PYTHON_TORCH();
  const InjectedFault& fault = GetParam();
  testing::TempDir dir;
  ReproSettings settings = settings_for(fault.backend, fault.expected_kind, fault.expected_signature);
  settings.failure.run.timeout_seconds = 3;
  const ShellResult r = run_repro(write_repro(example_case("chain100_scripted"), settings, dir / "case"));
  EXPECT_TRUE(reproduced(r, fault.expected_kind, fault.expected_signature)) << r.exit_code << "\n" << r.output;
}

INSTANTIATE_TEST_SUITE_P(
    Faults, ReproPyInjectedFault,
    ::testing::Values(
        InjectedFault{"inject:compile-error@aten::relu+aten::tanh", "exception",
                      "exception:compile:RuntimeError: tsrepro injected compile error at aten::relu+aten::tanh"},
        InjectedFault{"inject:runtime-error@aten::relu", "exception",
                      "exception:run:RuntimeError: tsrepro injected runtime error at aten::relu"},
        InjectedFault{"inject:accuracy@aten::relu", "accuracy", "accuracy:float32"},
        InjectedFault{"inject:abort@aten::relu", "crash", "crash:SIGABRT"},
        InjectedFault{"inject:segfault@aten::relu", "crash", "crash:SIGSEGV"},
        InjectedFault{"inject:hang@aten::relu", "timeout", "timeout"}),
    [](const ::testing::TestParamInfo<InjectedFault>& info) {
      const std::string& b = info.param.backend;
      std::string name = b.substr(7, b.find('@') - 7);
      name.erase(std::remove(name.begin(), name.end(), '-'), name.end());
      return name;
    });

TEST(ReproPy, ACrashWithAnotherSignalDoesNotReproduce) {
  SKIP_WITHOUT_PYTHON_TORCH();
  testing::TempDir dir;
  const ShellResult r = run_repro(write_repro(
      example_case("small_graph"), settings_for("inject:abort@aten::relu", "crash", "crash:SIGSEGV"), dir / "case"));
  EXPECT_EQ(r.exit_code, 128 + SIGABRT) << r.output;  // left to happen
  EXPECT_FALSE(reproduced(r, "crash", "crash:SIGSEGV"));
}

TEST(ReproPy, AFaultOnAnOpTheGraphLacksDoesNotFire) {
  SKIP_WITHOUT_PYTHON_TORCH();
  testing::TempDir dir;
  const ShellResult r = run_repro(write_repro(
      example_case("chain100_scripted"), settings_for("inject:segfault@aten::relu+aten::abs", "crash"), dir / "case"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("the backend ran without failing"), std::string::npos) << r.output;
}

// An empty list or dict input: torch._C._jit_interpret_graph cannot infer its type from the value,
// so the interpreted sections build it in the graph (repro/templates/repro_py/interpretable.py).
TEST(ReproPy, EmptyListAndDictInputsRunInTheInterpreter) {
  SKIP_WITHOUT_PYTHON_TORCH();
  const Case c = testing::case_from_ir(
      "graph(%xs : Tensor[], %names : Dict(str, Tensor), %x : Tensor):\n"
      "  %dim : int = prim::Constant[value=0]()\n"
      "  %appended : Tensor[] = aten::append(%xs, %x)\n"
      "  %count : int = aten::len(%names)\n"
      "  %joined : Tensor = aten::cat(%xs, %dim)\n"
      "  %y : Tensor = aten::add(%joined, %count, %dim)\n"
      "  return (%y)\n",
      {c10::List<at::Tensor>(), c10::impl::GenericDict(c10::StringType::get(), c10::TensorType::get()),
       torch::tensor({1.0F, 2.0F})});
  struct Run {
    std::string backend, expected_kind;
    int exit_code;
  };
  for (const Run& run : {Run{"inject:accuracy@aten::cat", "accuracy", 1},
                         Run{"inject:runtime-error@aten::cat", "exception", 1}, Run{"jit", "accuracy", 0}}) {
    testing::TempDir dir;
    const ShellResult r = run_repro(write_repro(c, settings_for(run.backend, run.expected_kind), dir / "case"));
    EXPECT_EQ(r.exit_code, run.exit_code) << run.backend << "\n" << r.output;
    EXPECT_EQ(r.output.find("reference raised"), std::string::npos) << run.backend << "\n" << r.output;
  }
}

// Outputs of every structure tsrepro's comparison walks (a dict, a list in a tuple, None, an int,
// a string): repro.py compares them leaf by leaf, passing a healthy backend and failing a faulty
// one on the comparison itself, never through a traceback.
TEST(ReproPy, EveryOutputStructureIsComparedLeafByLeaf) {
  SKIP_WITHOUT_PYTHON_TORCH();
  const Case c = testing::case_from_ir(
      "graph(%x : Tensor):\n"
      "  %two : int = prim::Constant[value=2]()\n"
      "  %name : str = prim::Constant[value=\"out\"]()\n"
      "  %none : NoneType = prim::Constant()\n"
      "  %y : Tensor = aten::relu(%x)\n"
      "  %z : Tensor = aten::mul(%y, %two)\n"
      "  %d : Dict(str, Tensor) = prim::DictConstruct(%name, %y)\n"
      "  %l : Tensor[] = prim::ListConstruct(%y, %z)\n"
      "  %t : (Tensor[], int) = prim::TupleConstruct(%l, %two)\n"
      "  return (%d, %t, %none, %name, %two)\n",
      {torch::tensor({-1.0F, 2.0F, 3.0F})});
  struct Run {
    std::string backend, printed;
    int exit_code;
  };
  for (const Run& run : {Run{"jit", "pass", 0}, Run{"inject:accuracy@aten::relu", "accuracy", 1}}) {
    testing::TempDir dir;
    const ShellResult r = run_repro(write_repro(c, settings_for(run.backend, "accuracy"), dir / "case"));
    EXPECT_EQ(r.exit_code, run.exit_code) << run.backend << "\n" << r.output;
    EXPECT_EQ(printed_status(r), run.printed) << run.backend << "\n" << r.output;
    EXPECT_EQ(r.output.find("Traceback"), std::string::npos) << run.backend << "\n" << r.output;
  }
}

struct HealthyRun {
  std::string model;
  std::string backend;
  bool backward;
};

class ReproPyHealthyBackend : public ::testing::TestWithParam<HealthyRun> {};

TEST_P(ReproPyHealthyBackend, PassesAndExitsZero) {
  SKIP_WITHOUT_PYTHON_TORCH();
  testing::TempDir dir;
  ReproSettings settings = settings_for(GetParam().backend, "accuracy");
  settings.failure.run.backward = GetParam().backward;
  const std::string script = write_repro(example_case(GetParam().model), settings, dir / "case");
  const ShellResult r = run_repro(script);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(printed_status(r), "pass") << r.output;
  // The model is the Repro class; --backward keeps the IR form (the lifted inputs' gradients).
  EXPECT_EQ(testing::read_text(script).find("\nclass Repro(") != std::string::npos, !GetParam().backward);
}

INSTANTIATE_TEST_SUITE_P(Backends, ReproPyHealthyBackend,
                         ::testing::Values(HealthyRun{"elementwise_chain_scripted", "nnc", false},
                                           HealthyRun{"conv_bn_relu_linear_scripted", "ofi", false},
                                           HealthyRun{"conv_bn_relu_linear_scripted", "jit", false},
                                           HealthyRun{"multi_output_scripted", "jit", true}),
                         [](const ::testing::TestParamInfo<HealthyRun>& info) {
                           return info.param.backend + (info.param.backward ? "_backward" : "");
                         });

// The script and tsrepro's own runner reach the same verdict on real bugs and corner cases.
struct RunnerAgreement {
  std::string name;
  bool is_bug;  // examples/bugs/<name> rather than examples/models/<name>
  std::string backend;
  bool backward;
  bool fake_inputs = false;
};

class ReproPyAgreesWithRunner : public ::testing::TestWithParam<RunnerAgreement> {};

TEST_P(ReproPyAgreesWithRunner, OnTheVerdict) {
  SKIP_WITHOUT_PYTHON_TORCH();
  const RunnerAgreement& p = GetParam();
  testing::TempDir dir;
  Case c = p.is_bug ? bug_case(p.name) : example_case(p.name);

  EvalRequest request;
  request.graph_ir = graph_to_ir(*c.graph);
  request.specs = c.inputs;
  request.run.backend = p.backend;
  request.run.backward = p.backward;
  write_case(c, dir / "runner_case");
  if (!p.fake_inputs) request.inputs_path = dir / "runner_case/inputs.pt";
  const Verdict expected = Evaluator().evaluate(request, [](Phase) {});
  ASSERT_NE(expected.status, Status::Invalid) << expected.message;

  ReproSettings settings = settings_for(p.backend, status_name(expected.status), expected.signature);
  settings.failure.run.backward = p.backward;
  settings.failure.run.fake_inputs = p.fake_inputs;
  const ShellResult r = run_repro(write_repro(c, settings, dir / "case"));
  EXPECT_EQ(reproduced(r, settings.failure.status_text(), settings.failure.signature), expected.failed())
      << expected.message << "\n"
      << r.output;
  if (expected.status == Status::Accuracy || expected.status == Status::Pass) {
    EXPECT_EQ(printed_status(r), status_name(expected.status)) << expected.message << "\n" << r.output;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, ReproPyAgreesWithRunner,
                         ::testing::Values(RunnerAgreement{"nnc_frac_negative", true, "nnc", false},
                                           RunnerAgreement{"nnc_frac_negative", true, "nnc", false, true},
                                           RunnerAgreement{"ofi_addmm_chain", true, "ofi", false},
                                           // ofi folds parameters into constants: their gradients vanish.
                                           RunnerAgreement{"conv_bn_relu_linear_scripted", false, "ofi", true}),
                         [](const ::testing::TestParamInfo<RunnerAgreement>& info) {
                           return info.param.name + (info.param.backward ? "_backward" : "") +
                                  (info.param.fake_inputs ? "_fake_inputs" : "");
                         });

// Specs that exercise every branch of make_fake_value: dense and non-dense strides, dtypes,
// missing and degenerate ranges, scalars.
Case fake_only_case() {
  Case c;
  c.graph = graph_from_ir(
      "graph(%a : Tensor, %b : Tensor, %c : Tensor, %d : Tensor, %e : Tensor, %f : Tensor, %g : int, %h : float,"
      " %i : bool, %j : int[]):\n  return (%a)\n",
      "test");
  auto tensor = [](std::string name, std::string dtype, std::vector<int64_t> sizes, std::vector<int64_t> strides,
                   std::optional<double> min, std::optional<double> max) {
    InputSpec s;
    s.name = std::move(name);
    s.kind = "tensor";
    s.dtype = std::move(dtype);
    s.sizes = std::move(sizes);
    s.strides = std::move(strides);
    s.min = min;
    s.max = max;
    return s;
  };
  auto scalar = [](std::string name, std::string kind, nlohmann::json value) {
    InputSpec s;
    s.name = std::move(name);
    s.kind = std::move(kind);
    s.value = std::move(value);
    return s;
  };
  c.inputs = {tensor("a", "float32", {3, 4}, {1, 3}, -2.5, 7.25),                  // transposed: dense, kept
              tensor("b", "float64", {2, 3}, {0, 1}, std::nullopt, std::nullopt),  // expanded: not dense
              tensor("c", "int64", {5}, {1}, -3.5, 11.2),
              tensor("d", "bool", {2, 2}, {2, 1}, std::nullopt, std::nullopt),
              tensor("e", "uint8", {4}, {1}, std::nullopt, std::nullopt),
              tensor("f", "float32", {3}, {1}, 2.0, 2.0),
              scalar("g", "int", 7),
              scalar("h", "float", 0.1),
              scalar("i", "bool", true),
              scalar("j", "int[]", {1, 2})};
  return c;
}

TEST(ReproPy, FakeInputsEqualTheRunners) {
  SKIP_WITHOUT_PYTHON_TORCH();
  testing::TempDir dir;
  constexpr uint64_t kSeed = 7;
  for (const auto& [label, c] : {std::pair<std::string, Case>{"specs", fake_only_case()},
                                 std::pair<std::string, Case>{"int_inputs", example_case("int_inputs_scripted")}}) {
    ReproSettings settings = settings_for("jit", "accuracy");
    settings.failure.run.fake_inputs = true;
    settings.failure.run.seed = kSeed;
    const std::string script = write_repro(c, settings, dir / label);
    const std::vector<char> runner_values =
        torch::jit::pickle_save(c10::ivalue::Tuple::create(make_fake_inputs(c.inputs, kSeed)));
    std::ofstream(dir / (label + ".pt"), std::ios::binary).write(runner_values.data(), runner_values.size());

    // Imports repro.py as a module (its main() does not run) and compares value by value.
    const std::string check = dir / (label + "_check.py");
    std::ofstream(check)
        << "import importlib.util, sys, torch\n"
           "spec = importlib.util.spec_from_file_location('repro', sys.argv[1])\n"
           "repro = importlib.util.module_from_spec(spec)\n"
           "spec.loader.exec_module(repro)\n"
           "mine, theirs = repro.INPUTS, torch.load(sys.argv[2], weights_only=False)  # tsrepro wrote it\n"
           "assert len(mine) == len(theirs), (len(mine), len(theirs))\n"
           "for i, (a, b) in enumerate(zip(mine, theirs)):\n"
           "    if isinstance(b, torch.Tensor):\n"
           "        ok = a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride() "
           "and torch.equal(a, b)\n"
           "    else:\n"
           "        ok = type(a) == type(b) and a == b\n"
           "    assert ok, (i, a, b)\n"
           "print('fake inputs equal:', len(mine))\n";
    const ShellResult r = run_shell(kPython + " " + shell_quoted(check) + " " + shell_quoted(script) + " " +
                                    shell_quoted(dir / (label + ".pt")));
    EXPECT_EQ(r.exit_code, 0) << label << ":\n" << r.output;
    EXPECT_NE(r.output.find("fake inputs equal: " + std::to_string(c.inputs.size())), std::string::npos) << r.output;
  }
}

// Text that would run code if it reached the script unescaped: each attack creates `marker`.
TEST(ReproPy, HostileTextInTheCaseStaysData) {
  SKIP_WITHOUT_PYTHON_TORCH();
  testing::TempDir dir;
  const std::string marker = dir / "pwned";
  const std::string payload = "__import__('os').system('touch " + marker + "')";
  // The IR printer escapes string constants; the parser reads them back.
  const std::string ir =
      "graph(%x : Tensor):\n"
      "  %s1 : str = prim::Constant[value=\"\\\"); " +
      payload +
      "; (\\\"\"]()\n"
      "  %s2 : str = prim::Constant[value=\"a\\nimport os; " +
      payload +
      "\\n\\\\\\\"\\\"\\\" ''' x\"]()\n"
      "  %s3 : str = aten::add(%s1, %s2)\n"
      "  %n : int = aten::len(%s3)\n"
      "  %y : Tensor = aten::relu(%x)\n"
      "  return (%y, %s3, %n)\n";
  Case c;
  c.graph = graph_from_ir(ir, "attack");
  c.values = std::vector<c10::IValue>{torch::randn({3})};
  c.inputs = {spec_from_value("x", c.values->front())};
  ReproSettings settings = settings_for("jit", "accuracy");
  settings.command_line = "tsrepro run x\n" + payload + "\n# \xc3\xa9\r" + payload;
  settings.failure.signature = "accuracy:\"\"\"\n" + payload + "\n'''";
  settings.failure.run.backend_options = {{"key\"\n" + payload, "v'\\" + payload}};
  const std::string script = write_repro(c, settings, dir / "case");

  const ShellResult r = run_repro(script);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(printed_status(r), "pass") << r.output;
  EXPECT_FALSE(std::filesystem::exists(marker)) << "an attack ran: " << r.output;

  // The text arrives unchanged: the embedded IR is graph.ir, byte for byte.
  const std::string check = dir / "check.py";
  std::ofstream(check) << "import ast, sys\n"
                          "tree = ast.parse(open(sys.argv[1]).read())\n"
                          "graph = next(n.value for n in tree.body if isinstance(n, ast.Assign) and "
                          "getattr(n.targets[0], 'id', '') == 'GRAPH')\n"
                          "assert ast.literal_eval(graph.args[0]) == open(sys.argv[2]).read()\n"
                          "print('embedded text intact')\n";
  const ShellResult embedded = run_shell(kPython + " " + shell_quoted(check) + " " + shell_quoted(script) + " " +
                                         shell_quoted(dir / "case/graph.ir"));
  EXPECT_EQ(embedded.exit_code, 0) << embedded.output;
  EXPECT_NE(embedded.output.find("embedded text intact"), std::string::npos) << embedded.output;
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST(ReproPy, ACudaReproWithoutCudaSaysSoAndExitsTwo) {
  SKIP_WITHOUT_PYTHON_TORCH();
  if (run_shell(kPython + " -c 'import torch, sys; sys.exit(torch.cuda.is_available())'").exit_code != 0)
    GTEST_SKIP() << "this machine has CUDA";
  testing::TempDir dir;
  ReproSettings settings = settings_for("jit", "accuracy");
  settings.failure.run.device = "cuda";
  const ShellResult r = run_repro(write_repro(example_case("small_graph"), settings, dir / "case"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("no CUDA device"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace tsrepro
