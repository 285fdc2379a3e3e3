#!/usr/bin/python3
"""Differential testing of PyTorch 2's compilers against eager, one probe per op on edge values.

    /usr/bin/python3 scripts/bughunt/pt2_ops.py [--backend inductor|aoti|export|export_decomposed] [--only NAME,...]

Each probe is a small function of fixed edge-value tensors (NaN, infinities, -0.0, huge, tiny,
negative integers, shift counts past the bit width). All probes are compiled as ONE function with
many outputs (an Inductor compile costs 5-15 s here); the outputs that disagree with eager are then
compiled again one at a time, so a difference caused by fusing probes together is told apart from
one the op shows alone. Prints one JSON line per disagreement: the probe, where it disagrees
(together/alone), and the first differing element. Exit 0 always: finding none is an answer too.

This is how issue 43's real bugs were looked for where the corpus found none (docs/CORPUS.md);
a probe that disagrees alone becomes a model in examples/bugs/ and is minified by tsrepro.
"""
import argparse
import json
import math
import os
import sys
import tempfile

import torch

F = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 0.5, -0.5, 1.5, -1.5, 2.5,
                  -2.5, 1e30, -1e30, 3e9, -3e9, 1e-40, 255.7, -1.0, 7.0, 300.0])
I64 = torch.tensor([-9, -7, -1, 0, 1, 7, 9, 2**62, -(2**62), 2**63 - 1, -(2**63), 255, 256, -256, 3, 5,
                    -3, 100, 63, 64], dtype=torch.int64)
I32 = I64.clamp(-(2**31), 2**31 - 1).to(torch.int32)
SHIFT = torch.tensor([0, 1, 7, 31, 32, 33, 63, 64, 65, 100, 0, 1, 7, 31, 32, 33, 63, 64, 65, 100],
                     dtype=torch.int64)
U8 = torch.arange(0, 250, 13, dtype=torch.uint8)[:20]
DIV = torch.tensor([3, -3, 2, -2, 1, -1, 7, -7, 5, -5, 3, -3, 2, -2, 1, -1, 7, -7, 5, -5], dtype=torch.int64)
FDIV = torch.tensor([3.0, -3.0, 0.0, -0.0, 2.0, float("inf"), float("nan"), 0.5, -0.5, 1.0,
                     3.0, -3.0, 0.0, -0.0, 2.0, float("inf"), float("nan"), 0.5, -0.5, 1.0])

# name -> function of the six tensors above, in the order (F, I64, SHIFT, DIV, FDIV, U8).
PROBES = {
    "to_uint8_from_float": lambda f, i, s, d, fd, u: f.to(torch.uint8),
    "to_int8_from_float": lambda f, i, s, d, fd, u: f.to(torch.int8),
    "to_int32_from_float": lambda f, i, s, d, fd, u: f.to(torch.int32),
    "to_int64_from_float": lambda f, i, s, d, fd, u: f.to(torch.int64),
    "to_bool_from_float": lambda f, i, s, d, fd, u: f.to(torch.bool),
    "to_uint8_from_int64": lambda f, i, s, d, fd, u: i.to(torch.uint8),
    "rshift_int64": lambda f, i, s, d, fd, u: torch.bitwise_right_shift(i, s),
    "lshift_int64": lambda f, i, s, d, fd, u: torch.bitwise_left_shift(i, s),
    "rshift_int32": lambda f, i, s, d, fd, u: torch.bitwise_right_shift(i.to(torch.int32), s.to(torch.int32)),
    "lshift_int32": lambda f, i, s, d, fd, u: torch.bitwise_left_shift(i.to(torch.int32), s.to(torch.int32)),
    "rshift_uint8": lambda f, i, s, d, fd, u: torch.bitwise_right_shift(u, s.to(torch.uint8)),
    "fmod_int": lambda f, i, s, d, fd, u: torch.fmod(i, d),
    "remainder_int": lambda f, i, s, d, fd, u: torch.remainder(i, d),
    "floor_divide_int": lambda f, i, s, d, fd, u: torch.floor_divide(i, d),
    "div_trunc_int": lambda f, i, s, d, fd, u: torch.div(i, d, rounding_mode="trunc"),
    "div_floor_float": lambda f, i, s, d, fd, u: torch.div(f, fd, rounding_mode="floor"),
    "div_trunc_float": lambda f, i, s, d, fd, u: torch.div(f, fd, rounding_mode="trunc"),
    "fmod_float": lambda f, i, s, d, fd, u: torch.fmod(f, fd),
    "remainder_float": lambda f, i, s, d, fd, u: torch.remainder(f, fd),
    "round": lambda f, i, s, d, fd, u: torch.round(f),
    "round_decimals": lambda f, i, s, d, fd, u: torch.round(f, decimals=1),
    "frac": lambda f, i, s, d, fd, u: torch.frac(f),
    "trunc": lambda f, i, s, d, fd, u: torch.trunc(f),
    "sign": lambda f, i, s, d, fd, u: torch.sign(f),
    "sgn_int": lambda f, i, s, d, fd, u: torch.sgn(i),
    "signbit": lambda f, i, s, d, fd, u: torch.signbit(f),
    "clamp_nan_bound": lambda f, i, s, d, fd, u: torch.clamp(f, min=float("nan")),
    "clamp_int_float": lambda f, i, s, d, fd, u: torch.clamp(i, min=-2.5, max=2.5),
    "clamp_min_gt_max": lambda f, i, s, d, fd, u: torch.clamp(f, min=1.0, max=-1.0),
    "maximum_nan": lambda f, i, s, d, fd, u: torch.maximum(f, fd),
    "fmax": lambda f, i, s, d, fd, u: torch.fmax(f, fd),
    "relu6_nan": lambda f, i, s, d, fd, u: torch.nn.functional.relu6(f),
    "hardtanh_nan": lambda f, i, s, d, fd, u: torch.nn.functional.hardtanh(f),
    "hardsigmoid": lambda f, i, s, d, fd, u: torch.nn.functional.hardsigmoid(f),
    "hardswish": lambda f, i, s, d, fd, u: torch.nn.functional.hardswish(f),
    "threshold_nan": lambda f, i, s, d, fd, u: torch.nn.functional.threshold(f, 0.5, -3.0),
    "leaky_relu": lambda f, i, s, d, fd, u: torch.nn.functional.leaky_relu(f, 0.1),
    "abs_int_min": lambda f, i, s, d, fd, u: torch.abs(i),
    "neg_int_min": lambda f, i, s, d, fd, u: torch.neg(i),
    "pow_int_neg": lambda f, i, s, d, fd, u: torch.pow(d, -1),
    "pow_int_int": lambda f, i, s, d, fd, u: torch.pow(d, s.clamp(max=5)),
    "pow_float_half": lambda f, i, s, d, fd, u: torch.pow(f, 0.5),
    "pow_float_int": lambda f, i, s, d, fd, u: torch.pow(fd, 3),
    "rsqrt": lambda f, i, s, d, fd, u: torch.rsqrt(f),
    "log1p": lambda f, i, s, d, fd, u: torch.log1p(f),
    "expm1": lambda f, i, s, d, fd, u: torch.expm1(f),
    "sigmoid": lambda f, i, s, d, fd, u: torch.sigmoid(f),
    "logit": lambda f, i, s, d, fd, u: torch.logit(f.clamp(-2, 2) / 4 + 0.5),
    "erfinv": lambda f, i, s, d, fd, u: torch.erfinv(f.clamp(-2, 2) / 2),
    "nan_to_num": lambda f, i, s, d, fd, u: torch.nan_to_num(f),
    "isinf": lambda f, i, s, d, fd, u: torch.isinf(f),
    "copysign": lambda f, i, s, d, fd, u: torch.copysign(f, fd),
    "atan2": lambda f, i, s, d, fd, u: torch.atan2(f, fd),
    "where_scalar": lambda f, i, s, d, fd, u: torch.where(f > 0, f, 0.0),
    "bitwise_not_bool": lambda f, i, s, d, fd, u: torch.bitwise_not(f > 0),
    "bitwise_and_int": lambda f, i, s, d, fd, u: torch.bitwise_and(i, d),
    "logical_xor": lambda f, i, s, d, fd, u: torch.logical_xor(f, fd),
    "int_add_overflow": lambda f, i, s, d, fd, u: i + i,
    "int_mul_overflow": lambda f, i, s, d, fd, u: i * d,
    "uint8_sub": lambda f, i, s, d, fd, u: u - 200,
    "uint8_mul": lambda f, i, s, d, fd, u: u * 3,
    "uint8_div_true": lambda f, i, s, d, fd, u: u / 7,
    "int_true_div": lambda f, i, s, d, fd, u: i / d,
    "cumsum_int": lambda f, i, s, d, fd, u: torch.cumsum(d, 0),
    "argmax_nan": lambda f, i, s, d, fd, u: torch.argmax(f),
    "max_nan": lambda f, i, s, d, fd, u: torch.max(f),
    "amax_nan": lambda f, i, s, d, fd, u: torch.amax(f.view(4, 5), 1),
    "min_dim_nan": lambda f, i, s, d, fd, u: torch.min(f.view(4, 5), 1)[1],
    "sum_uint8": lambda f, i, s, d, fd, u: u.sum(),
    "mean_int_as_float": lambda f, i, s, d, fd, u: d.float().mean(),
    "prod_int": lambda f, i, s, d, fd, u: torch.prod(d),
    "logsumexp_inf": lambda f, i, s, d, fd, u: torch.logsumexp(f.view(4, 5), 1),
    "softmax_inf": lambda f, i, s, d, fd, u: torch.softmax(f.view(4, 5), 1),
    "log_softmax_inf": lambda f, i, s, d, fd, u: torch.log_softmax(f.view(4, 5), 1),
    "var_int": lambda f, i, s, d, fd, u: torch.var(d.float()),
    "std_one": lambda f, i, s, d, fd, u: torch.std(f[:1]),
    "topk_nan": lambda f, i, s, d, fd, u: torch.topk(f, 3)[1],
    "sort_nan": lambda f, i, s, d, fd, u: torch.sort(f)[1],
    "gelu_tanh": lambda f, i, s, d, fd, u: torch.nn.functional.gelu(f, approximate="tanh"),
    "mish": lambda f, i, s, d, fd, u: torch.nn.functional.mish(f),
    "softplus_beta": lambda f, i, s, d, fd, u: torch.nn.functional.softplus(f, beta=2.0, threshold=5.0),
    "elu": lambda f, i, s, d, fd, u: torch.nn.functional.elu(f),
    "celu": lambda f, i, s, d, fd, u: torch.nn.functional.celu(f, 0.5),
    "selu": lambda f, i, s, d, fd, u: torch.nn.functional.selu(f),
    "softsign": lambda f, i, s, d, fd, u: torch.nn.functional.softsign(f),
    "tanhshrink": lambda f, i, s, d, fd, u: torch.nn.functional.tanhshrink(f),
    "hardshrink": lambda f, i, s, d, fd, u: torch.nn.functional.hardshrink(f, 0.5),
    "softshrink": lambda f, i, s, d, fd, u: torch.nn.functional.softshrink(f, 0.5),
    "lerp": lambda f, i, s, d, fd, u: torch.lerp(f, fd, 0.5),
    "addcdiv": lambda f, i, s, d, fd, u: torch.addcdiv(f, f, fd, value=0.5),
    "heaviside": lambda f, i, s, d, fd, u: torch.heaviside(f, fd),
    "xlogy": lambda f, i, s, d, fd, u: torch.xlogy(f, fd),
    "hypot": lambda f, i, s, d, fd, u: torch.hypot(f, fd),
    "float_floor_int_result": lambda f, i, s, d, fd, u: torch.floor(f).to(torch.int64),
    "bucketize": lambda f, i, s, d, fd, u: torch.bucketize(f, torch.tensor([-1.0, 0.0, 1.0])),
    "index_neg": lambda f, i, s, d, fd, u: f[d.clamp(-20, 19)],
    "gather_neg": lambda f, i, s, d, fd, u: torch.gather(f, 0, d.clamp(-20, 19).abs()),
    "mul_half": lambda f, i, s, d, fd, u: (f.half() * 3).float(),
    "bf16_round_trip": lambda f, i, s, d, fd, u: (f.bfloat16() + 1).float(),
    "half_to_int": lambda f, i, s, d, fd, u: f.half().to(torch.int32),
}


def outputs_of(names):
    def run(f, i, s, d, fd, u):
        return tuple(PROBES[n](f, i, s, d, fd, u) for n in names)
    return run


def compiled(fn, backend, args):
    if backend == "inductor":
        torch._dynamo.reset()
        c = torch.compile(fn, backend="inductor", fullgraph=True)
        c(*args)
        return c(*args)
    class M(torch.nn.Module):
        def forward(self, *a):
            return fn(*a)
    ep = torch.export.export(M(), args)
    if backend == "export":
        return ep.module()(*args)
    if backend == "export_decomposed":  # torch.export's core ATen decompositions applied
        return ep.run_decompositions().module()(*args)
    from torch._inductor import aoti_compile_and_package, aoti_load_package
    with tempfile.TemporaryDirectory() as d:
        path = aoti_compile_and_package(ep, package_path=os.path.join(d, "m.pt2"))
        return aoti_load_package(path)(*args)


def first_difference(expected, got):
    if expected.dtype != got.dtype or expected.shape != got.shape:
        return {"expected": f"{expected.dtype}{list(expected.shape)}", "got": f"{got.dtype}{list(got.shape)}"}
    e, g = expected.reshape(-1), got.reshape(-1)
    for k in range(e.numel()):
        a, b = e[k].item(), g[k].item()
        same = a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))
        if not same and isinstance(a, float) and not (math.isinf(a) or math.isnan(a) or math.isnan(b)):
            same = abs(a - b) <= 1e-5 + 1e-5 * abs(a)
        if not same:
            return {"index": k, "expected": a, "got": b}
    return None


def disagreements(names, backend, args):
    eager = outputs_of(names)(*args)
    try:
        got = compiled(outputs_of(names), backend, args)
    except Exception as e:  # a compile or run failure is a finding of its own
        return {n: {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"} for n in names}
    found = {}
    for n, e, g in zip(names, eager, got):
        d = first_difference(e, g)
        if d:
            found[n] = d
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="inductor", choices=["inductor", "aoti", "export", "export_decomposed"])
    parser.add_argument("--only", default="", help="comma-separated probe names")
    options = parser.parse_args()
    names = [n for n in options.only.split(",") if n] or list(PROBES)
    args = (F, I64, SHIFT, DIV, FDIV, U8)
    runs_eagerly = []
    for n in names:  # a probe eager refuses (e.g. an integer to a negative power) tests nothing
        try:
            PROBES[n](*args)
            runs_eagerly.append(n)
        except Exception as e:
            print(f"pt2_ops: {n}: eager raises {type(e).__name__}, left out", file=sys.stderr)
    names = runs_eagerly
    together = disagreements(names, options.backend, args)
    for n in together:
        alone = disagreements([n], options.backend, args) if len(names) > 1 else together
        print(json.dumps({"probe": n, "backend": options.backend, "torch": torch.__version__,
                          "together": together[n], "alone": alone.get(n)}), flush=True)
    print(f"pt2_ops: {len(together)} of {len(names)} probes disagree under {options.backend}", file=sys.stderr)


if __name__ == "__main__":
    main()
