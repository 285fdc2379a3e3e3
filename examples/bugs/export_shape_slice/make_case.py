"""Build examples/bugs/export_shape_slice/{model.pt,inputs.pt}.

PyTorch 2.6's TorchScript-to-export converter (torch._export.converter.TS2EPConverter, the path
from a scripted model to torch.export, Inductor and AOTInductor) cannot convert a slice of a
tensor's shape: `x.shape[-2:]` is `aten::slice.t` on the `int[]` that `aten::size` returns, and the
converter stops with

    RuntimeError: aten::slice() Expected a value of type 'List[t]' for argument 'l' but instead
    found type 'list'.

It is how torchvision's segmentation models (fcn_resnet50, deeplabv3_resnet50,
deeplabv3_mobilenet_v3_large) take the size their output is upsampled back to, and how MViT v1
reads its patch grid: the sweep of tests/corpus under export found it in those four models
(docs/CORPUS.md). TorchScript runs the model fine.

The model, as a TorchScript user has it: a small segmentation net, a conv stem at half
resolution, a classifier, and the logits upsampled bilinearly to the input's height and width.

Run from the repository root with Debian 13's Python:
    /usr/bin/python3 examples/bugs/export_shape_slice/make_case.py
"""
import os
import sys

if os.environ.get("PYTHONHASHSEED") != "0":  # byte-identical .pt files from run to run
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))


class Segmenter(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.body = nn.Conv2d(8, 8, 3, padding=1)
        self.classifier = nn.Conv2d(8, 4, 1)

    def forward(self, x):
        input_shape = x.shape[-2:]  # the converter cannot slice this list
        y = F.relu(self.stem(x))
        y = F.relu(self.body(y)) + y
        y = self.classifier(y)
        return F.interpolate(y, size=input_shape, mode="bilinear", align_corners=False)


def main():
    torch.manual_seed(0)
    scripted = torch.jit.script(Segmenter().eval())
    inputs = (torch.randn(1, 3, 8, 8),)
    torch.jit.save(scripted, os.path.join(HERE, "model.pt"))
    torch.save(inputs, os.path.join(HERE, "inputs.pt"))
    from torch._export.converter import TS2EPConverter
    try:
        TS2EPConverter(torch.jit.load(os.path.join(HERE, "model.pt")), inputs).convert()
    except RuntimeError as error:
        print("bug reproduced:", str(error).splitlines()[0])
        return 0
    print("bug NOT reproduced: the converter took the model", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
