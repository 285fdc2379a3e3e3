def difference(ref, res, ref64):  # why an output differs, or None: torch._dynamo.utils.same()'s rules as tsrepro's runner/exec/compare.cpp applies them
    if isinstance(ref, float):  # a float: within tol, as allclose judges (NaN equals NaN under equal_nan)
        close = type(res) == float and torch.allclose(torch.tensor([ref]).double(), torch.tensor([res]).double(), __TOL__, __TOL__, __EQUAL_NAN__)
        return None if close else "%r vs %r" % (ref, res)
    if not torch.is_tensor(ref) or not torch.is_tensor(res):  # any other value (int, bool, str, None): equal
        return None if type(ref) == type(res) and ref == res else "%r vs %r" % (ref, res)
    if ref.dtype != res.dtype:  # same(exact_dtype=True): the dtypes alike  #[exact]
        return "%s vs %s" % (ref.dtype, res.dtype)  #[exact]
    if ref.shape != res.shape:  # tsrepro: the shapes alike (allclose would broadcast)
        return "shape %s vs %s" % (list(ref.shape), list(res.shape))
    ref = ref.to(res.dtype)  # same(exact_dtype=False) compares ref cast to res's dtype  #[!exact]
    if not (res.is_floating_point() or res.is_complex()):  # ignore_non_fp: only floating outputs are compared  #[ignore_non_fp]
        return None  #[ignore_non_fp]
    if not (res.is_floating_point() or res.is_complex()):  # integers and bools: equal (tsrepro: no rounding excuse)
        return None if torch.equal(ref, res) else "%d of %d elements differ" % ((ref != res).sum(), res.numel())
    cosine = torch.cosine_similarity(ref.flatten().float(), res.flatten().float(), 0, 1e-6).item()  # same(cos_similarity=True)  #[cos]
    return None if torch.allclose(ref, res, __TOL__, __TOL__, True) or cosine >= 0.99 else "cosine similarity %g" % cosine  #[cos]
    if torch.allclose(ref, res, __TOL__, __TOL__, __EQUAL_NAN__):  # same(): allclose at tol
        return None
    why = "not allclose at tol=%g (max |res - ref| = %g)" % (__TOL__, (res - ref).abs().nan_to_num(float("inf")).max())
    if not torch.is_tensor(ref64) or ref64.dtype != torch.float64 or ref64.shape != ref.shape or res.is_complex():  # no fp64 reference: allclose judges alone
        return why
    nan_avoided = ref.isnan().any() and not res.isnan().any() and not ref64.isnan().any()  # same(): res avoids ref's NaN
    if nan_avoided and torch.allclose(ref64.to(res.dtype), res, 0.04, 0.04, __EQUAL_NAN__):  # and matches fp64 loosely: res is better
        return None
    finite = ref.isfinite() & ref64.isfinite()  # tsrepro: the RMSE rule judges where both references are finite,
    if not torch.allclose(ref[~finite], res[~finite], 0, 0, __EQUAL_NAN__):  # and res must repeat ref's inf and NaN elsewhere
        return why + " and res differs where a reference is inf or NaN"
    rmse = [(side[finite].double() - ref64[finite]).square().mean().sqrt().item() for side in (ref, res)]  # same(): rmse()
    small = ref64.numel() < 1000 or ref.dim() == 4 and ref.shape[-2:] == (1, 1) or __TOL__ >= 0.02  # get_multiplier(): 3 for these,
    multiplier = 3.0 if small or res.dtype in (torch.half, torch.bfloat16) else 2.0  # and for half precision; else 2
    limit = multiplier * rmse[0] + __TOL__ / 10  # same(): RMSE(res, fp64) may be this much
    return None if not finite.any() or rmse[1] <= limit else why + " and RMSE(res, fp64) = %g > %g" % (rmse[1], limit)
