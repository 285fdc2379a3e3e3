"""Build examples/bugs/nnc_frac_negative/{model.pt,inputs.pt}.

pytorch/pytorch#86597 "JIT returns different values for `cos + frac` on cpu": NNC (the
TensorExpr fuser on CPU) computes torch.frac(x) as x - floor(x), while ATen computes
x - trunc(x). For a negative non-integer x the fused result is frac + 1 (e.g. frac(-0.2786) gives
0.7214 instead of -0.2786). torch.frac alone is not fused (single-op groups are inlined back);
it has to share a fusion group with another elementwise op such as cos, as in the issue.

The buggy pattern (a periodic "phase" feature, frac(cos(w * x))) sits inside a healthy model: a
residual MLP trunk, the phase features mixed back in, and a second residual MLP plus a head.

Run from the repository root with Debian's Python:  /usr/bin/python3 examples/bugs/nnc_frac_negative/make_case.py
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
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return x + torch.tanh(F.relu(self.fc(x)) * 0.5)


class Phase(nn.Module):
    """The buggy pattern of #86597: frac(cos(.)) fused by NNC."""

    def __init__(self, d):
        super().__init__()
        self.freq = nn.Parameter(torch.linspace(1.0, 4.0, d))

    def forward(self, x):
        return torch.frac(torch.cos(x * self.freq))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.ModuleList([Block(D) for _ in range(4)])
        self.phase = Phase(D)
        self.mix = nn.Linear(2 * D, D)
        self.head = nn.ModuleList([Block(D) for _ in range(3)])
        self.out = nn.Linear(D, 3)

    def forward(self, x, t):
        for blk in self.trunk:
            x = blk(x)
        p = self.phase(t)
        x = self.mix(torch.cat([x, p], dim=1))
        for blk in self.head:
            x = blk(x)
        return self.out(x)


def main():
    torch.manual_seed(0)
    model = Model().eval()
    scripted = torch.jit.script(model)
    inputs = (torch.randn(2, D), torch.rand(2, D) * 6.0)

    torch.jit.save(scripted, os.path.join(HERE, "model.pt"))
    torch.save(inputs, os.path.join(HERE, "inputs.pt"))

    path = os.path.join(HERE, "model.pt")
    nodes = len(list(torch.jit.load(path).inlined_graph.nodes()))
    torch._C._set_graph_executor_optimize(False)
    with torch.no_grad():
        ref = torch.jit.load(path)(*inputs)
    torch._C._set_graph_executor_optimize(True)
    torch._C._jit_set_texpr_fuser_enabled(True)
    torch._C._jit_override_can_fuse_on_cpu(True)
    torch._C._jit_set_te_must_use_llvm_cpu(torch._C._llvm_enabled())  # interpreter only without LLVM
    nnc_model = torch.jit.load(path)
    with torch.no_grad():
        for _ in range(3):
            got = nnc_model(*inputs)
    graph = str(torch.jit.last_executed_optimized_graph())
    print(f"inlined graph nodes: {nodes}; frac inside a TensorExprGroup: {'TensorExprGroup' in graph}")
    diff = (ref - got).abs().max().item()
    print("max abs diff eager vs nnc:", diff)
    if diff <= 1e-4:
        print("bug NOT reproduced", file=sys.stderr)
        return 1
    print("bug reproduced")
    return 0


if __name__ == "__main__":
    sys.exit(main())
