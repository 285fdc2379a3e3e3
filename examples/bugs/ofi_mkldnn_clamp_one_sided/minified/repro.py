#!/usr/bin/env python3
# [JIT][freezing] aten::conv2d + aten::clamp raise RuntimeError while compiling under torch.jit.freeze + torch.jit.optimize_for_inference
# Made by tsrepro 0.1.0 (libtorch 1.13.0, AMD EPYC); expected failure: exception (exception:compile:RuntimeError: isDouble() INTERNAL ASSERT FAILED at ".<path>":N, please report a bug to PyTorch. ).
# Command: build/tsrepro minify /tmp/tmp.K7z64Fvh3p/ofi_mkldnn_clamp_one_sided.case --backend ofi -o /tmp/tmp.K7z64Fvh3p/ofi_mkldnn_clamp_one_sided.out -j 2
# Its nodes came from: aten::conv2d at /work/main/examples/bugs/ofi_mkldnn_clamp_one_sided/make_case.py:55 (clamped.conv, node 25); aten::clamp at /work/main/examples/bugs/ofi_mkldnn_clamp_one_sided/make_case.py:55 (clamped, node 26)
# Exit 1: reproduced, 0: not, 2: cannot run here. Full harness: tsrepro run <case dir>.
import signal
import sys

import torch


class Repro(torch.nn.Module):  # the minified graph: its state as attributes, its forward as code
    def __init__(self):
        super().__init__()
        self.register_buffer("clamped_conv_weight", torch.tensor([[[[-0.2412758320569992]]]], dtype=torch.float32))
        self.register_buffer("clamped_conv_bias", torch.tensor([0.30008837580680847], dtype=torch.float32))

    def forward(self, argument_1: torch.Tensor) -> torch.Tensor:
        _0 = torch.ops.aten.conv2d(argument_1, self.clamped_conv_weight, self.clamped_conv_bias, [1, 1], [0, 0], [1, 1])
        return torch.ops.aten.clamp(_0, 0.10000000000000001)


INPUTS = [
    torch.tensor([[[[0.17937734723091125]]]], dtype=torch.float32),
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


def reference(inputs, fp64=False):  # eager: TorchScript's interpreter, without optimization passes
    m = torch.jit.script(Repro().to("cpu", torch.float64 if fp64 else None))
    with torch.jit.optimized_execution(False):  # a fresh function of forward's graph, run as it is
        return torch._C._create_function_from_graph("forward", m.graph)(m, *inputs)


def backend(inputs, fp64=False):  # ofi: torch.jit.optimize_for_inference(torch.jit.freeze(module))
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
