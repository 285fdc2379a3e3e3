// Tests for runner/exec/compare.cpp: the port of torch._dynamo.utils.same() plus our stricter
// integer rule. Values are built so that each case sits clearly on one side of its rule.

#include "tsrepro/compare.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/core/Dict.h>
#include <ATen/core/List.h>
#include <ATen/core/ivalue.h>
#include <gtest/gtest.h>

namespace tsrepro {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

using Values = std::vector<c10::IValue>;

at::Tensor doubles(std::vector<double> values) { return at::tensor(values, at::TensorOptions().dtype(at::kDouble)); }

at::Tensor floats(std::vector<double> values) { return doubles(std::move(values)).to(at::kFloat); }

at::Tensor longs(std::vector<int64_t> values) { return at::tensor(values, at::TensorOptions().dtype(at::kLong)); }

at::Tensor bools(std::vector<double> values) { return doubles(std::move(values)).to(at::kBool); }

// A smooth fp64 "true" result and a +-1 pattern to perturb it with: RMSE(fp64 + e * pattern,
// fp64) is e (up to float32 rounding), so each case knows its RMSE exactly.
at::Tensor smooth_fp64(int64_t n) { return at::linspace(-1.0, 1.0, n, at::kDouble); }

at::Tensor alternating_signs(int64_t n) { return at::arange(n, at::kDouble).remainder(2).mul(2).sub(1); }

at::Tensor perturbed(const at::Tensor& fp64, double error, at::ScalarType dtype = at::kFloat) {
  return (fp64 + error * alternating_signs(fp64.numel())).to(dtype);
}

CompareResult compare_one(const c10::IValue& ref, const c10::IValue& res, const CompareOptions& options = {}) {
  return compare_outputs({ref}, {res}, nullptr, options);
}

CompareResult compare_with_fp64(const at::Tensor& ref, const at::Tensor& res, const at::Tensor& fp64,
                                const CompareOptions& options = {}) {
  const Values fp64_outputs{fp64};
  return compare_outputs({ref}, {res}, &fp64_outputs, options);
}

std::string first_reason(const CompareResult& result) {
  const OutputDiff* failure = result.first_failure();
  return failure ? failure->reason : "";
}

// ---- allclose and the fp64 RMSE rule ------------------------------------------------------------

TEST(CompareTest, CloseTensorsPassWithTheirDifference) {
  const at::Tensor ref = floats({1.0, 2.0, 4.0});
  const auto result = compare_one(ref, ref + 1e-6);
  EXPECT_TRUE(result.same);
  ASSERT_EQ(result.outputs.size(), 1u);
  EXPECT_EQ(result.outputs[0].path, "0");
  EXPECT_EQ(result.outputs[0].dtype, "float32");
  EXPECT_TRUE(result.outputs[0].reason.empty());
  EXPECT_NEAR(result.outputs[0].max_abs, 1e-6, 1e-7);
  EXPECT_EQ(result.first_failure(), nullptr);
}

TEST(CompareTest, AllcloseScalesRelativeToleranceByTheResult) {
  // |ref - res| = 0.0201 <= tol + tol * |res| = 0.020201 when res is 1.0201, but not when
  // the larger value is ref and the bound is 0.01 + 0.01 * 1.0 = 0.02.
  CompareOptions options;
  options.tol = 0.01;
  EXPECT_TRUE(compare_one(floats({1.0}), floats({1.0201}), options).same);
  EXPECT_FALSE(compare_one(floats({1.0201}), floats({1.0}), options).same);
}

TEST(CompareTest, NoiseLikeTheReferencesOwnPassesViaFp64Rmse) {
  const at::Tensor fp64 = smooth_fp64(2000);
  const at::Tensor ref = perturbed(fp64, 1e-3);
  const at::Tensor res = perturbed(fp64, -1e-3);  // 2e-3 from ref: allclose at 1e-4 fails
  EXPECT_FALSE(compare_one(ref, res).same);       // no fp64 reference: allclose decides
  const auto result = compare_with_fp64(ref, res, fp64);
  EXPECT_TRUE(result.same) << first_reason(result);
  EXPECT_NEAR(result.outputs[0].max_abs, 2e-3, 1e-6);
}

TEST(CompareTest, LargerErrorThanTheReferenceFailsWithRmseReason) {
  const at::Tensor fp64 = smooth_fp64(2000);
  const auto result = compare_with_fp64(perturbed(fp64, 1e-3), perturbed(fp64, 0.1), fp64);
  EXPECT_FALSE(result.same);
  const std::string reason = first_reason(result);
  EXPECT_NE(reason.find("allclose failed at tol=0.0001"), std::string::npos) << reason;
  EXPECT_NE(reason.find("RMSE(res,fp64)=0.1 > 2*RMSE(ref,fp64)+tol/10=0.00201"), std::string::npos) << reason;
  EXPECT_NEAR(result.outputs[0].max_abs, 0.099, 1e-5);
}

TEST(CompareTest, MultiplierIsTwoForLargeFloat32Tensors) {
  // res_error = 2.5 * ref_error: above 2x + tol/10, below 3x.
  const at::Tensor fp64 = smooth_fp64(2000);
  EXPECT_FALSE(compare_with_fp64(perturbed(fp64, 1e-3), perturbed(fp64, 2.5e-3), fp64).same);
}

TEST(CompareTest, MultiplierIsThreeForTensorsUnderAThousandElements) {
  const at::Tensor fp64 = smooth_fp64(999);
  EXPECT_TRUE(compare_with_fp64(perturbed(fp64, 1e-3), perturbed(fp64, 2.5e-3), fp64).same);
  EXPECT_FALSE(compare_with_fp64(perturbed(fp64, 1e-3), perturbed(fp64, 3.5e-3), fp64).same);
}

TEST(CompareTest, MultiplierIsThreeForHalfPrecisionResults) {
  const at::Tensor fp64 = smooth_fp64(2000);
  const auto ref = perturbed(fp64, 4e-3, at::kHalf);
  const auto result = compare_with_fp64(ref, perturbed(fp64, 1e-2, at::kHalf), fp64);
  EXPECT_TRUE(result.same) << first_reason(result);
  EXPECT_FALSE(compare_with_fp64(ref, perturbed(fp64, 1.4e-2, at::kHalf), fp64).same);
}

TEST(CompareTest, MultiplierIsThreeForLargeTolerance) {
  const at::Tensor fp64 = smooth_fp64(2000);
  CompareOptions options;
  options.tol = 0.02;
  // ref and res differ by 0.125 > allclose bound; 2.5x ref_error passes only with 3x.
  const auto ref = perturbed(fp64, 0.05);
  EXPECT_TRUE(compare_with_fp64(ref, perturbed(fp64, -0.125), fp64, options).same);
  options.tol = 0.019;
  EXPECT_FALSE(compare_with_fp64(ref, perturbed(fp64, -0.125), fp64, options).same);
}

TEST(CompareTest, WithoutFp64AFloat64ReferenceIsItsOwnReference) {
  // ref_error is then 0, so res passes only with an RMSE within tol/10 = 1e-5.
  const at::Tensor ref = smooth_fp64(2000);
  const auto noisy = compare_one(ref, perturbed(ref, 1e-3, at::kDouble));
  EXPECT_FALSE(noisy.same);
  EXPECT_NE(first_reason(noisy).find("(RMSE(ref,fp64)=0,"), std::string::npos) << first_reason(noisy);
  // One element off by 3e-4 fails allclose, but RMSE = 3e-4 / sqrt(2000) = 6.7e-6 passes.
  at::Tensor one_off = ref.clone();
  one_off[0] += 3e-4;
  const auto result = compare_one(ref, one_off);
  EXPECT_TRUE(result.same) << first_reason(result);
  EXPECT_NEAR(result.outputs[0].max_abs, 3e-4, 1e-12);
}

TEST(CompareTest, Fp64OfAnotherShapeIsIgnored) {
  const at::Tensor fp64 = smooth_fp64(2000);
  const auto result = compare_with_fp64(perturbed(fp64, 1e-3), perturbed(fp64, -1e-3), smooth_fp64(10));
  EXPECT_FALSE(result.same);
  EXPECT_NE(first_reason(result).find("no fp64 reference"), std::string::npos);
}

// ---- dtypes -------------------------------------------------------------------------------------

TEST(CompareTest, DtypeMismatchFailsWhenExact) {
  const auto result = compare_one(floats({1.0, 2.0}), doubles({1.0, 2.0}));
  EXPECT_FALSE(result.same);
  EXPECT_EQ(first_reason(result), "dtype mismatch: float32 vs float64");
  EXPECT_EQ(result.outputs[0].max_abs, 0.0);  // values still measured: shapes agree
}

TEST(CompareTest, DtypeMismatchIsToleratedWithoutExactDtype) {
  CompareOptions options;
  options.exact_dtype = false;
  EXPECT_TRUE(compare_one(floats({1.0, 2.0}), doubles({1.0, 2.00001}), options).same);
  EXPECT_FALSE(compare_one(floats({1.0, 2.0}), doubles({1.0, 2.1}), options).same);
  // ref is cast to res's dtype: an int result of a float ref must then be exact.
  EXPECT_TRUE(compare_one(doubles({1.0, 2.0}), longs({1, 2}), options).same);
}

TEST(CompareTest, IntegerTensorsMustBeExactEvenAtLargeTolerance) {
  CompareOptions options;
  options.tol = 1.0;  // same() would accept 3 vs 4 here
  const auto result = compare_one(longs({1, 2, 3}), longs({1, 2, 4}), options);
  EXPECT_FALSE(result.same);
  EXPECT_EQ(result.outputs[0].dtype, "int64");
  EXPECT_EQ(first_reason(result), "integer tensors differ at 1 of 3 elements");
  EXPECT_DOUBLE_EQ(result.outputs[0].max_abs, 1.0);
  EXPECT_DOUBLE_EQ(result.outputs[0].max_rel, 1.0 / 3.0);
  EXPECT_TRUE(compare_one(longs({1, 2, 3}), longs({1, 2, 3})).same);
}

TEST(CompareTest, IgnoreNonFpSkipsIntegerAndBoolTensors) {
  CompareOptions options;
  options.ignore_non_fp = true;
  EXPECT_TRUE(compare_one(longs({1, 2, 3}), longs({7, 8, 9}), options).same);
  EXPECT_TRUE(compare_one(bools({1, 0}), bools({0, 1}), options).same);
  EXPECT_TRUE(compare_one(c10::IValue(int64_t{3}), c10::IValue(int64_t{4}), options).same);
  // Floats without an fp64 reference are forgiven too, as in same().
  EXPECT_TRUE(compare_one(floats({1.0}), floats({2.0}), options).same);
  // A dtype mismatch is checked first and still fails.
  EXPECT_FALSE(compare_one(longs({1}), longs({1}).to(at::kInt), options).same);
}

TEST(CompareTest, BoolTensorsCompareAsUint8) {
  EXPECT_TRUE(compare_one(bools({1, 0, 1}), bools({1, 0, 1})).same);
  const auto result = compare_one(bools({1, 0, 1}), bools({1, 1, 1}));
  EXPECT_FALSE(result.same);
  EXPECT_EQ(result.outputs[0].dtype, "bool");
  EXPECT_EQ(first_reason(result), "bool tensors differ at 1 of 3 elements");
  EXPECT_DOUBLE_EQ(result.outputs[0].max_abs, 1.0);
}

// ---- structure ----------------------------------------------------------------------------------

TEST(CompareTest, NestedTuplesReportEveryLeafWithItsPath) {
  const auto inner_ref = c10::ivalue::Tuple::create(floats({1.0}), int64_t{3});
  const auto inner_res = c10::ivalue::Tuple::create(floats({1.5}), int64_t{3});
  const Values ref{floats({0.0}), c10::ivalue::Tuple::create(floats({2.0}), inner_ref)};
  const Values res{floats({0.0}), c10::ivalue::Tuple::create(floats({2.0}), inner_res)};
  const auto result = compare_outputs(ref, res, nullptr, {});
  EXPECT_FALSE(result.same);
  ASSERT_EQ(result.outputs.size(), 4u);
  EXPECT_EQ(result.outputs[0].path, "0");
  EXPECT_EQ(result.outputs[1].path, "1.0");
  EXPECT_EQ(result.outputs[2].path, "1.1.0");
  EXPECT_EQ(result.outputs[3].path, "1.1.1");
  EXPECT_EQ(result.outputs[3].dtype, "int");
  ASSERT_NE(result.first_failure(), nullptr);
  EXPECT_EQ(result.first_failure()->path, "1.1.0");
  EXPECT_DOUBLE_EQ(result.first_failure()->max_abs, 0.5);
}

TEST(CompareTest, ListsAndTuplesOfDifferentLengthFail) {
  const auto ref = c10::ivalue::Tuple::create(floats({1.0}), floats({2.0}));
  const auto res = c10::ivalue::Tuple::create(floats({1.0}));
  const auto result = compare_one(ref, res);
  EXPECT_FALSE(result.same);
  EXPECT_EQ(first_reason(result), "length mismatch: 2 vs 1");
  EXPECT_EQ(result.first_failure()->dtype, "tuple");
}

TEST(CompareTest, TypedTensorListsAreCompared) {
  c10::List<at::Tensor> ref({floats({1.0}), floats({2.0})});
  c10::List<at::Tensor> res({floats({1.0}), floats({2.5})});
  const auto result = compare_one(ref, res);
  EXPECT_FALSE(result.same);
  EXPECT_EQ(result.first_failure()->path, "0.1");
}

TEST(CompareTest, DictsAreComparedByKey) {
  c10::Dict<std::string, at::Tensor> ref;
  ref.insert("loss", floats({1.0}));
  c10::Dict<std::string, at::Tensor> res;
  res.insert("loss", floats({1.5}));
  const auto result = compare_one(ref, res);
  EXPECT_FALSE(result.same);
  EXPECT_EQ(result.first_failure()->path, "0.loss");
}

TEST(CompareTest, OutputCountMismatchFailsButPrefixIsCompared) {
  const auto result = compare_outputs({floats({1.0}), floats({2.0})}, {floats({1.0})}, nullptr, {});
  EXPECT_FALSE(result.same);
  EXPECT_EQ(first_reason(result), "output count mismatch: 2 vs 1");
  ASSERT_EQ(result.outputs.size(), 2u);
  EXPECT_TRUE(result.outputs[1].ok);
}

TEST(CompareTest, ShapeMismatchFailsWithShapes) {
  const auto result = compare_one(at::zeros({2, 3}), at::zeros({3, 2}));
  EXPECT_FALSE(result.same);
  EXPECT_EQ(first_reason(result), "shape mismatch: [2, 3] vs [3, 2]");
  EXPECT_EQ(result.outputs[0].max_abs, kInf);
}

TEST(CompareTest, TensorVersusScalarIsATypeMismatch) {
  const auto result = compare_one(floats({1.0}), c10::IValue(int64_t{1}));
  EXPECT_FALSE(result.same);
  EXPECT_EQ(first_reason(result), "type mismatch: Tensor vs int");
  EXPECT_EQ(result.outputs[0].max_abs, kInf);
}

// ---- special values -----------------------------------------------------------------------------

TEST(CompareTest, NanMatchesNanUnlessEqualNanIsOff) {
  // equal_nan is on by default, as PyTorch's minifier compares (same_two_models).
  const at::Tensor ref = floats({kNaN, 1.0});
  auto result = compare_one(ref, ref.clone());
  EXPECT_TRUE(result.same);
  EXPECT_EQ(result.outputs[0].max_abs, 0.0);
  EXPECT_EQ(result.outputs[0].nonfinite_mismatches, 0);
  CompareOptions options;
  options.equal_nan = false;
  result = compare_one(ref, ref.clone(), options);
  EXPECT_FALSE(result.same);
  // The finite elements agree; the NaN is counted, not folded into max_abs.
  EXPECT_EQ(result.outputs[0].max_abs, 0.0);
  EXPECT_EQ(result.outputs[0].nonfinite_mismatches, 1);
}

TEST(CompareTest, NanInResultWhereFp64HasNoneFails) {
  const at::Tensor fp64 = doubles({1.0, 2.0});
  const auto result = compare_with_fp64(floats({1.0, 2.0}), floats({1.0, kNaN}), fp64);
  EXPECT_FALSE(result.same);
}

TEST(CompareTest, NanOnlyInReferenceCountsAsAPassWhenResultMatchesFp64) {
  // same()'s corner case: res is better than ref.
  const at::Tensor fp64 = doubles({1.0, 2.0});
  EXPECT_TRUE(compare_with_fp64(floats({1.0, kNaN}), floats({1.0, 2.01}), fp64).same);
  EXPECT_FALSE(compare_with_fp64(floats({1.0, kNaN}), floats({1.0, 2.5}), fp64).same);
}

TEST(CompareTest, NansAtOtherPlacesFailEvenWithEqualNan) {
  // same() passes this under equal_nan (both RMSEs are NaN); here each element is judged: the
  // NaN of ref is not matched, and res has a NaN where both references are finite.
  const at::Tensor fp64 = doubles({1.0, 2.0});
  const at::Tensor ref = floats({kNaN, 2.0});
  const at::Tensor res = floats({1.0, kNaN});
  const auto result = compare_with_fp64(ref, res, fp64);
  EXPECT_FALSE(result.same);
  EXPECT_NE(first_reason(result).find("1 of the 1 elements where a reference is inf or NaN differ"), std::string::npos)
      << first_reason(result);
  EXPECT_NE(first_reason(result).find("RMSE(res,fp64)=nan"), std::string::npos) << first_reason(result);
}

// The case same() gets wrong: ref overflows to inf at one element where fp64 stays finite, so
// RMSE(ref, fp64) is infinite and any result would pass; the result is off by 2x elsewhere.
TEST(CompareTest, AnInfInTheReferenceNoLongerExcusesAWrongResultElsewhere) {
  std::vector<double> fp64_values(2000, 1.0), ref_values(2000, 1.0);
  fp64_values[0] = 1e39;  // beyond float32's range
  ref_values[0] = kInf;
  const at::Tensor fp64 = doubles(fp64_values);
  const at::Tensor ref = floats(ref_values);
  at::Tensor wrong = ref.clone();
  wrong[7] = 2.0;
  const auto result = compare_with_fp64(ref, wrong, fp64);
  EXPECT_FALSE(result.same);
  EXPECT_NE(first_reason(result).find("over the 1999 elements where both references are finite"), std::string::npos)
      << first_reason(result);
  EXPECT_DOUBLE_EQ(result.outputs[0].max_abs, 1.0);  // measured over the finite elements: a number, not inf
  EXPECT_DOUBLE_EQ(result.outputs[0].max_rel, 1.0);

  // The same inf and noise-level differences elsewhere still pass.
  at::Tensor noisy = ref.clone();
  noisy[7] = 1.0f + 3e-4f;
  EXPECT_TRUE(compare_with_fp64(ref, noisy, fp64).same) << first_reason(compare_with_fp64(ref, noisy, fp64));
  // A finite value where ref has its inf fails, whatever the rest does.
  at::Tensor finite_there = ref.clone();
  finite_there[0] = 1.0;
  const auto pattern = compare_with_fp64(ref, finite_there, fp64);
  EXPECT_FALSE(pattern.same);
  EXPECT_EQ(pattern.outputs[0].nonfinite_mismatches, 1);
}

TEST(CompareTest, EqualInfinitiesAreClose) {
  const auto result = compare_one(floats({kInf, -kInf, 1.0}), floats({kInf, -kInf, 1.0}));
  EXPECT_TRUE(result.same);
  EXPECT_EQ(result.outputs[0].max_abs, 0.0);
  EXPECT_FALSE(compare_one(floats({kInf}), floats({-kInf})).same);
}

TEST(CompareTest, EmptyTensorsAreEqual) {
  const auto result = compare_one(at::zeros({0, 3}), at::zeros({0, 3}));
  EXPECT_TRUE(result.same);
  EXPECT_EQ(result.outputs[0].max_abs, 0.0);
  EXPECT_EQ(result.outputs[0].max_rel, 0.0);
  EXPECT_FALSE(compare_one(at::zeros({0, 3}), at::zeros({0, 2})).same);
}

TEST(CompareTest, TensorsRequiringGradAreCompared) {
  const at::Tensor ref = floats({1.0, 2.0}).requires_grad_(true);
  const at::Tensor res = (ref * 1.0);  // a non-leaf with a grad_fn
  EXPECT_TRUE(compare_one(ref, res).same);
  EXPECT_FALSE(compare_one(ref, res + 1.0).same);
}

// ---- measurements -------------------------------------------------------------------------------

TEST(CompareTest, MaxAbsAndMaxRelAreMeasuredInFloat64) {
  auto result = compare_one(floats({1.0, 2.0, 4.0}), floats({1.5, 2.0, 3.0}));
  EXPECT_DOUBLE_EQ(result.outputs[0].max_abs, 1.0);
  EXPECT_DOUBLE_EQ(result.outputs[0].max_rel, 0.5);
  // Elements where ref is 0 have no relative difference.
  result = compare_one(floats({0.0, 2.0}), floats({1.0, 3.0}));
  EXPECT_DOUBLE_EQ(result.outputs[0].max_abs, 1.0);
  EXPECT_DOUBLE_EQ(result.outputs[0].max_rel, 0.5);
}

// ---- cosine similarity mode ---------------------------------------------------------------------

TEST(CompareTest, CosineModeAcceptsScaledAndRejectsOpposedVectors) {
  CompareOptions options;
  options.cos_similarity = true;
  const at::Tensor ref = perturbed(smooth_fp64(100), 0.3).reshape({10, 10});
  EXPECT_TRUE(compare_one(ref, ref * 1.5, options).same);
  const auto result = compare_one(ref, -ref, options);
  EXPECT_FALSE(result.same);
  EXPECT_EQ(first_reason(result), "cosine similarity -1 < 0.99");
  // Zero vectors have similarity 0; the allclose shortcut passes them.
  EXPECT_TRUE(compare_one(at::zeros({4}), at::zeros({4}), options).same);
}

// ---- scalars ------------------------------------------------------------------------------------

TEST(CompareTest, ScalarsCompareByValue) {
  EXPECT_TRUE(compare_one(c10::IValue(int64_t{3}), c10::IValue(int64_t{3})).same);
  EXPECT_EQ(first_reason(compare_one(c10::IValue(int64_t{3}), c10::IValue(int64_t{4}))), "values differ: 3 vs 4");
  EXPECT_TRUE(compare_one(c10::IValue(true), c10::IValue(true)).same);
  EXPECT_FALSE(compare_one(c10::IValue(true), c10::IValue(false)).same);
  EXPECT_TRUE(compare_one(c10::IValue("abc"), c10::IValue("abc")).same);
  EXPECT_FALSE(compare_one(c10::IValue("abc"), c10::IValue("abd")).same);
  EXPECT_TRUE(compare_one(c10::IValue(), c10::IValue()).same);
  EXPECT_TRUE(compare_one(c10::IValue(c10::Device("cpu")), c10::IValue(c10::Device("cpu"))).same);
  EXPECT_FALSE(compare_one(c10::IValue(int64_t{1}), c10::IValue(1.0)).same);
}

TEST(CompareTest, FloatsCompareWithinTolerance) {
  EXPECT_TRUE(compare_one(c10::IValue(1.0), c10::IValue(1.00005)).same);
  const auto result = compare_one(c10::IValue(1.0), c10::IValue(1.01));
  EXPECT_FALSE(result.same);
  EXPECT_EQ(result.outputs[0].dtype, "float");
  EXPECT_NEAR(result.outputs[0].max_abs, 0.01, 1e-12);
  EXPECT_NE(first_reason(result).find("values differ beyond tol=0.0001"), std::string::npos);
  EXPECT_TRUE(compare_one(c10::IValue(kNaN), c10::IValue(kNaN)).same);
  CompareOptions options;
  options.equal_nan = false;
  EXPECT_FALSE(compare_one(c10::IValue(kNaN), c10::IValue(kNaN), options).same);
}

// ---- cast_floating_to_fp64 and dtype_name -------------------------------------------------------

TEST(CastToFp64Test, CastsFloatingTensorsThroughContainers) {
  const at::Tensor half = floats({1.0}).to(at::kHalf);
  const at::Tensor ints = longs({1, 2});
  c10::List<at::Tensor> list({floats({2.0}), at::zeros({1}, at::kBFloat16)});
  const auto input = c10::ivalue::Tuple::create(half, ints, list, 1.5);

  const c10::IValue cast = cast_floating_to_fp64(input);
  const auto& elements = cast.toTupleRef().elements();
  ASSERT_EQ(elements.size(), 4u);
  EXPECT_EQ(elements[0].toTensor().scalar_type(), at::kDouble);
  EXPECT_TRUE(elements[1].toTensor().is_same(ints));
  ASSERT_TRUE(elements[2].isTensorList());
  for (const at::Tensor& t : elements[2].toTensorList().vec()) {
    EXPECT_EQ(t.scalar_type(), at::kDouble);
  }
  EXPECT_DOUBLE_EQ(elements[3].toDouble(), 1.5);
  // The source is untouched.
  EXPECT_EQ(half.scalar_type(), at::kHalf);
  EXPECT_EQ(list.get(0).scalar_type(), at::kFloat);
}

TEST(CastToFp64Test, KeepsRequiresGradAsAFreshLeaf) {
  const at::Tensor input = floats({1.0, 2.0}).requires_grad_(true);
  const at::Tensor cast = cast_floating_to_fp64(input).toTensor();
  EXPECT_EQ(cast.scalar_type(), at::kDouble);
  EXPECT_TRUE(cast.requires_grad());
  EXPECT_TRUE(cast.is_leaf());
}

TEST(CastToFp64Test, CastsDictValues) {
  c10::Dict<std::string, at::Tensor> dict;
  dict.insert("x", floats({1.0}));
  const c10::IValue cast = cast_floating_to_fp64(dict);
  EXPECT_EQ(cast.toGenericDict().at("x").toTensor().scalar_type(), at::kDouble);
}

TEST(DtypeNameTest, UsesPyTorchNames) {
  EXPECT_EQ(dtype_name(at::kFloat), "float32");
  EXPECT_EQ(dtype_name(at::kDouble), "float64");
  EXPECT_EQ(dtype_name(at::kHalf), "float16");
  EXPECT_EQ(dtype_name(at::kBFloat16), "bfloat16");
  EXPECT_EQ(dtype_name(at::kLong), "int64");
  EXPECT_EQ(dtype_name(at::kInt), "int32");
  EXPECT_EQ(dtype_name(at::kShort), "int16");
  EXPECT_EQ(dtype_name(at::kChar), "int8");
  EXPECT_EQ(dtype_name(at::kByte), "uint8");
  EXPECT_EQ(dtype_name(at::kBool), "bool");
  EXPECT_EQ(dtype_name(at::kComplexFloat), "complex64");
  EXPECT_EQ(dtype_name(at::kComplexDouble), "complex128");
}

}  // namespace
}  // namespace tsrepro
