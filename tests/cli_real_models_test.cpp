// What real TorchScript brings to the command line, beyond the corpus (tests/corpus/, one model per
// construct, run by ctest's corpus.* tests): IR printed from a scripted module, module state the
// graph writes, malformed case files, and outputs whose references hold inf or NaN.

#include <sstream>

#include <gtest/gtest.h>

#include "tests/support/expectations.h"

namespace tsrepro_test {
namespace {

// Runs /usr/bin/python3 on `script` with `args`; the test is skipped where it has no torch.
Result python(const std::string& script, const Args& args = {}) {
  Args all{"-c", script};
  all.insert(all.end(), args.begin(), args.end());
  return run_cmd("/usr/bin/python3", all, {"", 300});
}

// The same for a script that scripts a module: written to a file in `dir` first, since scripting
// reads the module's source with inspect, which `python -c` has not.
Result python_file(const TempDir& dir, const std::string& source, const Args& args) {
  const std::string script = dir / "make_model.py";
  write_text(script, source);
  Args all{script};
  all.insert(all.end(), args.begin(), args.end());
  return run_cmd("/usr/bin/python3", all, {"", 300});
}

#define REQUIRE_SYSTEM_TORCH() SKIP_WITHOUT_PYTHON_TORCH()

// ---- Import ------------------------------------------------------------------------------------

// print(scripted.graph) starts with "%self.1 : __torch__.M": parseIR knows no such type.
TEST(CliImportIr, AnUnusedClassTypedSelfIsDropped) {
  TempDir tmp;
  const std::string ir = tmp / "printed.ir";
  write_text(ir,
             "graph(%self.1 : __torch__.Big,\n"
             "      %x.1 : Tensor):\n"
             "  %y.1 : Tensor = aten::relu(%x.1)\n"
             "  return (%y.1)\n");
  const Result r = tsrepro(import_spec_args(ir, "2x3:float32", tmp / "case"));
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(read_case_json(tmp / "case")["inputs"].size(), 1u);
  expect_pass(tsrepro({"run", tmp / "case", "--backend", "jit", "--json"}));
}

TEST(CliImportIr, AClassTypedSelfThatIsReadFromIsNamed) {
  TempDir tmp;
  const std::string ir = tmp / "printed.ir";
  write_text(ir,
             "graph(%self.1 : __torch__.Big,\n"
             "      %x.1 : Tensor):\n"
             "  %w : Tensor = prim::GetAttr[name=\"weight\"](%self.1)\n"
             "  %y.1 : Tensor = aten::mul(%x.1, %w)\n"
             "  return (%y.1)\n");
  expect_import_rejected(tmp, import_spec_args(ir, "2x3:float32", tmp / "case"), tmp / "case", "prim::GetAttr");
}

// Syntax errors of libtorch's parser start with a newline: the message must still say something.
TEST(CliImportIr, ParserErrorsAreNeverEmpty) {
  TempDir tmp;
  const std::string ir = tmp / "typed.ir";
  write_text(ir, "graph(%x : Tensor, %thing : __torch__.Thing):\n  return (%x)\n");
  const Result r = tsrepro(import_spec_args(ir, "2x3:float32", tmp / "case"));
  expect_bad_input(r, ir);
  EXPECT_EQ(r.err.find("IR syntax error: \n"), std::string::npos) << r.describe();
  EXPECT_NE(r.err.find("IR syntax error: Expected classes namespace"), std::string::npos) << r.describe();
}

// A constant the interpreter cannot hold (IR text's bare `inf`) is the graph's fault, not the
// inputs': the error names the graph file and says the interpreter cannot run it.
TEST(CliImportIr, AConstantTheInterpreterCannotRunNamesTheGraph) {
  TempDir tmp;
  const std::string ir = tmp / "inf.ir";
  write_text(ir,
             "graph(%x : Tensor):\n"
             "  %big : float = prim::Constant[value=inf]()\n"
             "  %y : Tensor = aten::clamp_max(%x, %big)\n"
             "  return (%y)\n");
  const Result r = tsrepro(import_spec_args(ir, "2x3:float32", tmp / "case"));
  expect_bad_input(r, ir);
  EXPECT_NE(r.err.find(ir + ": the interpreter cannot run this graph"), std::string::npos) << r.describe();
  EXPECT_EQ(r.err.find("do not fit"), std::string::npos) << r.describe();
}

// Issue 42: where the model's own unoptimized run fails on its inputs, the case is the model and
// fails the same way: it is written, says so, and its reference fails as the model's does.
TEST(CliImportModule, AModelThatFailsOnItsInputsBecomesACaseThatFailsLikeIt) {
  REQUIRE_SYSTEM_TORCH();
  TempDir tmp;
  const std::string model = tmp / "raises.pt", inputs = tmp / "raises.inputs.pt";
  const Result py = python_file(tmp,
                                "import sys, torch\n"
                                "class M(torch.nn.Module):\n"
                                "    def forward(self, x):\n"
                                "        if bool(x.sum() > 0):\n"
                                "            raise ValueError('the sum is positive')\n"
                                "        return x * 2\n"
                                "torch.jit.script(M()).save(sys.argv[1])\n"
                                "torch.save((torch.ones(3),), sys.argv[2])\n",
                                {model, inputs});
  ASSERT_EQ(py.exit_code, 0) << py.describe();
  const Result r = tsrepro(import_args(model, inputs, tmp / "case"));
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("note: the model's own unoptimized run fails on " + inputs + " as the case does: "),
            std::string::npos)
      << r.describe();
  const json fails = read_case_json(tmp / "case")["provenance"].at("reference_fails");
  EXPECT_NE(fails.value("message", "").find("the sum is positive"), std::string::npos) << fails;
  const Result run = tsrepro({"run", tmp / "case", "--backend", "jit", "--json"});
  expect_verdict(run, 2, "invalid");
}

// The Python numbers tracing records as 0-dim tensor constants (`s * 2.5`): torch.jit.save drops
// their wrapped-number mark, so the loaded model's bare unoptimized run promotes float32 * float64
// to float64 where eager and its optimized run give float32. Import and the saved model's runs
// mark them again (issue 53: the reference means what eager means), and import writes the number
// as a Scalar argument: the case passes under jit as the model does.
TEST(CliImportModule, ATracedPythonNumberIsJudgedAsEagerJudgesIt) {
  REQUIRE_SYSTEM_TORCH();
  TempDir tmp;
  const std::string model = tmp / "traced.pt", inputs = tmp / "traced.inputs.pt";
  const Result py = python_file(tmp,
                                "import sys, torch\n"
                                "class M(torch.nn.Module):\n"
                                "    def forward(self, x):\n"
                                "        s = x.sum()\n"
                                "        return s * 2.5, x * 3\n"
                                "x = torch.tensor([1.0, 2.0, 4.0])\n"
                                "torch.jit.trace(M(), x).save(sys.argv[1])\n"
                                "torch.save((x,), sys.argv[2])\n",
                                {model, inputs});
  ASSERT_EQ(py.exit_code, 0) << py.describe();
  Args args = import_args(model, inputs, tmp / "case");
  args.insert(args.end(), {"--verify", "eager,jit"});
  const Result imported = tsrepro(args);
  ASSERT_EQ(imported.exit_code, 0) << imported.describe();
  EXPECT_NE(imported.out.find("verify jit: the case is judged as the model is: pass"), std::string::npos)
      << imported.describe();
  // 2.5 is a Scalar argument again (3, an int, stays the 0-dim constant the trace made: an int
  // promotes as the float32 tensor's own category, the same with or without the mark).
  const std::string graph = read_text(tmp / "case/graph.ir");
  EXPECT_NE(graph.find("float = prim::Constant[value=2.5]()"), std::string::npos) << graph;
  const Result r = tsrepro({"run", tmp / "case", "--backend", "jit", "--json"});
  expect_verdict(r, 0, "pass");
}

// Import runs no optimization pass over the model: `(x > 0) * 1` stays a multiplication, whose
// result is int64 as in eager (a peephole that drops `* 1` would leave a bool tensor).
TEST(CliImportModule, ImportKeepsEveryOperatorTheModelRuns) {
  REQUIRE_SYSTEM_TORCH();
  TempDir tmp;
  const std::string model = tmp / "mask.pt";
  const Result py = python_file(tmp,
                                "import sys, torch\n"
                                "class M(torch.nn.Module):\n"
                                "    def forward(self, x):\n"
                                "        return (x > 0) * 1\n"
                                "torch.jit.script(M()).save(sys.argv[1])\n",
                                {model});
  ASSERT_EQ(py.exit_code, 0) << py.describe();
  ASSERT_EQ(tsrepro(import_spec_args(model, "2x3:float32", tmp / "case")).exit_code, 0);
  EXPECT_NE(read_text(tmp / "case/graph.ir").find("aten::mul"), std::string::npos);
  const Result r = tsrepro({"run", tmp / "case", "--backend", "eager", "--json"});
  expect_pass(r);
  EXPECT_EQ(r.stdout_json().at("outputs").at(0).value("dtype", ""), "int64") << r.describe();
}

// An attribute write (prim::SetAttr) becomes state threaded through the case's graph
// (runner/import/attribute_state.h): the case holds no write and computes what one call of the module does.
TEST(CliImportModule, AnAttributeWriteIsThreadedThroughTheCase) {
  REQUIRE_SYSTEM_TORCH();
  TempDir tmp;
  const std::string model = tmp / "counter.pt";
  const Result py = python_file(tmp,
                                "import sys, torch\n"
                                "class Counter(torch.nn.Module):\n"
                                "    def __init__(self):\n"
                                "        super().__init__()\n"
                                "        self.calls = 1\n"
                                "    def forward(self, x):\n"
                                "        self.calls = self.calls + 1\n"
                                "        return x * self.calls\n"
                                "torch.jit.script(Counter()).save(sys.argv[1])\n",
                                {model});
  ASSERT_EQ(py.exit_code, 0) << py.describe();
  const Result r = tsrepro(import_spec_args(model, "2x3:float32", tmp / "case"));
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const std::string graph = read_text(tmp / "case/graph.ir");
  EXPECT_EQ(graph.find("prim::SetAttr"), std::string::npos) << graph;
  expect_pass(tsrepro({"run", tmp / "case", "--backend", "jit", "--json"}));
}

// An object of a TorchScript class that forward creates (torchvision's detection models wrap their
// images in an ImageList and return it, with the targets, from the transform) has its attributes
// threaded as values, and the object goes: IR text cannot name its class.
TEST(CliImportModule, AnObjectTheGraphCreatesBecomesItsAttributes) {
  REQUIRE_SYSTEM_TORCH();
  TempDir tmp;
  const std::string model = tmp / "boxed.pt", inputs = tmp / "boxed.inputs.pt";
  const Result py = python_file(tmp,
                                "import sys, torch\n"
                                "from typing import Tuple\n"
                                "@torch.jit.script\n"
                                "class Box:\n"
                                "    def __init__(self, t: torch.Tensor, n: int):\n"
                                "        self.t = t\n"
                                "        self.n = n\n"
                                "class Wrap(torch.nn.Module):\n"
                                "    def forward(self, x: torch.Tensor) -> Tuple[Box, int]:\n"
                                "        return Box(x * 2, 3), 1\n"
                                "class M(torch.nn.Module):\n"
                                "    def __init__(self):\n"
                                "        super().__init__()\n"
                                "        self.wrap = Wrap()\n"
                                "    def forward(self, x):\n"
                                "        b, k = self.wrap(x)\n"
                                "        if k > 0:\n"
                                "            b.t = b.t + 1\n"
                                "        return b.t * b.n\n"
                                "torch.jit.script(M()).save(sys.argv[1])\n"
                                "torch.save((torch.tensor([1.0, 2.0]),), sys.argv[2])\n",
                                {model, inputs});
  ASSERT_EQ(py.exit_code, 0) << py.describe();
  const Result imported = tsrepro(import_args(model, inputs, tmp / "case"));
  ASSERT_EQ(imported.exit_code, 0) << imported.describe();
  const std::string graph = read_text(tmp / "case/graph.ir");
  EXPECT_EQ(graph.find("prim::CreateObject"), std::string::npos) << graph;
  EXPECT_EQ(graph.find("prim::SetAttr"), std::string::npos) << graph;
  expect_pass(tsrepro({"run", tmp / "case", "--backend", "jit", "--json"}));
}

// A module that updates one of its buffers in place: freezing keeps a read of %self, so ofi runs
// the frozen forward as a method, with the frozen module as %self, as frozen(*inputs) does.
// (It erased %self once, and libtorch asserted.) Every run starts from the module's state before
// any call, as every run of the case starts from fresh inputs.
TEST(CliImportModule, OfiRunsAModuleThatUpdatesItsBufferInPlace) {
  REQUIRE_SYSTEM_TORCH();
  TempDir tmp;
  const std::string model = tmp / "acc.pt", inputs = tmp / "acc.inputs.pt";
  const Result py =
      python_file(tmp,
                  "import sys, torch\n"
                  "class Accumulator(torch.nn.Module):\n"
                  "    def __init__(self):\n"
                  "        super().__init__()\n"
                  "        self.register_buffer('b', torch.ones(3))\n"
                  "    def forward(self, x, y):\n"
                  "        self.b.add_(y)\n"
                  "        return x * self.b\n"
                  "torch.jit.script(Accumulator().eval()).save(sys.argv[1])\n"
                  "torch.save((torch.tensor([1.0, 2.0, 3.0]), torch.tensor([0.5, -1.0, 2.0])), sys.argv[2])\n",
                  {model, inputs});
  ASSERT_EQ(py.exit_code, 0) << py.describe();
  ASSERT_EQ(tsrepro(import_args(model, inputs, tmp / "case")).exit_code, 0);
  expect_pass(tsrepro({"run", tmp / "case", "--backend", "ofi", "--json"}));
}

// torchvision's own operators (torchvision::nms) live in its _C extension library, as any
// project's TORCH_LIBRARY operators live in theirs.
TEST(CliImportModule, CustomOperatorsNeedTheirLibraryAndTheReproducersLoadIt) {
  REQUIRE_SYSTEM_TORCH();
  TempDir tmp;
  const std::string model = tmp / "nms.pt", inputs = tmp / "nms.inputs.pt";
  const std::string library_file = tmp / "library.txt";
  const Result py = run_cmd(kPython, {kFixtures + "nms_model.py", model, inputs, library_file}, {"", 300});
  if (py.exit_code != 0) GTEST_SKIP() << "no torchvision here: " << py.describe();
  const std::string library = read_text(library_file);

  const Result without = tsrepro(import_args(model, inputs, tmp / "no_library"));
  expect_bad_input(without, "--load-library");

  const std::string case_dir = tmp / "case";
  Args import = import_args(model, inputs, case_dir);
  import.insert(import.end(), {"--load-library", library});
  ASSERT_EQ(tsrepro(import).exit_code, 0);
  // The case records the library and the operator of it the graph calls (issue 42): every later
  // command loads it without being told.
  const json libraries = read_case_json(case_dir).at("libraries");
  ASSERT_EQ(libraries.size(), 1u) << libraries;
  EXPECT_EQ(libraries[0].value("path", ""), library);
  EXPECT_EQ(libraries[0].at("ops"), json::array({"torchvision::nms"})) << libraries;
  expect_pass(tsrepro({"run", case_dir, "--backend", "jit", "--json"}));
  const std::string out = tmp / "out";
  const Result minify =
      tsrepro({"minify", case_dir, "--backend", "inject:runtime-error@torchvision::nms", "-o", out, "--json"},
              {tmp.path().string(), 600});
  ASSERT_EQ(minify.exit_code, 0) << minify.describe();
  EXPECT_EQ(minify.stdout_json().value("final_nodes", 0), 1) << minify.describe();
  EXPECT_NE(read_text(out + "/minified/repro.py").find(library), std::string::npos);
  // ... and imports the package the library is part of, as a program using torchvision.ops does.
  EXPECT_NE(read_text(out + "/minified/repro.py").find("for package in [\"torchvision\"]:"), std::string::npos);
  const Result repro = run_cmd("/usr/bin/python3", {out + "/minified/repro.py"}, {"", 300});
  EXPECT_EQ(repro.exit_code, 1) << repro.describe();
  // The environment variable serves the same, for the workflow that has no command line.
  expect_pass(tsrepro({"run", case_dir, "--backend", "jit", "--json"},
                      {tmp.path().string(), 120, {"TSREPRO_LOAD_LIBRARY=" + library}}));

  // Where the recorded library is gone: one line naming it, exit 2, from tsrepro and repro.py.
  const std::string moved = tmp / "moved_C.so", moved_case = tmp / "moved_case", moved_out = tmp / "moved_out";
  std::filesystem::copy_file(library, moved);
  import = import_args(model, inputs, moved_case);
  import.insert(import.end(), {"--load-library", moved});
  ASSERT_EQ(tsrepro(import).exit_code, 0);
  ASSERT_EQ(
      tsrepro({"run", moved_case, "--backend", "inject:runtime-error@torchvision::nms", "--save-repro"}).exit_code, 1);
  std::filesystem::remove(moved);
  expect_bad_input(tsrepro({"run", moved_case}),
                   moved + ": cannot load the library: no such file (" + moved_case + "/case.json records it)");
  const Result gone = run_cmd("/usr/bin/python3", {moved_case + "/repro.py"}, {"", 300});
  EXPECT_EQ(gone.exit_code, 2) << gone.describe();
  EXPECT_NE(gone.out.find("the library of custom operators " + moved + " is not here"), std::string::npos)
      << gone.describe();
}

// Issue 15: a minified torchvision model's node says where the model made it, in graph.ir,
// summary.json and repro.py: resnet.py's "x = self.maxpool(x)", module maxpool.
TEST(CliImportModule, AMinifiedTorchvisionModelsNodeKeepsItsSourceLineAndModulePath) {
  REQUIRE_SYSTEM_TORCH();
  TempDir tmp;
  const std::string model = tmp / "resnet18.pt", inputs = tmp / "inputs.pt";
  const Result py =
      python_file(tmp,
                  "import sys, torch, torchvision\n"
                  "import torchvision.models.resnet as resnet\n"
                  "torch.manual_seed(0)\n"
                  "torch.jit.script(torchvision.models.resnet18(weights=None).eval()).save(sys.argv[1])\n"
                  "torch.save((torch.randn(1, 3, 32, 32),), sys.argv[2])\n"
                  "lines = open(resnet.__file__).read().splitlines()\n"
                  "print(resnet.__file__, [i + 1 for i, l in enumerate(lines) if 'x = self.maxpool(x)' in l][0])\n",
                  {model, inputs});
  if (py.exit_code != 0) GTEST_SKIP() << "no torchvision here: " << py.describe();
  std::istringstream where(py.out);
  std::string resnet_py;
  int64_t maxpool_line = 0;
  where >> resnet_py >> maxpool_line;
  ASSERT_GT(maxpool_line, 0) << py.describe();

  ASSERT_EQ(tsrepro(import_args(model, inputs, tmp / "case")).exit_code, 0);
  const std::string out = tmp / "out";
  const Result minify = tsrepro(
      {"minify", tmp / "case", "--backend", "inject:runtime-error@aten::max_pool2d", "-o", out, "--json", "-j", "1"},
      {"", 600});
  ASSERT_EQ(minify.exit_code, 0) << minify.describe();
  const nlohmann::json summary = minify.stdout_json();
  ASSERT_EQ(summary["final_node_origins"].size(), 1u) << summary.dump(2);
  const nlohmann::json& origin = summary["final_node_origins"][0];
  EXPECT_EQ(origin["kind"], "aten::max_pool2d");
  EXPECT_EQ(origin["file"], resnet_py);
  EXPECT_EQ(origin["line"], maxpool_line);
  EXPECT_EQ(origin["module_path"], "maxpool");
  EXPECT_NE(origin["op_file"].get<std::string>().find("torch/nn/functional.py"), std::string::npos) << origin;

  const std::string where_text = resnet_py + ":" + std::to_string(maxpool_line);
  const std::string graph_ir = read_text(out + "/minified/graph.ir");
  EXPECT_NE(graph_ir.find("# " + where_text + ":"), std::string::npos) << graph_ir;
  EXPECT_NE(graph_ir.find(" maxpool (node " + std::to_string(origin["index"].get<int64_t>()) + ")"), std::string::npos)
      << graph_ir;
  const std::string repro_py = read_text(out + "/minified/repro.py");
  EXPECT_NE(repro_py.find("# Its nodes came from: aten::max_pool2d at " + where_text + " (maxpool, node "),
            std::string::npos)
      << repro_py.substr(0, 600);
  EXPECT_NE(read_text(out + "/minified/repro.cpp").find("// Its nodes came from: aten::max_pool2d at " + where_text),
            std::string::npos);
  // The case keeps the entries of its own nodes (issue 42), and the one left is maxpool's.
  const json kept = read_case_json(out + "/minified")["node_origins"];
  EXPECT_LT(kept.size(), read_case_json(tmp / "case")["node_origins"].size());
  EXPECT_NE(std::find_if(kept.begin(), kept.end(), [&](const json& o) { return o == origin; }), kept.end()) << kept;
  const Result repro = run_cmd("/usr/bin/python3", {out + "/minified/repro.py"}, {"", 300});
  EXPECT_EQ(repro.exit_code, 1) << repro.describe();
}

TEST(CliBadRunDir, CaseJsonFieldsOfTheWrongTypeAreNamed) {
  TempDir tmp;
  const fs::path bad = tmp.path() / "bad";
  fs::create_directory(bad);
  write_text(bad / "case.json", R"({"format": 1, "version": 1})");
  expect_bad_input(tsrepro({"run", bad.string(), "--backend", "jit"}), (bad / "case.json").string());
  write_text(bad / "case.json", R"({"format": "tsrepro-case", "version": "one"})");
  expect_bad_input(tsrepro({"run", bad.string(), "--backend", "jit"}), (bad / "case.json").string());
  write_text(bad / "case.json", R"([1, 2])");
  expect_bad_input(tsrepro({"run", bad.string(), "--backend", "jit"}), (bad / "case.json").string());
}

// ---- Comparison --------------------------------------------------------------------------------

// A case whose graph is exp(x) * scale, inputs written by Python: x[0] = 100 overflows float32 to
// inf (float64 stays finite), so in torch._dynamo.utils.same() RMSE(ref, fp64) is infinite and
// excuses every result. inject:accuracy@aten::exp adds 1 to exp's outputs.
class CliCompare : public ::testing::Test {
 protected:
  void make_case(const std::string& case_dir, const std::string& inputs_code) {
    const std::string ir = tmp_ / "exp_scale.ir",
                      inputs = tmp_ / (fs::path(case_dir).filename().string() + ".inputs.pt");
    write_text(ir,
               "graph(%x : Tensor, %scale : Tensor):\n"
               "  %e : Tensor = aten::exp(%x)\n"
               "  %y : Tensor = aten::mul(%e, %scale)\n"
               "  return (%y)\n");
    const Result py = python("import sys, torch\n" + inputs_code + "torch.save((x, scale), sys.argv[1])\n", {inputs});
    ASSERT_EQ(py.exit_code, 0) << py.describe();
    const Result r = tsrepro(import_args(ir, inputs, case_dir));
    ASSERT_EQ(r.exit_code, 0) << r.describe();
  }

  TempDir tmp_;
};

TEST_F(CliCompare, AnInfInTheReferenceDoesNotHideAWrongResultElsewhere) {
  REQUIRE_SYSTEM_TORCH();
  const std::string case_dir = tmp_ / "overflow";
  make_case(case_dir, "x = torch.zeros(2000); x[0] = 100.0\nscale = torch.ones(2000)\n");
  const Result r = tsrepro({"run", case_dir, "--backend", "inject:accuracy@aten::exp", "--json", "--save-repro"});
  const json v = expect_verdict(r, 1, "accuracy");
  ASSERT_EQ(v["outputs"].size(), 1u);
  // Measured over the elements where both sides are finite: a number, not JSON's null.
  EXPECT_EQ(v["outputs"][0]["max_abs"], 1.0) << v.dump();
  EXPECT_NE(v.value("message", "").find("where both references are finite"), std::string::npos) << v.dump();
  // The repro.py port of the rule agrees.
  const Result repro = run_cmd("/usr/bin/python3", {case_dir + "/repro.py"}, {"", 300});
  EXPECT_EQ(repro.exit_code, 1) << repro.describe();
}

// One element off by 3e-4 in 2000 fails allclose, but its RMSE (6.7e-6) is within same()'s
// bound: the fp64 rule excuses it, --no-fp64 (same_two_models_use_fp64=False) does not.
TEST_F(CliCompare, NoFp64JudgesByAllcloseAlone) {
  REQUIRE_SYSTEM_TORCH();
  const std::string case_dir = tmp_ / "one_off";
  make_case(case_dir, "x = torch.zeros(2000)\nscale = torch.zeros(2000); scale[5] = 3e-4\n");
  const Result excused = tsrepro({"run", case_dir, "--backend", "inject:accuracy@aten::exp", "--json"});
  expect_pass(excused);
  const Result strict =
      tsrepro({"run", case_dir, "--backend", "inject:accuracy@aten::exp", "--json", "--no-fp64", "--save-repro"});
  const json v = expect_verdict(strict, 1, "accuracy");
  ASSERT_EQ(v["outputs"].size(), 1u);
  EXPECT_NEAR(v["outputs"][0]["max_abs"].get<double>(), 3e-4, 1e-6) << v.dump();
  const Result repro = run_cmd("/usr/bin/python3", {case_dir + "/repro.py"}, {"", 300});
  EXPECT_EQ(repro.exit_code, 1) << repro.describe();
}

// A model whose output is NaN is not a failure by itself (same_two_models compares with
// equal_nan=True); --no-equal-nan makes every NaN one.
TEST_F(CliCompare, NanOutputsPassUnlessEqualNanIsOff) {
  REQUIRE_SYSTEM_TORCH();
  const std::string case_dir = tmp_ / "nan";
  make_case(case_dir, "x = torch.zeros(4)\nscale = torch.tensor([float('nan'), 1.0, float('inf'), 2.0])\n");
  expect_pass(tsrepro({"run", case_dir, "--backend", "jit", "--json"}));
  const json v =
      expect_verdict(tsrepro({"run", case_dir, "--backend", "jit", "--json", "--no-equal-nan"}), 1, "accuracy");
  EXPECT_EQ(v["outputs"][0]["nonfinite_mismatches"], 1) << v.dump();
}

}  // namespace
}  // namespace tsrepro_test
