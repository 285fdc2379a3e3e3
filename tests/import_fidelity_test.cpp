// Import is faithful (issue 42): a case is judged as its model is. The property test generates
// small scripted and traced modules (tests/fixtures/fidelity/make_modules.py: Python numbers of
// every type, typed and Optional scalar arguments, in-place ops, buffers written in forward) and
// imports each with --verify under every backend that has public calls on a module: the saved
// model through torch.jit.load and those calls, the case through tsrepro, must give the same
// verdict and the same outputs. TSREPRO_FIDELITY_SEED and TSREPRO_FIDELITY_COUNT draw others.

#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/expectations.h"

namespace tsrepro_test {
namespace {

const char* const kVerifiedBackends = "eager,jit,nnc,ofi";

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

TEST(ImportFidelity, GeneratedModulesAreJudgedAsTheModelIs) {
  SKIP_WITHOUT_PYTHON_TORCH();
  TempDir tmp;
  const std::string seed = env_or("TSREPRO_FIDELITY_SEED", "1"), count = env_or("TSREPRO_FIDELITY_COUNT", "16");
  const Result made = run_cmd(kPython, {source_path("tests/fixtures/fidelity/make_modules.py"), seed, count, tmp / "m"},
                              {"", 300});
  ASSERT_EQ(made.exit_code, 0) << made.describe();
  const json modules = json::parse(read_text(tmp / "m/modules.json"));
  std::vector<Args> imports;
  for (size_t k = 0; k < modules.size(); ++k)
    imports.push_back({"import", modules[k]["model"], "--inputs", modules[k]["inputs"], "-o",
                       tmp / ("case" + std::to_string(k)), "--verify", kVerifiedBackends});
  const std::vector<Result> results = tsrepro_all(imports, {"", 600});
  for (size_t k = 0; k < results.size(); ++k) {
    const Result& r = results[k];
    const std::string source = read_text(modules[k]["source"].get<std::string>());
    EXPECT_EQ(r.exit_code, 0) << "seed " << seed << ", module " << k << ":\n" << source << r.describe();
    // One line per backend, each saying the two agree.
    size_t agreed = 0;
    for (size_t at = r.out.find("the case is judged as the model is"); at != std::string::npos;
         at = r.out.find("the case is judged as the model is", at + 1))
      ++agreed;
    EXPECT_EQ(agreed, 4u) << source << r.describe();
  }
}

// A method's graph is inlined as written (issue 53): its optimized graph has been through
// libtorch's peephole, which drops the `* 1` of `(x > 0) * 1` and returns bool where the model,
// run unoptimized by torch.jit.load, returns int64.
TEST(ImportFidelity, AMethodIsInlinedAsWrittenNotAsOptimized) {
  SKIP_WITHOUT_PYTHON_TORCH();
  TempDir tmp;
  const Result made = run_cmd(kPython, {source_path("tests/fixtures/fidelity/method_bool_mul.py"), tmp / "m"});
  ASSERT_EQ(made.exit_code, 0) << made.describe();
  const Result r = tsrepro({"import", tmp / "m/method_bool_mul.pt", "--inputs", tmp / "m/method_bool_mul.inputs.pt",
                            "-o", tmp / "case", "--verify", "eager"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("verify eager: the case is judged as the model is: pass"), std::string::npos) << r.out;
  EXPECT_NE(read_text(tmp / "case/graph.ir").find("aten::mul"), std::string::npos) << read_text(tmp / "case/graph.ir");
}

// A traced Python float is a number again (issue 53): eager and every stock backend give float32 for
// int8 + 1.5 and bool * -2.0, and so does the case's reference, so no backend is judged wrong.
TEST(ImportFidelity, ATracedPythonFloatMeansWhatEagerMeans) {
  SKIP_WITHOUT_PYTHON_TORCH();
  TempDir tmp;
  const Result made = run_cmd(kPython, {source_path("tests/fixtures/fidelity/traced_python_numbers.py"), tmp / "m"});
  ASSERT_EQ(made.exit_code, 0) << made.describe();
  for (const std::string name : {"int8_add_float", "bool_mul_float"}) {
    const Result r = tsrepro({"import", tmp / ("m/" + name + ".pt"), "--inputs", tmp / ("m/" + name + ".inputs.pt"),
                              "-o", tmp / name, "--verify", kVerifiedBackends});
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.describe();
    for (const char* backend : {"eager", "jit", "nnc", "ofi"})
      EXPECT_NE(r.out.find("verify " + std::string(backend) + ": the case is judged as the model is: pass"),
                std::string::npos)
          << name << ": " << r.out;
    // The number is a Scalar argument of the op, as the trace had it, not a tensor input.
    EXPECT_NE(read_text(tmp / (name + "/graph.ir")).find("float = prim::Constant"), std::string::npos)
        << read_text(tmp / (name + "/graph.ir"));
  }
}

// `with torch.jit.strict_fusion():` keeps its check (issue 53): stock's profiling executor raises
// "Found unfused operators" for what its fusers leave inside the block, and so does the case under
// every TorchScript backend (--verify compares each with the saved model's own calls). Under nnc the
// minify keeps the block and the op NNC cannot fuse, and its repro.py, run by stock PyTorch,
// raises as the model does.
TEST(ImportFidelity, AStrictFusionBlockKeepsItsCheck) {
  SKIP_WITHOUT_PYTHON_TORCH();
  TempDir tmp;
  const Result made = run_cmd(kPython, {source_path("tests/fixtures/fidelity/strict_fusion.py"), tmp / "m"});
  ASSERT_EQ(made.exit_code, 0) << made.describe();
  const Result imported = tsrepro({"import", tmp / "m/strict_fusion.pt", "--inputs",
                                   tmp / "m/strict_fusion.inputs.pt", "-o", tmp / "case", "--verify", kVerifiedBackends});
  ASSERT_EQ(imported.exit_code, 0) << imported.describe();
  for (const char* backend : {"eager", "jit", "nnc", "ofi"})
    EXPECT_NE(imported.out.find("verify " + std::string(backend) + ": the case is judged as the model is"),
              std::string::npos)
        << imported.out;
  const std::string ir = read_text(tmp / "case/graph.ir");
  EXPECT_NE(ir.find("prim::Constant[value=\"torch.jit.strict_fusion\"]"), std::string::npos) << ir;
  EXPECT_NE(ir.find("prim::Enter"), std::string::npos) << ir;

  const Result ran = tsrepro({"run", tmp / "case", "--backend", "nnc"});
  EXPECT_EQ(ran.exit_code, 1) << ran.describe();
  EXPECT_NE(ran.out.find("Found unfused operators"), std::string::npos) << ran.describe();

  const Result minified = tsrepro({"minify", tmp / "case", "--backend", "nnc", "-o", tmp / "out"});
  ASSERT_EQ(minified.exit_code, 0) << minified.describe();
  const std::string small = read_text(tmp / "out/minified/graph.ir");
  for (const char* kept : {"prim::Enter", "aten::mm", "prim::Exit"})
    EXPECT_NE(small.find(kept), std::string::npos) << kept << " in\n" << small;
  for (const char* cut : {"aten::relu", "aten::add", "aten::mul"})
    EXPECT_EQ(small.find(cut), std::string::npos) << cut << " in\n" << small;
  const std::string repro_py = read_text(tmp / "out/minified/repro.py");
  EXPECT_NE(repro_py.find("with torch.jit.strict_fusion():"), std::string::npos) << repro_py;
  const Result repro = run_cmd(kPython, {tmp / "out/minified/repro.py"});
  EXPECT_EQ(repro.exit_code, 1) << repro.describe();
  EXPECT_NE(repro.out.find("Found unfused operators"), std::string::npos) << repro.describe();
}

}  // namespace
}  // namespace tsrepro_test
