"""Build examples/bugs/aoti_native_mha_without_weights/{model.pt,inputs.pt}.

Found by the module-route sweep of the corpus (docs/CORPUS.md, issue 52) in torchvision's vit_b
family (vit_tiny): AOTInductor of torch 2.6 cannot compile `aten::_native_multi_head_attention` with
need_weights=False, the fast path nn.MultiheadAttention takes in eval mode without gradients. The
op's second result (the attention weights) is then an empty tensor with no buffer, and
aoti_compile_and_package fails in Inductor's C++ wrapper codegen for the fallback kernel:
`AttributeError: 'NoneType' object has no attribute 'get_name'` (after "missing a c-shim
implementation, using proxy executor as fallback"). torch.compile (Inductor without AOT) runs it.

The model: one pre-norm transformer encoder block, as in a small ViT: layer norm, multi-head
self-attention (embed 8, 2 heads) by the fast path's own call, as nn.MultiheadAttention makes it in
eval mode (BetterTransformer), a residual, an MLP. (nn.MultiheadAttention itself is not used: its
scripted forward also holds the slow path's scaled_dot_product_attention, which libtorch 1.13
cannot load; and under torch.export the Python module sees a FakeTensor and leaves the fast path.)

Run from the repository root with Debian 13's Python:
    /usr/bin/python3 examples/bugs/aoti_native_mha_without_weights/make_case.py
"""
import os
import sys
import tempfile

if os.environ.get("PYTHONHASHSEED") != "0":  # byte-identical .pt files from run to run
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
D = 8


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(D)
        attention = nn.MultiheadAttention(D, 2, batch_first=True)  # its weights, initialized as it does
        self.in_proj_weight = nn.Parameter(attention.in_proj_weight.detach().clone())
        self.in_proj_bias = nn.Parameter(attention.in_proj_bias.detach().clone())
        self.out_proj = nn.Linear(D, D)
        self.mlp = nn.Sequential(nn.Linear(D, 2 * D), nn.GELU(), nn.Linear(2 * D, D))

    def forward(self, x):
        y = self.norm(x)
        y = torch._native_multi_head_attention(y, y, y, 8, 2, self.in_proj_weight, self.in_proj_bias,
                                               self.out_proj.weight, self.out_proj.bias, None, False)[0]  # need_weights=False
        x = x + y
        return x + self.mlp(x)


class Attention(nn.Module):  # the block's attention alone, for the check
    def __init__(self, block):
        super().__init__()
        self.block = block

    def forward(self, x):
        b = self.block
        return torch._native_multi_head_attention(x, x, x, D, 2, b.in_proj_weight, b.in_proj_bias,
                                                  b.out_proj.weight, b.out_proj.bias, None, False)[0]


def main():
    torch.manual_seed(0)
    model = Block().eval()
    inputs = (torch.randn(1, 5, D),)
    torch.jit.save(torch.jit.script(model), os.path.join(HERE, "model.pt"))
    torch.save(inputs, os.path.join(HERE, "inputs.pt"))
    try:
        with torch.no_grad():
            program = torch.export.export(Attention(model), inputs, strict=False)
            with tempfile.TemporaryDirectory() as work:
                package = torch._inductor.aoti_compile_and_package(program, package_path=os.path.join(work, "m.pt2"))
                torch._inductor.aoti_load_package(package)(*inputs)
    except Exception as error:
        print(f"bug reproduced: {type(error).__name__}: {error}")
        return 0
    print("bug NOT reproduced: AOTInductor compiled and ran it", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
