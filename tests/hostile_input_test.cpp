// Issue 31: hostile and broken input. Each file tests/fixtures/hostile/make_hostile.py writes is
// one finding: before its fix tsrepro crashed on it (SIGSEGV), ran for minutes, accepted it, or
// wrote IR text it could not read back. Each must now end in one clear line and exit 2, or
// (the valid ones) work.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "tests/support/expectations.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/process.h"

namespace tsrepro_test {
namespace {

// The inputs are made once per build by ctest's hostile.make (tests/CMakeLists.txt), which every
// test here requires: making them costs a Python start and a traced model, seconds per test. Run by
// hand without it, a test makes its own.
const fs::path kMadeByCtest = fs::path(TSREPRO_BINARY_DIR) / "hostile-inputs";

class HostileInput : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    if (fs::exists(kMadeByCtest / "complete")) {
      inputs_ = kMadeByCtest;
    } else {
      inputs_ = dir_->path();
      made_ = run_cmd(kPython, {kFixtures + "hostile/make_hostile.py", inputs_.string()}, {"", 300});
    }
    write_text(dir_->path() / "two_inputs.ir",
               "graph(%x : Tensor, %y : Tensor[]):\n  %r : Tensor = aten::relu(%x)\n  return (%r)\n");
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    SKIP_WITHOUT_PYTHON_TORCH();
    ASSERT_TRUE(made_.exited && made_.exit_code == 0) << made_.describe();
  }
  // A made input, or (two_inputs.ir and what a test writes) one of this test's own directory.
  static std::string file(const std::string& name) {
    return fs::exists(dir_->path() / name) ? (dir_->path() / name).string() : (inputs_ / name).string();
  }

  // `tsrepro import SOURCE --inputs INPUTS` must be refused naming `mention`, leaving no case.
  static void expect_import_refused(const std::string& source, const std::string& inputs, const std::string& mention,
                                    const Args& extra = {}) {
    TempDir out;
    Args args = import_args(source, inputs, out / "case");
    args.insert(args.end(), extra.begin(), extra.end());
    expect_import_rejected(out, args, out / "case", mention);
  }

  static TempDir* dir_;     // this test's own files
  static fs::path inputs_;  // the made inputs: ctest's, or made into dir_
  static Result made_;      // exited with 0 unless this test made them and that failed
};
TempDir* HostileInput::dir_ = nullptr;
fs::path HostileInput::inputs_;
Result HostileInput::made_ = [] {
  Result fine;  // nothing to make: ctest made them
  fine.exited = true;
  fine.exit_code = 0;
  return fine;
}();

TEST_F(HostileInput, InputsPtTensorsReachingPastTheirStorageAreRefused) {
  // Before: an out-of-bounds read (SIGSEGV) for the offset, exit 0 for the other three.
  const std::string graph = file("two_inputs.ir");
  expect_import_refused(graph, file("sizes_beyond_storage.pt"), "reaches byte 4000 of a storage of 16 bytes");
  expect_import_refused(graph, file("storage_shorter_than_numel.pt"), "reaches byte 20 of a storage of 16 bytes");
  expect_import_refused(graph, file("strides_2_62.pt"), "the arithmetic overflows");
  expect_import_refused(graph, file("offset_beyond_storage.pt"), "storage offset 1099511627776");
  expect_import_refused(graph, file("record_shorter_than_storage.pt"), "over the record data/0 of 16 bytes");
  // The same tensor within its storage is read.
  TempDir out;
  const Result sane = tsrepro(import_args(graph, file("sanity_tensor.pt"), out / "case"));
  EXPECT_EQ(sane.exit_code, 0) << sane.describe();
}

TEST_F(HostileInput, DeepOrCyclicContainersInInputsPtAreRefused) {
  // Before: lists 10^6 deep overflowed the stack being freed, tuples 10^5 deep on import.
  const std::string graph = file("two_inputs.ir");
  expect_import_refused(graph, file("nested_lists.pt"), "nested deeper than tsrepro's limit of 256");
  expect_import_refused(graph, file("nested_tuples.pt"), "nested deeper than tsrepro's limit of 256");
  expect_import_refused(graph, file("self_list.pt"), "holds itself");
}

TEST_F(HostileInput, ModelWithATruncatedTensorRecordIsRefused) {
  // Before: accepted with exit 0, its parameter read past the record's end.
  expect_import_refused(file("truncated_record.pt"), file("scale_inputs.pt"), "truncated");
  TempDir out;
  const Result whole = tsrepro(import_args(file("scale.pt"), file("scale_inputs.pt"), out / "case"));
  EXPECT_EQ(whole.exit_code, 0) << whole.describe();
}

TEST_F(HostileInput, GraphIrPastTheLimitsIsRefusedNamingTheLimit) {
  // Before: a 1 MB value name overflowed the stack in std::regex.
  expect_import_refused(file("long_name.ir"), file("scale_inputs.pt"), "over tsrepro's limit of 4096");
  expect_import_refused(file("nested_if_1000.ir"), file("scale_inputs.pt"),
                        "nested deeper than tsrepro's limit of 256");
  std::string many = "graph(%x : Tensor):\n";
  for (int i = 0; i <= 50000; ++i) many += "  %k" + std::to_string(i) + " : int = prim::Constant[value=1]()\n";
  write_text(dir_->path() / "constants_50001.ir", many + "  return (%x)\n");
  expect_import_refused(file("constants_50001.ir"), file("scale_inputs.pt"),
                        "50001 prim::Constant nodes, over tsrepro's limit of 50000");
}

TEST_F(HostileInput, NestedIfsAndUnusedConstantsImportInLinearTime) {
  // Before: depth 30 took over a minute (the write analysis visited each block twice per level,
  // 2^30 visits); 25,000 unused constants took 9 s in libtorch's interpreter construction.
  TempDir out;
  const std::string inputs = out / "inputs.pt";
  ASSERT_EQ(run_cmd(kPython, {"-c", "import torch; torch.save((torch.ones(2), True), '" + inputs + "')"}).exit_code, 0);
  const Result nested = tsrepro(import_args(file("nested_if_30.ir"), inputs, out / "nested"), {"", 60});
  EXPECT_EQ(nested.exit_code, 0) << nested.describe();
  EXPECT_FALSE(nested.watchdog_fired);
  const Result constants =
      tsrepro(import_args(file("unused_constants_25k.ir"), file("scale_inputs.pt"), out / "constants"), {"", 60});
  EXPECT_EQ(constants.exit_code, 0) << constants.describe();
  // Nothing reads them: they are not in the case.
  EXPECT_EQ(read_text(out / "constants/graph.ir").find("prim::Constant"), std::string::npos);
}

TEST_F(HostileInput, EndlessLoopInImportsCheckRunObeysTimeout) {
  // Before: import's check run had no --timeout and waited 600 s.
  TempDir out;
  const std::string inputs = out / "inputs.pt";
  ASSERT_EQ(run_cmd(kPython, {"-c", "import torch; torch.save((torch.ones(2),), '" + inputs + "')"}).exit_code, 0);
  Args args = import_args(file("infinite_loop.ir"), inputs, out / "case");
  args.insert(args.end(), {"--timeout", "3"});
  const Result r = tsrepro(args, {"", 60});
  expect_bad_input(r, "did not finish within --timeout 3 s");
  EXPECT_FALSE(std::filesystem::exists(out / "case"));
}

TEST_F(HostileInput, DeepProvenanceAndTooManyEntriesInCaseJsonAreRefused) {
  // Before: a provenance nested 100,000 deep overflowed the stack in case_from_json.
  TempDir tmp;
  ASSERT_EQ(tsrepro(import_args(file("scale.pt"), file("scale_inputs.pt"), tmp / "good")).exit_code, 0);
  const std::string good = read_text(tmp / "good/case.json");
  const std::string deep = tmp / "deep", many = tmp / "many";
  std::filesystem::copy(tmp / "good", deep);
  std::filesystem::copy(tmp / "good", many);
  const size_t at = good.find("\"provenance\": {");
  ASSERT_NE(at, std::string::npos) << good;
  write_text(deep + "/case.json", good.substr(0, at) +
                                      "\"provenance\": {\"x\": " + read_text(file("deep_provenance.json.fragment")) +
                                      "," + good.substr(at + std::string("\"provenance\": {").size()));
  std::string entries = "[0";
  for (int i = 0; i < 1000000; ++i) entries += ",0";
  write_text(many + "/case.json", good.substr(0, good.rfind('}')) + ", \"node_origins\": " + entries + "]}");
  expect_bad_input(tsrepro({"run", deep, "--backend", "jit"}), "nested deeper than tsrepro's limit of 256");
  expect_bad_input(tsrepro({"run", many, "--backend", "jit"}), "1000001 entries, over tsrepro's limit of 1000000");
}

TEST_F(HostileInput, TenMegabytesOfInputEntriesAreRefusedBeforeTheyAreRead) {
  // Before (issue 42): run and minify built the whole file before finding that its inputs do not
  // fit the graph: over 60 s for 10 MB. One scan, building nothing, counts them first.
  TempDir tmp;
  ASSERT_EQ(tsrepro(import_args(file("scale.pt"), file("scale_inputs.pt"), tmp / "case")).exit_code, 0);
  nlohmann::json meta = nlohmann::json::parse(read_text(tmp / "case/case.json"));
  const nlohmann::json entry = meta["inputs"][0];
  while (meta["inputs"].size() < 64000) meta["inputs"].push_back(entry);
  const std::string text = meta.dump();
  ASSERT_GT(text.size(), 10u << 20);
  write_text(tmp / "case/case.json", text);
  for (const char* command : {"run", "minify"}) {
    Args args = {command, tmp / "case", "--backend", "jit"};
    if (std::string(command) == "minify") args.insert(args.end(), {"-o", tmp / "out"});
    expect_bad_input(tsrepro(args, {"", 60}), "lists 64000 inputs but graph.ir takes 2");
  }
}

TEST_F(HostileInput, SourceFileNameWithNewlineInsideBlocksImportsAndRuns) {
  // Before (issue 42): torch prints a nested node's location even when asked for none, so the
  // name's newline reached the IR a worker parses: "candidate graph: IR syntax error: expected
  // ident but found 'dedent'" at import.
  TempDir tmp;
  const Result imported =
      tsrepro(import_args(file("hostile_filename_blocks.pt"), file("hostile_filename_blocks_inputs.pt"), tmp / "case"));
  ASSERT_EQ(imported.exit_code, 0) << imported.describe();
  expect_pass(tsrepro({"run", tmp / "case", "--backend", "jit", "--json"}));
}

TEST_F(HostileInput, SourceFileNameWithNewlineAndQuotesRoundTrips) {
  // Before: graph.ir carried the newline raw, and import failed ("expected ident but found
  // 'dedent'"); through case.json's node_origins, run --save-repro wrote such a graph.ir and
  // the next minify failed.
  TempDir tmp;
  const std::string marker = "/tmp/tsrepro-issue31-pwned";
  std::filesystem::remove(marker);
  const std::string case_dir = tmp / "case", out = tmp / "min";
  const Result imported =
      tsrepro(import_args(file("hostile_filename.pt"), file("hostile_filename_inputs.pt"), case_dir));
  ASSERT_EQ(imported.exit_code, 0) << imported.describe();
  const std::string ir = read_text(case_dir + "/graph.ir");
  EXPECT_NE(ir.find("# evil\\x0aname\"\\\\ '''"), std::string::npos) << ir;
  const std::string backend = "inject:accuracy@aten::relu";
  const Result saved = tsrepro({"run", case_dir, "--backend", backend, "--save-repro"});
  EXPECT_EQ(saved.exit_code, 1) << saved.describe();
  const Result minified = tsrepro({"minify", case_dir, "--backend", backend, "-o", out});
  ASSERT_EQ(minified.exit_code, 0) << minified.describe();
  EXPECT_EQ(tsrepro({"run", out + "/minified", "--backend", backend}).exit_code, 1);
  const Result report = tsrepro({"report", out});
  EXPECT_EQ(report.exit_code, 0) << report.describe();
  // Each file that carries the name reads back in its own language.
  for (const std::string& repro : {case_dir + "/repro.py", out + "/minified/repro.py"}) {
    const Result compiled = run_cmd(kPython, {"-m", "py_compile", repro});
    EXPECT_EQ(compiled.exit_code, 0) << compiled.describe();
    EXPECT_EQ(run_cmd(kPython, {repro}).exit_code, 1) << repro;
  }
  const Result syntax = run_cmd("/usr/bin/g++", {"-std=c++17", "-fsyntax-only", "-I/usr/include/torch/csrc/api/include",
                                                 out + "/minified/repro.cpp"});
  EXPECT_EQ(syntax.exit_code, 0) << syntax.describe();
  EXPECT_FALSE(std::filesystem::exists(marker)) << "a name's $(...) ran";
}

TEST_F(HostileInput, ErrorLinesAreOneBoundedLineWithControlBytesEscaped) {
  // Before: newlines, ESC and invalid UTF-8 were echoed raw, and a 100,000-character --backend
  // was echoed whole.
  TempDir tmp;
  ASSERT_EQ(tsrepro(import_args(file("scale.pt"), file("scale_inputs.pt"), tmp / "case")).exit_code, 0);
  const std::string case_dir = tmp / "case";
  const std::string hostile = std::string("two\nlines \x1b[31mred\xff\xfe");
  const std::vector<Result> results = {
      tsrepro({"run", case_dir, "--backend", hostile}),
      tsrepro({"run", case_dir + hostile, "--backend", "jit"}),
      tsrepro({"run", case_dir, "--backend", std::string(100000, 'a')}),
      tsrepro({"run", case_dir, "--backend", "jit", "--timeout", std::string(10000, '9') + "\n"}),
  };
  for (const Result& r : results) {
    expect_bad_input(r, "tsrepro: error: ");
    EXPECT_LT(r.err.size(), 1100u) << r.err.substr(0, 200);
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\xff'), std::string::npos) << r.err;
  }
  EXPECT_NE(results[0].err.find("two\\nlines \\x1b[31mred\\xff\\xfe"), std::string::npos) << results[0].err;
  EXPECT_NE(results[2].err.find("bytes cut"), std::string::npos) << results[2].err;
}

TEST_F(HostileInput, FailedMinifyOfFakeInputsLeavesNothing) {
  // Before: an unknown dtype (qint4) in a fake-input case failed mid-minify, exit 2, and left
  // an empty OUT/checkpoints/.
  TempDir tmp;
  const std::string case_dir = tmp / "case", out = tmp / "out";
  ASSERT_EQ(tsrepro(import_spec_args(kModels + "small_graph.ir", "2:float32,2:float32", case_dir)).exit_code, 0);
  std::string meta = read_text(case_dir + "/case.json");
  for (size_t at = meta.find("\"float32\""); at != std::string::npos; at = meta.find("\"float32\""))
    meta.replace(at, 9, "\"qint4\"");
  write_text(case_dir + "/case.json", meta);
  expect_bad_input(tsrepro({"minify", case_dir, "--backend", "jit", "-o", out}), "unknown dtype 'qint4'");
  EXPECT_FALSE(std::filesystem::exists(out)) << join(list_dir(tmp.path()));
}

TEST_F(HostileInput, InputSpecRangeMustHaveFiniteEnds) {
  TempDir tmp;
  for (const char* spec : {"1x2x3x3:float32[nan,inf)", "2:float32[-inf,0)", "2:float32[0,nan]"})
    expect_import_rejected(tmp, import_spec_args(kModels + "small_graph.ir", spec, tmp / "case"), tmp / "case",
                           "must have finite ends");
}

}  // namespace
}  // namespace tsrepro_test
