#!/usr/bin/env python3
# [inductor] aten::_pad_packed_sequence raises torch._dynamo.exc.TorchRuntimeError while compiling under torch.compile with Inductor (bisected to Dynamo's capture)
# Made by tsrepro 0.1.0 (libtorch 2.6.0, Intel(R) Xeon(R) Processor); expected failure: exception (exception:compile:torch._dynamo.exc.TorchRuntimeError: Failed running call_function aten._pad_packed_sequence.default(*(FakeTensor(..., size=(N, N)), FakeTensor(..., size=(N,), dtype=torch.int64), True, N, N), **{}):).
# Seen with torch 2.6.0+debian, Python 3.13.5, gcc version 14.2.0.
# Command: /tsrepro/build/tsrepro minify /tmp/tmp.qanp2UDICy/inductor_pad_packed_sequence.case --backend inductor -o /tmp/tmp.qanp2UDICy/inductor_pad_packed_sequence.out -j 2
# Its nodes came from: aten::_pad_packed_sequence at /tsrepro/src/examples/bugs/inductor_pad_packed_sequence/make_case.py:44 (node 51)
# Bisected to: Dynamo's capture (torch.compile backend eager: the graph Dynamo captured, run eagerly): it fails as the case does; not split further
# Exit 1: reproduced, 0: not, 2: cannot run here. Full harness: tsrepro run <case dir>.
import signal
import sys

import torch


class Repro(torch.nn.Module):  # the minified graph as plain PyTorch: its state as attributes, its forward as code
    def forward(self, argument, argument_1):
        _pad_packed_sequence, _pad_packed_sequence_1 = torch.ops.aten._pad_packed_sequence.default(argument, argument_1, True, 0.0, 4)
        return _pad_packed_sequence_1


INPUTS = [
    torch.tensor([[0.39108994603157043, 0.12852129340171814, -0.2697918117046356, -0.33952683210372925, -0.007492069620639086, -0.0881662517786026], [-0.14028985798358917, -0.05457673221826553, 0.08830369263887405, -0.1183708906173706, -0.2058224380016327, -0.10482646524906158], [-0.03874475136399269, -0.010969134047627449, -0.025646520778536797, -0.07441233098506927, -0.10046522319316864, -0.08217334002256393], [-0.01564924605190754, -0.05056352913379669, 0.03926817327737808, -0.056438203901052475, -0.12786157429218292, -0.05479004234075546], [0.08864449709653854, -0.05379614606499672, -0.13040441274642944, 0.08361241966485977, -0.10642503201961517, -0.047290656715631485], [0.009538160637021065, -0.05355999618768692, 0.031292207539081573, -0.001588092534802854, -0.10229466110467911, -0.05229208245873451], [-0.0005440353415906429, -0.029957614839076996, -0.0006384702282957733, 0.025065260007977486, -0.005222233943641186, -0.011059722863137722]], dtype=torch.float32),
    torch.tensor([2, 2, 2, 1], dtype=torch.int64),
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
