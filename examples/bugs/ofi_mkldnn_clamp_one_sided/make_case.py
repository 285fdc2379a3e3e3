"""Build examples/bugs/ofi_mkldnn_clamp_one_sided/{model.pt,inputs.pt}.

Found by differential testing (no public issue found): torch.jit.optimize_for_inference converts
a frozen graph's convolutions to MKLDNN and, with them, a clamp that follows a convolution. A
one-sided clamp (torch.clamp(y, min=0.1): max is None, or min=None with a max) makes that pass read
the missing bound as a double, and optimize_for_inference itself raises

    torch 2.6:   0 INTERNAL ASSERT FAILED at ".../ATen/core/ivalue.h":540 ... expected double
    torch 1.13:  isDouble() INTERNAL ASSERT FAILED at ".../ATen/core/ivalue.h":523

while the scripted and the frozen (torch.jit.freeze) models run fine.

The bug sits in the middle of a healthy model: an MLP trunk on a feature vector, a small conv stem
on an image whose second convolution is followed by the one-sided clamp, average pooling, and an
MLP head on the concatenation.

Run from the repository root with Debian's Python:  /usr/bin/python3 examples/bugs/ofi_mkldnn_clamp_one_sided/make_case.py
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


class ClampedConv(nn.Module):
    """The buggy pattern: a Conv2d followed by a clamp with only a lower bound."""

    def __init__(self, c: int):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 1)

    def forward(self, y):
        return torch.clamp(self.conv(y), min=0.1)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.ModuleList([Block(D) for _ in range(3)])
        self.stem = nn.Conv2d(2, D, 3, padding=1)
        self.clamped = ClampedConv(D)
        self.mix = nn.Linear(2 * D, D)
        self.head = nn.ModuleList([Block(D) for _ in range(3)])
        self.out = nn.Linear(D, 3)

    def forward(self, x, img):
        for blk in self.trunk:
            x = blk(x)
        y = F.relu(self.stem(img))
        y = self.clamped(y)
        y = F.adaptive_avg_pool2d(y, 1).flatten(1)
        x = self.mix(torch.cat([x, y], 1))
        for blk in self.head:
            x = blk(x)
        return torch.log_softmax(self.out(x), dim=1)


def main():
    torch.manual_seed(0)
    model = Model().eval()
    scripted = torch.jit.script(model)
    inputs = (torch.randn(1, D), torch.randn(1, 2, 4, 4))

    torch.jit.save(scripted, os.path.join(HERE, "model.pt"))
    torch.save(inputs, os.path.join(HERE, "inputs.pt"))

    loaded = torch.jit.load(os.path.join(HERE, "model.pt")).eval()
    nodes = len(list(loaded.inlined_graph.nodes()))
    torch._C._set_graph_executor_optimize(False)
    with torch.no_grad():
        ref = loaded(*inputs)
    torch._C._set_graph_executor_optimize(True)
    frozen = torch.jit.freeze(torch.jit.load(os.path.join(HERE, "model.pt")).eval())
    with torch.no_grad():
        for _ in range(3):
            fz = frozen(*inputs)
    print(f"torch {torch.__version__}; inlined graph nodes: {nodes}; unoptimized and frozen runs OK "
          f"(max abs diff {(ref - fz).abs().max().item():.2g})")
    try:
        ofi = torch.jit.optimize_for_inference(torch.jit.load(os.path.join(HERE, "model.pt")).eval())
        with torch.no_grad():
            for _ in range(3):
                got = ofi(*inputs)
    except RuntimeError as e:
        print("optimize_for_inference raised:", str(e).strip().splitlines()[0][:200])
        print("bug reproduced")
        return 0
    print("optimize_for_inference ran; max abs diff:", (ref - got).abs().max().item())
    print("bug NOT reproduced", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
