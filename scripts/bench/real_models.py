"""Real-model twins: a torchvision classifier with one culprit op placed at a chosen position, built
both as a scripted module (for tsrepro) and as its make_fx aten graph (for functorch's
fx_minifier), so that both minifiers look for the same node in the same model.

The culprit is `torch.clamp_min(x, -3e38)` right after one leaf module's output: the identity on
every finite float32 value (so the model computes what it computed before), and an op none of the
three models uses, so "the culprit is present" means exactly that one node. Its position is a
fraction of the leaf modules in the order the forward pass calls them (hooks on one eager run):
start 5%, middle 50%, end 95%. Random weights, one 1x3x32x32 image, nothing downloaded.
"""

import torch
import torchvision

MODELS = ("resnet18", "mobilenet_v3_small", "convnext_tiny")
POSITIONS = {"start": 0.05, "middle": 0.5, "end": 0.95}
CULPRIT_ATEN = "aten::clamp_min"  # what tsrepro's inject backend and the FX oracle look for


class Culprit(torch.nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return torch.clamp_min(self.inner(x), -3.0e38)


def example_input():
    return torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(0))


def leaves_in_call_order(model, x):
    """(parent, attribute name) of each leaf module, in the order one eager forward calls them."""
    parent_of = {}
    for parent_name, parent in model.named_modules():
        for child_name, child in parent.named_children():
            parent_of[id(child)] = (parent, child_name)
    order, seen = [], set()
    hooks = []
    for module in model.modules():
        if next(module.children(), None) is None and id(module) in parent_of:
            def record(m, inputs, output):
                if id(m) not in seen and isinstance(output, torch.Tensor):
                    seen.add(id(m))
                    order.append(parent_of[id(m)])
            hooks.append(module.register_forward_hook(record))
    with torch.no_grad():
        model(x)
    for h in hooks:
        h.remove()
    return order


def model_with_culprit(name, position):
    """The eval-mode model (seeded random weights) with the culprit after the chosen leaf module."""
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    leaves = leaves_in_call_order(model, example_input())
    parent, attr = leaves[round(POSITIONS[position] * (len(leaves) - 1))]
    setattr(parent, attr, Culprit(getattr(parent, attr)))
    return model


def scripted(model):
    return torch.jit.script(model)


def fx_graph(model):
    """The model's aten graph, as fx_minifier minifies it (parameters become graph constants)."""
    from torch.fx.experimental.proxy_tensor import make_fx
    with torch.no_grad():
        return make_fx(model)(example_input())
