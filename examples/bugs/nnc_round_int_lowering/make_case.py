"""Build examples/bugs/nnc_round_int_lowering/{model.pt,inputs.pt}.

pytorch/pytorch#94311 "Unimplemented lowering - torch.jit.script": NNC (the TensorExpr fuser)
has no lowering of aten::round (nor floor/ceil/trunc) for integer tensors, yet the fuser puts it
in a fusion group. In eager, rounding an int64 tensor returns it unchanged; once the scripted
model is optimized, building the fused kernel raises

    torch 2.6 (LLVM):   false INTERNAL ASSERT FAILED at ".../tensorexpr/llvm_codegen.cpp":2167 ...
                        Unimplemented lowering for intrinsic '25' for input of dtype Long in LLVM
                        codegen of the fuser.
    torch 1.13 (no LLVM, IR interpreter):  RuntimeError: Invalid integral op_type: 25

The bug sits in the middle of a healthy model: an MLP trunk on float features, then a "box
size" step that rounds the (already integer) difference of integer box corners and converts it
with .int() (the pattern of the issue, `x.round().int()`), mixed back into the features, then a
second MLP trunk.

Run from the repository root with Debian's Python:  /usr/bin/python3 examples/bugs/nnc_round_int_lowering/make_case.py
"""
import os
import sys

# TorchScript serialises some tables in dict/set order, which depends on string hashing: pin
# the hash seed so that repeated runs write byte-identical .pt files.
if os.environ.get("PYTHONHASHSEED") != "0":
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
D = 8


class Block(nn.Module):
    """Healthy residual block: x + tanh(relu(fc(x)) * 0.5)."""

    def __init__(self, d: int):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return x + torch.tanh(F.relu(self.fc(x)) * 0.5)


class BoxSize(nn.Module):
    """The buggy pattern of #94311: round() of an integer tensor, then .int()."""

    def forward(self, lo, hi):
        size = (hi - lo).round()
        return size.float() * 0.125, size.int()


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.ModuleList([Block(D) for _ in range(5)])
        self.size = BoxSize()
        self.mix = nn.Linear(D, D)
        self.head = nn.ModuleList([Block(D) for _ in range(4)])
        self.out = nn.Linear(D, 4)

    def forward(self, x, lo, hi):
        for blk in self.trunk:
            x = blk(x)
        scale, size_i = self.size(lo, hi)
        x = self.mix(x) * 0.25 + scale
        for blk in self.head:
            x = blk(x)
        return torch.sigmoid(self.out(x)), size_i


def main():
    torch.manual_seed(0)
    model = Model().eval()
    scripted = torch.jit.script(model)
    x = torch.randn(2, D)
    lo = torch.randint(0, 10, (2, D))
    hi = lo + torch.randint(1, 8, (2, D))
    inputs = (x, lo, hi)

    torch.jit.save(scripted, os.path.join(HERE, "model.pt"))
    torch.save(inputs, os.path.join(HERE, "inputs.pt"))

    # Self-check: the interpreter without optimization runs; NNC (profiling executor, 3 calls) raises.
    loaded = torch.jit.load(os.path.join(HERE, "model.pt"))
    torch._C._set_graph_executor_optimize(False)
    with torch.no_grad():
        ref = loaded(*inputs)
    torch._C._set_graph_executor_optimize(True)
    nodes = len(list(loaded.inlined_graph.nodes()))
    print(f"torch {torch.__version__}; inlined graph nodes: {nodes}; unoptimized run OK, sizes {ref[1][0].tolist()}")
    torch._C._jit_set_texpr_fuser_enabled(True)
    torch._C._jit_override_can_fuse_on_cpu(True)
    if torch.__version__.startswith("1."):
        # Debian 12's torch 1.13 has no LLVM: let NNC fall back to its IR interpreter.
        # (Newer torch keeps LLVM, as Debian 13's 2.6 has it.)
        torch._C._jit_set_te_must_use_llvm_cpu(torch._C._llvm_enabled())  # interpreter only without LLVM
    nnc_model = torch.jit.load(os.path.join(HERE, "model.pt"))
    try:
        with torch.no_grad():
            for i in range(3):
                got = nnc_model(*inputs)
    except RuntimeError as e:
        lines = [l.strip() for l in str(e).splitlines() if l.strip()]
        print(f"nnc call {i + 1} raised:", lines[-1][:300])
        print("bug reproduced")
        return 0
    print("nnc sizes:", got[1][0].tolist())
    print("bug NOT reproduced", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
