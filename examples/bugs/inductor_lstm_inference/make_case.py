"""Build examples/bugs/inductor_lstm_inference/{model.pt,inputs.pt}.

An `nn.LSTM` compiled by Inductor on the CPU computes other numbers than eager when no gradient is
recorded (inference: `torch.no_grad()`, or weights that do not require grad, as in an exported or
frozen module): max abs 0.03 on outputs of magnitude 0.2, while eager agrees with a float64 run to
1e-8. With gradients recorded the same compiled module is right. Found by `tsrepro sweep` of the
CI corpus's construct_lstm under inductor and aoti on Debian's torch 2.6.0. Upstream: the LSTM
lowering's troubles in #181690 (heap corruption compiling nn.LSTM/nn.GRU with Inductor, fixed on
main by #183699, a tail-width fix in Inductor's C++ reductions) and #173927 (CPU torch.compile of an
LSTM diverging), both after 2.6.

The model: a small sequence tagger, as a TorchScript user has it. A one-layer LSTM (batch first,
hidden size 6) reads 5 steps of 4 features and a linear head scores 3 tags per step.

Run from the repository root with Debian 13's Python:
    /usr/bin/python3 examples/bugs/inductor_lstm_inference/make_case.py
"""
import os
import sys

if os.environ.get("PYTHONHASHSEED") != "0":  # byte-identical .pt files from run to run
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(4, 6, num_layers=1, batch_first=True)
        self.head = nn.Linear(6, 3)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out)


def main():
    torch.manual_seed(0)
    model = Tagger().eval()
    scripted = torch.jit.script(model)
    inputs = (torch.randn(1, 5, 4),)
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
