"""Build examples/bugs/nnc_clamp_int_float_bounds/{model.pt,inputs.pt}.

Found by differential testing (no public issue found): NNC (the TensorExpr fuser) miscompiles
torch.clamp of an integer tensor with float bounds. Eager type-promotes: clamp(int64, 0.5, 2.5)
is a float32 tensor clamped to [0.5, 2.5]. The fused kernel also returns float32, but converts the
bounds to the input's integer dtype first and clamps to [0, 2], so every element below 1 comes out
0.0 instead of 0.5 and every element above 2 comes out 2.0 instead of 2.5.

The bug sits in the middle of a healthy model: an MLP trunk on float features, then per-feature
weights computed from integer counts as clamp(counts, 0.5, 2.5) * 0.5, mixed back into the
features, then a second MLP trunk.

Run from the repository root with Debian's Python:  /usr/bin/python3 examples/bugs/nnc_clamp_int_float_bounds/make_case.py
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


class CountWeight(nn.Module):
    """The buggy pattern: an integer tensor clamped with float bounds (type promotion to float32)."""

    def forward(self, counts):
        return torch.clamp(counts, 0.5, 2.5) * 0.5


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.ModuleList([Block(D) for _ in range(5)])
        self.weight = CountWeight()
        self.mix = nn.Linear(D, D)
        self.head = nn.ModuleList([Block(D) for _ in range(4)])
        self.out = nn.Linear(D, 4)

    def forward(self, x, counts):
        for blk in self.trunk:
            x = blk(x)
        w = self.weight(counts)
        x = self.mix(x) * w + w
        for blk in self.head:
            x = blk(x)
        return torch.sigmoid(self.out(x)), w


def main():
    torch.manual_seed(0)
    model = Model().eval()
    scripted = torch.jit.script(model)
    x = torch.randn(2, D)
    # int64 counts in [-3, 7]: below 1 and above 2 the fused clamp differs from eager
    counts = torch.randint(-3, 8, (2, D))
    inputs = (x, counts)

    torch.jit.save(scripted, os.path.join(HERE, "model.pt"))
    torch.save(inputs, os.path.join(HERE, "inputs.pt"))

    # Self-check: the interpreter without optimization vs NNC (3rd call of the profiling executor).
    loaded = torch.jit.load(os.path.join(HERE, "model.pt"))
    torch._C._set_graph_executor_optimize(False)
    with torch.no_grad():
        ref = loaded(*inputs)
    torch._C._set_graph_executor_optimize(True)
    torch._C._jit_set_texpr_fuser_enabled(True)
    torch._C._jit_override_can_fuse_on_cpu(True)
    if torch.__version__.startswith("1."):
        # Debian 12's torch 1.13 has no LLVM: let NNC fall back to its IR interpreter.
        # (Newer torch keeps LLVM, as Debian 13's 2.6 has it.)
        torch._C._jit_set_te_must_use_llvm_cpu(torch._C._llvm_enabled())  # interpreter only without LLVM
    nnc_model = torch.jit.load(os.path.join(HERE, "model.pt"))
    with torch.no_grad():
        for _ in range(3):
            got = nnc_model(*inputs)
    graph = torch.jit.last_executed_optimized_graph()
    nodes = len(list(torch.jit.load(os.path.join(HERE, "model.pt")).inlined_graph.nodes()))
    fused = "TensorExprGroup" in str(graph)
    print(f"torch {torch.__version__}; inlined graph nodes: {nodes}; TensorExprGroup formed: {fused}")
    print("counts               :", counts[0].tolist())
    print("reference weights[0] :", ref[1][0].tolist())
    print("nnc       weights[0] :", got[1][0].tolist())
    print("output 0 max abs diff:", (ref[0] - got[0]).abs().max().item())
    if torch.equal(ref[1], got[1]) and torch.allclose(ref[0], got[0], rtol=1e-4, atol=1e-5):
        print("bug NOT reproduced", file=sys.stderr)
        return 1
    print("bug reproduced")
    return 0


if __name__ == "__main__":
    sys.exit(main())
