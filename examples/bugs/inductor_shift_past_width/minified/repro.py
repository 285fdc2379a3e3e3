#!/usr/bin/env python3
# [inductor] aten::bitwise_right_shift + aten::__and__ + aten::to return wrong values under torch.compile with Inductor (bisected to Inductor's lowering of aten.bitwise_right_shift.Tensor)
# Made by tsrepro 0.1.0 (libtorch 2.6.0, Intel(R) Xeon(R) Processor); expected failure: accuracy (accuracy:float32).
# Seen with torch 2.6.0+debian, Python 3.13.5, gcc version 14.2.0.
# Command: /tsrepro/build/tsrepro minify /tmp/tmp.qanp2UDICy/inductor_shift_past_width.case --backend inductor -o /tmp/tmp.qanp2UDICy/inductor_shift_past_width.out -j 2
# Its nodes came from: aten::bitwise_right_shift at /tsrepro/src/examples/bugs/inductor_shift_past_width/make_case.py:37 (bytes, node 1); aten::__and__ at /tsrepro/src/examples/bugs/inductor_shift_past_width/make_case.py:37 (bytes, node 2); aten::to at /tsrepro/src/examples/bugs/inductor_shift_past_width/make_case.py:38 (bytes, node 3)
# Bisected to: Inductor's lowering of aten.bitwise_right_shift.Tensor (bitwise_right_shift): application 1 of 3 of CompilerBisector's inductor subsystem lowerings (with none of them kept the case runs right; with this one too, it fails as it does); in Inductor (before it, eager, aot_eager, aot_eager_decomp_partition run right)
# It runs right with PyTorch's CompilerBisector stopped just before that: TORCH_BISECT_BACKEND=inductor TORCH_BISECT_MAX=-1 TORCH_BISECT_SUBSYSTEM=lowerings python3 repro.py
# Exit 1: reproduced, 0: not, 2: cannot run here. Full harness: tsrepro run <case dir>.
import signal
import sys

import torch


class Repro(torch.nn.Module):  # the minified graph as plain PyTorch: its state as attributes, its forward as code
    def __init__(self):
        super().__init__()
        self.register_buffer("bytes_shifts", torch.tensor([0, 8, 16, 24, 32, 40, 48, 56, 64], dtype=torch.int64))

    def forward(self, argument):
        bitwise_right_shift = torch.ops.aten.bitwise_right_shift.Tensor(argument, self.bytes_shifts)
        __and__ = torch.ops.aten.__and__.Scalar(bitwise_right_shift, 255)
        to = torch.ops.aten.to.dtype(__and__, torch.float32)
        return to


INPUTS = [
    torch.tensor([[81985529216486895], [977], [1099511627781], [12345678901]], dtype=torch.int64),
]


def fresh(value, fp64=False):  # a copy on DEVICE for one run (ops may mutate inputs); fp64: floats as float64
    if isinstance(value, (list, tuple)):
        return type(value)(fresh(v, fp64) for v in value)
    wide = fp64 and isinstance(value, torch.Tensor) and value.is_floating_point()
    return value.detach().to("cpu", torch.float64 if wide else None, copy=True) if torch.is_tensor(value) else value


def leaves(v):  # flattened: lists and tuples in order, a dict as each key (sorted) then its value
    if isinstance(v, dict):
        return [x for k in sorted(v, key=repr) for x in [k] + leaves([v[k]])]
    return [x for i in v for x in (leaves(i) if isinstance(i, (list, tuple, dict)) else [i])]


def reference(inputs, fp64=False):  # eager
    # Repro as plain PyTorch (tsrepro checked it against TorchScript's interpreter)
    return Repro().to("cpu", torch.float64 if fp64 else None)(*inputs)


def backend(inputs, fp64=False):  # inductor
    # torch.compile(Repro()) with Inductor
    import torch._inductor.config  # PyTorch 2: on 1.x an ImportError, this cannot run here (exit 2)
    module = Repro().to("cpu")
    with torch._inductor.config.patch({}):
        compiled = torch.compile(module, backend="inductor")
        state = {k: v.clone() for k, v in module.state_dict().items()}
        compiled(*fresh(inputs))  # the first call compiles
        module.load_state_dict(state)  # the call that counts starts from the same state
        return compiled(*inputs)


def difference(ref, res, ref64):  # why an output differs, or None: torch._dynamo.utils.same()'s rules as tsrepro's runner/exec/compare.cpp applies them
    if isinstance(ref, float):  # a float: within tol, as allclose judges (NaN equals NaN under equal_nan)
        close = type(res) == float and torch.allclose(torch.tensor([ref]).double(), torch.tensor([res]).double(), 1e-04, 1e-04, True)
        return None if close else "%r vs %r" % (ref, res)
    if not torch.is_tensor(ref) or not torch.is_tensor(res):  # any other value (int, bool, str, None): equal
        return None if type(ref) == type(res) and ref == res else "%r vs %r" % (ref, res)
    if ref.dtype != res.dtype:  # same(exact_dtype=True): the dtypes alike
        return "%s vs %s" % (ref.dtype, res.dtype)
    if ref.shape != res.shape:  # tsrepro: the shapes alike (allclose would broadcast)
        return "shape %s vs %s" % (list(ref.shape), list(res.shape))
    if not (res.is_floating_point() or res.is_complex()):  # integers and bools: equal (tsrepro: no rounding excuse)
        return None if torch.equal(ref, res) else "%d of %d elements differ" % ((ref != res).sum(), res.numel())
    if torch.allclose(ref, res, 1e-04, 1e-04, True):  # same(): allclose at tol
        return None
    why = "not allclose at tol=%g (max |res - ref| = %g)" % (1e-04, (res - ref).abs().nan_to_num(float("inf")).max())
    if not torch.is_tensor(ref64) or ref64.dtype != torch.float64 or ref64.shape != ref.shape or res.is_complex():  # no fp64 reference: allclose judges alone
        return why
    nan_avoided = ref.isnan().any() and not res.isnan().any() and not ref64.isnan().any()  # same(): res avoids ref's NaN
    if nan_avoided and torch.allclose(ref64.to(res.dtype), res, 0.04, 0.04, True):  # and matches fp64 loosely: res is better
        return None
    finite = ref.isfinite() & ref64.isfinite()  # tsrepro: the RMSE rule judges where both references are finite,
    if not torch.allclose(ref[~finite], res[~finite], 0, 0, True):  # and res must repeat ref's inf and NaN elsewhere
        return why + " and res differs where a reference is inf or NaN"
    rmse = [(side[finite].double() - ref64[finite]).square().mean().sqrt().item() for side in (ref, res)]  # same(): rmse()
    small = ref64.numel() < 1000 or ref.dim() == 4 and ref.shape[-2:] == (1, 1) or 1e-04 >= 0.02  # get_multiplier(): 3 for these,
    multiplier = 3.0 if small or res.dtype in (torch.half, torch.bfloat16) else 2.0  # and for half precision; else 2
    limit = multiplier * rmse[0] + 1e-04 / 10  # same(): RMSE(res, fp64) may be this much
    return None if not finite.any() or rmse[1] <= limit else why + " and RMSE(res, fp64) = %g > %g" % (rmse[1], limit)


if __name__ == "__main__":
    ref = None
    try:
        ref = leaves([reference(fresh(INPUTS))])  # the reference runs first: it is healthy
        signal.alarm(2100)  # tsrepro counts a slower backend as hung: SIGALRM ends it
        res = leaves([backend(fresh(INPUTS))])  # a crash is left to happen
    except Exception as error:  # in the reference, or a backend this PyTorch lacks: cannot run here (exit 2)
        print("%s raised %s: %s" % ("reference" if ref is None else "backend", type(error).__name__, error))
        sys.exit(2 if ref is None or isinstance(error, ImportError) else 0)
    try:  # an fp64 reference excuses results that are merely noisy (dtype-specific graphs have none)
        ref64 = leaves([reference(fresh(INPUTS, fp64=True), fp64=True)])  # Repro's floats as float64 too
    except Exception:
        ref64 = ref
    failed = len(ref) != len(res)  # as many outputs, each alike
    for i, sides in enumerate(zip(ref, res, ref64)):
        why = difference(*sides)
        if why is not None:
            print("output %d: %s" % (i, why))
            failed = True
    print("verdict: %s (expected: accuracy)" % ("accuracy" if failed else "pass"))
    sys.exit(failed)
