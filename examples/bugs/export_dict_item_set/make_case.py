"""Build examples/bugs/export_dict_item_set/{model.pt,inputs.pt}.

PyTorch 2.6's TorchScript-to-export converter (torch._export.converter.TS2EPConverter) cannot
convert a tensor stored into a dict: `result["out"] = x` (`aten::_set_item.str` on a
`Dict[str, Tensor]`) stops it with

    RuntimeError: aten::_set_item() Expected a value of type 't' for argument 'v' but instead
    found type 'FakeTensor'.

It is how torchvision's segmentation models return their outputs (an OrderedDict filled with
"out" and "aux"): the sweep of tests/corpus under export found it in lraspp_mobilenet_v3_large,
and the corpus's construct_dict_out shows the same (docs/CORPUS.md). TorchScript runs the model
fine.

The model: a small two-headed net, as torchvision's segmentation models are: a shared trunk, a
main head and an auxiliary head, their outputs returned in a dict filled key by key.

Run from the repository root with Debian 13's Python:
    /usr/bin/python3 examples/bugs/export_dict_item_set/make_case.py
"""
import os
import sys
from collections import OrderedDict
from typing import Dict

if os.environ.get("PYTHONHASHSEED") != "0":  # byte-identical .pt files from run to run
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(8, 16)
        self.head = nn.Linear(16, 4)
        self.aux = nn.Linear(16, 4)

    def forward(self, x) -> Dict[str, torch.Tensor]:
        features = torch.tanh(self.trunk(x))
        result = OrderedDict()
        result["out"] = F.log_softmax(self.head(features), dim=-1)  # the converter cannot store this
        result["aux"] = self.aux(features)
        return result


def main():
    torch.manual_seed(0)
    scripted = torch.jit.script(TwoHeads().eval())
    inputs = (torch.randn(2, 8),)
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
