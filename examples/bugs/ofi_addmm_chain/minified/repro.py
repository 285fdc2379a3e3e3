#!/usr/bin/env python3
# [JIT][freezing] aten::addmm raises torch while compiling under torch.jit.freeze + torch.jit.optimize_for_inference
# Made by tsrepro 0.1.0 (libtorch 1.13.0, AMD EPYC); expected failure: exception (exception:compile:torch::jit::ErrorReport: The size of tensor a (N) must match the size of tensor b (N) at non-singleton dimension N).
# Command: build/tsrepro minify /tmp/tmp.K7z64Fvh3p/ofi_addmm_chain.case --backend ofi -o /tmp/tmp.K7z64Fvh3p/ofi_addmm_chain.out -j 2
# Its nodes came from: aten::addmm at /work/main/examples/bugs/ofi_addmm_chain/make_case.py:51 (chain, node 22); aten::addmm at /work/main/examples/bugs/ofi_addmm_chain/make_case.py:52 (chain, node 23)
# Exit 1: reproduced, 0: not, 2: cannot run here. Full harness: tsrepro run <case dir>.
import signal
import sys

import torch


class Repro(torch.nn.Module):  # the minified graph: its state as attributes, its forward as code
    def __init__(self):
        super().__init__()
        self.register_buffer("chain_v2", torch.tensor([[0.020375549793243408, 0.20364665985107422], [0.32508331537246704, 0.09018915891647339], [0.17426711320877075, 0.4743403196334839]], dtype=torch.float32))
        self.register_buffer("chain_v1", torch.tensor([[0.9703746438026428, 0.8369089365005493], [0.023700952529907227, 0.49101293087005615], [0.4724501967430115, 0.5750725269317627]], dtype=torch.float32))
        self.register_buffer("chain_v3", torch.tensor([[0.25147682428359985, 0.11684411764144897], [0.3985816240310669, 0.7742030024528503]], dtype=torch.float32))

    def forward(self, argument_1: torch.Tensor, argument_2: torch.Tensor) -> torch.Tensor:
        _0 = torch.ops.aten.addmm(self.chain_v2, self.chain_v1, argument_1)
        _1 = torch.ops.aten.addmm(_0, argument_2, self.chain_v3)
        return _1


INPUTS = [
    torch.tensor([[0.6189083456993103, 1.0516636371612549], [-0.13086336851119995, 0.18968942761421204]], dtype=torch.float32),
    torch.tensor([[0.0, 0.0], [0.0, 0.1835208237171173], [0.0, 0.1986514925956726]], dtype=torch.float32),
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
