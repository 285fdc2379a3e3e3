#!/usr/bin/python3
"""Generate the tsrepro example models into examples/models/.

Run from the repository root with Debian's Python (it has torch):

    /usr/bin/python3 examples/make_examples.py

Every model is built right after torch.manual_seed(0), so the output is
deterministic. The script deletes the files it owns in examples/models/
(*.pt, *.ir, MANIFEST.json) and writes them again, then loads each one back
and checks that it reproduces the saved expected output.

For every model NAME it writes:
  NAME.pt           torch.jit.save of the scripted / traced module
  NAME.inputs.pt    torch.save(tuple or list of forward() positional args)
  NAME.expected.pt  torch.save((out,)): a one-element tuple holding exactly
                    what module(*inputs) returned (under torch.no_grad()).
plus the hand-written IR example small_graph.{ir,inputs.pt,expected.pt} and
MANIFEST.json describing all of them.
"""

import copy
import json
import os
import sys
from typing import Tuple

# TorchScript writes module __constants__ (a python set) in set iteration
# order, which depends on string hashing. Pin the hash seed so that repeated
# runs produce byte-identical .pt files.
if os.environ.get("PYTHONHASHSEED") != "0":
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)

import torch
import torch.nn as nn
from torch import Tensor

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "models")
MAX_TOTAL_BYTES = 300 * 1024


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def count_nodes(block, counts=None):
    """Count nodes (recursively through sub-blocks) by kind."""
    if counts is None:
        counts = {}
    for node in block.nodes():
        counts[node.kind()] = counts.get(node.kind(), 0) + 1
        for sub in node.blocks():
            count_nodes(sub, counts)
    return counts


def inlined_graph(graph):
    g = graph.copy()
    torch._C._jit_pass_inline(g)
    return g


def non_constant_count(graph):
    counts = count_nodes(inlined_graph(graph))
    return sum(v for k, v in counts.items() if k != "prim::Constant"), counts


def same(a, b):
    """Exact structural + value equality (dtype and shape included)."""
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return (isinstance(a, Tensor) and isinstance(b, Tensor)
                and a.dtype == b.dtype and a.shape == b.shape
                and torch.equal(a, b))
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        return (type(a) is type(b) and len(a) == len(b)
                and all(same(x, y) for x, y in zip(a, b)))
    return type(a) is type(b) and a == b


def close(a, b):
    if isinstance(a, Tensor):
        return (isinstance(b, Tensor) and a.dtype == b.dtype
                and a.shape == b.shape
                and torch.allclose(a, b, rtol=1e-5, atol=1e-6))
    if isinstance(a, (tuple, list)):
        return (type(a) is type(b) and len(a) == len(b)
                and all(close(x, y) for x, y in zip(a, b)))
    return type(a) is type(b) and a == b


def all_finite(x):
    if isinstance(x, Tensor):
        return not x.is_floating_point() or bool(torch.isfinite(x).all())
    if isinstance(x, (tuple, list)):
        return all(all_finite(y) for y in x)
    return True


def max_numel(x):
    if isinstance(x, Tensor):
        return x.numel()
    if isinstance(x, (tuple, list)):
        return max([max_numel(y) for y in x] + [0])
    return 0


def describe_inputs(inputs):
    parts = []
    for v in inputs:
        if isinstance(v, Tensor):
            parts.append("Tensor[%s, %s]" % (
                str(v.dtype).replace("torch.", ""),
                "x".join(str(s) for s in v.shape) or "scalar"))
        else:
            parts.append(type(v).__name__)
    kind = "list" if isinstance(inputs, list) else "tuple"
    return "%s(%s)" % (kind, ", ".join(parts))


def snapshot_state(module):
    return {k: v.clone() for k, v in module.state_dict().items()}


MANIFEST = []
REPORT = []


def emit(name, module, inputs, kind, training, description):
    """Save module/inputs/expected for one model and verify the round trip."""
    assert kind in ("scripted", "traced")
    assert isinstance(inputs, (tuple, list))
    model_file = name + ".pt"
    inputs_file = name + ".inputs.pt"
    expected_file = name + ".expected.pt"

    state_before = snapshot_state(module)
    with torch.no_grad():
        # Run on a deep copy of the module when in training mode so that the
        # saved module's buffers (BN running stats) stay untouched; the output
        # is then what the saved module produces on its first call.
        runner = copy.deepcopy(module) if training else module
        out = runner(*copy.deepcopy(inputs))
    state_after = snapshot_state(module)
    assert state_before.keys() == state_after.keys() and all(
        same(state_before[k], state_after[k]) for k in state_before), \
        name + ": computing expected changed the module state"
    assert all_finite(out), name + ": non-finite output"
    assert max_numel(inputs) <= 64, name + ": input tensor too large"

    torch.jit.save(module, os.path.join(OUT_DIR, model_file))
    torch.save(inputs, os.path.join(OUT_DIR, inputs_file))
    torch.save((out,), os.path.join(OUT_DIR, expected_file))

    # -- verify the round trip ---------------------------------------------
    loaded = torch.jit.load(os.path.join(OUT_DIR, model_file))
    loaded_inputs = torch.load(os.path.join(OUT_DIR, inputs_file))
    loaded_expected = torch.load(os.path.join(OUT_DIR, expected_file))
    assert type(loaded_inputs) is type(inputs), name
    assert isinstance(loaded_expected, tuple) and len(loaded_expected) == 1
    assert loaded.training == training, name + ": training flag mismatch"
    with torch.no_grad():
        got = loaded(*loaded_inputs)
    # Same process, same kernels: expect bit-identical results. Fall back to
    # allclose only to give a useful message.
    if not same(got, loaded_expected[0]):
        assert close(got, loaded_expected[0]), name + ": reload mismatch"
        print("  note: %s reproduces expected only approximately" % name)

    n_nonconst, counts = non_constant_count(loaded.forward.graph)
    MANIFEST.append({
        "name": name,
        "model": model_file,
        "inputs": inputs_file,
        "expected": expected_file,
        "kind": kind,
        "training": training,
        "description": description,
    })
    REPORT.append((name, describe_inputs(inputs), n_nonconst, counts))
    return loaded, n_nonconst, counts


# ---------------------------------------------------------------------------
# models
# ---------------------------------------------------------------------------

class ConvBnReluLinear(nn.Module):
    """Conv2d(2,4,3,p=1) -> BatchNorm2d(4) -> ReLU -> flatten -> Linear."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.fc = nn.Linear(4 * 3 * 3, 2)
        # Non-trivial BN statistics/affine so that freezing / conv-bn folding
        # actually changes the numbers.
        with torch.no_grad():
            self.bn.running_mean.copy_(torch.randn(4))
            self.bn.running_var.copy_(torch.rand(4) * 3.0 + 0.25)
            self.bn.weight.copy_(torch.rand(4) + 0.5)
            self.bn.bias.copy_(torch.randn(4) * 0.1)

    def forward(self, x):
        x = self.relu(self.bn(self.conv(x)))
        x = torch.flatten(x, 1)
        return self.fc(x)


class ControlFlow(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(2, 3) * 0.1 + 1.0)

    def forward(self, x: Tensor, n: int) -> Tensor:
        if x.sum() > 0:
            y = x * self.scale
        else:
            y = x - self.scale
        # y is read once per iteration: libtorch 2.6's jit unrolls the loop 8 times into one NNC
        # kernel and inlines each step into the next, so a body reading y twice (it did:
        # tanh(y + 0.5 * relu(y))) makes an expression of 2^8 copies, which NNC's simplifier
        # took 30-47 s to compile on this 2x3 input (2026-11-28); relu(y), a select that reads y
        # twice, still took 7 s.
        for i in range(n):
            y = torch.tanh(y) * 0.9 + float(i) * 0.1
        return y


class IntInputs(nn.Module):
    def forward(self, table: Tensor, idx: Tensor, k: int) -> Tuple[Tensor, Tensor]:
        rows = torch.index_select(table, 0, idx)                 # [4, 4]
        gidx = idx.unsqueeze(0).expand(2, idx.size(0))           # [2, 4]
        picked = torch.gather(table, 0, gidx)                    # [2, 4]
        out = rows * float(k) + picked.sum(0)                    # [4, 4]
        return out, idx * k


class MultiOutput(nn.Module):
    def forward(self, x: Tensor, y: Tensor, scale: float,
                flag: bool) -> Tuple[Tensor, Tuple[Tensor, Tensor]]:
        a = x * scale + y
        if flag:
            b = torch.relu(a)
        else:
            b = -a
        c = (x * y).sum(dim=0)
        return a, (b, c)


class ChainBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: Tensor) -> Tensor:
        # Residual form x + tanh(0.5 * relu(fc(x))): each block moves x by
        # less than 1 (no overflow) and, unlike tanh(0.5*relu(fc(x)) + x),
        # it is not a contraction, so a change early in the chain is still
        # visible at the output instead of being damped away.
        y = torch.relu(self.fc(x))
        y = torch.tanh(y * 0.5)
        return y + x


class Chain(nn.Module):
    NUM_BLOCKS = 24

    def __init__(self):
        super().__init__()
        # ModuleList iteration is unrolled by the TorchScript compiler, so the
        # inlined forward graph holds every block's nodes.
        self.blocks = nn.ModuleList([ChainBlock() for _ in range(self.NUM_BLOCKS)])

    def forward(self, x: Tensor) -> Tensor:
        for blk in self.blocks:
            x = blk(x)
        return x


class ElementwiseChain(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        y = x * 1.5
        y = y + 0.25
        y = torch.relu(y)
        y = torch.sigmoid(y)
        y = y * x
        y = y - 0.1
        y = torch.tanh(y)
        y = y + x
        return y


SMALL_GRAPH_IR = """\
graph(%x : Tensor, %y : Tensor):
  %a : int = prim::Constant[value=1]()
  %b : Tensor = aten::add(%x, %y, %a)
  %c : Tensor = aten::relu(%b)
  %d : Tensor = aten::mul(%c, %x)
  return (%d)
"""


def check_te_fusion(module, inputs):
    """Return True if NNC forms a prim::TensorExprGroup for this module."""
    old_cpu = torch._C._jit_can_fuse_on_cpu()
    old_llvm = torch._C._jit_get_te_must_use_llvm_cpu()
    old_te = torch._C._jit_texpr_fuser_enabled()
    try:
        torch._C._jit_override_can_fuse_on_cpu(True)
        torch._C._jit_set_te_must_use_llvm_cpu(torch._C._llvm_enabled())  # interpreter only without LLVM
        torch._C._jit_set_texpr_fuser_enabled(True)
        m = copy.deepcopy(module)
        with torch.no_grad():
            for _ in range(3):
                out = m(*copy.deepcopy(inputs))
        g = torch.jit.last_executed_optimized_graph()
        kinds = count_nodes(g)
        return "prim::TensorExprGroup" in kinds, out
    finally:
        torch._C._jit_override_can_fuse_on_cpu(old_cpu)
        torch._C._jit_set_te_must_use_llvm_cpu(old_llvm)
        torch._C._jit_set_texpr_fuser_enabled(old_te)


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    for f in os.listdir(OUT_DIR):
        if f.endswith(".pt") or f.endswith(".ir") or f == "MANIFEST.json":
            os.remove(os.path.join(OUT_DIR, f))

    # 1. eval-mode conv/bn/relu/linear, scripted
    torch.manual_seed(0)
    m = ConvBnReluLinear().eval()
    x = torch.randn(1, 2, 3, 3)
    emit("conv_bn_relu_linear_scripted", torch.jit.script(m), (x,),
         "scripted", False,
         "Eval-mode Conv2d(2,4,3,pad=1) -> BatchNorm2d(4) with non-trivial "
         "running stats -> ReLU -> flatten -> Linear(36,2). Freezing / "
         "conv-bn folding changes the numbers. Input 1x2x3x3.")

    # 2. same architecture, traced
    torch.manual_seed(0)
    m = ConvBnReluLinear().eval()
    x = torch.randn(1, 2, 3, 3)
    with torch.no_grad():
        traced = torch.jit.trace(m, (x,))
    emit("conv_bn_relu_linear_traced", traced, (x,), "traced", False,
         "Same architecture and weights as conv_bn_relu_linear_scripted, "
         "produced by torch.jit.trace (no control flow, ops recorded "
         "as traced).")

    # 3. training-mode conv/bn, scripted
    torch.manual_seed(0)
    m = ConvBnReluLinear().train()
    x = torch.randn(2, 2, 3, 3)
    emit("conv_bn_train_scripted", torch.jit.script(m), (x,), "scripted", True,
         "Same architecture left in TRAINING mode (BatchNorm uses batch "
         "statistics and updates running_mean/var on each call). Batch of 2. "
         "Expected output is what the saved module produces on its first "
         "call; the saved buffers are the pre-call values.")

    # 4. control flow
    torch.manual_seed(0)
    m = ControlFlow().eval()
    x = torch.randn(2, 3).abs() + 0.1   # sum > 0 -> takes the first branch
    emit("control_flow_scripted", torch.jit.script(m), [x, 3], "scripted",
         False,
         "forward(x: Tensor, n: int): data-dependent `if x.sum() > 0` "
         "(prim::If) and `for i in range(n)` (prim::Loop). Inputs are a "
         "python list [Tensor 2x3, int 3].")

    # 5. integer inputs / outputs
    torch.manual_seed(0)
    m = IntInputs().eval()
    table = torch.randn(8, 4)
    idx = torch.tensor([5, 0, 7, 2], dtype=torch.int64)
    emit("int_inputs_scripted", torch.jit.script(m), (table, idx, 3),
         "scripted", False,
         "forward(table: float 8x4, idx: int64[4] in [0,8), k: int) using "
         "index_select and gather with the int64 index; returns "
         "(float 4x4 depending on k, int64 idx * k).")

    # 6. multiple / nested outputs, float and bool inputs
    torch.manual_seed(0)
    m = MultiOutput().eval()
    x = torch.randn(3, 4)
    y = torch.randn(3, 4)
    emit("multi_output_scripted", torch.jit.script(m), (x, y, 0.75, True),
         "scripted", False,
         "forward(x: Tensor 3x4, y: Tensor 3x4, scale: float, flag: bool) "
         "returning the nested tuple (a, (b, c)). Covers float and bool "
         "inputs and nested tuple outputs.")

    # 7. long chain (>= 100 non-constant nodes after inlining)
    torch.manual_seed(0)
    m = Chain().eval()
    x = torch.randn(2, 4)
    sm = torch.jit.script(m)
    n_chain, counts = non_constant_count(sm.forward.graph)
    print("chain100_scripted: %d non-constant nodes after inlining" % n_chain)
    assert n_chain >= 100, n_chain
    assert counts.get("aten::relu", 0) >= 3 and counts.get("aten::add", 0) >= 3
    emit("chain100_scripted", sm, [x], "scripted", False,
         "%d repeated residual blocks x + tanh(relu(Linear(4,4)(x)) * 0.5) "
         "(nn.ModuleList, unrolled by the compiler); >= 100 non-constant "
         "nodes after inlining, many aten::relu / aten::add. Input 2x4, "
         "given as a one-element list." % Chain.NUM_BLOCKS)

    # 8. elementwise-only chain (NNC fusion target)
    torch.manual_seed(0)
    m = ElementwiseChain().eval()
    x = torch.randn(16)
    sm = torch.jit.script(m)
    loaded, _, _ = emit(
        "elementwise_chain_scripted", sm, [x], "scripted", False,
        "forward(x: float[16]) = mul, add, relu, sigmoid, mul, sub, tanh, add "
        "(elementwise only). With CPU fusion enabled and "
        "te_must_use_llvm_cpu off, the profiling executor forms a "
        "prim::TensorExprGroup. Input is a one-element list.")
    fused, fused_out = check_te_fusion(loaded, [x])
    print("elementwise_chain_scripted: TensorExprGroup formed = %s" % fused)
    assert fused, "NNC did not form a prim::TensorExprGroup"
    expected = torch.load(os.path.join(OUT_DIR,
                                       "elementwise_chain_scripted.expected.pt"))
    assert close(fused_out, expected[0]), "fused output differs from expected"

    # 9. hand-written IR graph
    torch.manual_seed(0)
    g = torch._C.parse_ir(SMALL_GRAPH_IR)
    fn = torch._C._create_function_from_graph("f", g)
    x = torch.randn(2, 3)
    y = torch.randn(2, 3)
    inputs = (x, y)
    with torch.no_grad():
        out = fn(*copy.deepcopy(inputs))
    ref = torch.relu(x + y) * x
    assert same(out, ref), "small_graph.ir does not compute relu(x+y)*x"
    with open(os.path.join(OUT_DIR, "small_graph.ir"), "w") as f:
        f.write(SMALL_GRAPH_IR)
    torch.save(inputs, os.path.join(OUT_DIR, "small_graph.inputs.pt"))
    torch.save((out,), os.path.join(OUT_DIR, "small_graph.expected.pt"))
    # round trip
    with open(os.path.join(OUT_DIR, "small_graph.ir")) as f:
        g2 = torch._C.parse_ir(f.read())
    fn2 = torch._C._create_function_from_graph("f", g2)
    got = fn2(*torch.load(os.path.join(OUT_DIR, "small_graph.inputs.pt")))
    assert same(got, torch.load(os.path.join(OUT_DIR,
                                             "small_graph.expected.pt"))[0])
    counts = count_nodes(g2)
    MANIFEST.append({
        "name": "small_graph",
        "model": "small_graph.ir",
        "inputs": "small_graph.inputs.pt",
        "expected": "small_graph.expected.pt",
        "kind": "ir",
        "training": False,
        "description": "Hand-written TorchScript IR text (parse_ir): "
                       "relu(x + y) * x on two 2x3 float tensors. No tensor "
                       "constants, no source ranges.",
    })
    REPORT.append(("small_graph", describe_inputs(inputs),
                   sum(v for k, v in counts.items() if k != "prim::Constant"),
                   counts))

    with open(os.path.join(OUT_DIR, "MANIFEST.json"), "w") as f:
        json.dump(MANIFEST, f, indent=2)
        f.write("\n")

    # -- summary -------------------------------------------------------------
    total = 0
    for fname in sorted(os.listdir(OUT_DIR)):
        total += os.path.getsize(os.path.join(OUT_DIR, fname))
    print()
    print("%-30s %-55s %s" % ("model", "inputs", "non-const nodes (inlined)"))
    for name, sig, n, _ in REPORT:
        print("%-30s %-55s %d" % (name, sig, n))
    print()
    print("total size of examples/models: %d bytes" % total)
    assert total <= MAX_TOTAL_BYTES, "examples too large"
    return 0


if __name__ == "__main__":
    sys.exit(main())
