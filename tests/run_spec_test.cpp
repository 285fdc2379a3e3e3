// RunSpec: one JSON round trip, one validation.

#include <gtest/gtest.h>

#include "tsrepro/error.h"
#include "tsrepro/run_spec.h"

namespace tsrepro {
namespace {

TEST(RunSpec, EveryFieldSurvivesTheJsonRoundTrip) {
  RunSpec s;
  s.ref = "jit";
  s.backend = "nnc";
  s.backend_options = {{"inline", "0"}, {"strategy", "dynamic"}};
  s.device = "cuda";
  s.compare.tol = 0.25;
  s.compare.cos_similarity = true;
  s.compare.equal_nan = false;
  s.compare.use_fp64 = false;
  s.compare.exact_dtype = false;
  s.compare.ignore_non_fp = true;
  s.backward = true;
  s.fake_inputs = true;
  s.seed = 42;
  s.timeout_seconds = 7.5;
  // Through text, as it crosses to a worker.
  const RunSpec back = run_spec_from_json(nlohmann::json::parse(run_spec_to_json(s).dump()));
  EXPECT_EQ(run_spec_to_json(back), run_spec_to_json(s));
  EXPECT_EQ(back.backend_options, s.backend_options);
  EXPECT_EQ(back.seed, 42u);
  EXPECT_DOUBLE_EQ(back.compare.tol, 0.25);
}

TEST(RunSpec, MissingKeysKeepTheDefaults) {
  const RunSpec back = run_spec_from_json({{"backend", "jit"}});
  const RunSpec defaults;
  EXPECT_EQ(back.backend, "jit");
  EXPECT_EQ(back.ref, defaults.ref);
  EXPECT_EQ(back.device, defaults.device);
  EXPECT_DOUBLE_EQ(back.timeout_seconds, defaults.timeout_seconds);
  EXPECT_EQ(back.compare.equal_nan, defaults.compare.equal_nan);
}

void expect_invalid(const RunSpec& s, const std::string& must_mention) {
  try {
    s.validate();
    ADD_FAILURE() << "accepted; expected an error naming " << must_mention;
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(must_mention), std::string::npos) << e.what();
  }
}

TEST(RunSpec, ValidationNamesTheFlagAtFault) {
  RunSpec s;
  s.backend = "nnc";
  EXPECT_NO_THROW(s.validate());
  s.backend = "tvm";
  expect_invalid(s, "--backend tvm");
  s.backend = "nnc";
  s.backend_options = {{"colour", "red"}};
  expect_invalid(s, "--backend-opt colour");
  s.backend_options = {};
  s.device = "tpu";
  expect_invalid(s, "--device tpu");
  s.device = "cpu";
  s.ref = "nope";
  expect_invalid(s, "--backend nope");
  s.ref = "eager";
  s.timeout_seconds = 0;
  expect_invalid(s, "--timeout");
}

TEST(RunSpec, TheKnownBackendsComeFromTheRegistry) {
  const std::string known = known_backends_text();
  for (const BackendInfo& info : backend_registry())
    EXPECT_NE(known.find(info.spelling), std::string::npos) << info.name;
  EXPECT_NE(known.find("inject:<fault>@<op>"), std::string::npos);
}

TEST(RunSpec, BackendOptionPairsNeedAKeyAndAnEqualsSign) {
  EXPECT_EQ(parse_backend_options({"a=1", "b=x=y"}), (BackendOptions{{"a", "1"}, {"b", "x=y"}}));
  EXPECT_THROW(parse_backend_options({"novalue"}), UserError);
  EXPECT_THROW(parse_backend_options({"=1"}), UserError);
}

}  // namespace
}  // namespace tsrepro
