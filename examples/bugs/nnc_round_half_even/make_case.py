"""Build examples/bugs/nnc_round_half_even/{model.pt,inputs.pt}.

pytorch/pytorch#103465: NNC (TensorExpr fuser) lowers aten::round to round-half-away-from-zero,
while ATen rounds half to even. A fused round of a value that is exactly k + 0.5 differs by 1.

The bug sits in the middle of a healthy model: an MLP trunk on float features, then a "box
centre" step that rounds the half-difference of integer box corners (the pattern of the issue),
then a second MLP trunk that mixes the centres back into the features.

Run from the repository root with Debian's Python:  /usr/bin/python3 examples/bugs/nnc_round_half_even/make_case.py
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


class BoxCentre(nn.Module):
    """The buggy pattern of #103465: ((hi - lo) / 2.0).round() on integer box corners."""

    def forward(self, lo, hi):
        half = ((hi - lo) / 2.0).round()
        return half, half.int()


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.ModuleList([Block(D) for _ in range(5)])
        self.centre = BoxCentre()
        self.mix = nn.Linear(D, D)
        self.head = nn.ModuleList([Block(D) for _ in range(4)])
        self.out = nn.Linear(D, 4)

    def forward(self, x, lo, hi):
        for blk in self.trunk:
            x = blk(x)
        half, half_i = self.centre(lo, hi)
        x = self.mix(x) * 0.25 + half
        for blk in self.head:
            x = blk(x)
        return torch.sigmoid(self.out(x)), half_i


def main():
    torch.manual_seed(0)
    model = Model().eval()
    scripted = torch.jit.script(model)
    x = torch.randn(2, D)
    lo = torch.randint(0, 10, (2, D))
    # odd widths everywhere: every (hi - lo) / 2 is a tie k + 0.5
    hi = lo + 2 * torch.randint(0, 4, (2, D)) + 1
    inputs = (x, lo, hi)

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
    torch._C._jit_set_te_must_use_llvm_cpu(torch._C._llvm_enabled())  # interpreter only without LLVM
    nnc_model = torch.jit.load(os.path.join(HERE, "model.pt"))
    with torch.no_grad():
        for _ in range(3):
            got = nnc_model(*inputs)
    graph = torch.jit.last_executed_optimized_graph()
    nodes = len(list(torch.jit.load(os.path.join(HERE, "model.pt")).inlined_graph.nodes()))
    fused = "TensorExprGroup" in str(graph)
    print(f"inlined graph nodes: {nodes}; TensorExprGroup formed: {fused}")
    print("reference int output:", ref[1].tolist())
    print("nnc       int output:", got[1].tolist())
    print("float output max abs diff:", (ref[0] - got[0]).abs().max().item())
    if torch.equal(ref[1], got[1]):
        print("bug NOT reproduced", file=sys.stderr)
        return 1
    print("bug reproduced")
    return 0


if __name__ == "__main__":
    sys.exit(main())
