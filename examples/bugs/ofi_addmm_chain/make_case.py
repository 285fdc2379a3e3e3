"""Build examples/bugs/ofi_addmm_chain/{model.pt,inputs.pt}.

pytorch/pytorch#92742 "[JIT] Consecutive use of `addmm` Leads to Exception": after
torch.jit.optimize_for_inference, two chained torch.addmm calls whose bias/matrix operands are
frozen parameters (r1 = addmm(P2, P1, x1); r2 = addmm(r1, x2, P3)) raise at run time:

    RuntimeError: The size of tensor a (64) must match the size of tensor b (32) at non-singleton
    dimension 0 / The above operation failed shape propagation in this context: ... def addmm(...)

while the unoptimized model runs fine. Here the chain sits between a healthy MLP encoder and a
healthy MLP head (scripted model, eval mode).

Run from the repository root with Debian's Python:  /usr/bin/python3 examples/bugs/ofi_addmm_chain/make_case.py
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
N, K = 6, 4   # the issue uses 64 x 32; the shapes only need N != K


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return x + torch.tanh(F.relu(self.fc(x)) * 0.5)


class AddmmChain(nn.Module):
    """The buggy pattern of #92742."""

    def __init__(self):
        super().__init__()
        self.v1 = nn.Parameter(torch.rand(N, K))
        self.v2 = nn.Parameter(torch.rand(N, K))
        self.v3 = nn.Parameter(torch.rand(K, K))

    def forward(self, i1, i2):
        r1 = torch.addmm(self.v2, self.v1, i1)   # (N,K) + (N,K)@(K,K)
        r2 = torch.addmm(r1, i2, self.v3)        # (N,K) + (N,K)@(K,K)
        return r2


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.ModuleList([Block(K) for _ in range(4)])
        self.proj = nn.Linear(K, K)
        self.chain = AddmmChain()
        self.head = nn.ModuleList([Block(K) for _ in range(4)])
        self.out = nn.Linear(K, 2)

    def forward(self, a, b):
        # a: (K, K) square features, b: (N, K) row features
        for blk in self.enc:
            a = blk(a)
        b = torch.relu(self.proj(b))
        y = self.chain(a, b)
        for blk in self.head:
            y = blk(y)
        return torch.log_softmax(self.out(y), dim=1)


def main():
    torch.manual_seed(0)
    model = Model().eval()
    scripted = torch.jit.script(model)
    inputs = (torch.randn(K, K), torch.randn(N, K))

    torch.jit.save(scripted, os.path.join(HERE, "model.pt"))
    torch.save(inputs, os.path.join(HERE, "inputs.pt"))

    loaded = torch.jit.load(os.path.join(HERE, "model.pt")).eval()
    nodes = len(list(loaded.inlined_graph.nodes()))
    torch._C._set_graph_executor_optimize(False)
    with torch.no_grad():
        loaded(*inputs)
    torch._C._set_graph_executor_optimize(True)
    print(f"inlined graph nodes: {nodes}; unoptimized run OK")
    ofi = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.load(os.path.join(HERE, "model.pt")).eval()))
    try:
        with torch.no_grad():
            for _ in range(3):
                ofi(*inputs)
    except RuntimeError as e:
        print("optimize_for_inference run raised:", str(e).strip().splitlines()[0])
        print("bug reproduced")
        return 0
    print("bug NOT reproduced", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
