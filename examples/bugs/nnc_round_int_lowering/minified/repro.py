#!/usr/bin/env python3
# [JIT][NNC] aten::round + aten::to raise RuntimeError under the TensorExpr fuser
# Made by tsrepro 0.1.0 (libtorch 1.13.0, AMD EPYC); expected failure: exception (exception:run:RuntimeError: Invalid integral op_type: N).
# Command: build/tsrepro minify /tmp/tmp.K7z64Fvh3p/nnc_round_int_lowering.case --backend nnc -o /tmp/tmp.K7z64Fvh3p/nnc_round_int_lowering.out -j 2
# Its nodes came from: aten::round at /work/main/examples/bugs/nnc_round_int_lowering/make_case.py:52 (size, node 26); aten::to at /work/main/examples/bugs/nnc_round_int_lowering/make_case.py:53 (size, node 27)
# Exit 1: reproduced, 0: not, 2: cannot run here. Full harness: tsrepro run <case dir>.
import signal
import sys

import torch


class Repro(torch.nn.Module):  # the minified graph: its state as attributes, its forward as code
    def forward(self, argument_1: torch.Tensor) -> torch.Tensor:
        return torch.ops.aten.to(torch.ops.aten.round(argument_1), 6)


INPUTS = [
    torch.tensor([[5]], dtype=torch.int64),
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


def profiled(inputs):  # the profiling executor: a profiling run, then the optimized plan
    compiled = torch.jit.script(Repro().to("cpu"))
    compiled.__deepcopy__({})(*fresh(inputs))  # the profiling run, on a copy (forward may update Repro's state)
    return compiled(*inputs)


def reference(inputs, fp64=False):  # eager: TorchScript's interpreter, without optimization passes
    m = torch.jit.script(Repro().to("cpu", torch.float64 if fp64 else None))
    with torch.jit.optimized_execution(False):  # a fresh function of forward's graph, run as it is
        return torch._C._create_function_from_graph("forward", m.graph)(m, *inputs)


def backend(inputs, fp64=False):  # nnc: the profiling executor with the TensorExpr fuser forced on for the CPU
    torch._C._jit_override_can_fuse_on_cpu(True)
    torch._C._jit_set_te_must_use_llvm_cpu(torch._C._llvm_enabled())  # NNC's interpreter only without LLVM
    return profiled(inputs)


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
