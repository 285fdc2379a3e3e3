"""Build examples/bugs/inductor_floor_div_inf/{model.pt,inputs.pt}.

torch.div(a, b, rounding_mode="floor") of an infinite a: eager follows Python (-inf // 0.5 is nan,
its fmod-based algorithm), Inductor lowers it to floor(a / b) and gives -inf. Reported for
Inductor's CUDA code as pytorch/pytorch#188048 (fixed upstream by #188049, 2026-06); Inductor's
C++ code for the CPU does the same on Debian's torch 2.6.0 (found by scripts/bughunt/pt2_ops.py),
and AOTInductor too.

The model: log-scale binning of a non-negative feature (energies, counts: zeros happen), as audio
and recommendation front ends do. log(0) is -inf, its bin is nan in eager and -inf compiled; the
bins are clamped into range and embedded by a soft one-hot, then a small MLP. Eager's nan
survives the clamp; Inductor's -inf becomes bin 0.

Run from the repository root with Debian 13's Python:
    /usr/bin/python3 examples/bugs/inductor_floor_div_inf/make_case.py
"""
import os
import sys

if os.environ.get("PYTHONHASHSEED") != "0":  # byte-identical .pt files from run to run
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
BINS = 8


class LogBins(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("centers", torch.arange(BINS, dtype=torch.float32))

    def forward(self, energy):
        bins = torch.div(torch.log(energy), 0.5, rounding_mode="floor")
        bins = torch.clamp(bins + 4.0, 0.0, 7.0)  # BINS bins, 0 in the middle
        return torch.exp(-(bins.unsqueeze(-1) - self.centers) ** 2)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bins = LogBins()
        self.mlp = nn.Sequential(nn.Linear(BINS, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 3))

    def forward(self, energy):
        return self.mlp(self.bins(energy))


def main():
    torch.manual_seed(0)
    model = Model().eval()
    scripted = torch.jit.script(model)
    inputs = (torch.tensor([[0.0, 0.3, 1.7, 9.0], [2.5, 0.0, 0.05, 30.0]]),)
    path = os.path.join(HERE, "model.pt")
    torch.jit.save(scripted, path)
    torch.save(inputs, os.path.join(HERE, "inputs.pt"))

    with torch.no_grad():
        expected = model(*inputs)
        got = torch.compile(model, backend="inductor")(*inputs)
    same = torch.equal(expected.isnan(), got.isnan()) and torch.allclose(
        expected.nan_to_num(), got.nan_to_num(), atol=1e-4)
    print("eager:", expected.tolist())
    print("inductor:", got.tolist())
    if same:
        print("bug NOT reproduced", file=sys.stderr)
        return 1
    print("bug reproduced")
    return 0


if __name__ == "__main__":
    sys.exit(main())
