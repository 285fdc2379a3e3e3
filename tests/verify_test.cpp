// import --verify's comparison (runner/import/verify.h) through real workers: a case agrees with
// its own model under every backend with public calls, and a model that computes otherwise is
// named as the first difference (here: the case of an eval-mode model held against the same
// architecture left in training mode, whose BatchNorm uses the batch's statistics).

#include <gtest/gtest.h>

#include "runner/import/import.h"
#include "runner/import/verify.h"
#include "runner/worker/worker_client.h"
#include "tests/support/cases.h"
#include "tests/support/paths.h"

namespace tsrepro {
namespace {

using testing::model_path;

Case eval_mode_case() {
  return import_case({model_path("conv_bn_relu_linear_scripted.pt"), "forward",
                      model_path("conv_bn_relu_linear_scripted.inputs.pt"), ""});
}

TEST(ImportVerify, ACaseAgreesWithItsOwnModel) {
  RunnerProcess runner(std::string(TSREPRO_BINARY_DIR) + "/tsrepro-runner");
  const Case c = eval_mode_case();
  const auto checks = verify_case_against_model(c, model_path("conv_bn_relu_linear_scripted.pt"),
                                                {"eager", "jit", "ofi"}, RunSpec{}, runner);
  ASSERT_EQ(checks.size(), 3u);
  for (const FidelityCheck& check : checks) {
    EXPECT_EQ(check.difference, "") << check.backend;
    EXPECT_EQ(check.model.status, check.case_side.status) << check.backend;
  }
}

TEST(ImportVerify, AModelThatComputesOtherwiseIsTheFirstDifference) {
  RunnerProcess runner(std::string(TSREPRO_BINARY_DIR) + "/tsrepro-runner");
  const Case c = eval_mode_case();
  const auto checks =
      verify_case_against_model(c, model_path("conv_bn_train_scripted.pt"), {"jit"}, RunSpec{}, runner);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_NE(checks[0].difference.find("the reference (eager) differs: output 0"), std::string::npos)
      << checks[0].difference;
}

TEST(ImportVerify, TheModelsOwnReferenceRun) {
  RunnerProcess runner(std::string(TSREPRO_BINARY_DIR) + "/tsrepro-runner");
  const Verdict v =
      model_reference_verdict(eval_mode_case(), model_path("conv_bn_relu_linear_scripted.pt"), RunSpec{}, runner);
  EXPECT_EQ(v.status, Status::Pass) << v.message;
}

}  // namespace
}  // namespace tsrepro
