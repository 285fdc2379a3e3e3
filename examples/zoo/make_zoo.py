"""Build the models of examples/zoo that examples/bugs does not already hold.

The zoo (zoo.json) is four small models for `tsrepro sweep examples/zoo -o out`:
  - frac_mlp:    examples/bugs/nnc_frac_negative (pytorch/pytorch#86597, NNC's frac(cos(x)) is
                 x - floor(x) instead of x - trunc(x)), an MLP with a periodic phase feature;
  - phase_conv:  a small convolutional net (made here) with the same phase feature: the same bug
                 in a second, different model;
  - round_head:  examples/bugs/nnc_round_half_even (NNC rounds halves away from zero, ATen to even);
  - healthy_cnn: a small convolutional net (made here) that every backend runs right.
A sweep under jit, nnc and ofi finds two distinct bugs, one of them in two models.

Run from the repository root with Debian's Python:  /usr/bin/python3 examples/zoo/make_zoo.py
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


class PhaseConv(nn.Module):
    """Features of a 2x6x6 image, mixed with a phase feature frac(cos(w * t)) (#86597's pattern)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3)
        self.fc = nn.Linear(4 * 4 * 4, 6)
        self.freq = nn.Parameter(torch.linspace(1.0, 3.0, 6))
        self.out = nn.Linear(12, 2)

    def forward(self, image, t):
        x = F.relu(self.conv(image)).flatten(1)
        x = torch.tanh(self.fc(x))
        phase = torch.frac(torch.cos(t * self.freq))
        return self.out(torch.cat([x, phase], dim=1))


class HealthyCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3, padding=1)
        self.bn = nn.BatchNorm2d(3)
        self.fc = nn.Linear(3, 2)

    def forward(self, image):
        x = F.relu(self.bn(self.conv(image)))
        return self.fc(x.mean(dim=(2, 3)))


def save(name, module, inputs):
    directory = os.path.join(HERE, name)
    os.makedirs(directory, exist_ok=True)
    torch.jit.save(torch.jit.script(module.eval()), os.path.join(directory, "model.pt"))
    torch.save(inputs, os.path.join(directory, "inputs.pt"))


def main():
    torch.manual_seed(0)
    save("phase_conv", PhaseConv(), (torch.randn(2, 2, 6, 6), torch.rand(2, 6) * 6.0))
    save("healthy_cnn", HealthyCnn(), (torch.randn(2, 2, 4, 4),))


if __name__ == "__main__":
    main()
