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

}  // namespace
}  // namespace tsrepro_test
