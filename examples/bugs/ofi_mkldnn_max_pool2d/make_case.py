"""Build examples/bugs/ofi_mkldnn_max_pool2d/{model.pt,inputs.pt}.

Found by differential testing (no public issue found): torch.jit.optimize_for_inference converts
a frozen graph's convolutions to MKLDNN, so a max_pool2d that follows a convolution receives an
MKLDNN tensor. On Debian's torch 2.6.0 the dispatcher then cannot run aten::max_pool2d for that
tensor (outside torch.inference_mode), and the first call of the optimized module raises

    torch 2.6:   0 INTERNAL ASSERT FAILED at ".../ATen/core/boxing/KernelFunction.cpp":23 ...
                 aten::max_pool2d has kernels registered to both CompositeImplicitAutograd and a
                 backend mapped to AutogradOther ...

while the scripted and the frozen (torch.jit.freeze) models run fine. torch 1.13 runs it and
matches eager.

The bug sits in the middle of a healthy model: an MLP trunk on a feature vector, a small conv stem
on an image whose second convolution is followed by max_pool2d, average pooling, and an MLP head
on the concatenation.

Run from the repository root with Debian's Python:  /usr/bin/python3 examples/bugs/ofi_mkldnn_max_pool2d/make_case.py
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


class PooledConv(nn.Module):
    """The buggy pattern: a Conv2d whose output goes straight into max_pool2d."""

    def __init__(self, c: int):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3)

    def forward(self, y):
        return F.max_pool2d(self.conv(y), 2)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.ModuleList([Block(D) for _ in range(3)])
        self.stem = nn.Conv2d(2, D, 3, padding=1)
        self.pooled = PooledConv(D)
        self.mix = nn.Linear(2 * D, D)
        self.head = nn.ModuleList([Block(D) for _ in range(3)])
        self.out = nn.Linear(D, 3)

    def forward(self, x, img):
        for blk in self.trunk:
            x = blk(x)
        y = F.relu(self.stem(img))
        y = self.pooled(y)
        y = F.adaptive_avg_pool2d(y, 1).flatten(1)
        x = self.mix(torch.cat([x, y], 1))
        for blk in self.head:
            x = blk(x)
        return torch.log_softmax(self.out(x), dim=1)


def main():
    torch.manual_seed(0)
    model = Model().eval()
    scripted = torch.jit.script(model)
    inputs = (torch.randn(1, D), torch.randn(1, 2, 6, 6))

    torch.jit.save(scripted, os.path.join(HERE, "model.pt"))
    torch.save(inputs, os.path.join(HERE, "inputs.pt"))

    loaded = torch.jit.load(os.path.join(HERE, "model.pt")).eval()
    nodes = len(list(loaded.inlined_graph.nodes()))
    compute = sum(1 for n in loaded.inlined_graph.nodes()
                  if n.kind() not in ("prim::Constant", "prim::GetAttr"))
    torch._C._set_graph_executor_optimize(False)
    with torch.no_grad():
        ref = loaded(*inputs)
    torch._C._set_graph_executor_optimize(True)
    frozen = torch.jit.freeze(torch.jit.load(os.path.join(HERE, "model.pt")).eval())
    with torch.no_grad():
        for _ in range(3):
            fz = frozen(*inputs)
    print(f"torch {torch.__version__}; inlined graph nodes: {nodes} ({compute} compute); "
          f"unoptimized and frozen runs OK (max abs diff {(ref - fz).abs().max().item():.2g})")
    try:
        ofi = torch.jit.optimize_for_inference(
            torch.jit.freeze(torch.jit.load(os.path.join(HERE, "model.pt")).eval()))
        with torch.no_grad():
            for _ in range(3):
                got = ofi(*inputs)
    except RuntimeError as e:
        msg = str(e).strip()
        line = next((l for l in msg.splitlines() if "INTERNAL ASSERT" in l), msg.splitlines()[0])
        print("optimize_for_inference model raised:", line[:300])
        print("bug reproduced")
        return 0
    print("optimize_for_inference ran; max abs diff:", (ref - got).abs().max().item())
    print("bug NOT reproduced", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
