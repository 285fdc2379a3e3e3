#pragma once
// Output comparison with the semantics of PyTorch's torch._dynamo.utils.same():
// allclose at `tol`; where that fails and an fp64 reference exists, the result still passes when
// RMSE(res, fp64) <= multiplier * RMSE(ref, fp64) + tol / 10 over the elements where both
// references are finite, and res matches ref's inf/NaN pattern elsewhere. Integer and bool tensors must be
// equal exactly (unless ignore_non_fp). Tuples and lists are compared element by element.

#include <optional>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>

namespace tsrepro {

struct CompareOptions {
  double tol = 1e-4;
  bool cos_similarity = false;  // compare flattened fp32 tensors by cosine similarity >= 0.99
  // NaN equals NaN, as PyTorch's minifier compares (same_two_models calls same(equal_nan=True)):
  // a model whose output holds NaN is not by itself a failure.
  bool equal_nan = true;
  bool use_fp64 = true;        // excuse an allclose failure by the fp64 RMSE rule (--no-fp64: off)
  bool exact_dtype = true;     // a dtype mismatch is a failure
  bool ignore_non_fp = false;  // skip ints, bools, strings, non-floating tensors
};

// One leaf of the (possibly nested) outputs: a tensor or a scalar.
struct OutputDiff {
  std::string path;   // index path into the outputs: "0", "1.2" for output 1, element 2
  std::string dtype;  // "float32", "int64", "bool", ...; for non-tensors the kind: "int", "float", "str"
  bool ok = true;
  double max_abs = 0;                // max |res - ref| over elements where both are finite (inf on shape/type mismatch)
  double max_rel = 0;                // max |res - ref| / |ref| over those elements where ref != 0
  int64_t nonfinite_mismatches = 0;  // elements where either is inf/NaN and they differ
  std::string reason;                // why it failed, for people; empty when ok
};

struct CompareResult {
  bool same = true;
  std::vector<OutputDiff> outputs;
  // The first failing leaf, or nullptr.
  const OutputDiff* first_failure() const;
};

// `fp64_ref` may be null (no fp64 run was possible); then ref serves as its own fp64 reference,
// as in same(). The three vectors are the graph's outputs, index by index.
CompareResult compare_outputs(const std::vector<c10::IValue>& ref, const std::vector<c10::IValue>& res,
                              const std::vector<c10::IValue>* fp64_ref, const CompareOptions& options);

// A deep copy where floating-point tensors (and Python floats stay floats) are cast to float64;
// used to build the fp64 reference run's inputs. Nested tuples/lists are followed.
c10::IValue cast_floating_to_fp64(const c10::IValue& value);

// The scalar --backward differentiates: torch._dynamo.testing.reduce_to_scalar_loss, the mean of
// every floating tensor that requires grad, averaged over the items of tuples and lists; nullopt
// when no output has a gradient.
std::optional<at::Tensor> reduce_to_scalar_loss(const c10::IValue& out);

// "float32", "int64", ... the names PyTorch prints without the "torch." prefix.
std::string dtype_name(c10::ScalarType type);

}  // namespace tsrepro
