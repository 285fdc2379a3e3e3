"""A Python program whose scripted model fails once compiled, under tsrepro's shim.

    PYTHONPATH=build/python /usr/bin/python3 examples/after_py/after_demo.py BACKEND [CALLS]

Builds a small scripted model (a residual MLP with a rounding step, like the real NNC bug in
examples/bugs/nnc_round_half_even), wraps it with tsrepro.wrap(model, backend=BACKEND) and calls
it. Run it with TSREPRO_AFTER=graph|fusion and TSREPRO_LEVEL=1..4 to get cases and repros under
TSREPRO_DIR (README: "When your compiled TorchScript model fails").
"""

import sys

import torch

import tsrepro  # installed by `cmake --install`; from a build tree: PYTHONPATH=build/python


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 8)
        self.b = torch.nn.Linear(8, 8)

    def forward(self, x, lo, hi):
        h = torch.relu(self.a(x)) + x
        centre = ((hi - lo) / 2.0).round()      # NNC rounds halves away from zero, ATen to even
        h = torch.tanh(self.b(h)) * 0.5 + centre * 0.1
        return torch.sigmoid(h), centre.int()


def main():
    backend = sys.argv[1] if len(sys.argv) > 1 else "nnc"
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    torch.manual_seed(0)
    model = torch.jit.script(Model().eval())
    x = torch.randn(2, 8)
    lo = torch.arange(16, dtype=torch.int64).reshape(2, 8)
    hi = lo + 2 * torch.arange(16, dtype=torch.int64).reshape(2, 8) % 7 + 1  # odd gaps: ties
    fn = tsrepro.wrap(model, backend=backend)
    try:
        with torch.no_grad():
            for i in range(calls):
                out, centre = fn(x, lo, hi)
                print("call %d: output sum %.6f, centre sum %d" % (i, out.sum().item(), centre.sum().item()))
    except RuntimeError as e:
        print("after_demo.py: the compiled model failed: %s" % str(e).splitlines()[0], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
