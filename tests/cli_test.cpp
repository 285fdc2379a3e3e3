// End-to-end tests of the tsrepro command line: every test runs the real `tsrepro` executable
// (TSREPRO_BINARY_DIR "/tsrepro") as a subprocess and checks its exit status, stdout, stderr and
// the files it leaves behind. No torch headers here: only the standard library, GoogleTest and
// nlohmann::json.
//
// Each child runs in its own process group, with TSREPRO_LOG removed from its environment and
// TMPDIR pointed at the test's own temporary directory, so that scratch files tsrepro forgets to
// remove show up in the directory snapshots the tests compare.

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/expectations.h"

namespace {

using namespace tsrepro_test;

// ================================================================================================
// 1. Every example model imports and matches eager under jit (and nnc where it fuses).

TEST(CliManifest, EveryModelImportsToCompleteCaseAndJitMatchesEager) {
  const json manifest = json::parse(read_text(kModels + "MANIFEST.json"));
  ASSERT_TRUE(manifest.is_array());
  ASSERT_GE(manifest.size(), 9u);

  TempDir tmp;
  std::vector<std::string> names, cases;
  std::vector<Args> imports;
  for (const json& m : manifest) {
    names.push_back(m.at("name").get<std::string>());
    cases.push_back(tmp / names.back());
    imports.push_back(import_args(kModels + m.at("model").get<std::string>(),
                                  kModels + m.at("inputs").get<std::string>(), cases.back()));
  }
  const std::vector<Result> imported = tsrepro_all(imports, {tmp.path().string()});

  std::vector<Args> runs;
  std::vector<std::string> run_labels;
  for (size_t i = 0; i < names.size(); ++i) {
    SCOPED_TRACE(names[i]);
    const Result& r = imported[i];
    ASSERT_TRUE(r.exited) << r.describe();
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    EXPECT_EQ(r.err, "") << r.describe();
    for (const char* file : {"case.json", "graph.ir", "inputs.pt"})
      EXPECT_TRUE(fs::is_regular_file(fs::path(cases[i]) / file)) << file << " missing in " << cases[i];
    EXPECT_EQ(list_dir(cases[i]), (std::set<std::string>{"case.json", "graph.ir", "inputs.pt"}));
    EXPECT_EQ(read_text(fs::path(cases[i]) / "graph.ir").rfind("graph(", 0), 0u) << "graph.ir is not IR text";

    // "wrote CASE: N compute nodes, ..." agrees with case.json.
    const json c = read_case_json(cases[i]);
    EXPECT_EQ(c.value("format", ""), "tsrepro-case");
    EXPECT_EQ(c.value("real_inputs", false), true);
    EXPECT_TRUE(c.contains("inputs") && c["inputs"].is_array() && !c["inputs"].empty());
    std::smatch m;
    const std::regex wrote("^wrote (.*): ([0-9]+) compute nodes, .*real input values\n$");
    ASSERT_TRUE(std::regex_match(r.out, m, wrote)) << r.describe();
    EXPECT_EQ(m[1].str(), cases[i]);
    EXPECT_EQ(c.value("compute_nodes", -1), std::stoi(m[2].str()));
    EXPECT_GT(c.value("compute_nodes", 0), 0);

    runs.push_back({"run", cases[i], "--backend", "jit", "--json"});
    run_labels.push_back(names[i] + " under jit");
    if (names[i] == "chain100_scripted" || names[i] == "elementwise_chain_scripted") {
      runs.push_back({"run", cases[i], "--backend", "nnc", "--json"});
      run_labels.push_back(names[i] + " under nnc");
    }
    if (names[i] == "chain100_scripted") {
      EXPECT_GE(c.value("compute_nodes", 0), 100);
      EXPECT_NE(read_text(fs::path(cases[i]) / "graph.ir").find("aten::relu"), std::string::npos);
    }
  }
  // Only the case directories: no scratch directory and no ".NAME.tmp-*" left in TMPDIR / the parent.
  EXPECT_EQ(list_dir(tmp.path()), std::set<std::string>(names.begin(), names.end()));
  EXPECT_EQ(runs.size(), names.size() + 2)
      << "chain100_scripted or elementwise_chain_scripted missing from MANIFEST.json";

  const std::vector<Result> ran = tsrepro_all(runs);
  for (size_t i = 0; i < runs.size(); ++i) {
    SCOPED_TRACE(run_labels[i]);
    expect_pass(ran[i]);
    const json j = ran[i].out.empty() ? json::object() : json::parse(ran[i].out, nullptr, false);
    if (j.is_object()) {
      EXPECT_EQ(j.value("backend", ""), runs[i][3]);
      EXPECT_EQ(j.value("ref", ""), "eager");
    }
  }
}

// ================================================================================================
// 2. Fault injection on chain100: each fault yields its own status, phase and signature.

class CliFaultInjection : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    chain100_.create({"import", kModels + "chain100_scripted.pt", "--inputs", kModels + "chain100_scripted.inputs.pt"});
  }
  static void TearDownTestSuite() { chain100_.destroy(); }
  void SetUp() override {
    ASSERT_TRUE(chain100_.ok()) << "importing chain100_scripted failed\n" << chain100_.import.describe();
  }

  static SharedCase chain100_;
};
SharedCase CliFaultInjection::chain100_;

TEST_F(CliFaultInjection, EachFaultAtReluGetsItsStatusPhaseSignatureAndExitCode) {
  const std::string c = chain100_.path;
  auto json_run = [&](const std::string& backend, Args extra = {}) {
    Args args{"run", c, "--backend", backend, "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  // All at once (the hang first: it mostly sleeps).
  const std::vector<Result> r = tsrepro_all({
      json_run("inject:hang@aten::relu", {"--timeout", "2"}),
      json_run("inject:runtime-error@aten::relu"),
      json_run("inject:compile-error@aten::relu"),
      json_run("inject:segfault@aten::relu"),
      json_run("inject:abort@aten::relu"),
      json_run("inject:accuracy@aten::relu"),
      json_run("jit", {"--ref", "inject:runtime-error@aten::relu"}),
      {"run", c, "--backend", "inject:runtime-error@aten::relu"},
  });

  {
    SCOPED_TRACE("hang with --timeout 2");
    EXPECT_FALSE(r[0].watchdog_fired) << r[0].describe();
    EXPECT_LT(r[0].seconds, 15.0) << "the whole command should end soon after the 2 s timeout\n" << r[0].describe();
    const json j = expect_verdict(r[0], 1, "timeout");
    EXPECT_EQ(j.value("signature", ""), "timeout") << r[0].describe();
    EXPECT_GE(j.value("seconds", 0.0), 1.9) << "the verdict should report the time waited\n" << r[0].describe();
    EXPECT_LT(j.value("seconds", 99.0), 15.0) << r[0].describe();
  }
  {
    SCOPED_TRACE("runtime-error");
    const json j = expect_verdict(r[1], 1, "exception");
    EXPECT_EQ(j.value("phase", ""), "run") << r[1].describe();
    EXPECT_EQ(j.value("signature", ""), "exception:run:RuntimeError: tsrepro injected runtime error at aten::relu")
        << r[1].describe();
    EXPECT_NE(j.value("message", "").find("injected runtime error"), std::string::npos) << r[1].describe();
  }
  {
    SCOPED_TRACE("compile-error");
    const json j = expect_verdict(r[2], 1, "exception");
    EXPECT_EQ(j.value("phase", ""), "compile") << r[2].describe();
    EXPECT_EQ(j.value("signature", "").rfind("exception:compile:", 0), 0u) << r[2].describe();
  }
  {
    SCOPED_TRACE("segfault");
    const json j = expect_verdict(r[3], 1, "crash");
    EXPECT_EQ(j.value("signature", ""), "crash:SIGSEGV") << r[3].describe();
    EXPECT_GT(j.value("seconds", 0.0), 0.0) << "a crash still took some time\n" << r[3].describe();
  }
  {
    SCOPED_TRACE("abort");
    const json j = expect_verdict(r[4], 1, "crash");
    EXPECT_EQ(j.value("signature", ""), "crash:SIGABRT") << r[4].describe();
  }
  {
    SCOPED_TRACE("accuracy");
    const json j = expect_verdict(r[5], 1, "accuracy");
    EXPECT_EQ(j.value("signature", ""), "accuracy:float32") << r[5].describe();
    ASSERT_TRUE(j.contains("outputs") && j["outputs"].is_array() && !j["outputs"].empty()) << r[5].describe();
    const json& o = j["outputs"][0];
    EXPECT_EQ(o.value("ok", true), false) << r[5].describe();
    EXPECT_GT(o.value("max_abs", 0.0), 0.1) << r[5].describe();
    EXPECT_EQ(o.value("dtype", ""), "float32") << r[5].describe();
    EXPECT_NE(o.value("reason", ""), "") << r[5].describe();
  }
  {
    SCOPED_TRACE("failing reference (--ref inject:runtime-error)");
    const json j = expect_verdict(r[6], 2, "invalid");
    EXPECT_NE(j.value("message", "").find("injected runtime error"), std::string::npos) << r[6].describe();
  }
  {
    SCOPED_TRACE("runtime-error, text verdict");
    EXPECT_TRUE(r[7].exited) << r[7].describe();
    EXPECT_EQ(r[7].exit_code, 1) << r[7].describe();
    EXPECT_NE(r[7].out.find("verdict:   exception (run)"), std::string::npos) << r[7].describe();
    EXPECT_NE(r[7].out.find("signature: exception:run:RuntimeError: tsrepro injected runtime error at aten::relu"),
              std::string::npos)
        << r[7].describe();
    EXPECT_FALSE(json::accept(r[7].out)) << "without --json the verdict is text\n" << r[7].describe();
  }
}

// ================================================================================================
// 3. nnc: explain output and backend options.

class CliNnc : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    chain_.create({"import", kModels + "elementwise_chain_scripted.pt", "--inputs",
                   kModels + "elementwise_chain_scripted.inputs.pt"});
  }
  static void TearDownTestSuite() { chain_.destroy(); }
  void SetUp() override { ASSERT_TRUE(chain_.ok()) << chain_.import.describe(); }
  static SharedCase chain_;
};
SharedCase CliNnc::chain_;

TEST_F(CliNnc, ExplainShowsTensorExprGroupAndBackendOptsAreValidated) {
  const std::string c = chain_.path;
  const std::set<std::string> before = list_dir(c);
  const std::vector<Result> r = tsrepro_all({
      {"run", c, "--backend", "nnc", "--explain-backend"},
      {"run", c, "--backend", "nnc", "--backend-opt", "inline=0", "--json"},
      {"run", c, "--backend", "nnc", "--backend-opt", "bogus=1", "--json"},
      {"run", c, "--backend", "nnc", "--backend-opt", "novalue"},
  });
  {
    SCOPED_TRACE("--explain-backend");
    EXPECT_TRUE(r[0].exited) << r[0].describe();
    EXPECT_EQ(r[0].exit_code, 0) << r[0].describe();
    EXPECT_NE(r[0].out.find("verdict:   pass"), std::string::npos) << r[0].describe();
    EXPECT_NE(r[0].out.find("prim::TensorExprGroup"), std::string::npos) << r[0].describe();
  }
  {
    SCOPED_TRACE("--backend-opt inline=0 is a known option");
    expect_pass(r[1]);
  }
  {
    SCOPED_TRACE("--backend-opt bogus=1 is unknown");
    expect_bad_input(r[2], "bogus");
  }
  {
    SCOPED_TRACE("--backend-opt without =value");
    expect_bad_input(r[3], "novalue");
  }
  EXPECT_EQ(list_dir(c), before) << "run must not write into the case";
}

// ================================================================================================
// 4. --input-spec: fake-shaped cases.

const char kIndexSelectIr[] =
    "graph(%table : Tensor, %idx : Tensor):\n"
    "  %d : int = prim::Constant[value=0]()\n"
    "  %r : Tensor = aten::index_select(%table, %d, %idx)\n"
    "  return (%r)\n";

TEST(CliInputSpec, SpecCaseHasNoInputsFilePassesJitAndFakeInputsFollowTheSeed) {
  SharedCase spec_case;
  spec_case.create({"import", kModels + "small_graph.ir", "--input-spec", "2x3:float32,2x3:float32"});
  const Result& imp = spec_case.import;
  ASSERT_TRUE(imp.exited) << imp.describe();
  ASSERT_EQ(imp.exit_code, 0) << imp.describe();
  EXPECT_NE(imp.out.find("fake-shaped input values"), std::string::npos) << imp.describe();
  EXPECT_EQ(list_dir(spec_case.path), (std::set<std::string>{"case.json", "graph.ir"}));
  const json c = read_case_json(spec_case.path);
  EXPECT_EQ(c.value("format", ""), "tsrepro-case");
  EXPECT_EQ(c.value("real_inputs", true), false);
  ASSERT_TRUE(c.contains("inputs") && c["inputs"].is_array());
  ASSERT_EQ(c["inputs"].size(), 2u) << c.dump(2);
  for (const json& in : c["inputs"]) {
    EXPECT_EQ(in.value("dtype", ""), "float32") << in.dump();
    EXPECT_EQ(in.value("sizes", json()), json({2, 3})) << in.dump();
  }

  // An accuracy fault makes the reported error depend on the input values.
  auto fake = [&](const std::string& seed) {
    return Args{"run",           spec_case.path, "--backend", "inject:accuracy@aten::relu",
                "--fake-inputs", "--seed",       seed,        "--json"};
  };
  const std::vector<Result> r =
      tsrepro_all({{"run", spec_case.path, "--backend", "jit", "--json"}, fake("7"), fake("7"), fake("8")});
  {
    SCOPED_TRACE("jit");
    expect_pass(r[0]);
  }
  const json a = expect_verdict(r[1], 1, "accuracy");
  const json b = expect_verdict(r[2], 1, "accuracy");
  const json d = expect_verdict(r[3], 1, "accuracy");
  ASSERT_TRUE(a.contains("outputs") && b.contains("outputs") && d.contains("outputs"));
  EXPECT_EQ(a["outputs"], b["outputs"]) << "same seed, different outputs\n" << r[1].out << "\n" << r[2].out;
  EXPECT_EQ(a.value("message", "a"), b.value("message", "b"));
  EXPECT_NE(a["outputs"], d["outputs"]) << "seeds 7 and 8 gave the same values\n" << r[1].out << "\n" << r[3].out;
}

TEST(CliInputSpec, IntegerRangeIsRecordedAndBoundsFakeValues) {
  TempDir tmp;
  const std::string ir = tmp / "index_select.ir";
  write_text(ir, kIndexSelectIr);
  const std::string half_open = tmp / "half_open", closed = tmp / "closed", out_of_table = tmp / "out_of_table";
  const std::vector<Result> imported = tsrepro_all({import_spec_args(ir, "8x4:float32,4:int64[0,8)", half_open),
                                                    import_spec_args(ir, "8x4:float32,4:int64[0,7]", closed),
                                                    import_spec_args(ir, "8x4:float32,4:int64[100,200)", out_of_table)},
                                                   {tmp.path().string()});
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(imported[i].exited) << imported[i].describe();
    ASSERT_EQ(imported[i].exit_code, 0) << imported[i].describe();
  }
  for (const std::string& dir : {half_open, closed}) {
    SCOPED_TRACE(dir);
    const json c = read_case_json(dir);
    ASSERT_TRUE(c.contains("inputs") && c["inputs"].size() == 2) << c.dump(2);
    const json& idx = c["inputs"][1];
    EXPECT_EQ(idx.value("dtype", ""), "int64") << idx.dump();
    EXPECT_EQ(idx.value("sizes", json()), json({4})) << idx.dump();
    ASSERT_TRUE(idx.contains("min") && idx["min"].is_number() && idx.contains("max") && idx["max"].is_number())
        << idx.dump();
    EXPECT_EQ(idx["min"].get<double>(), 0.0) << idx.dump();
    EXPECT_EQ(idx["max"].get<double>(), 7.0) << idx.dump();
  }
  {
    // Indices drawn from [100, 200) cannot index an 8-row table: the import's trial run says so.
    SCOPED_TRACE("range outside the table");
    expect_bad_input(imported[2], "--input-spec");
    EXPECT_NE(imported[2].err.find("index"), std::string::npos) << imported[2].describe();
  }
  EXPECT_EQ(list_dir(tmp.path()), (std::set<std::string>{"index_select.ir", "half_open", "closed"}));

  // The reference fails for any index outside [0, 8): fake inputs from other seeds all pass.
  const std::vector<Result> ran =
      tsrepro_all({{"run", half_open, "--backend", "jit", "--fake-inputs", "--seed", "1", "--json"},
                   {"run", closed, "--backend", "jit", "--fake-inputs", "--seed", "2", "--json"}});
  for (const Result& r : ran) expect_pass(r);
}

TEST(CliInputSpec, IntFloatAndBoolScalarItemsFeedScriptedModules) {
  TempDir tmp;
  const std::string control = tmp / "control_flow", multi = tmp / "multi_output";
  const std::vector<Result> imported = tsrepro_all(
      {import_spec_args(kModels + "control_flow_scripted.pt", "2x3:float32,int=3", control),
       import_spec_args(kModels + "multi_output_scripted.pt", "3x4:float32,3x4:float32,float=0.5,bool=true", multi)},
      {tmp.path().string()});
  for (const Result& r : imported) {
    ASSERT_TRUE(r.exited) << r.describe();
    ASSERT_EQ(r.exit_code, 0) << r.describe();
  }
  EXPECT_EQ(list_dir(control), (std::set<std::string>{"case.json", "graph.ir"}));
  const json j = expect_verdict(tsrepro({"run", multi, "--backend", "jit", "--json"}), 0, "pass");
  EXPECT_EQ(j.value("outputs", json::array()).size(), 3u) << "(a, (b, c)) has three tensor leaves\n" << j.dump();
}

TEST(CliInputSpec, MalformedSpecsAreRejectedWithExit2) {
  TempDir tmp;
  const std::string ir = tmp / "index_select.ir";
  write_text(ir, kIndexSelectIr);
  const std::vector<std::string> bad = {
      "8x4:float99,4:int64",      // unknown dtype
      "axb:float32,4:int64",      // bad size
      "8x4:float32,4:int64[0,8",  // unterminated range
      "8x4:float32,int=x",        // unreadable scalar
      "8x4:float32",              // too few items for the graph
      "8x4:float32,float=0.5",    // a scalar where the graph takes a tensor
  };
  std::vector<Args> commands;
  for (size_t i = 0; i < bad.size(); ++i)
    commands.push_back(import_spec_args(ir, bad[i], tmp / ("case" + std::to_string(i))));
  const std::set<std::string> before = list_dir(tmp.path());
  const std::vector<Result> results = tsrepro_all(commands, {tmp.path().string()});
  for (size_t i = 0; i < bad.size(); ++i) {
    SCOPED_TRACE("spec \"" + bad[i] + "\"");
    expect_bad_input(results[i], "--input-spec");
  }
  EXPECT_EQ(list_dir(tmp.path()), before);
}

TEST(CliInputSpec, EmptyIntegerRangeIsRejected) {
  // [5,2) holds no integer: the spec cannot be honoured and should be refused, not recorded as
  // min 5 / max 1.
  TempDir tmp;
  const std::string ir = tmp / "index_select.ir";
  write_text(ir, kIndexSelectIr);
  expect_import_rejected(tmp, import_spec_args(ir, "8x4:float32,4:int64[5,2)", tmp / "case"), tmp / "case", "[5,2)");
}

// `import --origins`: the origins recorded where the graph ran (libtsrepro_capture.so writes them
// beside the IR text, which keeps no source) name the case's nodes when they describe the same
// nodes; other nodes' origins are not used, and the provenance says so.
std::string origins_of_small_graph(const TempDir& tmp, const std::vector<std::string>& kinds) {
  json table = json::array();
  for (size_t i = 0; i < kinds.size(); ++i)
    table.push_back(
        {{"index", i}, {"kind", kinds[i]}, {"file", "model.py"}, {"line", 10 + i}, {"module_path", "body"}});
  const std::string path = tmp / "origins.json";
  write_text(path, table.dump());
  return path;
}

// small_graph.ir imported with `origins` into tmp/case: its case.json.
json import_small_graph_with(const TempDir& tmp, const std::string& origins) {
  Args args = import_args(kModels + "small_graph.ir", kModels + "small_graph.inputs.pt", tmp / "case");
  args.insert(args.end(), {"--origins", origins});
  const Result r = tsrepro(args);
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  return read_case_json(tmp / "case");
}

TEST(CliImportOrigins, RecordedOriginsOfTheSameNodesNameTheirLines) {
  TempDir tmp;
  const std::string origins = origins_of_small_graph(tmp, {"aten::add", "aten::relu", "aten::mul"});
  const json meta = import_small_graph_with(tmp, origins);
  EXPECT_EQ(meta["provenance"]["origins"], origins);
  ASSERT_EQ(meta["node_origins"].size(), 3u);
  EXPECT_EQ(meta["node_origins"][1]["kind"], "aten::relu");
  EXPECT_EQ(meta["node_origins"][1]["line"], 11);
  EXPECT_NE(read_text(tmp / "case/graph.ir").find("aten::relu(%3) # model.py:11:0 body (node 1)"), std::string::npos)
      << read_text(tmp / "case/graph.ir");
}

TEST(CliImportOrigins, OriginsOfOtherNodesAreNotUsedAndTheProvenanceSaysSo) {
  TempDir tmp;
  const std::string origins = origins_of_small_graph(tmp, {"aten::add", "aten::tanh", "aten::mul"});
  const json meta = import_small_graph_with(tmp, origins);
  EXPECT_EQ(meta["provenance"]["origins"],
            "not used: " + origins + " describes other nodes than the graph's 3 (3 nodes)");
  EXPECT_EQ(meta["node_origins"][1]["file"], "");
}

TEST(CliImportOrigins, AnOriginsFileThatIsNotJsonIsNamed) {
  TempDir tmp;
  const std::string origins = tmp / "origins.json";
  write_text(origins, "[{\"index\": 0,");
  Args args = import_args(kModels + "small_graph.ir", kModels + "small_graph.inputs.pt", tmp / "case");
  args.insert(args.end(), {"--origins", origins});
  expect_import_rejected(tmp, args, tmp / "case", origins);
}

// ================================================================================================
// 5. Bad input to `import`: exit 2, one error line naming the culprit, nothing left behind.

TEST(CliBadImport, MissingModelFileIsNamed) {
  TempDir tmp;
  const std::string model = tmp / "no_such_model.pt";
  expect_import_rejected(tmp, import_args(model, kModels + "chain100_scripted.inputs.pt", tmp / "case"), tmp / "case",
                         model);
}

TEST(CliBadImport, FileThatIsNeitherArchiveNorIrIsNamed) {
  TempDir tmp;
  const std::string text = tmp / "notes.txt";
  write_text(text, "just some text\n");
  expect_import_rejected(tmp, import_args(text, kModels + "small_graph.inputs.pt", tmp / "case"), tmp / "case", text);
}

TEST(CliBadImport, IrSyntaxErrorIsNamed) {
  TempDir tmp;
  const std::string ir = tmp / "broken.ir";
  write_text(ir, "graph(%x : Tensor):\n  %y : Tensor = aten::relu(%x\n  return (%y)\n");
  expect_import_rejected(tmp, import_spec_args(ir, "2x3:float32", tmp / "case"), tmp / "case", ir);
}

TEST(CliBadImport, MissingInputsFileIsNamed) {
  TempDir tmp;
  const std::string inputs = tmp / "no_such_inputs.pt";
  expect_import_rejected(tmp, import_args(kModels + "chain100_scripted.pt", inputs, tmp / "case"), tmp / "case",
                         inputs);
}

TEST(CliBadImport, LegacyTorchSaveInputsFileIsNamed) {
  TempDir tmp;
  const std::string inputs = kFixtures + "inputs_legacy.pt";
  expect_import_rejected(tmp, import_args(kModels + "chain100_scripted.pt", inputs, tmp / "case"), tmp / "case",
                         inputs);
}

TEST(CliBadImport, NonTorchInputsFilesAreNamed) {
  TempDir tmp;
  for (const std::string name : {"not_torch.pt", "zip_not_torch.pt"}) {
    SCOPED_TRACE(name);
    const std::string inputs = kFixtures + name;
    expect_import_rejected(tmp, import_args(kModels + "chain100_scripted.pt", inputs, tmp / "case"), tmp / "case",
                           inputs);
  }
}

TEST(CliBadImport, InputCountMismatchIsNamed) {
  TempDir tmp;
  const std::string inputs = kModels + "small_graph.inputs.pt";  // two tensors; chain100 takes one
  expect_import_rejected(tmp, import_args(kModels + "chain100_scripted.pt", inputs, tmp / "case"), tmp / "case",
                         inputs);
}

// Inputs of another dtype or shape than a traced model's: the model's own unoptimized run fails on
// them too, so the case is written as the model is (issue 42, point 3), failing as it does, and
// import says so, naming the file and the error.
TEST(CliImport, WrongDtypeAndShapeForATracedModelMakeACaseThatFailsAsTheModelDoes) {
  SKIP_WITHOUT_PYTHON_TORCH();
  TempDir tmp;
  const std::string f64 = tmp / "float64.pt", shape = tmp / "shape.pt";
  const Result py =
      run_cmd("/usr/bin/python3", {"-c",
                                   "import sys, torch\n"
                                   "torch.save((torch.zeros(1, 2, 3, 3, dtype=torch.float64),), sys.argv[1])\n"
                                   "torch.save((torch.zeros(1, 2, 4, 4),), sys.argv[2])\n",
                                   f64, shape});
  ASSERT_TRUE(py.exited && py.exit_code == 0) << py.describe();
  std::vector<Args> commands;
  for (const std::string& inputs : {f64, shape})
    commands.push_back(import_args(kModels + "conv_bn_relu_linear_traced.pt", inputs,
                                   tmp / ("case_" + fs::path(inputs).stem().string())));
  const std::vector<Result> results = tsrepro_all(commands, {tmp.path().string()});
  for (size_t i = 0; i < commands.size(); ++i) {
    SCOPED_TRACE(commands[i][3]);
    EXPECT_EQ(results[i].exit_code, 0) << results[i].describe();
    EXPECT_NE(results[i].out.find("note: the model's own unoptimized run fails on " + commands[i][3] +
                                  " as the case does: RuntimeError: "),
              std::string::npos)
        << results[i].describe();
    const std::string case_dir = commands[i][5];
    EXPECT_FALSE(read_case_json(case_dir)["provenance"].at("reference_fails").value("message", "").empty());
    expect_verdict(tsrepro({"run", case_dir, "--backend", "jit", "--json"}), 2, "invalid");
  }
}

TEST(CliBadImport, UnknownMethodIsNamed) {
  TempDir tmp;
  Args args = import_args(kModels + "chain100_scripted.pt", kModels + "chain100_scripted.inputs.pt", tmp / "case");
  args.insert(args.end(), {"--method", "no_such_method"});
  expect_import_rejected(tmp, args, tmp / "case", "no_such_method");
}

TEST(CliBadImport, ExistingOutputDirIsRefusedAndLeftUntouched) {
  TempDir tmp;
  const fs::path existing = tmp.path() / "case";
  fs::create_directory(existing);
  write_text(existing / "keep.txt", "mine");
  const std::set<std::string> before = list_dir(tmp.path());
  const Result r =
      tsrepro(import_args(kModels + "small_graph.ir", kModels + "small_graph.inputs.pt", existing.string()),
              {tmp.path().string()});
  expect_bad_input(r, existing.string());
  EXPECT_EQ(list_dir(existing), std::set<std::string>{"keep.txt"});
  EXPECT_EQ(read_text(existing / "keep.txt"), "mine");
  EXPECT_EQ(list_dir(tmp.path()), before);
}

TEST(CliBadImport, OutputDirOnReadOnlyFilesystemIsNamed) {
  TempDir tmp;
  const std::string out = "/proc/tsrepro-cli-test-dir/case";  // /proc refuses new entries, even to root
  const Result r =
      tsrepro(import_args(kModels + "small_graph.ir", kModels + "small_graph.inputs.pt", out), {tmp.path().string()});
  expect_bad_input(r, out);
  EXPECT_FALSE(fs::exists("/proc/tsrepro-cli-test-dir"));
  EXPECT_TRUE(list_dir(tmp.path()).empty()) << join(list_dir(tmp.path()));
}

TEST(CliBadImport, OutputDirUnderRegularFileIsNamed) {
  TempDir tmp;
  write_text(tmp.path() / "plain_file", "x");
  const std::string out = tmp / "plain_file/case";
  expect_import_rejected(tmp, import_args(kModels + "small_graph.ir", kModels + "small_graph.inputs.pt", out), out,
                         out);
  EXPECT_EQ(read_text(tmp.path() / "plain_file"), "x");
}

TEST(CliBadImport, OutputPathWithTrailingSlashDoesNotAbort) {
  // `-o DIR/` (shell completion adds the slash): either write the case at DIR or refuse cleanly;
  // never die on an uncaught exception or leave an empty DIR behind.
  TempDir tmp;
  const std::string out = tmp / "case/";
  const Result r =
      tsrepro(import_args(kModels + "small_graph.ir", kModels + "small_graph.inputs.pt", out), {tmp.path().string()});
  if (r.exited && r.exit_code == 0) {
    EXPECT_EQ(list_dir(tmp.path()), std::set<std::string>{"case"});
    EXPECT_EQ(list_dir(tmp.path() / "case"), (std::set<std::string>{"case.json", "graph.ir", "inputs.pt"}));
  } else {
    expect_bad_input(r, tmp / "case");
    EXPECT_TRUE(list_dir(tmp.path()).empty()) << join(list_dir(tmp.path()));
  }
}

TEST(CliBadImport, MissingOrConflictingOptionsAreUsageErrors) {
  TempDir tmp;
  const std::string ir = kModels + "small_graph.ir", inputs = kModels + "small_graph.inputs.pt", out = tmp / "case";
  struct Case {
    Args args;
    std::string mention;
  };
  const std::vector<Case> cases = {
      {{"import", ir, "--inputs", inputs}, "--output"},
      {{"import", ir, "-o", out}, "--input"},
      {{"import", ir, "--inputs", inputs, "--input-spec", "2x3:float32,2x3:float32", "-o", out}, "--input"},
      {{"run"}, "case"},
      {{}, "subcommand"},
  };
  std::vector<Args> commands;
  for (const Case& c : cases) commands.push_back(c.args);
  const std::vector<Result> results = tsrepro_all(commands, {tmp.path().string()});
  for (size_t i = 0; i < cases.size(); ++i) {
    const Result& r = results[i];
    SCOPED_TRACE(r.describe());
    EXPECT_TRUE(r.exited);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(cases[i].mention), std::string::npos) << "stderr should name " << cases[i].mention;
  }
  EXPECT_TRUE(list_dir(tmp.path()).empty()) << join(list_dir(tmp.path()));
}

TEST(CliBadImport, UnknownSubcommandIsNamed) {
  const Result r = tsrepro({"no-such-subcommand"});
  EXPECT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  EXPECT_NE(r.err.find("no-such-subcommand"), std::string::npos) << "stderr should name the unknown word\n"
                                                                 << r.describe();
}

// ================================================================================================
// 5b. Bad input to `run`.

class CliBadRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    small_.create({"import", kModels + "small_graph.ir", "--inputs", kModels + "small_graph.inputs.pt"});
  }
  static void TearDownTestSuite() { small_.destroy(); }
  void SetUp() override { ASSERT_TRUE(small_.ok()) << small_.import.describe(); }

  // Runs `tsrepro run CASE ARGS...` on the shared case and checks it is left unchanged.
  static Result run_on_case(const Args& extra) {
    const std::set<std::string> before = list_dir(small_.path);
    Args args{"run", small_.path};
    args.insert(args.end(), extra.begin(), extra.end());
    Result r = tsrepro(args);
    EXPECT_EQ(list_dir(small_.path), before) << "run changed the case directory";
    return r;
  }
  static SharedCase small_;
};
SharedCase CliBadRun::small_;

TEST_F(CliBadRun, UnknownBackendIsNamed) {
  expect_bad_input(run_on_case({"--backend", "bogus"}), "bogus");
  expect_bad_input(run_on_case({"--backend", "inject:bogus@aten::relu", "--json"}), "bogus");
  expect_bad_input(run_on_case({"--backend", "nnc:x"}), "nnc takes nothing after ':'");
  expect_bad_input(run_on_case({"--backend", "jit", "--seed", "99999999999999999999999"}), "--seed");
}

TEST_F(CliBadRun, UnknownDeviceIsNamed) {
  expect_bad_input(run_on_case({"--backend", "jit", "--device", "tpu"}), "--device");
}

TEST_F(CliBadRun, CudaDeviceWithoutCudaIsRefused) {
  const Result r = run_on_case({"--backend", "jit", "--device", "cuda", "--json"});
  if (r.exited && r.exit_code == 0 && json::accept(r.out) && json::parse(r.out).value("status", "") == "pass")
    GTEST_SKIP() << "CUDA is available here: the run passed on cuda";
  expect_bad_input(r, "cuda");
}

TEST_F(CliBadRun, NonPositiveTimeoutIsUsageError) {
  // A timeout of 0 or below cannot be honoured: it should be refused as bad usage, not reported
  // as a verdict about the reference.
  expect_bad_input(run_on_case({"--backend", "jit", "--timeout", "-1"}), "--timeout");
}

TEST(CliBadRunDir, DirectoryThatIsNotACaseIsNamed) {
  TempDir tmp;
  expect_bad_input(tsrepro({"run", tmp.path().string(), "--backend", "jit"}), "case.json");
  const std::string missing = tmp / "no_such_case";
  expect_bad_input(tsrepro({"run", missing, "--backend", "jit"}), missing);
  EXPECT_TRUE(list_dir(tmp.path()).empty()) << join(list_dir(tmp.path()));
}

TEST_F(CliBadRun, CorruptOrIncompleteCaseIsNamed) {
  TempDir tmp;
  const fs::path not_json = tmp.path() / "not_json", wrong_format = tmp.path() / "wrong_format";
  fs::create_directory(not_json);
  write_text(not_json / "case.json", "{not json");
  fs::create_directory(wrong_format);
  write_text(wrong_format / "case.json", R"({"format": "something-else"})");
  const fs::path no_graph = tmp.path() / "no_graph", no_inputs = tmp.path() / "no_inputs";
  fs::copy(small_.path, no_graph);
  fs::copy(small_.path, no_inputs);
  fs::remove(no_graph / "graph.ir");
  fs::remove(no_inputs / "inputs.pt");
  const std::vector<Result> results = tsrepro_all({{"run", not_json.string(), "--backend", "jit"},
                                                   {"run", wrong_format.string(), "--backend", "jit"},
                                                   {"run", no_graph.string(), "--backend", "jit"},
                                                   {"run", no_inputs.string(), "--backend", "jit"}});
  expect_bad_input(results[0], (not_json / "case.json").string());
  expect_bad_input(results[1], (wrong_format / "case.json").string());
  expect_bad_input(results[2], (no_graph / "graph.ir").string());
  expect_bad_input(results[3], (no_inputs / "inputs.pt").string());

  // case.json's version: a whole number this tsrepro knows, never rounded or wrapped.
  const json good = json::parse(read_text(small_.path + "/case.json"));
  for (const char* version : {"1.5", "0", "-1", "9223372036854775808", "18446744073709551616", "1e308", "2", "\"1\""}) {
    const fs::path dir = tmp.path() / ("version_" + std::to_string(std::hash<std::string>()(version)));
    fs::copy(small_.path, dir);
    json meta = good;
    meta["version"] = json::parse(version);
    write_text(dir / "case.json", meta.dump());
    const Result r = tsrepro({"run", dir.string(), "--backend", "jit"});
    expect_bad_input(r, "case format version");
  }
}

// ================================================================================================
// 6. --version and --help.

TEST(CliInfo, VersionNamesTsreproAndLibtorch) {
  const Result r = tsrepro({"--version"});
  EXPECT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(std::regex_match(
      r.out, std::regex(R"(tsrepro [0-9]+\.[0-9]+\.[0-9]+\S* \(libtorch [0-9]+\.[0-9]+\.[0-9]+\S*\)\n)")))
      << r.describe();
}

TEST(CliInfo, HelpExitsZeroForProgramAndEverySubcommand) {
  const std::vector<Args> commands = {{"--help"}, {"import", "--help"}, {"run", "--help"}};
  const std::vector<Result> results = tsrepro_all(commands);
  for (const Result& r : results) {
    SCOPED_TRACE(r.describe());
    EXPECT_TRUE(r.exited);
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.out.find("Usage:"), std::string::npos);
  }
  // The top-level help lists every subcommand; each subcommand's help lists its options.
  for (const char* sub : {"import", "run"}) EXPECT_NE(results[0].out.find(sub), std::string::npos) << sub;
  for (const char* opt : {"--inputs", "--input-spec", "--output", "--method"})
    EXPECT_NE(results[1].out.find(opt), std::string::npos) << opt;
  for (const char* opt :
       {"--backend", "--ref", "--timeout", "--json", "--fake-inputs", "--seed", "--device", "--backend-opt",
        "--explain-backend", "--tol", "--cos", "--equal-nan", "--no-exact-dtype", "--ignore-non-fp", "--backward"})
    EXPECT_NE(results[2].out.find(opt), std::string::npos) << opt;
}

}  // namespace

// `tsrepro run --save-repro`: a failure is recorded in case.json and its reproducers are written
// beside the case; a passing run leaves the case as it was.
TEST(CliRunSaveRepro, WritesTheReproducersOnlyWhenItFails) {
  TempDir tmp;
  const std::string case_dir = tmp / "case";
  ASSERT_EQ(tsrepro(import_args(kModels + "chain100_scripted.pt", kModels + "chain100_scripted.inputs.pt", case_dir))
                .exit_code,
            0);
  const Result passing = tsrepro({"run", case_dir, "--backend", "jit", "--save-repro"});
  EXPECT_EQ(passing.exit_code, 0) << passing.describe();
  EXPECT_FALSE(fs::exists(case_dir + "/repro.py"));

  const Result failing =
      tsrepro({"run", case_dir, "--backend", "inject:runtime-error@aten::relu", "--save-repro", "--json"});
  const json v = expect_verdict(failing, 1, "exception");
  EXPECT_EQ(v.value("repro_py", ""), case_dir + "/repro.py");
  for (const char* file : {"repro.py", "repro.cpp", "CMakeLists.txt", "graph.ir", "inputs.pt"})
    EXPECT_TRUE(fs::exists(case_dir + "/" + file)) << file;
  EXPECT_EQ(read_case_json(case_dir)["expected_failure"]["signature"], v["signature"]);
  SKIP_WITHOUT_PYTHON_TORCH();
  const Result py = run_cmd("/usr/bin/python3", {case_dir + "/repro.py"}, {"", 300});
  EXPECT_EQ(py.exit_code, 1) << py.describe();
}

// Issue 42: a case is judged as it was recorded. `run CASE` with no flags takes case.json's RunSpec
// (backend, options, tolerance, repeat) and exits like its verdict; a flag given replaces its field
// alone and says so; a case that records none needs --backend.
TEST(CliRunRecorded, ACaseIsJudgedAsItWasRecordedAndAFlagOverridesItsFieldAlone) {
  TempDir tmp;
  const std::string case_dir = tmp / "case";
  ASSERT_EQ(tsrepro(import_args(kModels + "chain100_scripted.pt", kModels + "chain100_scripted.inputs.pt", case_dir))
                .exit_code,
            0);
  expect_bad_input(tsrepro({"run", case_dir}), "--backend: required, since " + case_dir + "/case.json records no run");
  const std::string backend = "inject:accuracy@aten::relu";
  ASSERT_EQ(
      tsrepro({"run", case_dir, "--backend", backend, "--tol", "0.01", "--repeat", "2", "--save-repro"}).exit_code, 1);

  const Result recorded = tsrepro({"run", case_dir, "--json"});
  const json v = expect_verdict(recorded, 1, "accuracy");
  EXPECT_EQ(v.value("backend", ""), backend);
  EXPECT_EQ(v.value("runs", 0), 2) << "the recorded --repeat";
  EXPECT_EQ(recorded.err, "") << "nothing overridden, nothing said";

  const Result tol = tsrepro({"run", case_dir, "--tol", "0.5", "--json"});
  expect_verdict(tol, 1, "accuracy");
  EXPECT_NE(tol.err.find("note: --tol 0.5 (recorded: 0.01) overrides how " + case_dir + "/case.json records"),
            std::string::npos)
      << tol.describe();
  EXPECT_EQ(tol.stdout_json().value("runs", 0), 2) << "the other fields stay as recorded";

  const Result other = tsrepro({"run", case_dir, "--backend", "jit"});
  EXPECT_EQ(other.exit_code, 0) << other.describe();
  EXPECT_NE(other.err.find("--backend jit (recorded: " + backend + ")"), std::string::npos) << other.describe();
}

// `tsrepro run --repeat N`: every run counted, the rate reported and recorded; repro.py then runs
// the case N times, each in a fresh process, and prints the rate.
TEST(CliRunRepeat, CountsEveryRunRecordsTheRateAndReproPyRepeats) {
  TempDir tmp;
  const std::string case_dir = tmp / "case";
  ASSERT_EQ(tsrepro(import_args(kModels + "chain100_scripted.pt", kModels + "chain100_scripted.inputs.pt", case_dir))
                .exit_code,
            0);
  const Result passing = tsrepro({"run", case_dir, "--backend", "jit", "--repeat", "2", "--json"});
  const json p = expect_verdict(passing, 0, "pass");
  EXPECT_EQ(p.value("runs", 0), 2);
  EXPECT_EQ(p.value("failed_runs", -1), 0);

  const Result refused = tsrepro({"run", case_dir, "--backend", "jit", "--repeat", "2", "--min-fails", "3"});
  EXPECT_EQ(refused.exit_code, 2) << refused.describe();
  EXPECT_NE(refused.err.find("--min-fails 3"), std::string::npos) << refused.describe();

  const Result failing =
      tsrepro({"run", case_dir, "--backend", "inject:accuracy@aten::relu", "--repeat", "3", "--save-repro", "--json"});
  const json v = expect_verdict(failing, 1, "accuracy");
  EXPECT_EQ(v.value("runs", 0), 3);
  EXPECT_EQ(v.value("failed_runs", 0), 3);
  EXPECT_EQ(v["failures"].value(v.value("signature", ""), 0), 3) << v.dump();
  const json expected = read_case_json(case_dir)["expected_failure"];
  EXPECT_EQ(expected.value("runs", 0), 3);
  EXPECT_EQ(expected.value("failed_runs", 0), 3);
  EXPECT_EQ(expected["run"].value("repeat", 0), 3);

  const Result text = tsrepro({"run", case_dir, "--backend", "inject:accuracy@aten::relu", "--repeat", "2"});
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_NE(text.out.find("2 of 2 runs failed: accuracy:float32 (2)"), std::string::npos) << text.describe();
  SKIP_WITHOUT_PYTHON_TORCH();
  const Result py = run_cmd("/usr/bin/python3", {case_dir + "/repro.py"}, {"", 300});
  EXPECT_EQ(py.exit_code, 1) << py.describe();
  EXPECT_NE(py.out.find("failed 3 of 3 runs (tsrepro saw 3 of 3)"), std::string::npos) << py.describe();
}

// A flaky failure (inject:flaky-accuracy fails every second evaluation of a worker): its rate is
// counted, --min-fails decides, and repro.py's repeated runs show the same rate.
TEST(CliRunRepeat, AFlakyFailureGetsItsRateAndReproPyShowsIt) {
  TempDir tmp;
  const std::string case_dir = tmp / "case";
  ASSERT_EQ(tsrepro(import_args(kModels + "chain100_scripted.pt", kModels + "chain100_scripted.inputs.pt", case_dir))
                .exit_code,
            0);
  const std::string flaky = "inject:flaky-accuracy@aten::relu";
  const Result rare = tsrepro({"run", case_dir, "--backend", flaky, "--repeat", "4", "--min-fails", "3", "--json"});
  const json r = expect_verdict(rare, 0, "accuracy");  // 2 of 4 is fewer than 3
  EXPECT_EQ(r.value("runs", 0), 4);
  EXPECT_EQ(r.value("failed_runs", 0), 2);

  const Result saved = tsrepro({"run", case_dir, "--backend", flaky, "--repeat", "4", "--save-repro", "--json"});
  expect_verdict(saved, 1, "accuracy");
  const json expected = read_case_json(case_dir)["expected_failure"];
  EXPECT_EQ(expected.value("runs", 0), 4);
  EXPECT_EQ(expected.value("failed_runs", 0), 2);
  const std::string repro = read_text(case_dir + "/repro.py");
  EXPECT_NE(repro.find("flaky: seen in 2 of 4 runs"), std::string::npos) << repro;
  SKIP_WITHOUT_PYTHON_TORCH();
  const Result py = run_cmd("/usr/bin/python3", {case_dir + "/repro.py"}, {"", 300});
  EXPECT_EQ(py.exit_code, 1) << py.describe();
  EXPECT_NE(py.out.find("failed 2 of 4 runs (tsrepro saw 2 of 4)"), std::string::npos) << py.describe();
}
