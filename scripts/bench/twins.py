"""Twin benchmark cases: one graph spec, built both as an FX GraphModule (for functorch's
fx_minifier) and as TorchScript IR text (for tsrepro), so that both minifiers see the same graph.

A spec is a list of nodes in topological order. Each node is (op, args): op is one of OPS, args
are indices of earlier nodes (-1 is the graph input x). The graph returns the last node.
Deterministic: the same name always gives the same spec.
"""

# torch is imported where it is used: run.py builds IR text from these specs without loading
# libtorch (see torch_side.py).

# Unary ops that keep values bounded, so long chains stay finite; the culprits are relu and abs.
UNARY = ["sin", "tanh", "cos", "sigmoid", "neg"]
CULPRITS = ["relu", "abs"]


# Ops that do not wash a perturbation out (sin and tanh keep differences near 0): for the
# accuracy chain, where a wrong value must still show at the output hundreds of nodes later.
NON_CONTRACTING = ["neg", "sin", "neg", "tanh"]


def chain(n, culprits, ops=UNARY):
    """n unary nodes; culprits maps a position to the culprit op placed there."""
    nodes = []
    for i in range(n):
        op = culprits.get(i, ops[i % len(ops)])
        nodes.append((op, [i - 1]))
    return nodes


def residual(blocks, culprit_block, culprit="relu"):
    """Residual blocks x = x + g(f(x)): three nodes each, a DAG rather than a chain."""
    nodes = []
    x = -1
    for b in range(blocks):
        f = UNARY[b % len(UNARY)]
        g = culprit if b == culprit_block else UNARY[(b + 2) % len(UNARY)]
        nodes.append((f, [x]))
        nodes.append((g, [len(nodes) - 1]))
        nodes.append(("add", [x, len(nodes) - 1]))
        x = len(nodes) - 1
    return nodes


# name -> (spec, tsrepro backend, what the FX oracle checks)
def cases():
    out = {}
    for n in (50, 200, 1000, 5000):
        out["chain_%d" % n] = (chain(n, {int(n * 0.37): "relu"}), "inject:compile-error@aten::relu", "relu")
    out["residual_1000"] = (residual(334, 201), "inject:compile-error@aten::relu", "relu")
    out["two_culprits_1000"] = (chain(1000, {300: "relu", 700: "abs"}), "inject:compile-error@aten::relu+aten::abs",
                                "relu+abs")
    out["accuracy_1000"] = (chain(1000, {613: "relu"}, NON_CONTRACTING), "inject:accuracy@aten::relu", "accuracy:relu")
    return out


def to_fx(spec):
    import torch
    import torch.fx as fx
    graph = fx.Graph()
    x = graph.placeholder("x")
    values = []
    for op, args in spec:
        ins = [x if a < 0 else values[a] for a in args]
        target = torch.add if op == "add" else getattr(torch, op)
        values.append(graph.call_function(target, tuple(ins)))
    graph.output(values[-1])
    return fx.GraphModule(torch.nn.Module(), graph)


def to_ir(spec):
    lines = ["graph(%x : Tensor):", "  %one : int = prim::Constant[value=1]()"]
    name = lambda a: "%x" if a < 0 else "%v" + str(a)
    for i, (op, args) in enumerate(spec):
        if op == "add":
            lines.append("  %%v%d : Tensor = aten::add(%s, %s, %%one)" % (i, name(args[0]), name(args[1])))
        else:
            lines.append("  %%v%d : Tensor = aten::%s(%s)" % (i, op, name(args[0])))
    lines.append("  return (%%v%d)" % (len(spec) - 1))
    return "\n".join(lines) + "\n"


def inputs(elements=8):
    """Tiny by default (NNC has no LLVM here); the memory case asks for wider tensors."""
    import torch
    return [torch.linspace(-2.0, 2.0, elements)]
