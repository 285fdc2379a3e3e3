#!/usr/bin/python3
"""The graph PyTorch's own API optimizes for a saved module, as a user's program would get it.

    /usr/bin/python3 tests/corpus/public_graph.py MODEL.pt INPUTS.pt BACKEND

BACKEND is one of tsrepro's: jit (torch.jit.load(...)(*inputs) with the default settings), nnc
(the same with the TensorExpr fuser forced on for the CPU, as a user turns it on with
torch._C._jit_override_can_fuse_on_cpu and friends) or ofi
(torch.jit.optimize_for_inference(torch.jit.freeze(m.eval()))). The module runs three times under
torch.no_grad() (the profiling executor optimizes after its profiling run) and the script prints
torch.jit.last_executed_optimized_graph(): what `tsrepro run --explain-backend` must match.
Run in its own process: the JIT switches are global.
"""

import sys

import torch


def main(model_path, inputs_path, backend):
    inputs = torch.load(inputs_path)
    module = torch.jit.load(model_path)  # in the mode it was saved in, as the program runs it
    torch._C._jit_set_te_must_use_llvm_cpu(torch._C._llvm_enabled())  # NNC's interpreter only without LLVM
    if backend == "nnc":
        torch._C._jit_set_texpr_fuser_enabled(True)
        torch._C._jit_override_can_fuse_on_cpu(True)
    elif backend == "ofi":
        module = torch.jit.optimize_for_inference(torch.jit.freeze(module.eval()))
    elif backend != "jit":
        raise SystemExit("public_graph.py: unknown backend %r (jit, nnc, ofi)" % backend)
    with torch.no_grad():
        for _ in range(3):
            module(*inputs)
    print(torch.jit.last_executed_optimized_graph())


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    main(*sys.argv[1:])
