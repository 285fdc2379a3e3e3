def same(i, ref, res, ref64):  # does output i match? torch._dynamo.utils.same()'s rules, as tsrepro applies them
    if not isinstance(ref, (torch.Tensor, float)) or type(ref) != type(res):
        return type(ref) == type(res) and ref == res or print("output %d: %r vs %r" % (i, ref, res))
    tol = __TOL__ if isinstance(ref, float) or ref.is_floating_point() or ref.is_complex() else 0  # ints: exactly
    try:
        return torch.testing.assert_close(ref, res, rtol=tol, atol=tol, equal_nan=__EQUAL_NAN__, check_dtype=__EXACT__) is None
    except AssertionError as error:  # which elements differ, max_abs, max_rel
        print("output %d: %s" % (i, error))
    if isinstance(ref, torch.Tensor) and ref.shape == res.shape:  # the first differing elements, side by side
        print("  reference %s\n  backend   %s" % (ref[ref != res][:6].tolist(), res[ref != res][:6].tolist()))
    if not tol or not isinstance(ref64, torch.Tensor) or ref64.dtype != torch.float64:  # no fp64 reference
        return False
    ok = ref.isfinite() & ref64.isfinite()  # RMSE over these; elsewhere res must repeat ref's inf/NaN
    rmse = [(t[ok].double() - ref64[ok]).square().mean().sqrt().item() for t in (ref, res)]
    loose = ref.numel() < 1000 or ref.dim() == 4 and ref.shape[-2:] == (1, 1) or tol >= 0.02
    limit = (3.0 if loose or res.dtype in (torch.half, torch.bfloat16) else 2.0) * rmse[0] + tol / 10
    return (rmse[1] <= limit or not ok.any()) and torch.allclose(ref[~ok].to(res.dtype), res[~ok], 0, 0, __EQUAL_NAN__)
