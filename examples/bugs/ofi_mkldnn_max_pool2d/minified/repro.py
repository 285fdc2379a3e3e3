#!/usr/bin/env python3
# [JIT][freezing] aten::conv2d + aten::max_pool2d raise RuntimeError while compiling under torch.jit.freeze + torch.jit.optimize_for_inference
# Made by tsrepro 0.1.0 (libtorch 2.6.0, AMD EPYC); expected failure: exception (exception:compile:RuntimeError: N INTERNAL ASSERT FAILED at ".<path>":N, please report a bug to PyTorch. aten::max_poolNd has kernels registered to both CompositeImplicitAutograd and a backend mapped to AutogradOther. This makes the backend kernel unreachable; the dispatcher will always prefer the CompositeImplicitAutograd lowering (see Note [Ambiguity in AutogradOther kernel]). If you want to override CompositeImplicitAutograd, please open an issue to request a dedicated Autograd dispatch key for the backend.).
# Command: /tsrepro/build/tsrepro minify /tmp/tmp.pguAdMJCvK/ofi_mkldnn_max_pool2d.case --backend ofi -o /tmp/tmp.pguAdMJCvK/ofi_mkldnn_max_pool2d.out -j 2
# Its nodes came from: aten::conv2d at /work/main/examples/bugs/ofi_mkldnn_max_pool2d/make_case.py:57 (pooled.conv, node 25); aten::max_pool2d at /work/main/examples/bugs/ofi_mkldnn_max_pool2d/make_case.py:57 (pooled, node 30)
# Exit 1: reproduced, 0: not, 2: cannot run here. Full harness: tsrepro run <case dir>.
import signal
import sys
from typing import List

import torch


class Repro(torch.nn.Module):  # the minified graph: its state as attributes, its forward as code
    def __init__(self):
        super().__init__()
        self.register_buffer("pooled_conv_weight", torch.tensor([[[[-0.08042527735233307]], [[0.09649179875850677]]], [[[-0.11328950524330139]], [[-0.10626861453056335]]]], dtype=torch.float32))
        self.register_buffer("pooled_conv_bias", torch.tensor([-0.04633671045303345, -0.01864674873650074], dtype=torch.float32))

    def forward(self, argument_1: torch.Tensor) -> torch.Tensor:
        _0 = torch.ops.aten.conv2d(argument_1, self.pooled_conv_weight, self.pooled_conv_bias, [1, 1], [0, 0], [1, 1])
        _1 = torch.ops.aten.max_pool2d(_0, [2, 2], torch.jit.annotate(List[int], []), [0, 0], [1, 1])
        return _1


INPUTS = [
    torch.tensor([[[[0.0, 0.0], [0.0, 0.0]], [[0.03362115100026131, 0.0], [0.0, 0.0]]]], dtype=torch.float32),
]


def fresh(value, fp64=False):  # a copy on DEVICE for one run (ops may mutate inputs); fp64: floats as float64
    if isinstance(value, (list, tuple)):
        return type(value)(fresh(v, fp64) for v in value)
    wide = fp64 and isinstance(value, torch.Tensor) and value.is_floating_point()
    return value.detach().to("cpu", torch.float64 if wide else None, copy=True) if torch.is_tensor(value) else value


def leaves(v): return [x for i in v for x in (leaves(i) if isinstance(i, (list, tuple)) else [i])]  # flattened


def reference(inputs, fp64=False):  # eager: TorchScript's interpreter, without optimization passes
    m = torch.jit.script(Repro().to("cpu", torch.float64 if fp64 else None))
    with torch.jit.optimized_execution(False):  # a fresh function of forward's graph, run as it is
        return torch._C._create_function_from_graph("forward", m.graph)(m, *inputs)


def backend(inputs, fp64=False):  # ofi: torch.jit.optimize_for_inference(torch.jit.freeze(module)) of Repro
    frozen = torch.jit.freeze(torch.jit.script(Repro().eval().to("cpu")), optimize_numerics=True)
    frozen = torch.jit.optimize_for_inference(frozen)
    frozen.__deepcopy__({})(*fresh(inputs))  # the profiling run, on a copy (forward may update the module's state)
    return frozen(*inputs)  # the executor is the copy's too: this call runs the optimized plan


if __name__ == "__main__":
    ref = None
    try:
        ref = leaves([reference(fresh(INPUTS))])  # the reference runs first: it is healthy
        signal.alarm(300)  # tsrepro counts a slower backend as hung: SIGALRM ends it
        res = leaves([backend(fresh(INPUTS))])  # a crash is left to happen
    except Exception as error:  # in the reference, the repro cannot run here (exit 2)
        print("%s raised %s: %s" % ("reference" if ref is None else "backend", type(error).__name__, error))
        sys.exit(2 if ref is None else 1)
    print("the backend ran without failing (expected: %s)" % "exception")
    sys.exit(0)
