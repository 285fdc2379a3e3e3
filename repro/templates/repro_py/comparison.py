

# ---- Comparison: tsrepro's port of torch._dynamo.utils.same() ------------------------------------
# allclose at tol; where that fails, an fp64 reference run can still excuse a result whose RMSE
# against it is within a multiplier of the reference's own. Integer tensors must be equal
# exactly, shapes must match, tuples/lists/dicts are compared element by element.

LOOSE_TOL = 1e-2 * 4  # same(): ref has NaN where res and fp64 agree loosely: res is better
MIN_COSINE_SIMILARITY = 0.99


class Diff:
    """One compared leaf of the outputs: a tensor or a scalar."""

    def __init__(self, path, dtype, ok=True, max_abs=0.0, max_rel=0.0, reason=""):
        self.path, self.dtype, self.ok = path, dtype, ok
        self.max_abs, self.max_rel, self.reason = max_abs, max_rel, reason
        self.nonfinite_mismatches = 0


def mismatch(path, dtype, reason):
    return Diff(path, dtype, ok=False, max_abs=math.inf, max_rel=math.inf, reason=reason)


def compare_outputs(ref, res, fp64_ref):
    """Diffs for every leaf; `fp64_ref` may be None (then ref is its own fp64 reference)."""
    diffs = []
    if len(ref) != len(res):
        diffs.append(mismatch("", "outputs", "output count mismatch: %d vs %d" % (len(ref), len(res))))
    for i in range(min(len(ref), len(res))):
        fp64 = fp64_ref[i] if fp64_ref is not None and i < len(fp64_ref) else ref[i]
        compare_values(ref[i], res[i], fp64, str(i), diffs)
    return diffs


def compare_values(ref, res, fp64, path, diffs):
    if isinstance(ref, (tuple, list)) and isinstance(res, (tuple, list)):
        compare_sequences(ref, res, fp64, path, diffs)
    elif isinstance(ref, dict) and isinstance(res, dict):
        compare_dicts(ref, res, fp64, path, diffs)
    elif isinstance(ref, torch.Tensor) and isinstance(res, torch.Tensor):
        diffs.append(compare_tensors(ref, res, fp64, path))
    elif kind_name(ref) != kind_name(res):
        diffs.append(mismatch(path, kind_name(ref), "type mismatch: %s vs %s" % (kind_name(ref), kind_name(res))))
    else:
        diffs.append(compare_scalars(ref, res, path))


def child_path(parent, child):
    return child if not parent else parent + "." + child


def kind_name(value):
    if isinstance(value, torch.Tensor):
        return "Tensor"
    for kind, name in ((bool, "bool"), (int, "int"), (float, "float"), (complex, "complex"), (str, "str"),
                       (type(None), "None"), (torch.device, "device"), (tuple, "tuple"), (list, "list"),
                       (dict, "dict")):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def compare_sequences(ref, res, fp64, path, diffs):
    if len(ref) != len(res):
        diffs.append(mismatch(path, kind_name(ref), "length mismatch: %d vs %d" % (len(ref), len(res))))
        return
    # An fp64 counterpart of another shape is no reference at all: fall back to ref itself.
    if not isinstance(fp64, (tuple, list)) or len(fp64) != len(ref):
        fp64 = ref
    for i, (a, b, c) in enumerate(zip(ref, res, fp64)):
        compare_values(a, b, c, child_path(path, str(i)), diffs)


def compare_dicts(ref, res, fp64, path, diffs):
    if len(ref) != len(res):
        diffs.append(mismatch(path, "dict", "key count mismatch: %d vs %d" % (len(ref), len(res))))
        return
    for key, value in ref.items():
        key_path = child_path(path, dict_key_name(key))
        if key not in res:
            diffs.append(mismatch(key_path, kind_name(value), "key missing from the result"))
            continue
        counterpart = fp64.get(key, value) if isinstance(fp64, dict) else value
        compare_values(value, res[key], counterpart, key_path, diffs)


def dict_key_name(key):
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "True" if key else "False"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        return "%.6g" % key
    return type(key).__name__


def dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def comparable(tensor):
    """A plain dense CPU tensor: outputs may live on CUDA, require grad, be sparse or quantized."""
    plain = tensor.detach()
    if plain.is_sparse:
        plain = plain.to_dense()
    if plain.is_quantized:
        plain = plain.dequantize()
    return plain.cpu()


def compare_tensors(ref_in, res_in, fp64, path):
    ref, res = comparable(ref_in), comparable(res_in)
    diff = Diff(path, dtype_name(ref.dtype))
    if ref.shape == res.shape:
        diff.max_abs, diff.max_rel, diff.nonfinite_mismatches = measure_differences(ref, res)
    else:
        diff.max_abs = diff.max_rel = math.inf
    reason = tensor_failure(ref, res, fp64)
    if reason is not None:
        diff.ok, diff.reason = False, reason
    return diff


def measure_differences(ref, res):
    """max |res - ref| and max |res - ref| / |ref| (where ref != 0), in float64, over the
    elements where both are finite; and how many of the other elements differ."""
    if ref.numel() == 0:
        return 0.0, 0.0, 0
    wide = torch.complex128 if ref.is_complex() or res.is_complex() else torch.float64
    a, b = ref.to(wide), res.to(wide)
    finite = a.isfinite() & b.isfinite()
    agree = a == b
    if COMPARE["equal_nan"]:
        agree = agree | (a.isnan() & b.isnan())
    nonfinite_mismatches = int((~finite & ~agree).sum().item())
    abs_diff = (b - a).abs().masked_select(finite)
    if abs_diff.numel() == 0:
        return 0.0, 0.0, nonfinite_mismatches
    ref_abs = a.abs().masked_select(finite)
    rel_diff = (abs_diff / ref_abs).masked_fill(abs_diff == 0, 0.0).masked_select(ref_abs != 0)
    return abs_diff.max().item(), rel_diff.max().item() if rel_diff.numel() else 0.0, nonfinite_mismatches


def tensor_failure(ref, res, fp64):
    """None when the tensors match, else the reason they do not."""
    if COMPARE["exact_dtype"] and ref.dtype != res.dtype:
        return "dtype mismatch: %s vs %s" % (dtype_name(ref.dtype), dtype_name(res.dtype))
    # Without exact_dtype same() casts ref to res's dtype, so res's dtype decides the rule.
    exact_kind = not res.dtype.is_floating_point and not res.dtype.is_complex
    if exact_kind and COMPARE["ignore_non_fp"]:
        return None
    if ref.shape != res.shape:
        return "shape mismatch: %s vs %s" % (list(ref.shape), list(res.shape))
    if res.dtype == torch.bool:
        # same(): "triton stores bool as int8", so bools are compared as uint8 under allclose.
        if allclose(ref.to(torch.uint8), res.to(torch.uint8), COMPARE["equal_nan"]):
            return None
        return "bool tensors differ at %d of %d elements" % (unequal_count(ref.to(torch.bool), res), res.numel())
    if exact_kind:
        if torch.equal(ref.to(res.dtype), res):
            return None
        return "integer tensors differ at %d of %d elements" % (unequal_count(ref.to(res.dtype), res), res.numel())
    if COMPARE["cos_similarity"]:
        return cosine_failure(ref, res)
    return floating_failure(ref, res, fp64)


def allclose(ref, res, equal_nan, tol=None):
    tol = COMPARE["tol"] if tol is None else tol
    return torch.allclose(ref, res, rtol=tol, atol=tol, equal_nan=equal_nan)


def unequal_count(ref, res):
    return int(ref.ne(res).sum().item())


def cosine_failure(ref, res):
    ref_flat, res_flat = ref.flatten().to(torch.float32), res.flatten().to(torch.float32)
    # same(): allclose first, because the similarity of two zero vectors is 0.
    if allclose(ref_flat, res_flat, equal_nan=True):
        return None
    score = torch.nn.functional.cosine_similarity(ref_flat, res_flat, dim=0, eps=1e-6).item()
    if score >= MIN_COSINE_SIMILARITY:
        return None
    return "cosine similarity %.6g < %.6g" % (score, MIN_COSINE_SIMILARITY)


def floating_failure(ref_in, res, fp64_value):
    ref = ref_in if COMPARE["exact_dtype"] else ref_in.to(res.dtype)
    if allclose(ref, res, COMPARE["equal_nan"]):
        return None
    allclose_failed = "allclose failed at tol=%.6g" % COMPARE["tol"]
    fp64_ref = usable_fp64_reference(fp64_value, ref, res)
    if fp64_ref is None:
        return None if COMPARE["ignore_non_fp"] else allclose_failed + " and there is no fp64 reference"
    if ref_has_nan_that_res_avoids(ref, res, fp64_ref):
        return None
    return rmse_failure(ref, res, fp64_ref, allclose_failed)


def usable_fp64_reference(fp64_value, ref, res):
    """same() uses the fp64 run only when it produced float64 of ref's shape."""
    if not isinstance(fp64_value, torch.Tensor) or not res.is_floating_point():
        return None
    if fp64_value.dtype != torch.float64 or fp64_value.shape != ref.shape:
        return None
    return comparable(fp64_value)


def ref_has_nan_that_res_avoids(ref, res, fp64_ref):
    return (not fp64_ref.isnan().any().item() and not res.isnan().any().item() and ref.isnan().any().item()
            and allclose(fp64_ref.to(res.dtype), res, COMPARE["equal_nan"], tol=LOOSE_TOL))


def rmse(fp64_ref, tensor):
    return (fp64_ref - tensor.to(torch.float64)).square().mean().sqrt().item()


def rmse_failure(ref, res, fp64_ref, allclose_failed):
    """same()'s RMSE rule over the elements where both references are finite; the others must
    match ref's inf/NaN pattern (one inf in ref would otherwise excuse any result)."""
    finite = ref.isfinite() & fp64_ref.isfinite()
    failures = []
    nonfinite_count = int((~finite).sum().item())
    if nonfinite_count:
        a, b = ref.masked_select(~finite).to(torch.float64), res.masked_select(~finite).to(torch.float64)
        agree = a == b
        if COMPARE["equal_nan"]:
            agree = agree | (a.isnan() & b.isnan())
        differing = int((~agree).sum().item())
        if differing:
            failures.append("%d of the %d elements where a reference is inf or NaN differ from it"
                            % (differing, nonfinite_count))
    if nonfinite_count < ref.numel():
        fp64_finite = fp64_ref.masked_select(finite)
        ref_error = rmse(fp64_finite, ref.masked_select(finite))
        res_error = rmse(fp64_finite, res.masked_select(finite))
        multiplier = rmse_multiplier(ref, res, fp64_ref)
        threshold = multiplier * ref_error + COMPARE["tol"] / 10.0
        if not res_error <= threshold:
            failures.append("RMSE(res,fp64)=%.6g > %.6g*RMSE(ref,fp64)+tol/10=%.6g (RMSE(ref,fp64)=%.6g, over the "
                            "%d elements where both references are finite)"
                            % (res_error, multiplier, threshold, ref_error, ref.numel() - nonfinite_count))
    if not failures:
        return None
    return " and ".join([allclose_failed] + failures)


def rmse_multiplier(ref, res, fp64_ref):
    """same()'s get_multiplier(): 3 for fp16/bf16 results, small tensors, 1x1 kernels and
    large tolerances, else 2."""
    multiplier = 3.0 if res.dtype in (torch.float16, torch.bfloat16) else 2.0
    one_by_one_kernel = ref.dim() == 4 and ref.shape[-1] == 1 and ref.shape[-2] == 1
    if fp64_ref.numel() < 1000 or one_by_one_kernel or COMPARE["tol"] >= 2 * 1e-2:
        multiplier = 3.0
    return multiplier


def compare_scalars(ref, res, path):
    diff = Diff(path, kind_name(ref))
    if isinstance(ref, (float, complex)):
        measure_scalar(ref, res, diff)
        if not numbers_close(ref, res) and not COMPARE["ignore_non_fp"]:
            diff.ok = False
            diff.reason = "values differ beyond tol=%.6g: %s vs %s" % (
                COMPARE["tol"], scalar_text(ref), scalar_text(res))
        return diff
    if kind_name(ref) == "int":
        measure_scalar(ref, res, diff)
    if not COMPARE["ignore_non_fp"] and not values_equal(ref, res):
        diff.ok = False
        diff.reason = "values differ: %s vs %s" % (scalar_text(ref), scalar_text(res))
    return diff


def numbers_close(ref, res):
    """same() on floats: allclose(ref, res, atol=tol, rtol=tol, equal_nan)."""
    a, b = complex(ref), complex(res)
    if cmath.isnan(a) or cmath.isnan(b):
        return cmath.isnan(a) and cmath.isnan(b) and COMPARE["equal_nan"]
    if a == b:  # equal infinities
        return True
    return abs(a - b) <= COMPARE["tol"] + COMPARE["tol"] * abs(b)


def measure_scalar(ref, res, diff):
    a, b = complex(ref), complex(res)
    diff.max_abs = 0.0 if a == b else abs(b - a)
    diff.max_rel = 0.0 if abs(a) == 0 or diff.max_abs == 0 else diff.max_abs / abs(a)


def values_equal(ref, res):
    try:
        return bool(ref == res)
    except Exception:
        return False


def scalar_text(value):
    if isinstance(value, float):
        return "%.6g" % value
    if isinstance(value, str):
        return "'" + value + "'"
    return str(value)


def compare_sides(ref, res, fp64):
    """Outputs followed by input gradients (paths "grad.<i>"): one comparison covers both."""
    ref_outputs, ref_grads = ref
    res_outputs, res_grads = res
    diffs = compare_outputs(ref_outputs, res_outputs, fp64[0] if fp64 else None)
    if ref_grads:
        for diff in compare_outputs(ref_grads, res_grads, fp64[1] if fp64 and fp64[1] else None):
            diff.path = "grad." + diff.path
            diffs.append(diff)
    return diffs
