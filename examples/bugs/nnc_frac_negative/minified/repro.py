#!/usr/bin/env python3
# [JIT][NNC] aten::cos + aten::frac return wrong values under the TensorExpr fuser
# Made by tsrepro 0.1.0 (libtorch 1.13.0, AMD EPYC); expected failure: accuracy (accuracy:float32).
# Command: build/tsrepro minify /tmp/tmp.FlyEtjRskE/nnc_frac_negative.case --backend nnc -o /tmp/tmp.FlyEtjRskE/nnc_frac_negative.out -j 2
# Its nodes came from: aten::cos at /work/main/examples/bugs/nnc_frac_negative/make_case.py:48 (phase, node 21); aten::frac at /work/main/examples/bugs/nnc_frac_negative/make_case.py:48 (phase, node 22)
# Exit 1: reproduced, 0: not, 2: cannot run here. Full harness: tsrepro run <case dir>.
import signal
import sys

import torch

GRAPH = torch._C.parse_ir(
    "graph(%0 : Tensor):\n"
    "  %1 : Tensor = aten::cos(%0)\n"
    "  %2 : Tensor = aten::frac(%1)\n"
    "  return (%2)\n")
INPUTS = [
    torch.tensor([[2.8388671875]], dtype=torch.float32),
]


def fresh(value, fp64=False):  # a copy on DEVICE for one run (ops may mutate inputs); fp64: floats as float64
    if isinstance(value, (list, tuple)):
        return type(value)(fresh(v, fp64) for v in value)
    wide = fp64 and isinstance(value, torch.Tensor) and value.is_floating_point()
    return value.detach().to("cpu", torch.float64 if wide else None, copy=True) if torch.is_tensor(value) else value


def leaves(v): return [x for i in v for x in (leaves(i) if isinstance(i, (list, tuple)) else [i])]  # flattened


def reference(inputs):  # eager: TorchScript's interpreter, without optimization passes
    return torch._C._jit_interpret_graph(GRAPH.copy(), tuple(inputs))


def backend(inputs):  # nnc: the profiling executor with the TensorExpr fuser forced on for the CPU
    torch._C._jit_override_can_fuse_on_cpu(True)
    torch._C._jit_set_te_must_use_llvm_cpu(torch._C._llvm_enabled())  # NNC's interpreter only without LLVM
    function = torch._C._create_function_from_graph("repro", GRAPH.copy())
    function(*fresh(inputs))  # the profiling run (PyTorch profiles one); the next call compiles the graph
    return function(*inputs)


def same(i, ref, res, ref64):  # does output i match? torch._dynamo.utils.same()'s rules, as tsrepro applies them
    if not isinstance(ref, (torch.Tensor, float)) or type(ref) != type(res):
        return type(ref) == type(res) and ref == res or print("output %d: %r vs %r" % (i, ref, res))
    tol = 1e-04 if isinstance(ref, float) or ref.is_floating_point() or ref.is_complex() else 0  # ints: exactly
    try:
        return torch.testing.assert_close(ref, res, rtol=tol, atol=tol, equal_nan=True, check_dtype=True) is None
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
    return (rmse[1] <= limit or not ok.any()) and torch.allclose(ref[~ok].to(res.dtype), res[~ok], 0, 0, True)


if __name__ == "__main__":
    ref = None
    try:
        ref = leaves([reference(fresh(INPUTS))])  # the reference runs first: it is healthy
        signal.alarm(300)  # tsrepro counts a slower backend as hung: SIGALRM ends it
        res = leaves([backend(fresh(INPUTS))])  # a crash is left to happen
    except Exception as error:  # in the reference, the repro cannot run here (exit 2)
        print("%s raised %s: %s" % ("reference" if ref is None else "backend", type(error).__name__, error))
        sys.exit(2 if ref is None else 0)
    try:  # an fp64 reference excuses results that are merely noisy (dtype-specific graphs have none)
        ref64 = leaves([reference(fresh(INPUTS, fp64=True))])
    except Exception:
        ref64 = ref
    failed = len(ref) != len(res) or not all([same(i, *sides) for i, sides in enumerate(zip(ref, res, ref64))])
    print("verdict: %s (expected: accuracy)" % ("accuracy" if failed else "pass"))
    sys.exit(failed)
