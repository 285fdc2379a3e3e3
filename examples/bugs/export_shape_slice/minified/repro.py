#!/usr/bin/env python3
# [export] aten::slice raises RuntimeError while compiling under torch.export (bisected to PyTorch's TorchScript converter)
# Made by tsrepro 0.1.0 (libtorch 2.6.0, Intel(R) Xeon(R) Processor); expected failure: exception (exception:compile:RuntimeError: aten::slice() Expected a value of type 'List[t]' for argument 'l' but instead found type 'list'.).
# Command: /tsrepro/build/tsrepro minify /tmp/tmp.qanp2UDICy/export_shape_slice.case --backend export -o /tmp/tmp.qanp2UDICy/export_shape_slice.out -j 2
# Its nodes came from: aten::slice at /tmp/bugs/export_shape_slice/make_case.py:44 (node 1)
# Bisected to: PyTorch's TorchScript converter (TS2EPConverter) (before it, module runs right): it fails as the case does; not split further
# Exit 1: reproduced, 0: not, 2: cannot run here. Full harness: tsrepro run <case dir>.
import signal
import sys
from typing import List

import torch


class Repro(torch.nn.Module):  # the minified graph: its state as attributes, its forward as code
    def forward(self, argument_1: List[int]) -> List[int]:
        return torch.ops.aten.slice(argument_1, -2)


INPUTS = [
    [1, 3, 8, 8],
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
    # TorchScript's interpreter, without optimization passes
    m = torch.jit.script(Repro().to("cpu", torch.float64 if fp64 else None))
    with torch.jit.optimized_execution(False):  # a fresh function of forward's graph, run as it is
        return torch._C._create_function_from_graph("forward", m.graph)(m, *inputs)


def backend(inputs, fp64=False):  # export
    # torch.export's program of the case, by PyTorch's TorchScript converter, run eagerly
    from torch._export.converter import TS2EPConverter  # it ends in torch.export.export
    scripted = torch.jit.script(Repro().to("cpu"))
    program = TS2EPConverter(scripted, tuple(fresh(inputs))).convert()
    return program.module()(*inputs)


if __name__ == "__main__":
    ref = None
    try:
        ref = leaves([reference(fresh(INPUTS))])  # the reference runs first: it is healthy
        signal.alarm(2100)  # tsrepro counts a slower backend as hung: SIGALRM ends it
        res = leaves([backend(fresh(INPUTS))])  # a crash is left to happen
    except Exception as error:  # in the reference, or a backend this PyTorch lacks: cannot run here (exit 2)
        print("%s raised %s: %s" % ("reference" if ref is None else "backend", type(error).__name__, error))
        sys.exit(2 if ref is None or isinstance(error, ImportError) else 1)
    print("the backend ran without failing (expected: %s)" % "exception")
    sys.exit(0)
