// Output comparison, ported from torch._dynamo.utils.same() and rmse().
//
// Version followed: pytorch/pytorch main as of commit 001077cbc0f328b8a743c7a2d1bf64f98c096377
// (the 2.x line that has get_multiplier(), the "loose_tol" NaN corner case and the
// use_iou_for_bool / force_max_multiplier parameters). The parts that map onto TorchScript
// outputs are ported; the knobs CompareOptions does not carry keep same()'s defaults
// (use_larger_multiplier_for_smaller_tensor=False, force_max_multiplier=False,
// use_iou_for_bool=False, relax_numpy_equality=False).
//
// Where same() is followed literally, note in particular:
//  - allclose(ref, res): the relative tolerance scales |res| (torch.allclose's `other`).
//  - (see the deliberate differences for the RMSE rule's elements).
//  - The multiplier is 3 for fp16/bf16 results, else 2; it is raised to 3 for tensors with
//    fewer than 1000 elements, for [.., .., 1, 1] 4-d tensors, and for tol >= 0.02.
//
// Deliberate differences from same():
//  - Integer tensors must be equal exactly (same() runs allclose on them); bool tensors keep
//    same()'s uint8 allclose, also when exact_dtype is off.
//  - Shapes must match exactly (allclose would broadcast).
//  - A Python float becomes a float32 0-d tensor in same(); here the same allclose test runs
//    on the doubles themselves. As in same(), the fp64 RMSE rule never applies to floats.
//  - Values of different kinds (tensor vs int, int vs float, ...) are a failure, not an assert.
//  - The RMSE rule runs over the elements where ref and the fp64 reference are both finite,
//    and the other elements must match ref's inf/NaN pattern: in same(), one inf in ref where
//    fp64 is finite makes RMSE(ref, fp64) infinite, and then any result passes.
//  - max_abs / max_rel measure the elements where ref and res are both finite; the others
//    count as nonfinite_mismatches when they differ.

#include "tsrepro/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/core/Dict.h>
#include <ATen/core/List.h>
#include <ATen/core/ivalue.h>

namespace tsrepro {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// same(): cos_similarity passes at a score of 0.99 or more; cosine_similarity's eps.
constexpr double kMinCosineSimilarity = 0.99;
constexpr double kCosineEps = 1e-6;
// same(): the tolerance for "ref has NaN where fp64 and res agree" (res is better than ref).
constexpr double kLooseTol = 1e-2 * 4;

// ---- Formatting --------------------------------------------------------------------------------

std::string format_number(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.6g", value);
  return buffer;
}

std::string format_shape(at::IntArrayRef sizes) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < sizes.size(); ++i) out << (i ? ", " : "") << sizes[i];
  out << "]";
  return out.str();
}

std::string child_path(const std::string& parent, const std::string& child) {
  return parent.empty() ? child : parent + "." + child;
}

bool is_sequence(const c10::IValue& value) { return value.isTuple() || value.isList(); }

// The names people know from Python, for OutputDiff::dtype and reasons.
std::string kind_name(const c10::IValue& value) {
  if (value.isTensor()) return "Tensor";
  if (value.isDouble()) return "float";
  if (value.isComplexDouble()) return "complex";
  if (value.isInt()) return "int";
  if (value.isBool()) return "bool";
  if (value.isString()) return "str";
  if (value.isNone()) return "None";
  if (value.isDevice()) return "device";
  if (value.isTuple()) return "tuple";
  if (value.isList()) return "list";
  if (value.isGenericDict()) return "dict";
  return value.tagKind();
}

std::vector<c10::IValue> sequence_elements(const c10::IValue& value) {
  if (value.isTuple()) {
    const auto& elements = value.toTupleRef().elements();
    return std::vector<c10::IValue>(elements.begin(), elements.end());
  }
  const auto elements = value.toListRef();
  return std::vector<c10::IValue>(elements.begin(), elements.end());
}

std::string dict_key_name(const c10::IValue& key) {
  if (key.isString()) return key.toStringRef();
  if (key.isInt()) return std::to_string(key.toInt());
  if (key.isBool()) return key.toBool() ? "True" : "False";
  if (key.isDouble()) return format_number(key.toDouble());
  return key.tagKind();
}

// ---- Tensor helpers ----------------------------------------------------------------------------

// Comparisons run on the CPU on plain dense values: outputs may live on CUDA, require grad, or
// be sparse (same() densifies sparse tensors too) or quantized (arithmetic needs real values).
at::Tensor comparable(const at::Tensor& tensor) {
  at::Tensor plain = tensor.detach();
  if (plain.is_sparse()) plain = plain.to_dense();
  if (plain.is_quantized()) plain = plain.dequantize();
  return plain.device().is_cpu() ? plain : plain.cpu();
}

bool is_half_precision(at::ScalarType type) { return type == at::kHalf || type == at::kBFloat16; }

bool allclose(const at::Tensor& ref, const at::Tensor& res, double tol, bool equal_nan) {
  return at::allclose(ref, res, /*rtol=*/tol, /*atol=*/tol, equal_nan);
}

// same()'s rmse(ref, res): sqrt(mean((ref - res)^2)), here always in float64 (fp64 - fp32
// promotes to float64 in Python as well).
double rmse(const at::Tensor& fp64_ref, const at::Tensor& tensor) {
  return (fp64_ref - tensor.to(at::kDouble)).square().mean().sqrt().item<double>();
}

int64_t count_unequal(const at::Tensor& ref, const at::Tensor& res) { return ref.ne(res).sum().item<int64_t>(); }

struct Differences {
  double max_abs = 0;
  double max_rel = 0;
  int64_t nonfinite_mismatches = 0;
};

// max |res - ref| and max |res - ref| / |ref| (over ref != 0), in float64 (complex128 for
// complex), over the elements where both are finite: one inf would otherwise hide how far the
// finite elements are apart. The elements where either is not finite are counted when they
// differ (an inf of another sign, a finite value, NaN against a number; NaN against NaN
// only without equal_nan).
Differences measure_differences(const at::Tensor& ref, const at::Tensor& res, bool equal_nan) {
  if (ref.numel() == 0) return {};
  const bool complex = ref.is_complex() || res.is_complex();
  const at::ScalarType wide = complex ? at::kComplexDouble : at::kDouble;
  const at::Tensor a = ref.to(wide);
  const at::Tensor b = res.to(wide);
  const at::Tensor finite = a.isfinite().logical_and(b.isfinite());
  at::Tensor agree = a.eq(b);
  if (equal_nan) agree = agree.logical_or(a.isnan().logical_and(b.isnan()));

  Differences differences;
  differences.nonfinite_mismatches = finite.logical_not().logical_and(agree.logical_not()).sum().item<int64_t>();
  const at::Tensor abs_diff = (b - a).abs().masked_select(finite);
  if (abs_diff.numel() == 0) return differences;
  const at::Tensor ref_abs = a.abs().masked_select(finite);
  const at::Tensor rel_diff = (abs_diff / ref_abs).masked_fill(abs_diff.eq(0.0), 0.0).masked_select(ref_abs.ne(0.0));
  differences.max_abs = abs_diff.max().item<double>();
  differences.max_rel = rel_diff.numel() == 0 ? 0.0 : rel_diff.max().item<double>();
  return differences;
}

// ---- The comparison ----------------------------------------------------------------------------

// No value means the tensors match; otherwise the reason they do not. (Not tsrepro::Verdict:
// that judges a whole run.)
using MismatchReason = std::optional<std::string>;

class OutputComparer {
 public:
  explicit OutputComparer(const CompareOptions& options) : options_(options) {}

  // `fp64_ref` is the fp64 run's counterpart of `ref`, or `ref` itself when there is none
  // (as same() does with fp64_ref=None).
  void compare(const c10::IValue& ref, const c10::IValue& res, const c10::IValue& fp64_ref, const std::string& path) {
    if (is_sequence(ref) && is_sequence(res)) return compare_sequences(ref, res, fp64_ref, path);
    if (ref.isGenericDict() && res.isGenericDict()) return compare_dicts(ref, res, fp64_ref, path);
    if (ref.isTensor() && res.isTensor()) return compare_tensors(ref, res, fp64_ref, path);
    if (kind_name(ref) != kind_name(res)) {
      return record(mismatch(path, kind_name(ref), "type mismatch: " + kind_name(ref) + " vs " + kind_name(res)));
    }
    compare_scalars(ref, res, path);
  }

  void record(OutputDiff diff) { diffs_.push_back(std::move(diff)); }

  std::vector<OutputDiff> take_diffs() { return std::move(diffs_); }

  // A failure where no element-wise difference can be measured.
  static OutputDiff mismatch(const std::string& path, const std::string& dtype, const std::string& reason) {
    OutputDiff diff;
    diff.path = path;
    diff.dtype = dtype;
    diff.ok = false;
    diff.max_abs = kInfinity;
    diff.max_rel = kInfinity;
    diff.reason = reason;
    return diff;
  }

 private:
  void compare_sequences(const c10::IValue& ref, const c10::IValue& res, const c10::IValue& fp64_ref,
                         const std::string& path) {
    const auto ref_elements = sequence_elements(ref);
    const auto res_elements = sequence_elements(res);
    if (ref_elements.size() != res_elements.size()) {
      return record(mismatch(
          path, kind_name(ref),
          "length mismatch: " + std::to_string(ref_elements.size()) + " vs " + std::to_string(res_elements.size())));
    }
    // An fp64 counterpart of another shape is no reference at all: fall back to ref itself.
    auto fp64_elements = is_sequence(fp64_ref) ? sequence_elements(fp64_ref) : ref_elements;
    if (fp64_elements.size() != ref_elements.size()) fp64_elements = ref_elements;
    for (size_t i = 0; i < ref_elements.size(); ++i) {
      compare(ref_elements[i], res_elements[i], fp64_elements[i], child_path(path, std::to_string(i)));
    }
  }

  // same() visits keys in sorted order; TorchScript dicts keep insertion order, which is as
  // deterministic and reads like the program, so ref's order is used.
  void compare_dicts(const c10::IValue& ref, const c10::IValue& res, const c10::IValue& fp64_ref,
                     const std::string& path) {
    const auto ref_dict = ref.toGenericDict();
    const auto res_dict = res.toGenericDict();
    if (ref_dict.size() != res_dict.size()) {
      return record(mismatch(
          path, "dict",
          "key count mismatch: " + std::to_string(ref_dict.size()) + " vs " + std::to_string(res_dict.size())));
    }
    for (const auto& entry : ref_dict) {
      const std::string key_path = child_path(path, dict_key_name(entry.key()));
      const auto res_entry = res_dict.find(entry.key());
      if (res_entry == res_dict.end()) {
        record(mismatch(key_path, kind_name(entry.value()), "key missing from the result"));
        continue;
      }
      compare(entry.value(), res_entry->value(), fp64_counterpart(fp64_ref, entry.key(), entry.value()), key_path);
    }
  }

  // The fp64 run's value under `key`, or ref's own value when it has none.
  static c10::IValue fp64_counterpart(const c10::IValue& fp64_ref, const c10::IValue& key,
                                      const c10::IValue& ref_value) {
    if (!fp64_ref.isGenericDict()) return ref_value;
    const auto fp64_dict = fp64_ref.toGenericDict();
    const auto found = fp64_dict.find(key);
    return found == fp64_dict.end() ? ref_value : found->value();
  }

  void compare_tensors(const c10::IValue& ref_value, const c10::IValue& res_value, const c10::IValue& fp64_value,
                       const std::string& path) {
    const at::Tensor& ref_in = ref_value.toTensor();
    const at::Tensor& res_in = res_value.toTensor();
    if (!ref_in.defined() || !res_in.defined()) {
      if (ref_in.defined() == res_in.defined()) return record(passed(path, "undefined"));
      const std::string dtype = ref_in.defined() ? dtype_name(ref_in.scalar_type()) : "undefined";
      return record(mismatch(path, dtype, "one tensor is undefined"));
    }
    const at::Tensor ref = comparable(ref_in);
    const at::Tensor res = comparable(res_in);

    OutputDiff diff = passed(path, dtype_name(ref.scalar_type()));
    if (ref.sizes() == res.sizes()) {
      const Differences differences = measure_differences(ref, res, options_.equal_nan);
      diff.max_abs = differences.max_abs;
      diff.max_rel = differences.max_rel;
      diff.nonfinite_mismatches = differences.nonfinite_mismatches;
    } else {
      diff.max_abs = diff.max_rel = kInfinity;
    }
    if (MismatchReason failure = tensor_mismatch(ref, res, fp64_value)) {
      diff.ok = false;
      diff.reason = *failure;
    }
    record(std::move(diff));
  }

  MismatchReason tensor_mismatch(const at::Tensor& ref, const at::Tensor& res, const c10::IValue& fp64_value) const {
    if (options_.exact_dtype && ref.scalar_type() != res.scalar_type()) {
      return "dtype mismatch: " + dtype_name(ref.scalar_type()) + " vs " + dtype_name(res.scalar_type());
    }
    // Without exact_dtype same() casts ref to res's dtype, so res's dtype decides the rule.
    const at::ScalarType compared_type = res.scalar_type();
    const bool exact_kind = c10::isIntegralType(compared_type, /*includeBool=*/true);
    if (exact_kind && options_.ignore_non_fp) return std::nullopt;
    if (ref.sizes() != res.sizes()) {
      return "shape mismatch: " + format_shape(ref.sizes()) + " vs " + format_shape(res.sizes());
    }
    if (compared_type == at::kBool) return bool_mismatch(ref, res);
    if (exact_kind) return integer_mismatch(ref.to(compared_type), res);
    if (options_.cos_similarity) return cosine_mismatch(ref, res);
    return floating_mismatch(ref, res, fp64_value);
  }

  // same(): "triton stores bool as int8", so bools are compared as uint8 under allclose.
  MismatchReason bool_mismatch(const at::Tensor& ref, const at::Tensor& res) const {
    if (allclose(ref.to(at::kByte), res.to(at::kByte), options_.tol, options_.equal_nan)) {
      return std::nullopt;
    }
    return "bool tensors differ at " + std::to_string(count_unequal(ref.to(at::kBool), res)) + " of " +
           std::to_string(res.numel()) + " elements";
  }

  // Our one deliberate stricter rule: integer results have no rounding excuse.
  static MismatchReason integer_mismatch(const at::Tensor& ref, const at::Tensor& res) {
    if (at::equal(ref, res)) return std::nullopt;
    return "integer tensors differ at " + std::to_string(count_unequal(ref, res)) + " of " +
           std::to_string(res.numel()) + " elements";
  }

  MismatchReason cosine_mismatch(const at::Tensor& ref, const at::Tensor& res) const {
    const at::Tensor ref_flat = ref.flatten().to(at::kFloat);
    const at::Tensor res_flat = res.flatten().to(at::kFloat);
    // same(): allclose first, because the similarity of two zero vectors is 0.
    if (allclose(ref_flat, res_flat, options_.tol, /*equal_nan=*/true)) return std::nullopt;
    const double score = at::cosine_similarity(ref_flat, res_flat, /*dim=*/0, kCosineEps).item<double>();
    if (score >= kMinCosineSimilarity) return std::nullopt;
    return "cosine similarity " + format_number(score) + " < " + format_number(kMinCosineSimilarity);
  }

  MismatchReason floating_mismatch(const at::Tensor& ref_in, const at::Tensor& res,
                                   const c10::IValue& fp64_value) const {
    const at::Tensor ref = options_.exact_dtype ? ref_in : ref_in.to(res.scalar_type());
    if (allclose(ref, res, options_.tol, options_.equal_nan)) return std::nullopt;

    const std::string allclose_failed = "allclose failed at tol=" + format_number(options_.tol);
    const at::Tensor fp64_ref = usable_fp64_reference(fp64_value, ref, res);
    if (!fp64_ref.defined()) {
      if (options_.ignore_non_fp) return std::nullopt;
      return allclose_failed + " and there is no fp64 reference";
    }
    if (ref_has_nan_that_res_avoids(ref, res, fp64_ref)) return std::nullopt;
    return rmse_mismatch(ref, res, fp64_ref, allclose_failed);
  }

  // same() uses the fp64 run only when it produced float64; a real result is needed for RMSE.
  static at::Tensor usable_fp64_reference(const c10::IValue& fp64_value, const at::Tensor& ref, const at::Tensor& res) {
    if (!fp64_value.isTensor() || !res.is_floating_point()) return {};
    const at::Tensor& fp64_ref = fp64_value.toTensor();
    if (!fp64_ref.defined() || fp64_ref.scalar_type() != at::kDouble) return {};
    if (fp64_ref.sizes() != ref.sizes()) return {};
    return comparable(fp64_ref);
  }

  // same(): when ref has NaNs but res and fp64 have none and agree loosely, res is *better*
  // than ref, which counts as a pass.
  bool ref_has_nan_that_res_avoids(const at::Tensor& ref, const at::Tensor& res, const at::Tensor& fp64_ref) const {
    return !fp64_ref.isnan().any().item<bool>() && !res.isnan().any().item<bool>() && ref.isnan().any().item<bool>() &&
           at::allclose(fp64_ref.to(res.scalar_type()), res, kLooseTol, kLooseTol, options_.equal_nan);
  }

  // same()'s RMSE rule over the elements where both references (ref and fp64) are finite: in
  // same() one inf in ref where fp64 is finite makes RMSE(ref, fp64) infinite and excuses any
  // result. The other elements are judged by themselves: res must hold the same inf there (and
  // NaN where ref has NaN, under equal_nan). Both parts are reported.
  MismatchReason rmse_mismatch(const at::Tensor& ref, const at::Tensor& res, const at::Tensor& fp64_ref,
                               const std::string& allclose_failed) const {
    const at::Tensor finite = ref.isfinite().logical_and(fp64_ref.isfinite());
    const at::Tensor nonfinite = finite.logical_not();
    std::vector<std::string> failures;

    const int64_t nonfinite_count = nonfinite.sum().item<int64_t>();
    if (nonfinite_count > 0) {
      const at::Tensor a = ref.masked_select(nonfinite).to(at::kDouble);
      const at::Tensor b = res.masked_select(nonfinite).to(at::kDouble);
      at::Tensor agree = a.eq(b);
      if (options_.equal_nan) agree = agree.logical_or(a.isnan().logical_and(b.isnan()));
      const int64_t differing = agree.logical_not().sum().item<int64_t>();
      if (differing > 0)
        failures.push_back(std::to_string(differing) + " of the " + std::to_string(nonfinite_count) +
                           " elements where a reference is inf or NaN differ from it");
    }
    if (nonfinite_count < ref.numel()) {
      const at::Tensor fp64_finite = fp64_ref.masked_select(finite);
      const double ref_error = rmse(fp64_finite, ref.masked_select(finite));
      const double res_error = rmse(fp64_finite, res.masked_select(finite));
      const double multiplier = rmse_multiplier(ref, res, fp64_ref);
      const double threshold = multiplier * ref_error + options_.tol / 10.0;
      if (!(res_error <= threshold))  // a NaN in res where the references are finite fails too
        failures.push_back("RMSE(res,fp64)=" + format_number(res_error) + " > " + format_number(multiplier) +
                           "*RMSE(ref,fp64)+tol/10=" + format_number(threshold) + " (RMSE(ref,fp64)=" +
                           format_number(ref_error) + ", over the " + std::to_string(ref.numel() - nonfinite_count) +
                           " elements where both references are finite)");
    }
    if (failures.empty()) return std::nullopt;
    std::string reason = allclose_failed;
    for (const std::string& failure : failures) reason += " and " + failure;
    return reason;
  }

  // same()'s get_multiplier() without force_max_multiplier and the larger multipliers for
  // small tensors (both off by default there).
  double rmse_multiplier(const at::Tensor& ref, const at::Tensor& res, const at::Tensor& fp64_ref) const {
    // AMP results are compared with a looser bound to avoid false alarms.
    double multiplier = is_half_precision(res.scalar_type()) ? 3.0 : 2.0;
    const bool one_by_one_kernel = ref.dim() == 4 && ref.size(-1) == 1 && ref.size(-2) == 1;
    // Noise dominates RMSE on small tensors and 1x1 kernels; a large tol asks for leniency.
    if (fp64_ref.numel() < 1000 || one_by_one_kernel || options_.tol >= 2 * 1e-2) {
      multiplier = 3.0;
    }
    return multiplier;
  }

  void compare_scalars(const c10::IValue& ref, const c10::IValue& res, const std::string& path) {
    OutputDiff diff = passed(path, kind_name(ref));
    if (ref.isDouble() || ref.isComplexDouble()) {
      measure_scalar(ref, res, diff);
      if (!numbers_close(ref, res) && !options_.ignore_non_fp) {
        fail(diff, "values differ beyond tol=" + format_number(options_.tol) + ": " + scalar_text(ref) + " vs " +
                       scalar_text(res));
      }
      return record(std::move(diff));
    }
    if (ref.isInt()) measure_scalar(ref, res, diff);
    if (options_.ignore_non_fp) return record(std::move(diff));
    if (!values_equal(ref, res)) {
      fail(diff, "values differ: " + scalar_text(ref) + " vs " + scalar_text(res));
    }
    record(std::move(diff));
  }

  // same() on floats: allclose(ref, res, atol=tol, rtol=tol, equal_nan).
  bool numbers_close(const c10::IValue& ref, const c10::IValue& res) const {
    const c10::complex<double> a = as_complex(ref);
    const c10::complex<double> b = as_complex(res);
    const bool a_nan = std::isnan(a.real()) || std::isnan(a.imag());
    const bool b_nan = std::isnan(b.real()) || std::isnan(b.imag());
    if (a_nan || b_nan) return a_nan && b_nan && options_.equal_nan;
    if (a == b) return true;  // equal infinities
    return std::abs(a - b) <= options_.tol + options_.tol * std::abs(b);
  }

  // int, float or complex, as one type so that one formula measures them all.
  static c10::complex<double> as_complex(const c10::IValue& number) {
    if (number.isComplexDouble()) return number.toComplexDouble();
    if (number.isDouble()) return number.toDouble();
    return static_cast<double>(number.toInt());
  }

  static void measure_scalar(const c10::IValue& ref, const c10::IValue& res, OutputDiff& diff) {
    const c10::complex<double> a = as_complex(ref);
    const c10::complex<double> b = as_complex(res);
    diff.max_abs = a == b ? 0.0 : std::abs(b - a);
    diff.max_rel = std::abs(a) == 0.0 || diff.max_abs == 0.0 ? 0.0 : diff.max_abs / std::abs(a);
  }

  static bool values_equal(const c10::IValue& ref, const c10::IValue& res) {
    if (ref.isInt()) return ref.toInt() == res.toInt();
    if (ref.isBool()) return ref.toBool() == res.toBool();
    if (ref.isString()) return ref.toStringRef() == res.toStringRef();
    if (ref.isNone()) return res.isNone();
    if (ref.isDevice()) return ref.toDevice() == res.toDevice();
    try {
      return ref == res;  // other kinds: IValue's own equality, where it has one
    } catch (const std::exception&) {
      return false;
    }
  }

  static std::string scalar_text(const c10::IValue& value) {
    if (value.isDouble()) return format_number(value.toDouble());
    if (value.isString()) return "'" + value.toStringRef() + "'";
    if (value.isNone()) return "None";
    if (value.isBool()) return value.toBool() ? "True" : "False";
    std::ostringstream out;
    out << value;
    return out.str();
  }

  static OutputDiff passed(const std::string& path, const std::string& dtype) {
    OutputDiff diff;
    diff.path = path;
    diff.dtype = dtype;
    return diff;
  }

  static void fail(OutputDiff& diff, const std::string& reason) {
    diff.ok = false;
    diff.reason = reason;
  }

  const CompareOptions& options_;
  std::vector<OutputDiff> diffs_;
};

// ---- fp64 casting ------------------------------------------------------------------------------

at::Tensor cast_tensor_to_fp64(const at::Tensor& tensor) {
  if (!tensor.defined() || !tensor.is_floating_point() || tensor.scalar_type() == at::kDouble) {
    return tensor;
  }
  // A fresh leaf, so that a backward pass of the fp64 run fills the copy's own .grad.
  at::Tensor copy = tensor.detach().to(at::kDouble);
  if (tensor.requires_grad()) copy.requires_grad_(true);
  return copy;
}

c10::IValue cast_tuple_to_fp64(const c10::IValue& value) {
  const auto& tuple = value.toTupleRef();
  std::vector<c10::IValue> elements;
  elements.reserve(tuple.size());
  for (const auto& element : tuple.elements()) elements.push_back(cast_floating_to_fp64(element));
  // Keep a NamedTuple's declared type; an unnamed tuple's type is derived from its (new) values.
  const auto type = tuple.type();
  if (type->name()) return c10::ivalue::Tuple::createNamed(std::move(elements), type);
  return c10::ivalue::Tuple::create(std::move(elements));
}

c10::IValue cast_list_to_fp64(const c10::IValue& value) {
  const auto list = value.toList();
  // The element type (Tensor for List[Tensor]) stays valid: only tensor dtypes change.
  c10::impl::GenericList copy(list.elementType());
  copy.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) copy.push_back(cast_floating_to_fp64(list.get(i)));
  return copy;
}

c10::IValue cast_dict_to_fp64(const c10::IValue& value) {
  const auto dict = value.toGenericDict();
  c10::impl::GenericDict copy(dict.keyType(), dict.valueType());
  copy.reserve(dict.size());
  for (const auto& entry : dict) copy.insert(entry.key(), cast_floating_to_fp64(entry.value()));
  return copy;
}

}  // namespace

const OutputDiff* CompareResult::first_failure() const {
  for (const OutputDiff& diff : outputs) {
    if (!diff.ok) return &diff;
  }
  return nullptr;
}

CompareResult compare_outputs(const std::vector<c10::IValue>& ref, const std::vector<c10::IValue>& res,
                              const std::vector<c10::IValue>* fp64_ref, const CompareOptions& options) {
  OutputComparer comparer(options);
  if (ref.size() != res.size()) {
    const std::string counts = std::to_string(ref.size()) + " vs " + std::to_string(res.size());
    comparer.record(OutputComparer::mismatch("", "outputs", "output count mismatch: " + counts));
  }
  // The common prefix is still compared: it tells which outputs agree.
  const size_t count = std::min(ref.size(), res.size());
  for (size_t i = 0; i < count; ++i) {
    const bool has_fp64 = fp64_ref != nullptr && i < fp64_ref->size();
    comparer.compare(ref[i], res[i], has_fp64 ? (*fp64_ref)[i] : ref[i], std::to_string(i));
  }

  CompareResult result;
  result.outputs = comparer.take_diffs();
  result.same = result.first_failure() == nullptr;
  return result;
}

c10::IValue cast_floating_to_fp64(const c10::IValue& value) {
  if (value.isTensor()) return cast_tensor_to_fp64(value.toTensor());
  if (value.isTuple()) return cast_tuple_to_fp64(value);
  if (value.isList()) return cast_list_to_fp64(value);
  if (value.isGenericDict()) return cast_dict_to_fp64(value);
  return value;  // floats are doubles already; everything else has no precision to raise
}

std::optional<at::Tensor> reduce_to_scalar_loss(const c10::IValue& out) {
  if (out.isTensor()) {
    const at::Tensor& t = out.toTensor();
    if (!t.is_floating_point() || t.numel() == 0 || !t.requires_grad()) return std::nullopt;
    return t.sum() / t.numel();
  }
  std::vector<c10::IValue> items;
  if (out.isTuple())
    items = out.toTupleRef().elements().vec();
  else if (out.isList())
    items = out.toListRef().vec();
  std::optional<at::Tensor> total;
  for (const c10::IValue& item : items) {
    auto part = reduce_to_scalar_loss(item);
    if (part) total = total ? *total + *part : *part;
  }
  if (total && !items.empty()) *total = *total / static_cast<double>(items.size());
  return total;
}

std::string dtype_name(c10::ScalarType type) {
  switch (type) {
    case at::kFloat:
      return "float32";
    case at::kDouble:
      return "float64";
    case at::kHalf:
      return "float16";
    case at::kBFloat16:
      return "bfloat16";
    case at::kComplexHalf:
      return "complex32";
    case at::kComplexFloat:
      return "complex64";
    case at::kComplexDouble:
      return "complex128";
    case at::kLong:
      return "int64";
    case at::kInt:
      return "int32";
    case at::kShort:
      return "int16";
    case at::kChar:
      return "int8";
    case at::kByte:
      return "uint8";
    case at::kBool:
      return "bool";
    case at::kQInt8:
      return "qint8";
    case at::kQUInt8:
      return "quint8";
    case at::kQInt32:
      return "qint32";
    case at::kQUInt4x2:
      return "quint4x2";
    case at::kQUInt2x4:
      return "quint2x4";
    default:
      return c10::toString(type);
  }
}

}  // namespace tsrepro
