"""Build examples/bugs/inductor_shift_past_width/{model.pt,inputs.pt}.

pytorch/pytorch#143555 "[Inductor] [CPU] [silent] `bitwise_right_shift` outputs wrong results
when `other==64`" (and #143566, the same for `bitwise_left_shift`): eager defines a shift by the
bit width or more (x >> 64 on int64) as 0 for a non-negative x, -1 for a negative one; Inductor's
C++ kernel emits a plain `>>`, whose count x86 takes modulo 64, so x >> 64 gives x back. Found
again on Debian's torch 2.6.0 by scripts/bughunt/pt2_ops.py; AOTInductor (same kernels) too.

The model: a byte-feature encoder for 64-bit ids. It splits each id into bytes with shifts
0, 8, ..., 64 (one past the last byte: a classic off-by-one that eager forgives, the 9th "byte"
being 0), scales them, and feeds them with a dense feature through a small residual MLP.

Run from the repository root with Debian 13's Python:
    /usr/bin/python3 examples/bugs/inductor_shift_past_width/make_case.py
"""
import os
import sys

if os.environ.get("PYTHONHASHSEED") != "0":  # byte-identical .pt files from run to run
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
BYTES = 9  # shifts 0, 8, ..., 64


class ByteFeatures(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("shifts", torch.arange(0, 8 * BYTES, 8, dtype=torch.int64))

    def forward(self, ids):
        parts = torch.bitwise_right_shift(ids.unsqueeze(-1), self.shifts) & 255
        return parts.to(torch.float32) / 255.0


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return x + torch.tanh(F.relu(self.fc(x)))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bytes = ByteFeatures()
        self.embed = nn.Linear(BYTES + 4, 16)
        self.blocks = nn.ModuleList([Block(16) for _ in range(3)])
        self.head = nn.Linear(16, 2)

    def forward(self, ids, dense):
        x = torch.cat([self.bytes(ids), dense], dim=-1)
        x = self.embed(x)
        for blk in self.blocks:
            x = blk(x)
        return self.head(x)


def main():
    torch.manual_seed(0)
    model = Model().eval()
    scripted = torch.jit.script(model)
    ids = torch.tensor([0x0123456789ABCDEF, 977, 2**40 + 5, 12345678901], dtype=torch.int64)
    inputs = (ids, torch.randn(4, 4))
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
