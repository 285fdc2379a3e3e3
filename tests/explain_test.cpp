// `tsrepro explain` (issue 15): each forward node with the autograd node that differentiates it,
// by sequence number, as PyTorch's own autograd profiler numbers them for the same graph
// (tests/fixtures/autograd_sequence.py).

#include <algorithm>
#include <filesystem>
#include <set>
#include <utility>

#include <gtest/gtest.h>

#include "tests/support/expectations.h"
#include "tests/support/real_bugs.h"

namespace tsrepro_test {
namespace {

using Sequence = std::set<std::pair<int64_t, std::string>>;

// tsrepro's backward rows as (number from the graph's start, name).
Sequence tsrepro_backward(const json& table) {
  Sequence out;
  const int64_t start = table["start_sequence_nr"].get<int64_t>();
  for (const json& row : table["backward"]) out.emplace(row["sequence_nr"].get<int64_t>() - start, row["name"]);
  return out;
}

Sequence pytorch_backward(const std::string& case_dir) {
  const Result r = run_cmd(kPython, {source_path("tests/fixtures/autograd_sequence.py"), case_dir}, {"", 300});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  Sequence out;
  if (r.exit_code != 0) return out;
  const json printed = r.stdout_json();
  for (const json& entry : printed["backward"]) out.emplace(entry[0].get<int64_t>(), entry[1]);
  EXPECT_FALSE(out.empty()) << r.describe();
  return out;
}

// Imports the example model examples/models/NAME.pt with its inputs into `case_dir`.
void import_example(const std::string& name, const std::string& case_dir) {
  const Result r = tsrepro(import_args(model_path(name + ".pt"), model_path(name + ".inputs.pt"), case_dir));
  ASSERT_EQ(r.exit_code, 0) << r.describe();
}

json explain(const std::string& case_dir) {
  const Result r = tsrepro({"explain", case_dir, "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  return r.exit_code == 0 ? r.stdout_json() : json::object();
}

const json* forward_row(const json& table, const std::string& kind) {
  for (const json& row : table["forward"])
    if (row["kind"] == kind) return &row;
  return nullptr;
}

TEST(Explain, NumbersEachForwardNodesBackwardAsPyTorchDoes) {
  SKIP_WITHOUT_PYTHON_TORCH();
  TempDir tmp;
  const std::string case_dir = tmp / "case";
  ASSERT_NO_FATAL_FAILURE(import_example("conv_bn_relu_linear_scripted", case_dir));
  const json table = explain(case_dir);
  const Sequence ours = tsrepro_backward(table);
  EXPECT_EQ(ours, pytorch_backward(case_dir));
  EXPECT_GE(ours.size(), 5u);

  // Forward rows: the conv's own autograd node, its module and line; linear's t and addmm both
  // belong to the linear node.
  const json* conv = forward_row(table, "aten::conv2d");
  if (conv == nullptr) conv = forward_row(table, "aten::_convolution");
  ASSERT_NE(conv, nullptr) << table.dump(1);
  EXPECT_EQ((*conv)["backward"].get<std::string>().rfind("ConvolutionBackward", 0), 0u) << *conv;
  EXPECT_EQ((*conv)["origin"]["module_path"], "conv");
  const json* linear = forward_row(table, "aten::linear");
  ASSERT_NE(linear, nullptr);
  size_t made_by_linear = 0;
  for (const json& row : table["backward"])
    if (row["forward"] == json::array({(*linear)["position"]})) ++made_by_linear;
  EXPECT_EQ(made_by_linear, 2u) << table["backward"].dump();  // TBackward0, AddmmBackward0
  // AccumulateGrad has no forward node: listed apart, one per leaf that requires grad.
  ASSERT_FALSE(table["without_forward"].empty());
  for (const json& row : table["without_forward"]) {
    EXPECT_NE(row["name"].get<std::string>().find("AccumulateGrad"), std::string::npos) << row;
    EXPECT_TRUE(row["forward"].empty());
  }

  const Result text = tsrepro({"explain", case_dir});
  ASSERT_EQ(text.exit_code, 0) << text.describe();
  EXPECT_NE(text.out.find("SeqNr|Node|Source|Module|Backward"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("|conv|ConvolutionBackward"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Without a forward node (sequence number UINT64_MAX)"), std::string::npos) << text.out;
}

// The profiling executor differentiates a differentiable subgraph as one unit: one
// DifferentiableGraphBackward, one sequence number, for all the nodes inside.
TEST(Explain, ABackendsDifferentiableGraphIsOneUnitCoveringItsNodes) {
  TempDir tmp;
  const std::string case_dir = tmp / "case";
  ASSERT_NO_FATAL_FAILURE(import_example("elementwise_chain_scripted", case_dir));
  const Result r = tsrepro({"explain", case_dir, "--backend", "nnc", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const json table = r.stdout_json();
  ASSERT_EQ(table["units"].size(), 1u) << table["units"].dump();
  const json& unit = table["units"][0];
  EXPECT_FALSE(unit["sequence_nr"].is_null());
  size_t differentiated = 0;
  for (const json& row : table["forward"]) {
    if (row["sequence_nr"].is_null()) continue;
    ++differentiated;
    EXPECT_EQ(row["backend_unit"], "DifferentiableGraph 0") << row;
  }
  EXPECT_EQ(unit["forward"].size(), differentiated);
  EXPECT_GE(differentiated, 5u);
  // The unit's one backward node comes after every node of the reference's own run.
  for (const json& row : table["backward"]) EXPECT_LT(row["sequence_nr"], unit["sequence_nr"]);
}

// --backward under the profiling executor runs the backend's own backward: its profiling runs
// see the inputs' requires_grad (they once saw detached copies, so the plan had no
// differentiable graph and the fallback path ran).
TEST(Explain, BackwardRunsProfileWithTheInputsRequiresGrad) {
  TempDir tmp;
  const std::string case_dir = tmp / "case";
  ASSERT_NO_FATAL_FAILURE(import_example("elementwise_chain_scripted", case_dir));
  const Result r = tsrepro({"run", case_dir, "--backend", "nnc", "--backward", "--explain-backend"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("prim::DifferentiableGraph"), std::string::npos) << r.out;
}

// Gradient attribution: under a backend whose backward goes wrong at one op, explain names that
// op (the first node, in backward order, whose outputs' gradients agree and whose inputs' do not).
json attribution(const std::string& case_dir, const std::string& backend) {
  const Result r = tsrepro({"explain", case_dir, "--backend", backend, "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  return r.exit_code == 0 ? r.stdout_json() : json::object();
}

std::string culprit_kind(const json& explained) {
  const json& culprit = explained["attribution"]["culprit"];
  return culprit.is_number() ? explained["forward"][culprit.get<size_t>()]["kind"].get<std::string>() : "(none)";
}

TEST(Explain, ATorchvisionClassifiersBackwardMatchesPyTorchs) {
  SKIP_WITHOUT_PYTHON_TORCH();
  TempDir tmp;
  const std::string model = tmp / "resnet18.pt", inputs = tmp / "inputs.pt";
  const Result made = run_cmd(kPython,
                              {"-c",
                               "import sys, torch, torchvision\n"
                               "torch.manual_seed(0)\n"
                               "torch.jit.script(torchvision.models.resnet18(weights=None).eval()).save(sys.argv[1])\n"
                               "torch.save((torch.randn(1, 3, 32, 32),), sys.argv[2])\n",
                               model, inputs},
                              {"", 300});
  if (made.exit_code != 0) GTEST_SKIP() << "no torchvision here: " << made.describe();
  const std::string case_dir = tmp / "case";
  ASSERT_EQ(tsrepro(import_args(model, inputs, case_dir)).exit_code, 0);
  const json table = explain(case_dir);
  const Sequence ours = tsrepro_backward(table);
  EXPECT_EQ(ours, pytorch_backward(case_dir));
  EXPECT_GE(ours.size(), 60u);
  // Every backward node of this graph comes from one forward node, and a batch norm's from a
  // batch norm module.
  for (const json& row : table["backward"]) {
    ASSERT_EQ(row["forward"].size(), 1u) << row;
    if (row["name"] != "NativeBatchNormBackward0") continue;
    const json& forward = table["forward"][row["forward"][0].get<size_t>()];
    const std::string path = forward["origin"]["module_path"];  // layer1.0.bn1, layer2.0.downsample.1
    EXPECT_TRUE(path.find("bn") != std::string::npos || path.find("downsample") != std::string::npos) << forward;
  }
  // A wrong gradient at its max pool is attributed to it in one run, in-place relu_s and
  // hundreds of isolated outputs notwithstanding.
  const json attributed = attribution(case_dir, "inject:backward-accuracy@aten::max_pool2d");
  const json& a = attributed["attribution"];
  EXPECT_EQ(culprit_kind(attributed), "aten::max_pool2d") << a.dump();
  EXPECT_EQ(a["method"], "isolated nodes") << a.dump();
  EXPECT_EQ(a["runs"], 1);
  if (a["culprit"].is_number()) {
    EXPECT_EQ(attributed["forward"][a["culprit"].get<size_t>()]["origin"]["module_path"], "maxpool");
  }
}

TEST(Explain, AWrongGradientIsAttributedToItsOp) {
  TempDir tmp;
  const std::string case_dir = tmp / "case";
  ASSERT_NO_FATAL_FAILURE(import_example("conv_bn_relu_linear_scripted", case_dir));
  const json explained = attribution(case_dir, "inject:backward-accuracy@aten::relu");
  const json& a = explained["attribution"];
  EXPECT_EQ(a["verdict"]["status"], "accuracy") << a.dump();
  EXPECT_EQ(a["verdict"]["phase"], "backward") << a.dump();
  EXPECT_EQ(culprit_kind(explained), "aten::relu") << a.dump();
  EXPECT_EQ(a["method"], "isolated nodes");
  EXPECT_EQ(a["runs"], 1);
  // The gradient relu hands to its input differs; none that a node before it made does.
  const size_t culprit = a["culprit"].get<size_t>();
  bool culprit_differs = false;
  for (const json& g : a["gradients"]) {
    if (g["reader"] == culprit) culprit_differs = culprit_differs || !g["ok"].get<bool>();
    if (g["reader"].is_number() && g["reader"].get<size_t>() < culprit) {
      EXPECT_TRUE(g["ok"].get<bool>()) << g;
    }
  }
  EXPECT_TRUE(culprit_differs) << a.dump();
  // The text names the same node and the backward node that goes wrong.
  const Result text = tsrepro({"explain", case_dir, "--backend", "inject:backward-accuracy@aten::relu"});
  EXPECT_NE(text.out.find("Culprit: node " + std::to_string(culprit)), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("ReluBackward0 hands to its inputs do not"), std::string::npos) << text.out;
}

TEST(Explain, AnErrorInBackwardIsAttributedToItsOpByBisection) {
  TempDir tmp;
  const std::string case_dir = tmp / "case";
  ASSERT_NO_FATAL_FAILURE(import_example("chain100_scripted", case_dir));
  const json explained = attribution(case_dir, "inject:backward-error@aten::tanh");
  const json& a = explained["attribution"];
  EXPECT_EQ(a["verdict"]["phase"], "backward") << a.dump();
  EXPECT_EQ(culprit_kind(explained), "aten::tanh") << a.dump();
  EXPECT_EQ(a["method"], "bisection");
  EXPECT_LE(a["runs"].get<int>(), 8) << "about log2(120) runs";
  // Every tanh raises in backward; the first the engine reaches is the last one in the graph.
  size_t last_tanh = 0;
  for (const json& row : explained["forward"])
    if (row["kind"] == "aten::tanh") last_tanh = row["position"].get<size_t>();
  EXPECT_EQ(a["culprit"], last_tanh);
}

TEST(Explain, AgreeingGradientsHaveNoCulprit) {
  TempDir tmp;
  const std::string case_dir = tmp / "case";
  ASSERT_NO_FATAL_FAILURE(import_example("conv_bn_relu_linear_scripted", case_dir));
  const json explained = attribution(case_dir, "inject:accuracy@aten::softmax");  // no softmax here
  EXPECT_EQ(explained["attribution"]["verdict"]["status"], "pass") << explained["attribution"].dump();
  EXPECT_TRUE(explained["attribution"]["culprit"].is_null());
}

// ================================================================================================
// `tsrepro explain --passes` (issue 54) on the bundled bugs whose pass bugs.json names (bisected_to,
// the start of the pass's name): the MKLDNN ones must end at the MKLDNN conversion, the addmm chain
// at the profiling executor's DecomposeOps (past freezing, on the frozen graph: the JIT log says
// which pass raised), the NNC ones inside the kernel of the fusion group that holds their op, each
// of the executor's graph passes before it running right.

std::vector<RealBug> bugs_with_a_named_pass() {
  std::vector<RealBug> named;
  for (const RealBug& bug : real_bugs_here())
    if (!bug.bisected_to.empty()) named.push_back(bug);
  return named;
}

std::vector<RealBug> bugs_with_a_named_pass_under(const std::string& backend) {
  std::vector<RealBug> under;
  for (const RealBug& bug : bugs_with_a_named_pass())
    if (bug.backend == backend) under.push_back(bug);
  return under;
}

class ExplainPassesRealBug : public ::testing::TestWithParam<RealBug> {};

// A PyTorch 2 bug, asked on its committed minified case (examples/bugs/NAME/minified/, a few nodes:
// every try is a compile), as minify asks it of the case it minified: CompilerBisector's stages and
// subsystems, or export's converter against torch.export of the module form (runner/explain/pass_bisect.h). bisected_to
// is the start of the pass named, or of the finding where the search names none.
void expect_compiler_bisector_finding(const RealBug& bug) {
  const Result r = tsrepro({"explain", "--passes", bug.dir() + "minified", "--json"}, {"", 900});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const json f = r.stdout_json();
  std::cout << bug.name << ": " << f["finding"].get<std::string>() << " (" << f["runs"] << " compiles)\n";
  EXPECT_NE(f["verdict"]["status"], "pass") << r.out;
  const std::string named = f["pass"].is_string() ? f["pass"].get<std::string>() : f["finding"].get<std::string>();
  EXPECT_EQ(named.rfind(bug.bisected_to, 0), 0u) << r.out;
  // Each try is recorded; the one that named it fails as the case does, or (a subsystem switched
  // off) runs right.
  const std::vector<std::string> tries = f["passes"];
  EXPECT_EQ(tries.size(), f["prefixes"].size()) << r.out;
  if (f["subsystem"].is_string() && f.value("bisect_number", json()).is_number()) {
    EXPECT_EQ(f["runs_right_with"].value("TORCH_BISECT_SUBSYSTEM", ""), f["subsystem"]) << r.out;
    EXPECT_NE(f["debug_info"].get<std::string>(), "") << r.out;
  }
  // export lowered to core ATen (decompose=1) has run_decompositions as its last stage; a converter
  // bug is still the converter's: torch.export of the module form, then the converter route, each
  // undecomposed, and it fails at the second. Asked of the first export bug (each try a compile).
  if (bug.backend == "export" && bug.name == bugs_with_a_named_pass_under("export").front().name) {
    const Result lowered = tsrepro({"explain", "--passes", bug.dir() + "minified", "--backend", "export",
                                    "--backend-opt", "decompose=1", "--json"},
                                   {"", 900});
    ASSERT_EQ(lowered.exit_code, 0) << lowered.describe();
    const json l = lowered.stdout_json();
    EXPECT_EQ(l["passes"], json::array({"module", "converter"})) << lowered.out;
    EXPECT_EQ(l["stage"], "converter") << lowered.out;
    EXPECT_EQ(l.value("pass", std::string()).rfind(bug.bisected_to, 0), 0u) << lowered.out;
    // Its repro.py lowers the program as the backend did, and reproduces with stock PyTorch.
    TempDir tmp;
    std::filesystem::copy(bug.dir() + "minified", tmp / "case");
    ASSERT_EQ(
        tsrepro({"run", tmp / "case", "--backend", "export", "--backend-opt", "decompose=1", "--save-repro"}).exit_code,
        1);
    EXPECT_NE(read_text(tmp / "case/repro.py").find("program = program.run_decompositions()"), std::string::npos);
    EXPECT_EQ(run_cmd(kPython, {tmp / "case/repro.py"}, {"", 300}).exit_code, 1);
  }
}

TEST_P(ExplainPassesRealBug, NamesThePassTheFailureStartsAt) {
  const RealBug bug = GetParam();
  if (bug.backend == "inductor" || bug.backend == "aoti" || bug.backend == "export")
    return expect_compiler_bisector_finding(bug);
  TempDir tmp;
  const std::string case_dir = tmp / "case";
  ASSERT_EQ(tsrepro(import_args(bug.dir() + "model.pt", bug.dir() + "inputs.pt", case_dir)).exit_code, 0);
  ASSERT_EQ(tsrepro({"run", case_dir, "--backend", bug.backend, "--save-repro"}).exit_code, 1);
  const Result r = tsrepro({"explain", "--passes", case_dir, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const json f = r.stdout_json();
  std::cout << bug.name << ": " << f["finding"].get<std::string>() << "\n";
  const std::vector<std::string> passes = f["passes"];
  ASSERT_FALSE(passes.empty()) << r.out;
  if (bug.backend == "ofi") {
    EXPECT_EQ(passes.front(), "freeze_module");
  }
  // The profiling executor's graph passes come before any kernel: the fuser's own among them.
  if (bug.backend == "nnc") {
    EXPECT_NE(std::find(passes.begin(), passes.end(), "Fusion (in runNoGradOptimizations)"), passes.end()) << r.out;
  }
  const json& prefixes = f["prefixes"];
  const std::string pass = f.value("pass", std::string());
  EXPECT_EQ(pass.rfind(bug.bisected_to, 0), 0u) << r.out;
  if (bug.backend == "nnc") {
    EXPECT_NE(pass.find(bug.op), std::string::npos) << "the group lowering " << bug.op;
  }
  ASSERT_EQ(prefixes.size(), f["pass_index"].get<size_t>()) << r.out;
  // Right up to the pass, the case's own failure after it.
  for (size_t k = 0; k + 1 < prefixes.size(); ++k) EXPECT_EQ(prefixes[k]["status"], "pass") << r.out;
  // The case's own failure; an exception's phase may differ (the prefix's graph first runs when
  // it is run, the whole backend's while it compiles).
  const auto without_phase = [](const std::string& signature) {
    return signature.substr(signature.find(':', signature.find(':') + 1) + 1);
  };
  EXPECT_EQ(prefixes.back()["status"], f["verdict"]["status"]) << r.out;
  EXPECT_EQ(without_phase(prefixes.back()["signature"]), without_phase(f["verdict"]["signature"])) << r.out;
  EXPECT_EQ(f["runs"].get<size_t>(), prefixes.size() + 1) << r.out;  // the whole backend, then each prefix
  // Where libtorch has LLVM (2.6), plain jit fuses on the CPU too and shows the NNC bugs: its stops
  // are the same executor's, and end in the same kernel. (1.13's jit does not fuse on the CPU.)
  if (bug.backend == "nnc" && tsrepro({"run", case_dir, "--backend", "jit"}).exit_code == 1) {
    const Result jit = tsrepro({"explain", "--passes", case_dir, "--backend", "jit", "--json"});
    ASSERT_EQ(jit.exit_code, 0) << jit.describe();
    EXPECT_EQ(jit.stdout_json().value("pass", std::string()), pass) << jit.out;
  }
}

INSTANTIATE_TEST_SUITE_P(Bugs, ExplainPassesRealBug, ::testing::ValuesIn(bugs_with_a_named_pass()),
                         [](const auto& info) { return info.param.name; });

TEST(ExplainPasses, ACaseWithoutARecordedFailureNeedsABackend) {
  TempDir tmp;
  import_example("conv_bn_relu_linear_scripted", tmp / "case");
  expect_bad_input(tsrepro({"explain", "--passes", tmp / "case"}), "--backend");
}

}  // namespace
}  // namespace tsrepro_test
