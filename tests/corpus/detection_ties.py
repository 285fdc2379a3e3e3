"""Why AOTInductor's detection verdicts are not bugs of it (docs/CORPUS.md, issue 52).

Under `aoti --backend-opt export=draft` seven detection models differ from eager: the boxes they
keep (RetinaNet, Mask R-CNN, SSD300), or a box count the package checks at run time (the Faster
R-CNNs, Keypoint R-CNN). The corpus builds them with random weights and score_thresh=0.0, so every
candidate's score is the classification prior's (about 0.01) plus noise: the per-level top-k that
picks the candidates chooses among near-ties. This script tells "computes the scores wrongly" from
"computes them otherwise" on the part that makes the scores, without the selection:

  - the network up to its scores (backbone and heads; for the R-CNNs the RPN's objectness) is
    exported and compiled by AOTInductor alone, and compared with eager and with its float64 run
    by the same rules as tsrepro (RMSE against float64 within twice eager's);
  - at each top-k the post-processing takes (per feature level for RetinaNet and the RPN, per
    class for SSD) it prints the gap between the k-th and the (k+1)-th score in eager, the
    largest difference AOTInductor makes there, whether the chosen sets agree, and how many
    distinct values eager's top k+1 holds (fewer than k+1: the choice is among exact ties).

A gap below the compiled scores' own rounding difference means the selection may legitimately
differ: the scores are right, the discrete choice after them amplifies float rounding.

Usage, on Debian 13 (torch 2.6, torchvision 0.21): /usr/bin/python3 tests/corpus/detection_ties.py [MODEL ...]
MODEL is retinanet_resnet50_fpn, fasterrcnn_mobilenet_v3_large_320_fpn or ssd300_vgg16 (default: all).
"""

import copy
import os
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_corpus  # noqa: E402  the corpus's own builders: the same models, weights and image


def build(name):
    _, builder = make_corpus.REGISTRY[name]
    torch.manual_seed(0)  # as make_corpus.write_model
    module, inputs, _, _ = builder()
    return module.eval(), inputs[0]


class HeadScores(torch.nn.Module):  # RetinaNet's and SSD's backbone and heads: the per-anchor class logits
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, images):
        features = list(self.m.backbone(images).values())
        return self.m.head(features)["cls_logits"], torch.tensor([f.shape[2] * f.shape[3] for f in features])


class RpnScores(torch.nn.Module):  # backbone and the RPN's head: the per-anchor objectness
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, images):
        features = list(self.m.backbone(images).values())
        objectness, _ = self.m.rpn.head(features)
        return torch.cat([o.flatten(1) for o in objectness], 1), torch.tensor([o[0].numel() for o in objectness])


def selections(name, logits, per_level, anchors):
    """(label, scores) for each top-k the model's post-processing takes: per feature level for
    RetinaNet and the RPN (sigmoid of the logits), per class over all anchors for SSD (softmax)."""
    if name.startswith("ssd"):
        scores = torch.softmax(logits[0], -1)
        return [("class %d" % c, scores[:, c]) for c in range(1, scores.shape[1])]
    chosen, start = [], 0
    for level, n in enumerate(per_level):
        stop = start + n * anchors
        chosen.append(("level %d" % level, torch.sigmoid(logits[0, start:stop].flatten())))
        start = stop
    return chosen


def aoti(module, images):
    from torch._inductor import aoti_compile_and_package, aoti_load_package
    program = torch.export.export(module, (images,), strict=False)
    with tempfile.TemporaryDirectory() as work:
        package = aoti_compile_and_package(program, package_path=os.path.join(work, "m.pt2"))
        return aoti_load_package(package)(images)


def rmse(a, b):
    return (a.double() - b.double()).square().mean().sqrt().item()


def report(name, k):
    m, image = build(name)
    wrapper = {"retinanet": HeadScores, "fasterrcnn": RpnScores, "ssd300": HeadScores}[name.split("_")[0]](m)
    with torch.no_grad():
        images = m.transform(image)[0].tensors  # image: the list of one image the model takes
        eager, level_sizes = wrapper(images)
        wide, _ = copy.deepcopy(wrapper).double()(images.double())
        compiled = aoti(wrapper, images)[0]
    per_level = [int(n) for n in level_sizes]
    anchors = eager.shape[1] // sum(per_level)
    print(f"{name}: {eager.numel()} logits; RMSE vs float64: eager {rmse(eager, wide):.3g}, "
          f"AOTInductor {rmse(compiled, wide):.3g}; max |AOTInductor - eager| {(compiled - eager).abs().max():.3g}")
    compiled_sides = dict(selections(name, compiled, per_level, anchors))
    for label, eager_scores in selections(name, eager, per_level, anchors):
        sides = [eager_scores, compiled_sides[label]]
        if sides[0].numel() <= k:
            print(f"  {label}: {sides[0].numel()} scores, all kept")
            continue
        ranked = sides[0].sort(descending=True).values
        gap = (ranked[k - 1] - ranked[k]).item()
        chosen = [set(s.topk(k).indices.tolist()) for s in sides]
        print(f"  {label}: {sides[0].numel()} scores, top {k}: gap at the boundary {gap:.3g}, "
              f"max |AOTInductor - eager| {(sides[1] - sides[0]).abs().max():.3g}, "
              f"same chosen set: {chosen[0] == chosen[1]}, distinct top-{k + 1} values in eager: "
              f"{ranked[:k + 1].unique().numel()}")


if __name__ == "__main__":
    names = sys.argv[1:] or ["retinanet_resnet50_fpn", "fasterrcnn_mobilenet_v3_large_320_fpn", "ssd300_vgg16"]
    for model in names:
        report(model, 10)  # topk_candidates and rpn_pre_nms_top_n_test in make_corpus
