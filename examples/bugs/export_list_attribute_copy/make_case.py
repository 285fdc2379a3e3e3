"""Build examples/bugs/export_list_attribute_copy/{model.pt,inputs.pt}.

PyTorch 2.6's TorchScript-to-export converter (torch._export.converter.TS2EPConverter) cannot
convert a copy of a list attribute that is then written: `shift = self.shift_size.copy()` and
`shift[0] = 0` (`aten::copy.t` and `aten::_set_item.t` on an `int[]` the module holds) stop it with

    RuntimeError: aten::copy() Expected a value of type 'List[t]' for argument 'self' but instead
    found type 'immutable_list'.

It is what torchvision's Swin Transformers do in every shifted-window attention block (no shift
where the window covers the whole feature map): the sweep of tests/corpus under export found it
in swin_t and swin_v2_t (docs/CORPUS.md). TorchScript runs the model fine.

The model: a small shifted-window mixer, as Swin has it. A linear projection, a roll of the
feature map by the shift (0 along a side no larger than the window), and a residual MLP.

Run from the repository root with Debian 13's Python:
    /usr/bin/python3 examples/bugs/export_list_attribute_copy/make_case.py
"""
import os
import sys
from typing import List

if os.environ.get("PYTHONHASHSEED") != "0":  # byte-identical .pt files from run to run
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))


class ShiftedWindowMixer(nn.Module):
    def __init__(self):
        super().__init__()
        self.window_size: List[int] = [4, 4]
        self.shift_size: List[int] = [2, 2]
        self.proj = nn.Linear(6, 6)
        self.mlp = nn.Linear(6, 6)

    def forward(self, x):  # x: [B, H, W, C]
        shift_size = self.shift_size.copy()  # the converter cannot copy this list
        if self.window_size[0] >= x.size(1):
            shift_size[0] = 0
        if self.window_size[1] >= x.size(2):
            shift_size[1] = 0
        y = torch.roll(self.proj(x), shifts=(-shift_size[0], -shift_size[1]), dims=(1, 2))
        return y + F.gelu(self.mlp(y))


def main():
    torch.manual_seed(0)
    scripted = torch.jit.script(ShiftedWindowMixer().eval())
    inputs = (torch.randn(1, 4, 8, 6),)
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
