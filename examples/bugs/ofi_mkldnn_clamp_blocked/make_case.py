"""Build examples/bugs/ofi_mkldnn_clamp_blocked/{model.pt,inputs.pt}.

pytorch/pytorch#86556 (also #86527): after torch.jit.optimize_for_inference, a clamp / clip /
hardtanh / ReLU6 applied to the output of a convolution whose output-channel count is not a
multiple of MKLDNN's block size (8 or 16, depending on the CPU) gives wrong numbers. The MKLDNN
conversion turns the clamp into prim::MKLDNNClamp, which handles the conv's blocked (padded)
MKLDNN layout as if it were dense: most of the result is garbage (uninitialised memory), and
PyTorch warns "An output with one or more elements was resized since it had shape [64], which
does not match the required output shape [..]".

The buggy pair (Conv2d with 3 output channels -> clamp) sits inside a healthy small CNN:
conv-bn-relu stem, a second conv-bn-relu, the buggy conv + clamp, then a 1x1 conv, pooling and a
linear head.

Run from the repository root with Debian's Python:  /usr/bin/python3 examples/bugs/ofi_mkldnn_clamp_blocked/make_case.py
"""
import os
import sys
import warnings

# TorchScript serialises some tables in dict/set order, which depends on string hashing: pin
# the hash seed so that repeated runs write byte-identical .pt files.
if os.environ.get("PYTHONHASHSEED") != "0":
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))


def conv_bn_relu(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = conv_bn_relu(2, 8)
        self.body = conv_bn_relu(8, 8)
        self.squeeze = nn.Conv2d(8, 3, 1)          # 3 output channels: a blocked MKLDNN layout with padding
        self.expand = nn.Conv2d(3, 4, 1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Linear(4, 6)
        self.fc2 = nn.Linear(6, 3)

    def forward(self, x):
        x = self.stem(x)
        x = self.body(x)
        s = self.squeeze(x)
        c = torch.clamp(s, -0.25, 0.25)           # the buggy pattern: conv -> clamp
        y = self.expand(c + s * 0.5)
        y = torch.relu(y)
        y = self.pool(y).flatten(1)
        y = torch.relu(self.fc1(y))
        return self.fc2(y)


def randomise_bn(model):
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 1.5)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.2, 0.2)


def main():
    torch.manual_seed(0)
    model = Model().eval()
    with torch.no_grad():
        randomise_bn(model)
    scripted = torch.jit.script(model)
    inputs = (torch.randn(1, 2, 4, 4),)

    torch.jit.save(scripted, os.path.join(HERE, "model.pt"))
    torch.save(inputs, os.path.join(HERE, "inputs.pt"))

    # Self-check: the interpreter without optimization vs optimize_for_inference(freeze(..)).
    loaded = torch.jit.load(os.path.join(HERE, "model.pt")).eval()
    nodes = len(list(loaded.inlined_graph.nodes()))
    torch._C._set_graph_executor_optimize(False)
    with torch.no_grad():
        ref = loaded(*inputs)
    torch._C._set_graph_executor_optimize(True)
    ofi = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.load(os.path.join(HERE, "model.pt")).eval()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.no_grad():
            for _ in range(3):
                got = ofi(*inputs)
    print(f"inlined graph nodes: {nodes}; MKLDNNClamp in optimized graph: {'MKLDNNClamp' in str(ofi.graph)}")
    print("reference:", ref.flatten().tolist())
    print("ofi      :", got.flatten().tolist())
    if torch.allclose(ref, got, atol=1e-4, rtol=1e-4):
        print("bug NOT reproduced", file=sys.stderr)
        return 1
    print("bug reproduced")
    return 0


if __name__ == "__main__":
    sys.exit(main())
