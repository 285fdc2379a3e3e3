#!/usr/bin/env python3
# [export] aten::dict + aten::_set_item raise RuntimeError while compiling under torch.export (bisected to PyTorch's TorchScript converter)
# Made by tsrepro 0.1.0 (libtorch 2.6.0, Intel(R) Xeon(R) Processor); expected failure: exception (exception:compile:RuntimeError: aten::_set_item() Expected a value of type 't' for argument 'v' but instead found type 'FakeTensor'.).
# Command: /tsrepro/build/tsrepro minify /tmp/tmp.qanp2UDICy/export_dict_item_set.case --backend export -o /tmp/tmp.qanp2UDICy/export_dict_item_set.out -j 2
# Its nodes came from: aten::dict at /tmp/bugs/export_dict_item_set/make_case.py:46 (node 2); aten::_set_item at /tmp/bugs/export_dict_item_set/make_case.py:48 (node 7)
# Bisected to: PyTorch's TorchScript converter (TS2EPConverter) (before it, module runs right): it fails as the case does; not split further
# Exit 1: reproduced, 0: not, 2: cannot run here. Full harness: tsrepro run <case dir>.
import signal
import sys
from typing import Dict

import torch


class Repro(torch.nn.Module):  # the minified graph: its state as attributes, its forward as code
    def forward(self, argument_1: torch.Tensor) -> Dict[str, torch.Tensor]:
        _0 = torch.ops.aten.dict()
        torch.ops.aten._set_item(_0, "aux", argument_1)
        return _0


INPUTS = [
    torch.tensor([[0.14755436778068542, -0.011071056127548218, -0.5763692855834961, -0.06046876311302185], [-0.34159359335899353, 0.09753164649009705, -0.08939240127801895, 0.06323780119419098]], dtype=torch.float32),
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
