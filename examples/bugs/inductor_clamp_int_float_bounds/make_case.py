"""Build examples/bugs/inductor_clamp_int_float_bounds/{model.pt,inputs.pt}.

pytorch/pytorch#151744 "[inductor] [silent incorrectness] [dtype processing] `torch.clamp` can't
implicitly convert `int64`": torch.clamp of an integer tensor with float bounds promotes to float
in eager (clamp(3, max=2.5) is 2.5), while Inductor keeps the integer dtype and converts the bounds
to it (2). Found again on Debian's torch 2.6.0 by scripts/bughunt/pt2_ops.py; AOTInductor (same
lowering) too.

The model: relative-position attention bias, as in T5-style encoders. Relative distances of token
positions (int64) are clipped to half the window, a float, then turned into a decaying bias that
is added to the attention scores of a one-head self-attention layer with a small MLP after it.

Run from the repository root with Debian 13's Python:
    /usr/bin/python3 examples/bugs/inductor_clamp_int_float_bounds/make_case.py
"""
import os
import sys

if os.environ.get("PYTHONHASHSEED") != "0":  # byte-identical .pt files from run to run
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
D = 8


class RelativeBias(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor(0.7))

    def forward(self, positions):
        rel = positions.unsqueeze(0) - positions.unsqueeze(1)
        rel = torch.clamp(rel, min=-2.5, max=2.5)  # half of a window of 5
        return -self.scale * rel.abs()


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = RelativeBias()
        self.q = nn.Linear(D, D)
        self.k = nn.Linear(D, D)
        self.v = nn.Linear(D, D)
        self.mlp = nn.Sequential(nn.Linear(D, 2 * D), nn.GELU(), nn.Linear(2 * D, D))

    def forward(self, x, positions):
        scores = self.q(x) @ self.k(x).transpose(0, 1) * 0.35355339 + self.bias(positions)  # 1 / sqrt(D)
        x = x + torch.softmax(scores, dim=-1) @ self.v(x)
        return x + self.mlp(x)


def main():
    torch.manual_seed(0)
    model = Model().eval()
    scripted = torch.jit.script(model)
    inputs = (torch.randn(6, D), torch.tensor([0, 1, 2, 4, 7, 11], dtype=torch.int64))
    path = os.path.join(HERE, "model.pt")
    torch.jit.save(scripted, path)
    torch.save(inputs, os.path.join(HERE, "inputs.pt"))

    with torch.no_grad():
        expected = model(*inputs)
        got = torch.compile(model, backend="inductor")(*inputs)
    diff = (expected - got).abs().max().item()
    print(f"max abs diff eager vs inductor: {diff:.4f}")
    if diff <= 1e-4:
        print("bug NOT reproduced", file=sys.stderr)
        return 1
    print("bug reproduced")
    return 0


if __name__ == "__main__":
    sys.exit(main())
