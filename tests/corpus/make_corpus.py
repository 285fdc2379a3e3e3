#!/usr/bin/python3
"""Generate tsrepro's real-model test corpus.

Run with Debian's Python (it has torch, torchvision and torchaudio; the
`python3` first on PATH may not):

    /usr/bin/python3 tests/corpus/make_corpus.py OUT_DIR [NAME ...]
    /usr/bin/python3 tests/corpus/make_corpus.py --list
    /usr/bin/python3 tests/corpus/make_corpus.py --list-ci
    /usr/bin/python3 tests/corpus/make_corpus.py --measure OUT_DIR [NAME ...]
    /usr/bin/python3 tests/corpus/make_corpus.py --public-graphs OUT_DIR \
        [NAME ...]

No NAME means every model. Nothing is downloaded: torchvision models are
built with weights=None and every model gets random weights right after
torch.manual_seed(0), so the output is deterministic (PYTHONHASHSEED is
pinned too, see below).

For every model NAME it writes OUT_DIR/NAME/:
  model.pt      torch.jit.save(torch.jit.script(model.eval()))
  inputs.pt     torch.save(tuple of forward()'s positional args); always a
                tuple, even for one argument, and it may hold fewer values
                than forward() has parameters (then the defaults apply)
  expected.pt   torch.save((out,)): a one-element tuple holding what the
                scripted module returned on inputs.pt under torch.no_grad()
                (a NamedTuple output is stored as a plain tuple)
  info.json     name; family ("torchvision", "torchaudio" or "construct"); task
                (torchvision models: "classification", "segmentation",
                "detection", "video" or "optical_flow"; else null); forward
                schema; input (description) and input_note (why this
                size); output; non_constant_nodes (nodes of the inlined
                forward graph that are not prim::Constant, counted through
                sub-blocks); node_kinds; constructs (what the model is meant
                to exercise: node kinds, checks, or descriptions) and which
                of them were confirmed in the graph; load_library, only when
                the graph calls an extension library's operators
                (torchvision::nms, ...): that library's absolute path, which
                tsrepro must be given with --load-library
and OUT_DIR/MANIFEST.json: the list of the info of the models written by
this run. Files a previous run left in OUT_DIR/NAME/ are removed first.

--measure additionally times every written model (see measure()) and writes
the numbers to OUT_DIR/MEASURE.json; --public-graphs additionally writes the
graphs that the public PyTorch APIs produce (see write_public_graphs()).
Neither runs by default; they can be combined. --list-ci prints the subset
meant for every CI run (all construct models and four quick torchvision
ones).

Input sizes: the C++ side runs NNC's fusion groups in NNC's IR interpreter
(this libtorch has no LLVM), at tens of microseconds per element per kernel,
so every model gets batch 1 and the smallest square image it accepts (found
by trying every size from 1 up); info.json's input_note says why. Where a
model's fixed configuration makes that large (maxvit_t's partition size,
MViT's and SSD's built-in input sizes, RAFT's correlation pyramid), a knob
that keeps the graph is set smaller; detection models get one 32x32 image.
The reference output of every torchvision model must be finite, and every
model's loaded module must give it on two calls in a row (the second, which
runs the optimized plan, to within rounding).
"""

import collections
import json
import os
import sys
import time
import warnings
from typing import Dict, List, Optional, Tuple

# TorchScript writes module __constants__ (a python set) in set iteration
# order, which depends on string hashing. Pin the hash seed so that repeated
# runs produce byte-identical model.pt files.
if os.environ.get("PYTHONHASHSEED") != "0":
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)

import torch
import torch.nn as nn
from public_graph import run_seed
import torch.nn.functional as F
from torch import Tensor

# torchvision's scripted GoogLeNet warns on every call that it always returns
# a GoogLeNetOutputs tuple; the message says nothing useful here.
warnings.filterwarnings("ignore", message="Scripted GoogleNet always returns")
# Likewise Inception3 and the detection models (a (losses, detections) tuple).
warnings.filterwarnings("ignore", message="Scripted Inception3 always returns")
warnings.filterwarnings(
    "ignore", message="(RCNN|RetinaNet|FCOS|SSD) always returns a")

# The files this script owns inside OUT_DIR/NAME/.
OWNED_FILES = ("model.pt", "inputs.pt", "expected.pt", "info.json",
               "public_ofi.txt", "public_jit.txt", "public_nnc.txt")


# ---------------------------------------------------------------------------
# graph helpers
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
    """(number of non-prim::Constant nodes of the inlined graph, counts of
    all its node kinds)."""
    counts = count_nodes(inlined_graph(graph))
    return sum(v for k, v in counts.items() if k != "prim::Constant"), counts


def any_node(block, pred):
    """True if pred(node) holds for a node of block or of its sub-blocks."""
    for node in block.nodes():
        if pred(node) or any(any_node(sub, pred) for sub in node.blocks()):
            return True
    return False


def has_function_constant(graph):
    """A prim::Constant of function type left in the inlined graph (inlining
    leaves one behind for every prim::CallFunction it inlined)."""
    return any_node(inlined_graph(graph), lambda n: (
        n.kind() == "prim::Constant"
        and n.output().type().kind() == "FunctionType"))


def has_module_argument(graph):
    """Before inlining: a prim::CallFunction with a module (ClassType)
    argument."""
    return any_node(graph, lambda n: (
        n.kind() == "prim::CallFunction"
        and any(v.type().kind() == "ClassType" for v in n.inputs())))


def has_interface_call(graph):
    """After inlining: a prim::CallMethod on an interface-typed value."""
    return any_node(inlined_graph(graph), lambda n: (
        n.kind() == "prim::CallMethod"
        and next(n.inputs()).type().kind() == "InterfaceType"))


# ---------------------------------------------------------------------------
# value helpers
# ---------------------------------------------------------------------------

def is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def plain(x):
    """Turn NamedTuples (at any depth) into plain tuples: torch.save would
    pickle them as a reference to a Python class that libtorch's unpickler
    (and tsrepro's reader) cannot resolve."""
    if isinstance(x, tuple):
        return tuple(plain(v) for v in x)
    if isinstance(x, list):
        return [plain(v) for v in x]
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    return x


def same(a, b):
    """Exact structural + value equality (NaN equal to NaN)."""
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return (isinstance(a, Tensor) and isinstance(b, Tensor)
                and a.dtype == b.dtype and a.shape == b.shape
                and torch.equal(torch.nan_to_num(a), torch.nan_to_num(b))
                and torch.equal(torch.isnan(a), torch.isnan(b)))
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        return (isinstance(a, (tuple, list)) and isinstance(b, (tuple, list))
                and isinstance(a, tuple) == isinstance(b, tuple)
                and len(a) == len(b)
                and all(same(x, y) for x, y in zip(a, b)))
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict)
                and list(a.keys()) == list(b.keys())
                and all(same(a[k], b[k]) for k in a))
    return type(a) is type(b) and a == b


def close(a, b, rtol=1e-3, atol=1e-3):
    """Structural equality with torch.allclose on tensors (NaN == NaN)."""
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return (isinstance(a, Tensor) and isinstance(b, Tensor)
                and a.dtype == b.dtype and a.shape == b.shape
                and torch.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        return (isinstance(a, (tuple, list)) and isinstance(b, (tuple, list))
                and len(a) == len(b)
                and all(close(x, y, rtol, atol) for x, y in zip(a, b)))
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict)
                and list(a.keys()) == list(b.keys())
                and all(close(a[k], b[k], rtol, atol) for k in a))
    return type(a) is type(b) and a == b


def describe(v):
    """Short type/shape description, e.g. Tensor[float32, 1x3x4x4]."""
    if isinstance(v, Tensor):
        shape = "x".join(str(s) for s in v.shape) or "scalar"
        return "Tensor[%s, %s]" % (str(v.dtype).replace("torch.", ""), shape)
    if is_namedtuple(v):
        return "%s(%s)" % (type(v).__name__, ", ".join(describe(x) for x in v))
    if isinstance(v, tuple):
        return "Tuple[%s]" % ", ".join(describe(x) for x in v)
    if isinstance(v, list):
        return "List[%s]" % ", ".join(describe(x) for x in v)
    if isinstance(v, dict):
        return "Dict{%s}" % ", ".join("%r: %s" % (k, describe(x))
                                      for k, x in v.items())
    if v is None:
        return "None"
    return "%s(%r)" % (type(v).__name__, v)


# Constructs that write_model() checks on the forward graph (besides node
# kinds, which are checked against the inlined graph).
FUNCTION_CONSTANT = ("function constant left by inlining "
                     "(prim::Constant of FunctionType)")
MODULE_ARGUMENT = ("submodule passed as an argument to a scripted function "
                   "(prim::CallFunction with a module-typed argument, "
                   "before inlining)")
INTERFACE_CALL = ("submodule attribute annotated with a @torch.jit.interface "
                  "type (prim::CallMethod on an InterfaceType value, left "
                  "by inlining)")


# ---------------------------------------------------------------------------
# torchvision models
#
# Each builder returns (module, inputs_tuple, constructs, note). The
# constructs are node kinds found in the inlined forward graph (checked when
# writing) or free-text descriptions of what the model exercises.
# ---------------------------------------------------------------------------

NUM_CLASSES = 10  # small classifier heads keep the files smaller


def image(size):
    """Batch-1 RGB image of size x size (random, drawn after the weights)."""
    return (torch.randn(1, 3, size, size),)


def tv_resnet18():
    import torchvision.models as M
    m = M.resnet18(weights=None, num_classes=NUM_CLASSES)
    return (m, image(1),
            ["aten::conv2d", "aten::batch_norm", "aten::relu_",
             "aten::max_pool2d", "aten::add_", "aten::adaptive_avg_pool2d",
             "aten::flatten", "aten::linear",
             "residual blocks (in-place add_ of the skip connection)"],
            "1x1 is the smallest accepted size (every stride-2 conv/pool "
            "pads a 1x1 map back to 1x1); the graph does not depend on it")


def tv_mobilenet_v3_small():
    import torchvision.models as M
    m = M.mobilenet_v3_small(weights=None, num_classes=NUM_CLASSES)
    return (m, image(1),
            ["aten::hardswish_", "aten::hardsigmoid", "aten::relu",
             "aten::adaptive_avg_pool2d", "aten::mul", "aten::add_",
             "aten::dropout_", "aten::flatten",
             "depthwise convolutions (groups == channels)",
             "squeeze-excitation (pooled scale multiplied back)"],
            "1x1 is the smallest accepted size")


def tv_regnet_y_400mf():
    import torchvision.models as M
    m = M.regnet_y_400mf(weights=None, num_classes=NUM_CLASSES)
    return (m, image(1),
            ["aten::sigmoid", "aten::relu_", "aten::adaptive_avg_pool2d",
             "aten::mul", "aten::add", "aten::flatten",
             "grouped convolutions", "squeeze-excitation"],
            "1x1 is the smallest accepted size")


def tv_squeezenet1_1():
    import torchvision.models as M
    m = M.squeezenet1_1(weights=None, num_classes=NUM_CLASSES)
    return (m, image(17),
            ["aten::cat", "prim::ListConstruct", "aten::max_pool2d",
             "aten::relu_", "aten::dropout", "aten::adaptive_avg_pool2d",
             "aten::flatten", "fire modules (cat of two expand branches)",
             "max_pool2d with ceil_mode=True"],
            "17x17 is the smallest accepted size (16x16 leaves a 0x0 map "
            "before the last max_pool2d)")


def tv_efficientnet_b0():
    import torchvision.models as M
    m = M.efficientnet_b0(weights=None, num_classes=NUM_CLASSES)
    return (m, image(1),
            ["aten::silu_", "aten::sigmoid", "aten::mul", "aten::add_",
             "aten::adaptive_avg_pool2d", "aten::dropout_", "prim::If",
             "aten::bernoulli_",
             "StochasticDepth (branch on self.training, no-op in eval)",
             "squeeze-excitation"],
            "1x1 is the smallest accepted size")


def tv_convnext_tiny():
    import torchvision.models as M
    m = M.convnext_tiny(weights=None, num_classes=NUM_CLASSES)
    return (m, image(32),
            ["aten::permute", "aten::layer_norm", "aten::gelu",
             "aten::mul", "aten::add", "aten::adaptive_avg_pool2d",
             "aten::flatten", "aten::linear",
             "channels-last LayerNorm via permute", "layer scale parameter",
             "StochasticDepth"],
            "32x32 is the smallest accepted size (4x4 patchify stem, then "
            "three 2x2 stride-2 downsamplings)")


def tv_shufflenet_v2_x0_5():
    import torchvision.models as M
    m = M.shufflenet_v2_x0_5(weights=None, num_classes=NUM_CLASSES)
    return (m, image(1),
            ["aten::chunk", "aten::cat", "aten::view", "aten::transpose",
             "aten::contiguous", "aten::mean", "prim::If",
             "channel shuffle (view/transpose/contiguous/view)",
             "branch on self.stride == 1"],
            "1x1 is the smallest accepted size")


def tv_densenet121():
    import torchvision.models as M
    m = M.densenet121(weights=None, num_classes=NUM_CLASSES)
    return (m, image(29),
            ["aten::cat", "prim::ListConstruct", "aten::append",
             "prim::Loop", "prim::If", "aten::avg_pool2d",
             "aten::relu", "aten::adaptive_avg_pool2d",
             "prim::requires_grad", "prim::RaiseException",
             "prim::Uninitialized",
             "List[Tensor] passed between dense layers (overloaded forward)",
             "memory_efficient branch (raises under TorchScript) left in "
             "the graph"],
            "29x29 is the smallest accepted size (28x28 leaves a 0x0 map "
            "in the last transition's avg_pool2d)")


def tv_googlenet():
    import torchvision.models as M
    m = M.googlenet(weights=None, num_classes=NUM_CLASSES, aux_logits=False,
                    init_weights=False)
    return (m, image(15),
            ["aten::cat", "aten::max_pool2d", "aten::dropout", "prim::If",
             "prim::TupleConstruct", "aten::warn",
             "NamedTuple output GoogLeNetOutputs(logits, None, None) "
             "(expected.pt stores it as a plain tuple)",
             "Optional[Module] aux heads set to None"],
            "15x15 is the smallest accepted size (14x14 leaves a 0x0 map "
            "before the last max_pool2d)")


def tv_swin_t():
    import torchvision.models as M
    m = M.swin_t(weights=None, num_classes=NUM_CLASSES)
    return (m, image(4),
            ["aten::permute", "aten::layer_norm", "aten::pad", "aten::roll",
             "aten::softmax", "aten::matmul", "aten::gelu", "prim::If",
             "aten::masked_fill", "aten::new_zeros", "aten::index",
             "aten::_set_item", "window partition / reverse (view, permute, "
             "reshape)", "relative position bias (index into a table)",
             "shifted-window attention mask branch"],
            "4x4 is the smallest accepted size (one 4x4 patch). Windows are "
            "padded to 7x7 anyway, so the shifted-window branch is in the "
            "graph but not taken at this size")


VIT_CONFIG = dict(image_size=16, patch_size=8, num_layers=2, num_heads=2,
                  hidden_dim=32, mlp_dim=64, num_classes=NUM_CLASSES)


def tv_vit_tiny():
    from torchvision.models.vision_transformer import VisionTransformer
    m = VisionTransformer(**VIT_CONFIG)
    return (m, image(VIT_CONFIG["image_size"]),
            ["aten::conv2d",
             "aten::reshape", "aten::permute", "aten::expand", "aten::cat",
             "aten::layer_norm", "aten::gelu", "aten::dropout",
             "prim::If", "aten::_native_multi_head_attention",
             "prim::Uninitialized", "prim::is_nested", "prim::TupleConstruct",
             "torch._assert on the image size (prim::If + RaiseException)",
             "nn.MultiheadAttention (F.multi_head_attention_forward, "
             "scripted with its many Optional branches; eval + no_grad "
             "takes the _native_multi_head_attention fast path)",
             "class token concatenated to the patch sequence"],
            "VisionTransformer(%s); it accepts exactly its image_size. "
            "16x16 with 8x8 patches gives 4 patches + the class token"
            % ", ".join("%s=%s" % kv for kv in VIT_CONFIG.items()))


# -- more classification families -------------------------------------------
#
# One entry per architecture family (one builder code path), not per width or
# depth variant: resnet34/101/152, vgg13/16/19, densenet161/169/201,
# efficientnet_b1-b7, regnet_*gf, mnasnet0_75/1_0/1_3, shufflenet_v2_x1_0+,
# squeezenet1_0, convnext_small+, swin_s/b, swin_v2_s/b and
# efficientnet_v2_m/l build the same graph as the entry of their family, with
# other widths or more repeats of the same block. Also left out:
#   vgg11       conv/relu/max_pool2d/adaptive_avg_pool2d/dropout/linear, the
#               op sequence of alexnet at another depth; vgg11_bn (below)
#               is the VGG entry: it adds batch_norm between each conv and
#               relu, which is what the *_bn VGGs build
#   wide_resnet50_2  resnet50 with wider bottlenecks: the same graph;
#               resnext50_32x4d (grouped 3x3 convolutions) is the entry
#   vit_b_16 (and vit_b_32, vit_l_*, vit_h_14)  the VisionTransformer class
#               that vit_tiny already builds, at a bigger configuration
#   quantized_*  torchvision.models.quantization with quantize=True: the
#               resnet, resnext, googlenet, inception and shufflenet ones
#               hard-code the fbgemm engine, which Debian's torch lacks
#               ("Quantized backend not supported"); quantized_mobilenet_v2
#               and _v3_large (qnnpack) build and script, but at random
#               weights (calibrated on one random image, as torchvision's
#               quantize_model does) every output is exactly 0 at every
#               input size tried (1 to 224): nothing to compare. With
#               quantize=False they are the float models, with identity
#               QuantStubs


def tv_alexnet():
    import torchvision.models as M
    m = M.alexnet(weights=None, num_classes=NUM_CLASSES)
    return (m, image(63),
            ["aten::conv2d", "aten::relu_", "aten::max_pool2d",
             "aten::adaptive_avg_pool2d", "aten::flatten", "aten::dropout",
             "aten::linear", "11x11 stride-4 stem convolution",
             "adaptive_avg_pool2d up-sampling a 1x1 map to 6x6"],
            "63x63 is the smallest accepted size (62x62 leaves a 2x2 map, "
            "too small for the last 3x3 max_pool2d). optimize_for_inference raises on it in "
            "torch 1.13 (its MKLDNN adaptive_avg_pool2d: 'input size is "
            "not divisible by the output size is not supported yet', 1x1 "
            "to 6x6); 223x223 (a 6x6 map) is the smallest it runs")


def tv_vgg11_bn():
    import torchvision.models as M
    m = M.vgg11_bn(weights=None, num_classes=NUM_CLASSES)
    return (m, image(32),
            ["aten::conv2d", "aten::batch_norm", "aten::relu_",
             "aten::max_pool2d", "aten::adaptive_avg_pool2d",
             "aten::flatten", "aten::dropout", "aten::linear",
             "conv -> batch_norm -> relu chains, no skip connections",
             "25088 x 4096 classifier (its width is fixed in torchvision)"],
            "32x32 is the smallest accepted size (five 2x2 max_pool2d). "
            "optimize_for_inference raises on it in torch 1.13 (its MKLDNN "
            "adaptive_avg_pool2d: 'input size is not divisible by the "
            "output size is not supported yet', 1x1 to 7x7); 224x224 (a "
            "7x7 map) is the smallest it runs")


def tv_resnet50():
    import torchvision.models as M
    m = M.resnet50(weights=None, num_classes=NUM_CLASSES)
    return (m, image(1),
            ["aten::conv2d", "aten::batch_norm", "aten::relu_",
             "aten::max_pool2d", "aten::add_", "aten::adaptive_avg_pool2d",
             "aten::linear",
             "bottleneck blocks (1x1 -> 3x3 -> 1x1, 4x expansion) with a "
             "projection shortcut in every stage"],
            "1x1 is the smallest accepted size, as resnet18")


def tv_resnext50_32x4d():
    import torchvision.models as M
    m = M.resnext50_32x4d(weights=None, num_classes=NUM_CLASSES)
    return (m, image(1),
            ["aten::conv2d", "aten::batch_norm", "aten::relu_",
             "aten::add_", "aten::adaptive_avg_pool2d",
             "grouped 3x3 convolutions (groups=32) in bottleneck blocks"],
            "1x1 is the smallest accepted size. Chosen over "
            "wide_resnet50_2, whose graph is resnet50's with wider "
            "bottlenecks: ResNeXt's grouped convolutions are a different "
            "convolution")


def tv_mobilenet_v2():
    import torchvision.models as M
    m = M.mobilenet_v2(weights=None, num_classes=NUM_CLASSES)
    return (m, image(1),
            ["aten::conv2d", "aten::batch_norm", "aten::hardtanh_",
             "aten::add", "aten::adaptive_avg_pool2d", "aten::flatten",
             "aten::dropout", "aten::linear",
             "inverted residual blocks (ReLU6 = hardtanh_(0, 6), linear "
             "bottleneck, skip connection only when stride 1 and equal "
             "channels)", "depthwise convolutions"],
            "1x1 is the smallest accepted size")


def tv_mobilenet_v3_large():
    import torchvision.models as M
    m = M.mobilenet_v3_large(weights=None, num_classes=NUM_CLASSES)
    return (m, image(1),
            ["aten::hardswish_", "aten::hardsigmoid", "aten::relu_",
             "aten::adaptive_avg_pool2d", "aten::mul", "aten::add_",
             "aten::dropout_", "aten::flatten",
             "squeeze-excitation on some blocks, ReLU and hardswish blocks"],
            "1x1 is the smallest accepted size")


def tv_mnasnet0_5():
    import torchvision.models as M
    m = M.mnasnet0_5(weights=None, num_classes=NUM_CLASSES)
    return (m, image(1),
            ["aten::conv2d", "aten::batch_norm", "aten::relu_",
             "aten::add", "aten::mean", "aten::dropout_", "aten::linear",
             "global pooling written as x.mean([2, 3])",
             "5x5 depthwise convolutions"],
            "1x1 is the smallest accepted size")


def tv_efficientnet_v2_s():
    import torchvision.models as M
    m = M.efficientnet_v2_s(weights=None, num_classes=NUM_CLASSES)
    return (m, image(1),
            ["aten::conv2d", "aten::batch_norm", "aten::silu_",
             "aten::sigmoid", "aten::mul", "aten::add_",
             "aten::adaptive_avg_pool2d", "aten::dropout_", "prim::If",
             "fused MBConv blocks (one 3x3 expansion convolution) before "
             "the MBConv ones", "StochasticDepth", "squeeze-excitation"],
            "1x1 is the smallest accepted size")


def tv_regnet_x_400mf():
    import torchvision.models as M
    m = M.regnet_x_400mf(weights=None, num_classes=NUM_CLASSES)
    return (m, image(1),
            ["aten::conv2d", "aten::batch_norm", "aten::relu_", "aten::add",
             "aten::adaptive_avg_pool2d", "aten::flatten", "aten::linear",
             "grouped convolutions without squeeze-excitation (regnet_y_400mf "
             "has it)"],
            "1x1 is the smallest accepted size")


def tv_inception_v3():
    import torchvision.models as M
    m = M.inception_v3(weights=None, num_classes=NUM_CLASSES,
                       aux_logits=True, init_weights=False)
    return (m, image(75),
            ["aten::conv2d", "aten::batch_norm", "aten::relu_",
             "aten::max_pool2d", "aten::avg_pool2d", "aten::cat",
             "aten::adaptive_avg_pool2d", "aten::dropout", "aten::linear",
             "prim::If", "prim::TupleConstruct", "aten::warn",
             "NamedTuple output InceptionOutputs(logits, None) (expected.pt "
             "stores it as a plain tuple)",
             "aux classifier present but only run in a training branch",
             "asymmetric 1x7 / 7x1 convolutions"],
            "75x75 is the smallest accepted size (74x74 leaves a 2x2 map, "
            "too small for Mixed_7a's unpadded 3x3 stride-2 convolutions); "
            "init_weights=False "
            "(PyTorch's default initialization, as googlenet)")


MAXVIT_PARTITION = 2


def tv_maxvit_t():
    from torchvision.models.maxvit import MaxVit
    # maxvit_t's configuration, but partition_size 2 (maxvit_t: 7) and the
    # input_size it needs. The partition size only sizes the windows and the
    # relative position table; every stage's map must be a multiple of it,
    # so maxvit_t's 7 takes 224x224 at least (7.7 s per call here).
    size = 61
    m = MaxVit(input_size=(size, size), stem_channels=64,
               block_channels=[64, 128, 256, 512], block_layers=[2, 2, 5, 2],
               head_dim=32, stochastic_depth_prob=0.2,
               partition_size=MAXVIT_PARTITION, num_classes=NUM_CLASSES)
    return (m, image(size),
            ["aten::conv2d", "aten::batch_norm", "aten::gelu",
             "aten::silu", "aten::layer_norm", "aten::softmax",
             "aten::einsum", "aten::permute", "aten::reshape",
             "aten::transpose", "aten::index", "aten::sigmoid",
             "aten::adaptive_avg_pool2d", "aten::tanh",
             "MBConv with squeeze-excitation, then block (window) and grid "
             "attention with a relative position bias (einsum attention, "
             "axes swapped with transpose for the grid)",
             "StochasticDepth"],
            "MaxVit with maxvit_t's widths and depths and partition_size=2 "
            "(maxvit_t: 7; the graph does not depend on it): every stage's "
            "map must be a multiple of the partition size, and 61x61 "
            "(stem 31, stages 16, 8, 4, 2) is the smallest that is. "
            "Partition size 1 would take 1x1, but then every attention is "
            "over one token")


def tv_swin_v2_t():
    import torchvision.models as M
    m = M.swin_v2_t(weights=None, num_classes=NUM_CLASSES)
    return (m, image(4),
            ["aten::permute", "aten::layer_norm", "aten::pad", "aten::roll",
             "aten::softmax", "aten::matmul", "aten::gelu", "prim::If",
             "aten::norm", "aten::clamp_min", "aten::clamp", "aten::exp",
             "aten::sigmoid", "aten::relu_",
             "scaled cosine attention (normalize q and k, clamped "
             "logit_scale)",
             "continuous relative position bias (an MLP over log-spaced "
             "coordinates)", "post-norm residual blocks"],
            "4x4 is the smallest accepted size (one 4x4 patch), as swin_t")


# -- segmentation -----------------------------------------------------------
#
# Each returns Dict[str, Tensor] ({"out": ...}; aux_loss=False leaves out
# "aux"). fcn_resnet101 and deeplabv3_resnet101 are the resnet50 ones with a
# deeper backbone.

SEG_CLASSES = 3


def tv_lraspp_mobilenet_v3_large():
    import torchvision.models.segmentation as S
    m = S.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None,
                                    num_classes=SEG_CLASSES)
    return (m, image(2),
            ["aten::hardswish_", "aten::sigmoid", "aten::mul",
             "aten::add", "aten::upsample_bilinear2d",
             "aten::adaptive_avg_pool2d", "aten::dict", "aten::_set_item",
             "IntermediateLayerGetter (a Dict[str, Tensor] of backbone "
             "features)",
             "Dict[str, Tensor] output",
             "LR-ASPP head (pooled sigmoid gate, low/high-level fusion)"],
            "2x2: the smallest size at which the final bilinear "
            "interpolation really up-samples (the backbone ends at 1x1; "
            "1x1 is accepted too)")


def tv_deeplabv3_mobilenet_v3_large():
    import torchvision.models.segmentation as S
    m = S.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None,
                                       num_classes=SEG_CLASSES,
                                       aux_loss=False)
    return (m, image(2),
            ["aten::conv2d", "aten::batch_norm", "aten::relu",
             "aten::upsample_bilinear2d", "aten::adaptive_avg_pool2d",
             "aten::cat", "aten::dict", "aten::_set_item",
             "ASPP head (dilated convolutions and an image-pooling branch "
             "up-sampled back)", "dilated MobileNetV3 backbone",
             "Dict[str, Tensor] output"],
            "2x2: the smallest size at which the final bilinear "
            "interpolation really up-samples (1x1 is accepted too)")


def tv_fcn_resnet50():
    import torchvision.models.segmentation as S
    m = S.fcn_resnet50(weights=None, weights_backbone=None,
                       num_classes=SEG_CLASSES, aux_loss=False)
    return (m, image(2),
            ["aten::conv2d", "aten::batch_norm", "aten::relu",
             "aten::relu_", "aten::dropout", "aten::add_",
             "aten::upsample_bilinear2d", "aten::dict", "aten::_set_item",
             "dilated ResNet-50 backbone (output stride 8)",
             "FCN head", "Dict[str, Tensor] output"],
            "2x2: the smallest size at which the final bilinear "
            "interpolation really up-samples (1x1 is accepted too)")


def tv_deeplabv3_resnet50():
    import torchvision.models.segmentation as S
    m = S.deeplabv3_resnet50(weights=None, weights_backbone=None,
                             num_classes=SEG_CLASSES, aux_loss=False)
    return (m, image(2),
            ["aten::conv2d", "aten::batch_norm", "aten::relu",
             "aten::cat", "aten::adaptive_avg_pool2d",
             "aten::upsample_bilinear2d", "aten::dict", "aten::_set_item",
             "ASPP head on a dilated ResNet-50 (fcn_resnet50's backbone, "
             "another head)", "Dict[str, Tensor] output"],
            "2x2: the smallest size at which the final bilinear "
            "interpolation really up-samples (1x1 is accepted too)")


# -- video ------------------------------------------------------------------
#
# Input (1, 3, T, H, W). Left out:
#   s3d  its classifier average-pools a fixed 2x7x7 window, so the smallest
#        input it takes is 1x3x13x209x209 (1.7M elements, 6.8 s per call
#        here)

def video(t, size):
    """Batch-1 RGB clip of t frames of size x size."""
    return (torch.randn(1, 3, t, size, size),)


def tv_r3d_18():
    import torchvision.models.video as V
    m = V.r3d_18(weights=None, num_classes=NUM_CLASSES)
    return (m, video(1, 1),
            ["aten::conv3d", "aten::batch_norm", "aten::relu_",
             "aten::add_", "aten::adaptive_avg_pool3d", "aten::flatten",
             "aten::linear", "3x3x3 convolutions in basic residual blocks"],
            "1 frame of 1x1 is the smallest accepted size")


def tv_mc3_18():
    import torchvision.models.video as V
    m = V.mc3_18(weights=None, num_classes=NUM_CLASSES)
    return (m, video(1, 1),
            ["aten::conv3d", "aten::batch_norm", "aten::relu_",
             "aten::add_", "aten::adaptive_avg_pool3d",
             "mixed convolutions: 3x3x3 in the first stage, 1x3x3 after"],
            "1 frame of 1x1 is the smallest accepted size")


def tv_r2plus1d_18():
    import torchvision.models.video as V
    m = V.r2plus1d_18(weights=None, num_classes=NUM_CLASSES)
    return (m, video(1, 1),
            ["aten::conv3d", "aten::batch_norm", "aten::relu_",
             "aten::add_", "aten::adaptive_avg_pool3d",
             "(2+1)D convolutions: 1x3x3 spatial then 3x1x1 temporal"],
            "1 frame of 1x1 is the smallest accepted size")


def small_mvit(builder_name, temporal_size, spatial_size):
    """torchvision's mvit_v1_b / mvit_v2_s at another input size: their
    builders pass spatial_size=(224, 224) and temporal_size=16 to _mvit()
    themselves, so the size is put in on the way through (the block
    configuration is the builder's own)."""
    from torchvision.models.video import mvit
    original = mvit._mvit

    def sized(**kwargs):
        kwargs.update(spatial_size=(spatial_size, spatial_size),
                      temporal_size=temporal_size)
        return original(**kwargs)

    mvit._mvit = sized
    try:
        return getattr(mvit, builder_name)(weights=None,
                                           num_classes=NUM_CLASSES)
    finally:
        mvit._mvit = original


def tv_mvit_v1_b():
    m = small_mvit("mvit_v1_b", 2, 4)
    return (m, video(2, 4),
            ["aten::conv3d", "aten::layer_norm", "aten::gelu",
             "aten::softmax", "aten::matmul", "aten::cat",
             "aten::flatten", "aten::transpose", "aten::reshape",
             "prim::TupleConstruct", "prim::TupleUnpack",
             "pooling attention (strided conv3d pooling of q, k, v)",
             "absolute positional embedding, class token",
             "(tensor, thw) tuples passed between blocks"],
            "mvit_v1_b's blocks built for 2 frames of 4x4 (the builder "
            "fixes 16 x 224x224, over a minute per call here), the "
            "smallest it accepts: its token grid is (T // 2, H // 4, "
            "W // 4), here 1x1x1 (plus the class token), and one frame "
            "makes it empty. The input must match the size the model was "
            "built for")


def tv_mvit_v2_s():
    m = small_mvit("mvit_v2_s", 2, 32)
    return (m, video(2, 32),
            ["aten::conv3d", "aten::layer_norm", "aten::gelu",
             "aten::softmax", "aten::matmul", "aten::einsum",
             "aten::add", "prim::TupleConstruct",
             "decomposed relative position embeddings (einsum)",
             "residual pooling connection"],
            "mvit_v2_s's blocks built for 2 frames of 32x32 (the builder "
            "fixes 16 x 224x224, over a minute per call here), the "
            "smallest it accepts: its relative position tables are sized "
            "from the token grid at construction, and the 8x8 grid of a "
            "32x32 input is the smallest that its three stride-2 query "
            "poolings leave at least 1x1")


# -- optical flow -----------------------------------------------------------

RAFT_UPDATES = 2
RAFT_SIZE = 32
RAFT_CORR_LEVELS = 2


def raft(builder_name, radius):
    """RAFT with a 2-level correlation pyramid (the builders: 4 levels).
    The pyramid's levels are a loop in the graph: the graph is the same.
    With 4 levels a 64x64 input ends in a 1x1 level, where RAFT's
    grid_sample divides x coordinates by (width - 1) = 0: every output is
    NaN; 4 levels take 128x128 to stay finite."""
    import torchvision.models.optical_flow as O
    from torchvision.models.optical_flow.raft import CorrBlock
    m = getattr(O, builder_name)(
        weights=None,
        corr_block=CorrBlock(num_levels=RAFT_CORR_LEVELS, radius=radius))
    images = torch.randn(2, 1, 3, RAFT_SIZE, RAFT_SIZE)
    return m, (images[0], images[1], RAFT_UPDATES)


RAFT_NOTE = ("two 32x32 images and num_flow_updates=%d (default 12). "
             "%d-level correlation pyramid (the builder's: 4; the graph is "
             "the same, a loop over the levels): 32x32 is the smallest "
             "size that ends it at 2x2. A 1x1 level makes every output "
             "NaN (RAFT's grid_sample divides x coordinates by width - 1), "
             "which with 4 levels is every size below 128x128 (the size "
             "that found it: 64x64)"
             % (RAFT_UPDATES, RAFT_CORR_LEVELS))


def tv_raft_small():
    m, inputs = raft("raft_small", 3)
    return (m, inputs,
            ["aten::conv2d", "aten::instance_norm", "aten::relu",
             "aten::cat", "aten::chunk", "aten::split", "aten::tanh",
             "aten::sigmoid", "aten::grid_sampler", "aten::avg_pool2d",
             "aten::upsample_bilinear2d", "aten::arange", "aten::meshgrid",
             "prim::Loop", "aten::append", "aten::matmul",
             "prim::RaiseException", "prim::SetAttr",
             "the correlation pyramid stored on a submodule inside forward "
             "(prim::SetAttr)",
             "int input (num_flow_updates) as a loop trip count",
             "List[Tensor] output (one flow per update)",
             "ConvGRU update loop carrying state across iterations",
             "bilinear flow up-sampling (no mask predictor)"],
            RAFT_NOTE)


def tv_raft_large():
    m, inputs = raft("raft_large", 4)
    return (m, inputs,
            ["aten::conv2d", "aten::instance_norm", "aten::batch_norm",
             "aten::relu", "aten::tanh", "aten::sigmoid",
             "aten::grid_sampler", "aten::softmax", "aten::im2col",
             "prim::Loop", "aten::append",
             "convex up-sampling of the flow (mask predictor, softmax over "
             "3x3 neighbours, F.unfold = im2col)",
             "two ConvGRUs (1x5 then 5x1)", "residual-block encoders"],
            RAFT_NOTE)


# -- detection --------------------------------------------------------------
#
# forward(images: List[Tensor], targets=None) returns (losses, detections)
# under TorchScript: Tuple[Dict[str, Tensor], List[Dict[str, Tensor]]] (the
# losses are empty in eval mode). They call torchvision::nms and
# torchvision::roi_align, from torchvision's extension library: info.json's
# load_library names it. One 3x32x32 image in [0, 1), num_classes 3 and few
# proposals / detections: fewer, smaller tensors, the same graph. Left out:
#   fasterrcnn_mobilenet_v3_large_fpn  fasterrcnn_mobilenet_v3_large_320_fpn
#               with other default sizes
#   maskrcnn_resnet50_fpn_v2  fasterrcnn_resnet50_fpn_v2's changes (below)
#               in maskrcnn_resnet50_fpn, whose mask head is here
#   retinanet_resnet50_fpn_v2  retinanet_resnet50_fpn with GroupNorm in the
#               heads (as fcos_resnet50_fpn's) and P6 computed from C5, not
#               P5

DET_CLASSES = 3
DET_SIZE = 32
RPN_SMALL = dict(rpn_pre_nms_top_n_test=10, rpn_post_nms_top_n_test=10,
                 box_detections_per_img=5)


def det_image(size=DET_SIZE):
    return ([torch.rand(3, size, size)],)


DET_NOTE = ("one 3x32x32 image, min_size=max_size=32: the transform keeps "
            "it as it is, and a smaller one is padded to 32x32 (a multiple "
            "of size_divisible=32) anyway. num_classes=%d; ")


def rcnn(builder_name, **extra):
    import torchvision.models.detection as D
    return getattr(D, builder_name)(
        weights=None, weights_backbone=None, num_classes=DET_CLASSES,
        min_size=DET_SIZE, max_size=DET_SIZE, **RPN_SMALL, **extra)


RCNN_CONSTRUCTS = [
    "torchvision::nms", "torchvision::roi_align", "aten::conv2d",
    "aten::upsample_bilinear2d", "aten::upsample_nearest2d",
    "aten::topk", "aten::sort", "aten::softmax", "aten::clamp",
    "aten::exp", "aten::log2", "aten::where", "prim::Loop", "prim::If",
    "prim::DictConstruct", "prim::TupleConstruct", "aten::warn",
    "List[Tensor] input, Tuple[Dict, List[Dict]] output",
    "transform (normalize, resize, pad into a batch), anchors, RPN, "
    "MultiScaleRoIAlign, box head, per-class NMS"]


def tv_fasterrcnn_mobilenet_v3_large_320_fpn():
    m = rcnn("fasterrcnn_mobilenet_v3_large_320_fpn")
    return (m, det_image(),
            RCNN_CONSTRUCTS + ["aten::hardswish_"],
            DET_NOTE % DET_CLASSES + "10 RPN proposals, 5 detections")


def tv_fasterrcnn_resnet50_fpn():
    m = rcnn("fasterrcnn_resnet50_fpn")
    return (m, det_image(),
            RCNN_CONSTRUCTS + ["aten::max_pool2d", "aten::batch_norm",
                               "ResNet-50 FPN backbone (BatchNorm2d: "
                               "torchvision uses FrozenBatchNorm2d only "
                               "with pretrained weights)"],
            DET_NOTE % DET_CLASSES + "10 RPN proposals, 5 detections")


def tv_fasterrcnn_resnet50_fpn_v2():
    m = rcnn("fasterrcnn_resnet50_fpn_v2")
    return (m, det_image(),
            RCNN_CONSTRUCTS + ["aten::batch_norm",
                               "FPN and box head with BatchNorm, "
                               "two-convolution RPN head, four-conv box head"],
            DET_NOTE % DET_CLASSES + "10 RPN proposals, 5 detections")


def tv_maskrcnn_resnet50_fpn():
    m = rcnn("maskrcnn_resnet50_fpn")
    return (m, det_image(),
            RCNN_CONSTRUCTS + ["aten::conv_transpose2d", "aten::sigmoid",
                               "mask head; masks pasted into the image "
                               "in a loop"],
            DET_NOTE % DET_CLASSES + "10 RPN proposals, 5 detections")


def tv_keypointrcnn_resnet50_fpn():
    m = rcnn("keypointrcnn_resnet50_fpn", num_keypoints=3)
    return (m, det_image(),
            RCNN_CONSTRUCTS + ["aten::conv_transpose2d",
                               "keypoint head; heatmaps to keypoints"],
            DET_NOTE % DET_CLASSES
            + "3 keypoints, 10 RPN proposals, 5 detections")


def tv_retinanet_resnet50_fpn():
    import torchvision.models.detection as D
    m = D.retinanet_resnet50_fpn(
        weights=None, weights_backbone=None, num_classes=DET_CLASSES,
        min_size=DET_SIZE, max_size=DET_SIZE, topk_candidates=10,
        detections_per_img=5, score_thresh=0.0)
    return (m, det_image(),
            ["torchvision::nms", "aten::conv2d", "aten::sigmoid",
             "aten::topk", "aten::where", "prim::Loop",
             "single-stage heads over P3-P7, per-level top-k",
             "score_thresh=0.0 (torchvision's 0.05 keeps no box at random "
             "weights)"],
            DET_NOTE % DET_CLASSES
            + "10 candidates per level, 5 detections, score_thresh=0.0 (the "
            "classification prior gives every score about 0.01)")


def tv_fcos_resnet50_fpn():
    import torchvision.models.detection as D
    m = D.fcos_resnet50_fpn(
        weights=None, weights_backbone=None, num_classes=DET_CLASSES,
        min_size=DET_SIZE, max_size=DET_SIZE, topk_candidates=10,
        detections_per_img=5, score_thresh=0.0)
    return (m, det_image(),
            ["torchvision::nms", "aten::conv2d", "aten::group_norm",
             "aten::sigmoid", "aten::sqrt", "aten::topk",
             "anchor-free heads with centerness"],
            DET_NOTE % DET_CLASSES
            + "10 candidates per level, 5 detections, score_thresh=0.0")


def ssd_small(m, size):
    """SSD's transform resizes every image to a fixed size (300 or 320);
    the size it resizes to is set smaller here (its builders ignore a size
    argument)."""
    m.transform.fixed_size = (size, size)
    m.transform.min_size = (size,)
    m.transform.max_size = size
    m.topk_candidates = 10
    m.detections_per_img = 5
    return m


def tv_ssdlite320_mobilenet_v3_large():
    import torchvision.models.detection as D
    m = ssd_small(D.ssdlite320_mobilenet_v3_large(
        weights=None, weights_backbone=None, num_classes=DET_CLASSES),
        DET_SIZE)
    return (m, det_image(),
            ["torchvision::nms", "aten::conv2d", "aten::hardtanh_",
             "aten::softmax", "aten::cat",
             "SSDLite heads (depthwise separable) over six feature maps",
             "default boxes computed from the feature map sizes"],
            "one 3x32x32 image, resized to a fixed 32x32 (the builder's: "
            "320x320; 1x1 is accepted too, but then every feature map is "
            "1x1); num_classes=3, 10 candidates, 5 detections")


SSD300_SIZE = 268


def tv_ssd300_vgg16():
    import torchvision.models.detection as D
    m = ssd_small(D.ssd300_vgg16(
        weights=None, weights_backbone=None, num_classes=DET_CLASSES),
        SSD300_SIZE)
    return (m, det_image(),
            ["torchvision::nms", "aten::conv2d", "aten::relu_",
             "aten::max_pool2d", "aten::norm", "aten::softmax",
             "aten::upsample_bilinear2d",
             "VGG-16 backbone with L2-normalized conv4_3 features "
             "and extra layers"],
            "one 3x32x32 image, resized to a fixed %dx%d (the builder's: "
            "300x300): the smallest its extra layers (unpadded 3x3 "
            "convolutions down to 1x1) accept; num_classes=3, 10 "
            "candidates, 5 detections" % (SSD300_SIZE, SSD300_SIZE))


# ---------------------------------------------------------------------------
# torchaudio models
#
# Every model class torchaudio.models defines that torch.jit.script accepts,
# each at a tiny configuration (a few thousand parameters: the graph is the
# model's, only the widths are small) and the shortest input it takes. Left
# out, because torch.jit.script refuses them in torchaudio itself:
#   DeepSpeech  calls hardtanh(x, 0, 20) with int bounds (the schema wants
#               float) in its forward
#   HDemucs     adds an Optional[Tensor] without refining it
#   SquimSubjective  is scriptable, but builds a full wav2vec2_base
#               (95M parameters) inside, whatever the configuration
# Tacotron2's prenet calls dropout(p=0.5, training=True) in eval mode too (as
# the paper's does): its runs agree because every compared call starts from
# the same seed (tsrepro's kRunSeed; run_seed() here).
# Models a torchaudio version lacks (WavLM and SquimObjective are newer than
# Debian 12's 0.13) are left out of the registry on that version.
# ---------------------------------------------------------------------------

def audio(*shape):
    """A random waveform or feature tensor, drawn after the weights."""
    return torch.randn(*shape)


def ta_wav2letter():
    import torchaudio.models as A
    m = A.Wav2Letter(num_classes=NUM_CLASSES, input_type="waveform",
                     num_features=1)
    return (m, (audio(1, 1, 400),),
            ["aten::conv1d", "aten::relu_", "aten::log_softmax",
             "waveform front end (stride-160 conv1d)"],
            "400 samples: the smallest the stride-160, kernel-250 first "
            "convolution and the kernel-32 one after it take")


def ta_conv_tasnet():
    import torchaudio.models as A
    m = A.ConvTasNet(num_sources=2, enc_kernel_size=4, enc_num_feats=8,
                     msk_kernel_size=3, msk_num_feats=8,
                     msk_num_hidden_feats=8, msk_num_layers=2,
                     msk_num_stacks=1)
    return (m, (audio(1, 1, 32),),
            ["aten::conv1d", "aten::conv_transpose1d", "aten::group_norm",
             "aten::prelu", "aten::sigmoid", "aten::remainder",
             "input padded to a multiple of the stride (zeros + cat)",
             "temporal convolution network mask (dilated depthwise conv1d)"],
            "32 samples (a multiple of the encoder stride, so no padding "
            "branch is special)")


def wav2vec2_config(**extra):
    """The smallest wav2vec2-family encoder: two feature-extractor
    convolutions, two transformer layers of width 16, no dropout."""
    config = dict(extractor_conv_layer_config=[(8, 10, 5), (8, 3, 2)],
                  extractor_conv_bias=False, encoder_embed_dim=16,
                  encoder_projection_dropout=0.0, encoder_pos_conv_kernel=4,
                  encoder_pos_conv_groups=2, encoder_num_layers=2,
                  encoder_num_heads=2, encoder_attention_dropout=0.0,
                  encoder_ff_interm_features=32,
                  encoder_ff_interm_dropout=0.0, encoder_dropout=0.0,
                  encoder_layer_drop=0.0, aux_num_out=NUM_CLASSES)
    config.update(extra)
    return config


def ta_wav2vec2():
    import torchaudio.models as A
    m = A.wav2vec2_model(**wav2vec2_config(
        extractor_mode="group_norm", encoder_layer_norm_first=False))
    return (m, (audio(1, 64),),
            ["aten::conv1d", "aten::group_norm", "aten::gelu",
             "aten::layer_norm", "aten::linear", "aten::softmax",
             "aten::matmul", "prim::If", "aten::rand",
             "layer drop (aten::rand) in a training-only branch",
             "convolutional positional embedding (weight_norm removed when "
             "scripted, as torchaudio does)",
             "Optional lengths argument left None"],
            "64 samples: 11 frames after the 10/5 and 3/2 convolutions")


def ta_hubert():
    import torchaudio.models as A
    m = A.wav2vec2_model(**wav2vec2_config(
        extractor_mode="layer_norm", encoder_layer_norm_first=True))
    return (m, (audio(1, 64),),
            ["aten::conv1d", "aten::layer_norm", "aten::gelu",
             "aten::transpose",
             "HuBERT/wav2vec2-large layout: layer-norm feature extractor, "
             "pre-norm transformer"],
            "64 samples, as wav2vec2")


def ta_wavlm():
    import torchaudio.models as A
    m = A.wavlm_model(**wav2vec2_config(
        extractor_mode="group_norm", encoder_layer_norm_first=False,
        encoder_num_buckets=8, encoder_max_distance=16))
    return (m, (audio(1, 64),),
            ["aten::conv1d", "aten::layer_norm", "aten::sigmoid",
             "aten::log", "aten::embedding",
             "gated relative position bias (bucketed distances)"],
            "64 samples, as wav2vec2")


def ta_conformer():
    import torchaudio.models as A
    m = A.Conformer(input_dim=8, num_heads=2, ffn_dim=16, num_layers=2,
                    depthwise_conv_kernel_size=3)
    return (m, (audio(1, 6, 8), torch.tensor([6])),
            ["aten::layer_norm", "aten::glu", "aten::silu",
             "aten::conv1d", "aten::batch_norm", "aten::arange",
             "key padding mask from the lengths argument",
             "multi-head attention with a padding mask"],
            "1 utterance of 6 frames x 8 features, lengths [6]")


def ta_emformer():
    import torchaudio.models as A
    m = A.Emformer(input_dim=8, num_heads=2, ffn_dim=16, num_layers=2,
                   segment_length=4, right_context_length=1)
    return (m, (audio(1, 9, 8), torch.tensor([9])),
            ["aten::layer_norm", "aten::bmm", "aten::softmax",
             "aten::masked_fill", "prim::Loop", "aten::cat",
             "segment-wise attention mask built in loops",
             "right-context blocks"],
            "9 frames: two 4-frame segments plus the 1-frame right context")


def ta_emformer_rnnt():
    import torchaudio.models as A
    m = A.emformer_rnnt_model(
        input_dim=8, encoding_dim=8, num_symbols=NUM_CLASSES,
        segment_length=4, right_context_length=1,
        time_reduction_input_dim=8, time_reduction_stride=2,
        transformer_num_heads=2, transformer_ffn_dim=16,
        transformer_num_layers=2, transformer_dropout=0.0,
        transformer_activation="relu", transformer_left_context_length=2,
        transformer_max_memory_size=0,
        transformer_weight_init_scale_strategy="depthwise",
        transformer_tanh_on_mem=True, symbol_embedding_dim=8,
        num_lstm_layers=1, lstm_layer_norm=True, lstm_layer_norm_epsilon=1e-3,
        lstm_dropout=0.0)
    return (m, (audio(1, 10, 8), torch.tensor([10]),
                torch.tensor([[1, 2, 3]]), torch.tensor([3])),
            ["aten::embedding", "aten::layer_norm", "aten::chunk",
             "aten::sigmoid", "aten::tanh", "aten::relu", "aten::unbind", "prim::Loop", "prim::TupleConstruct",
             "RNN-T: Emformer transcriber, LSTM predictor (hand-written "
             "cell loop), joiner",
             "Optional predictor state left None"],
            "10 frames x 8 features (2 segments after the stride-2 time "
            "reduction), targets [[1, 2, 3]]")


def ta_wavernn():
    import torchaudio.models as A
    m = A.WaveRNN(upsample_scales=[2, 2], n_classes=16, hop_length=4,
                  n_res_block=1, n_rnn=8, n_fc=8, kernel_size=3, n_freq=8,
                  n_hidden=8, n_output=8)
    return (m, (audio(1, 1, 16), audio(1, 1, 8, 6)),
            ["aten::conv1d", "aten::conv2d", "aten::gru", "aten::relu_",
             "aten::cat", "aten::repeat_interleave",
             "upsampling network (stretch conv2d) feeding two GRUs"],
            "6 spectrogram frames of 8 bins: (6 - 3 + 1) x hop 4 = 16 "
            "waveform samples")


def ta_tacotron2():
    import torchaudio.models as A
    m = A.Tacotron2(n_mels=4, n_symbol=10, symbol_embedding_dim=8,
                    encoder_embedding_dim=8, encoder_n_convolution=1,
                    encoder_kernel_size=3, decoder_rnn_dim=8,
                    decoder_max_step=10, attention_rnn_dim=8,
                    attention_hidden_dim=8, attention_location_n_filter=2,
                    attention_location_kernel_size=3, prenet_dim=8,
                    postnet_n_convolution=1, postnet_kernel_size=3,
                    postnet_embedding_dim=8)
    return (m, (torch.tensor([[1, 2, 3]]), torch.tensor([3]),
                audio(1, 4, 3), torch.tensor([3])),
            ["aten::embedding", "aten::lstm", "aten::dropout",
             "aten::lstm_cell", "aten::softmax", "aten::conv1d",
             "prim::Loop",
             "prenet dropout with training=True in eval mode: random "
             "numbers every compared call draws from the same seed",
             "location-sensitive attention, decoder loop over the frames "
             "(teacher forcing)"],
            "3 tokens, a 4-mel x 3-frame target spectrogram")


def ta_squim_objective():
    import torchaudio.models as A
    m = A.squim_objective_model(feat_dim=8, win_len=16, d_model=8, nhead=2,
                                hidden_dim=8, num_blocks=1, rnn_type="LSTM",
                                chunk_size=4)
    return (m, (audio(1, 64),),
            ["aten::conv1d", "aten::lstm", "aten::layer_norm",
             "aten::unfold", "aten::pad",
             "dual-path RNN over chunks, three metric heads"],
            "64 samples")


# ---------------------------------------------------------------------------
# construct models: one small module per TorchScript construct
# ---------------------------------------------------------------------------

class ListLoop(nn.Module):
    """Embedding -> masked_fill -> topk, then a list built with append inside
    a for loop over range(n) with a prim::If in the body, then stack."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4, padding_idx=0)

    def forward(self, ids: Tensor) -> Tensor:
        e = self.emb(ids)                                  # [n, 4]
        pad = (ids == 0).unsqueeze(1)                      # [n, 1]
        e = e.masked_fill(pad, -1.0)
        vals, idx = torch.topk(e, 2, dim=1)                # [n, 2] each
        rows: List[Tensor] = []
        for i in range(ids.size(0)):
            if i % 2 == 0:
                rows.append(vals[i] * 2.0)
            else:
                rows.append(vals[i] + idx[i].to(vals.dtype))
        return torch.stack(rows, 0)


def construct_list_loop():
    m = ListLoop()
    ids = torch.tensor([3, 0, 7, 1, 9], dtype=torch.int64)
    return (m, (ids,),
            ["aten::embedding", "aten::masked_fill", "aten::topk",
             "prim::Loop", "prim::If", "aten::append", "aten::stack",
             "prim::ListConstruct", "aten::select", "int64 tensor input"],
            "5 token ids (one of them the padding id 0)")


def to_dict(pair: Tuple[List[str], List[Tensor]]) -> Dict[str, Tensor]:
    """Takes a tuple of lists (a tuple literal used only inside forward()
    would be resolved statically by the compiler and leave no tuple node)."""
    keys, values = pair
    out: Dict[str, Tensor] = {}
    for i in range(len(keys)):
        out[keys[i]] = values[i]
    return out


class DictOut(nn.Module):
    """Returns Dict[str, Tensor]; keys come from a List[str] of string
    constants and are paired with the values through a tuple of lists."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x: Tensor) -> Dict[str, Tensor]:
        logits = self.fc(x)
        keys: List[str] = ["logits", "probs", "hidden"]
        values: List[Tensor] = [logits, torch.softmax(logits, -1), x]
        out = to_dict((keys, values))
        out["sum" + "_" + keys[0]] = logits.sum(-1)
        return out


def construct_dict_out():
    m = DictOut()
    x = torch.randn(2, 4)
    return (m, (x,),
            ["prim::DictConstruct", "aten::_set_item", "aten::__getitem__",
             "aten::len", "prim::TupleConstruct", "prim::TupleUnpack",
             "prim::ListConstruct", "aten::add",
             "List[str] of string constants", "tuple of lists",
             "Dict[str, Tensor] output"],
            "2x4 float")


class OptionalArgs(nn.Module):
    """Optional[Tensor] and float parameters with defaults; inputs.pt only
    holds x, so both defaults are used (and the None branch is taken)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: Tensor, lengths: Optional[Tensor] = None,
                scale: float = 2.0) -> Tensor:
        y = self.fc(x) * scale                             # [b, t, 4]
        if lengths is not None:
            steps = torch.arange(x.size(1), device=x.device)
            keep = steps.unsqueeze(0) < lengths.unsqueeze(1)   # [b, t]
            y = y.masked_fill(~keep.unsqueeze(2), 0.0)
        return y.sum(1)


def construct_optional_args():
    m = OptionalArgs()
    x = torch.randn(2, 3, 4)
    return (m, (x,),
            ["prim::If", "aten::__isnot__", "prim::unchecked_cast",
             "Optional[Tensor] = None and float = 2.0 parameters",
             "inputs.pt holds fewer values than the schema has arguments "
             "(defaults apply)"],
            "only x (2x3x4 float); lengths and scale are left to their "
            "defaults")


class TensorListArg(nn.Module):
    """forward(images: List[Tensor]): stack -> conv -> relu -> mean."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3, padding=1)

    def forward(self, images: List[Tensor]) -> Tensor:
        x = torch.stack(images, 0)                         # [n, 2, 3, 3]
        return torch.relu(self.conv(x)).mean(dim=(2, 3))


def construct_tensor_list_arg():
    m = TensorListArg()
    images = [torch.randn(2, 3, 3), torch.randn(2, 3, 3)]
    return (m, (images,),
            ["aten::stack", "aten::conv2d", "aten::relu", "aten::mean",
             "List[Tensor] parameter (inputs.pt = (list of 2 tensors,))"],
            "one List[Tensor] argument holding two 2x3x3 images")


class NestedOutputs(nn.Module):
    """Returns Tuple[Tensor, List[Tensor], Dict[str, Tensor], Tuple[T, T]]."""

    def forward(self, x: Tensor, y: Tensor) -> Tuple[
            Tensor, List[Tensor], Dict[str, Tensor], Tuple[Tensor, Tensor]]:
        s = x + y
        parts = [s * 2.0, torch.relu(s), s.sum(0)]
        named = {"prod": x * y, "diff": x - y}
        pair = (torch.tanh(s), torch.sigmoid(s))
        return s, parts, named, pair


def construct_nested_outputs():
    m = NestedOutputs()
    x = torch.randn(2, 3)
    y = torch.randn(2, 3)
    return (m, (x, y),
            ["prim::TupleConstruct", "prim::ListConstruct",
             "prim::DictConstruct",
             "output nests a list, a dict and a tuple in a tuple"],
            "two 2x3 floats")


class LSTMModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(4, 6, num_layers=1, batch_first=True)
        self.fc = nn.Linear(6, 3)

    def forward(self, x: Tensor) -> Tensor:
        out, _ = self.rnn(x)
        return self.fc(out)


class GRUModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(4, 6, num_layers=1, batch_first=True)
        self.fc = nn.Linear(6, 3)

    def forward(self, x: Tensor) -> Tensor:
        out, _ = self.rnn(x)
        return self.fc(out)


def construct_lstm():
    m = LSTMModel()
    x = torch.randn(1, 5, 4)
    return (m, (x,),
            ["aten::lstm", "aten::zeros", "prim::If", "aten::linear",
             "weights in a List[Tensor] attribute (_flat_weights)",
             "nn.LSTM overloaded forward (forward_tensor)"],
            "batch 1, 5 steps, 4 features")


def construct_gru():
    m = GRUModel()
    x = torch.randn(1, 5, 4)
    return (m, (x,),
            ["aten::gru", "aten::zeros", "prim::If", "aten::linear",
             "weights in a List[Tensor] attribute (_flat_weights)",
             "nn.GRU overloaded forward (forward_tensor)"],
            "batch 1, 5 steps, 4 features")


class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.fc(x))


def apply_inner(m: Inner, x: Tensor) -> Tensor:
    """A TorchScript free function taking a submodule as a value. (Calling it
    as m(x) does not compile in 1.13; m.forward(x) does.)"""
    return m.forward(x) + 1.0


class ModuleAsArg(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, x: Tensor) -> Tensor:
        return apply_inner(self.inner, x) * 0.5


def construct_module_as_arg():
    m = ModuleAsArg()
    x = torch.randn(2, 4)
    return (m, (x,),
            [MODULE_ARGUMENT, "prim::GetAttr", "aten::linear", "aten::relu"],
            "2x4 float")


@torch.jit.interface
class ScaleInterface(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        pass


class ScaleBy(nn.Module):
    def __init__(self, s: float):
        super().__init__()
        self.s = nn.Parameter(torch.full((4,), s))

    def forward(self, x: Tensor) -> Tensor:
        return x * self.s


class ModuleInterface(nn.Module):
    """Calls a submodule through an interface-typed attribute: the call
    stays a prim::CallMethod on an interface value after inlining."""
    impl: ScaleInterface

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.impl = ScaleBy(1.5)

    def forward(self, x: Tensor) -> Tensor:
        return self.impl.forward(torch.tanh(self.fc(x)))


def construct_module_interface():
    m = ModuleInterface()
    x = torch.randn(2, 4)
    return (m, (x,),
            ["prim::CallMethod", "prim::GetAttr", INTERFACE_CALL],
            "2x4 float")


class ModuleListLoop(nn.Module):
    """`for layer in self.layers` over an nn.ModuleList (unrolled by the
    compiler), with a data-independent branch on the loop index."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x: Tensor) -> Tensor:
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < 2:
                x = torch.relu(x)
        return x


def construct_module_list_loop():
    m = ModuleListLoop()
    x = torch.randn(2, 4)
    return (m, (x,),
            ["nn.ModuleList iterated with for/enumerate (unrolled)",
             "aten::linear", "aten::relu"],
            "2x4 float")


def layer_norm_4(x: Tensor) -> Tensor:
    """Scripted free function; calling it leaves a function constant."""
    return F.layer_norm(x, [4])


class SpecialPrims(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4))

    def forward(self, x: Tensor) -> Tensor:
        # prim::RaiseException in one branch; y is prim::Uninitialized there.
        if x.dim() == 2:
            y = x * self.w
        else:
            raise ValueError("bad rank")
        if x.is_cuda:                       # prim::is_cuda
            y = y + 1.0
        if x.requires_grad:                 # prim::requires_grad
            y = y.detach()
        if x.is_nested:                     # prim::is_nested
            y = y * 0.0
        # Loop with break: more prim::Uninitialized / loop-carried flags.
        for i in range(4):
            if i == 2:
                break
            y = y + float(i)
        return layer_norm_4(y)              # prim::CallFunction -> inlined


def construct_special_prims():
    m = SpecialPrims()
    x = torch.randn(2, 4)
    return (m, (x,),
            ["prim::Uninitialized", "prim::RaiseException", "prim::is_cuda",
             "prim::requires_grad", "prim::is_nested", "prim::Loop",
             "aten::layer_norm", FUNCTION_CONSTANT],
            "2x4 float")


class NanOutput(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor([1.0, 2.0, 3.0]))

    def forward(self, x: Tensor) -> Tensor:
        a = torch.log(x) * self.scale        # log(<0) = nan, log(0) = -inf
        b = self.scale / x                   # 1/0 = inf
        return torch.stack([a, b], 0)


def construct_nan_output():
    m = NanOutput()
    x = torch.tensor([-1.0, 0.0, 2.0])
    return (m, (x,),
            ["aten::log", "aten::div", "aten::stack",
             "output holds nan, -inf and inf"],
            "fixed [-1, 0, 2]")


class MkldnnClamp(nn.Module):
    """conv2d -> mul by a constant -> clamp: the pattern that
    optimize_for_inference's MKLDNN conversion rewrites."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)

    def forward(self, x: Tensor) -> Tensor:
        y = self.conv(x) * 0.5
        return torch.clamp(y, 0.0, 6.0)


def construct_mkldnn_clamp():
    m = MkldnnClamp()
    x = torch.randn(1, 2, 4, 4)
    return (m, (x,),
            ["aten::conv2d", "aten::mul", "aten::clamp",
             "conv -> mul(constant) -> clamp"],
            "1x2x4x4 float")


# ---------------------------------------------------------------------------
# registry
# ---------------------------------------------------------------------------

# (name, builder, task); task groups the models in the docs.
TORCHVISION_MODELS = [
    ("resnet18", tv_resnet18, "classification"),
    ("mobilenet_v3_small", tv_mobilenet_v3_small, "classification"),
    ("regnet_y_400mf", tv_regnet_y_400mf, "classification"),
    ("squeezenet1_1", tv_squeezenet1_1, "classification"),
    ("efficientnet_b0", tv_efficientnet_b0, "classification"),
    ("convnext_tiny", tv_convnext_tiny, "classification"),
    ("shufflenet_v2_x0_5", tv_shufflenet_v2_x0_5, "classification"),
    ("densenet121", tv_densenet121, "classification"),
    ("googlenet", tv_googlenet, "classification"),
    ("swin_t", tv_swin_t, "classification"),
    ("vit_tiny", tv_vit_tiny, "classification"),
    ("alexnet", tv_alexnet, "classification"),
    ("vgg11_bn", tv_vgg11_bn, "classification"),
    ("resnet50", tv_resnet50, "classification"),
    ("resnext50_32x4d", tv_resnext50_32x4d, "classification"),
    ("mobilenet_v2", tv_mobilenet_v2, "classification"),
    ("mobilenet_v3_large", tv_mobilenet_v3_large, "classification"),
    ("mnasnet0_5", tv_mnasnet0_5, "classification"),
    ("efficientnet_v2_s", tv_efficientnet_v2_s, "classification"),
    ("regnet_x_400mf", tv_regnet_x_400mf, "classification"),
    ("inception_v3", tv_inception_v3, "classification"),
    ("maxvit_t", tv_maxvit_t, "classification"),
    ("swin_v2_t", tv_swin_v2_t, "classification"),
    ("lraspp_mobilenet_v3_large", tv_lraspp_mobilenet_v3_large,
     "segmentation"),
    ("deeplabv3_mobilenet_v3_large", tv_deeplabv3_mobilenet_v3_large,
     "segmentation"),
    ("fcn_resnet50", tv_fcn_resnet50, "segmentation"),
    ("deeplabv3_resnet50", tv_deeplabv3_resnet50, "segmentation"),
    ("r3d_18", tv_r3d_18, "video"),
    ("mc3_18", tv_mc3_18, "video"),
    ("r2plus1d_18", tv_r2plus1d_18, "video"),
    ("mvit_v1_b", tv_mvit_v1_b, "video"),
    ("mvit_v2_s", tv_mvit_v2_s, "video"),
    ("raft_small", tv_raft_small, "optical_flow"),
    ("raft_large", tv_raft_large, "optical_flow"),
    ("fasterrcnn_mobilenet_v3_large_320_fpn",
     tv_fasterrcnn_mobilenet_v3_large_320_fpn, "detection"),
    ("fasterrcnn_resnet50_fpn", tv_fasterrcnn_resnet50_fpn, "detection"),
    ("fasterrcnn_resnet50_fpn_v2", tv_fasterrcnn_resnet50_fpn_v2,
     "detection"),
    ("maskrcnn_resnet50_fpn", tv_maskrcnn_resnet50_fpn, "detection"),
    ("keypointrcnn_resnet50_fpn", tv_keypointrcnn_resnet50_fpn,
     "detection"),
    ("retinanet_resnet50_fpn", tv_retinanet_resnet50_fpn, "detection"),
    ("fcos_resnet50_fpn", tv_fcos_resnet50_fpn, "detection"),
    ("ssdlite320_mobilenet_v3_large", tv_ssdlite320_mobilenet_v3_large,
     "detection"),
    ("ssd300_vgg16", tv_ssd300_vgg16, "detection"),
]
TORCHVISION = collections.OrderedDict(
    (name, builder) for name, builder, _ in TORCHVISION_MODELS)
TORCHVISION_TASK = {name: task for name, _, task in TORCHVISION_MODELS}


def torchaudio_registry():
    """The torchaudio models the installed torchaudio defines (see the list
    above: newer models only where their class exists)."""
    import torchaudio.models as A
    models = [("wav2letter", ta_wav2letter, "Wav2Letter"),
              ("conv_tasnet", ta_conv_tasnet, "ConvTasNet"),
              ("wav2vec2", ta_wav2vec2, "wav2vec2_model"),
              ("hubert", ta_hubert, "wav2vec2_model"),
              ("wavlm", ta_wavlm, "wavlm_model"),
              ("conformer", ta_conformer, "Conformer"),
              ("emformer", ta_emformer, "Emformer"),
              ("emformer_rnnt", ta_emformer_rnnt, "emformer_rnnt_model"),
              ("wavernn", ta_wavernn, "WaveRNN"),
              ("tacotron2", ta_tacotron2, "Tacotron2"),
              ("squim_objective", ta_squim_objective,
               "squim_objective_model")]
    return collections.OrderedDict(
        ("audio_" + name, builder) for name, builder, cls in models
        if hasattr(A, cls))


TORCHAUDIO = torchaudio_registry()

CONSTRUCT = collections.OrderedDict([
    ("construct_list_loop", construct_list_loop),
    ("construct_dict_out", construct_dict_out),
    ("construct_optional_args", construct_optional_args),
    ("construct_tensor_list_arg", construct_tensor_list_arg),
    ("construct_nested_outputs", construct_nested_outputs),
    ("construct_lstm", construct_lstm),
    ("construct_gru", construct_gru),
    ("construct_module_as_arg", construct_module_as_arg),
    ("construct_module_interface", construct_module_interface),
    ("construct_module_list_loop", construct_module_list_loop),
    ("construct_special_prims", construct_special_prims),
    ("construct_nan_output", construct_nan_output),
    ("construct_mkldnn_clamp", construct_mkldnn_clamp),
])

REGISTRY = collections.OrderedDict(
    [(n, ("torchvision", b)) for n, b in TORCHVISION.items()]
    + [(n, ("torchaudio", b)) for n, b in TORCHAUDIO.items()]
    + [(n, ("construct", b)) for n, b in CONSTRUCT.items()])

# The models every CI run uses: all construct models, eight torchvision
# ones and four torchaudio ones.
# googlenet is here for its NamedTuple output and aten::warn, which no construct model has;
# emformer for its loops over lists (the minifier leaves an empty list as an input);
# conformer for its -inf constant (a key padding mask); tacotron2 for its
# always-on dropout (seeded runs); deeplabv3_mobilenet_v3_large for its
# Dict[str, str] constant and the lookups the case folds;
# fasterrcnn_mobilenet_v3_large_320_fpn for torchvision's operators
# (--load-library), the ImageList it creates and the LevelMapper it stores on
# its pooler (a tuple in the case). (raft_small, whose attribute writes the
# unit tests cover, waits for its ofi graph on libtorch 2.6: docs/CORPUS.md.)
CI_MODELS = list(CONSTRUCT) + ["resnet18", "mobilenet_v3_small",
                               "squeezenet1_1", "vit_tiny", "googlenet",
                               "deeplabv3_mobilenet_v3_large",
                               "fasterrcnn_mobilenet_v3_large_320_fpn",
                               "audio_wav2vec2", "audio_emformer",
                               "audio_conformer", "audio_tacotron2"]

# Models whose inlined graph's node kinds are printed when written.
PRINT_KINDS = {"construct_special_prims"}


def is_kind(s):
    return (s.startswith(("aten::", "prim::", "torchvision::"))
            and " " not in s)


def tensors(x):
    """The tensors in a (nested) output."""
    if isinstance(x, Tensor):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for v in x for t in tensors(v)]
    if isinstance(x, dict):
        return [t for v in x.values() for t in tensors(v)]
    return []


def extension_library(counts):
    """The path of torchvision's extension library when the graph calls one
    of its operators (torchvision::nms, ...), else None."""
    if not any(k.startswith("torchvision::") for k in counts):
        return None
    import torchvision.extension
    return os.path.abspath(torchvision.extension._get_extension_path("_C"))


# Constructs that are not a node kind but are checked on the graph; every
# other construct that is not a node kind is a description only.
CHECKED_CONSTRUCTS = {
    FUNCTION_CONSTANT: has_function_constant,
    MODULE_ARGUMENT: has_module_argument,
    INTERFACE_CALL: has_interface_call,
}


# ---------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------

def clean_dir(d):
    os.makedirs(d, exist_ok=True)
    for f in OWNED_FILES:
        p = os.path.join(d, f)
        if os.path.exists(p):
            os.remove(p)


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")


def write_model(out_dir, name):
    """Build, script, save and verify one model; return its info dict."""
    family, builder = REGISTRY[name]
    t0 = time.time()
    torch.manual_seed(0)
    module, inputs, constructs, note = builder()
    assert isinstance(inputs, tuple), name + ": inputs must be a tuple"
    module = module.eval()
    scripted = torch.jit.script(module)

    with torch.no_grad():
        torch.manual_seed(run_seed())  # as tsrepro seeds every compared call
        out = scripted(*inputs)
    namedtuple_out = type(out).__name__ if is_namedtuple(out) else None
    out = plain(out)
    if family == "torchvision":
        # A reference holding nan or inf makes every backend comparison
        # meaningless.
        assert all(torch.isfinite(t).all() for t in tensors(out)
                   if t.is_floating_point()), name + ": non-finite output"

    d = os.path.join(out_dir, name)
    clean_dir(d)
    model_path = os.path.join(d, "model.pt")
    torch.jit.save(scripted, model_path)
    torch.save(inputs, os.path.join(d, "inputs.pt"))
    torch.save((out,), os.path.join(d, "expected.pt"))

    # -- round trip: the saved files reproduce the saved output -------------
    loaded = torch.jit.load(model_path)
    loaded_inputs = torch.load(os.path.join(d, "inputs.pt"))
    loaded_expected = torch.load(os.path.join(d, "expected.pt"))
    assert type(loaded_inputs) is tuple, name
    assert not loaded.training, name + ": saved in training mode"
    with torch.no_grad():
        torch.manual_seed(run_seed())
        got = plain(loaded(*loaded_inputs))
        # The second call runs the profiling executor's optimized plan.
        torch.manual_seed(run_seed())
        again = plain(loaded(*loaded_inputs))
    assert same(got, loaded_expected[0]), name + ": reload mismatch"
    # Close, not equal: the optimized plan may fuse (libtorch 2.6 fuses on the CPU by default),
    # and a fused kernel rounds otherwise (raft_small's differ in the last bits there).
    assert close(again, loaded_expected[0]), name + ": second call differs"

    # -- graph facts ----------------------------------------------------------
    n_nonconst, counts = non_constant_count(loaded.forward.graph)
    present, missing = [], []
    for c in constructs:
        if is_kind(c):
            (present if c in counts else missing).append(c)
        elif c in CHECKED_CONSTRUCTS:
            ok = CHECKED_CONSTRUCTS[c](loaded.forward.graph)
            (present if ok else missing).append(c)
    if missing:
        # A construct model exists for its constructs: missing ones are an
        # error. For torchvision models the list is informative only.
        msg = "%s: constructs not found in the graph: %s" % (
            name, ", ".join(missing))
        assert family != "construct", msg
        print("  WARNING " + msg)

    schema = loaded.forward.schema
    info = collections.OrderedDict([
        ("name", name),
        ("family", family),
        ("task", TORCHVISION_TASK.get(name)),
        ("kind", "scripted"),
        ("forward_schema", str(schema)),
        ("num_schema_args", len(schema.arguments) - 1),  # minus self
        ("num_inputs", len(inputs)),
        ("input", describe(inputs)),
        ("input_note", note),
        ("output", describe(out)),
        ("output_namedtuple", namedtuple_out),
        ("non_constant_nodes", n_nonconst),
        ("constructs", constructs),
        ("constructs_confirmed", present),
        ("constructs_missing", missing),
        ("node_kinds", dict(sorted(counts.items()))),
        ("num_parameters", sum(p.numel() for p in module.parameters())),
        ("model_bytes", os.path.getsize(model_path)),
    ])
    if family == "torchvision":
        import torchvision
        info["torchvision_version"] = torchvision.__version__
    library = extension_library(counts)
    if library:
        info["load_library"] = library
    if family == "torchaudio":
        import torchaudio
        info["torchaudio_version"] = torchaudio.__version__
    info["torch_version"] = torch.__version__
    write_json(os.path.join(d, "info.json"), info)
    print("  %-28s %6.2fs  %4d nodes  %s" % (name, time.time() - t0,
                                             n_nonconst, info["input"]))
    if name in PRINT_KINDS:
        print("    node kinds of the inlined graph: %s"
              % " ".join(sorted(counts)))
    return info


# ---------------------------------------------------------------------------
# NNC settings, measuring and public-API graphs
# ---------------------------------------------------------------------------

class NncFlags:
    """Context manager: the NNC-on-CPU settings a user would set (this
    libtorch has no LLVM, so kernels run in NNC's IR interpreter); the
    previous settings are restored on exit."""

    def __enter__(self):
        self.old = (torch._C._jit_texpr_fuser_enabled(),
                    torch._C._jit_can_fuse_on_cpu(),
                    torch._C._jit_get_te_must_use_llvm_cpu())
        torch._C._jit_set_texpr_fuser_enabled(True)
        torch._C._jit_override_can_fuse_on_cpu(True)
        torch._C._jit_set_te_must_use_llvm_cpu(torch._C._llvm_enabled())  # interpreter only without LLVM
        return self

    def __exit__(self, *exc):
        torch._C._jit_set_texpr_fuser_enabled(self.old[0])
        torch._C._jit_override_can_fuse_on_cpu(self.old[1])
        torch._C._jit_set_te_must_use_llvm_cpu(self.old[2])
        return False


def fresh(out_dir, name):
    """(module, inputs, expected) of a written model, the module freshly
    loaded: new graph executors, so that the settings in force when it first
    runs decide how it is optimized."""
    d = os.path.join(out_dir, name)
    m = torch.jit.load(os.path.join(d, "model.pt")).eval()
    inputs = torch.load(os.path.join(d, "inputs.pt"))
    expected = torch.load(os.path.join(d, "expected.pt"))[0]
    return m, inputs, expected


def timed_calls(m, inputs, n=3):
    """Run m(*inputs) n times under no_grad; return (seconds per call, last
    output)."""
    times = []
    out = None
    with torch.no_grad():
        for _ in range(n):
            t = time.perf_counter()
            out = m(*inputs)
            times.append(time.perf_counter() - t)
    return times, plain(out)


def measure(out_dir, name):
    """Times (ms) of the scripted module with default settings, under the
    NNC fuser, and after freeze + optimize_for_inference."""
    r = collections.OrderedDict(name=name)

    # Default executor settings (no CPU fusion): 1st call is the profiling
    # run of the scripted module, the 3rd one runs the optimized plan.
    m, inputs, expected = fresh(out_dir, name)
    ts, out = timed_calls(m, inputs)
    r["script_ms"] = [round(t * 1e3, 2) for t in ts]
    r["script_matches"] = close(out, expected)

    # NNC on CPU (interpreter): 2nd call compiles the fusion groups.
    m, inputs, expected = fresh(out_dir, name)
    with NncFlags():
        try:
            ts, out = timed_calls(m, inputs)
            g = torch.jit.last_executed_optimized_graph()
            r["nnc_ms"] = [round(t * 1e3, 2) for t in ts]
            r["nnc_fusion_groups"] = count_nodes(g).get(
                "prim::TensorExprGroup", 0)
            r["nnc_matches"] = close(out, expected)
        except Exception as e:  # keep measuring the other models
            r["nnc_error"] = first_line(e)

    # freeze + optimize_for_inference.
    m, inputs, expected = fresh(out_dir, name)
    try:
        t = time.perf_counter()
        ofi = torch.jit.optimize_for_inference(torch.jit.freeze(m))
        r["ofi_build_ms"] = round((time.perf_counter() - t) * 1e3, 2)
        ts, out = timed_calls(ofi, inputs)
        r["ofi_ms"] = [round(t * 1e3, 2) for t in ts]
        r["ofi_matches"] = close(out, expected)
    except Exception as e:
        r["ofi_error"] = first_line(e)
    return r


def first_line(e):
    lines = [l for l in str(e).strip().splitlines() if l.strip()]
    return "%s: %s" % (type(e).__name__, lines[0] if lines else "")


def error_text(e):
    return "%s: %s" % (type(e).__name__, str(e).strip())


def write_public_graphs(out_dir, name, info):
    """public_ofi.txt / public_jit.txt / public_nnc.txt from the public
    APIs; a failure is recorded in info as public_<which>_error."""
    d = os.path.join(out_dir, name)

    def attempt(which, produce):
        path = os.path.join(d, "public_%s.txt" % which)
        try:
            text = produce()
            with open(path, "w") as f:
                f.write(text)
            info.pop("public_%s_error" % which, None)
        except Exception as e:
            if os.path.exists(path):
                os.remove(path)
            info["public_%s_error" % which] = error_text(e)

    def ofi():
        m, _, _ = fresh(out_dir, name)
        return str(torch.jit.optimize_for_inference(torch.jit.freeze(m)).graph)

    def executed(flags):
        def produce():
            m, inputs, _ = fresh(out_dir, name)
            if flags:
                with NncFlags():
                    timed_calls(m, inputs)
            else:
                timed_calls(m, inputs)
            return str(torch.jit.last_executed_optimized_graph())
        return produce

    attempt("ofi", ofi)
    attempt("jit", executed(False))
    attempt("nnc", executed(True))
    write_json(os.path.join(d, "info.json"), info)


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------

def main(argv):
    flags = {a for a in argv if a.startswith("--")}
    args = [a for a in argv if not a.startswith("--")]
    known = {"--list", "--list-ci", "--measure", "--public-graphs", "--help"}
    if flags - known or "--help" in flags:
        print(__doc__)
        return 0 if "--help" in flags else 2
    if "--list" in flags:
        print("\n".join(REGISTRY))
        return 0
    if "--list-ci" in flags:
        print("\n".join(CI_MODELS))
        return 0
    if not args:
        print(__doc__)
        return 2
    out_dir, names = args[0], args[1:] or list(REGISTRY)
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        print("unknown model(s): %s (see --list)" % ", ".join(unknown))
        return 2
    os.makedirs(out_dir, exist_ok=True)

    t_all = time.time()
    infos = []
    for name in names:
        infos.append(write_model(out_dir, name))
    print("wrote %d models in %.1fs" % (len(infos), time.time() - t_all))

    if "--public-graphs" in flags:
        t = time.time()
        for info in infos:
            write_public_graphs(out_dir, info["name"], info)
            errs = [k for k in info if k.startswith("public_")]
            print("  public graphs %-28s %s" % (
                info["name"], ", ".join(errs) if errs else "ok"))
        print("public graphs in %.1fs" % (time.time() - t))

    write_json(os.path.join(out_dir, "MANIFEST.json"), infos)

    if "--measure" in flags:
        t = time.time()
        results = []
        print("%-28s %-24s %-26s %-4s %-26s" % (
            "model", "script ms (1st,2nd,3rd)", "nnc ms (1st,2nd,3rd)",
            "grps", "ofi ms (1st,2nd,3rd)"))
        for info in infos:
            r = measure(out_dir, info["name"])
            results.append(r)

            def fmt(key, ok):
                if key not in r:
                    return "ERR"
                return "%s%s" % (",".join("%.1f" % v for v in r[key]),
                                 "" if r.get(ok, True) else " MISMATCH")
            print("%-28s %-24s %-26s %-4s %-26s" % (
                r["name"], fmt("script_ms", "script_matches"),
                fmt("nnc_ms", "nnc_matches"),
                r.get("nnc_fusion_groups", "-"),
                fmt("ofi_ms", "ofi_matches")))
            for k in ("nnc_error", "ofi_error"):
                if k in r:
                    print("    %s: %s" % (k, r[k]))
        write_json(os.path.join(out_dir, "MEASURE.json"), results)
        print("measured in %.1fs" % (time.time() - t))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
