"""An ordinary Python script that knows nothing of tsrepro: it loads a TorchScript model and calls
it a few times. libtsrepro_capture.so captures what it runs by environment alone:

    TSREPRO_AFTER=fusion TSREPRO_LEVEL=4 LD_PRELOAD=build/libtsrepro_capture.so \\
        /usr/bin/python3 examples/capture/plain_script.py model.pt inputs.pt [calls] [fork]

With `fork`, the script forks before its first call and both processes call the model (a program
that forks: each process's cases go to a run directory of its own).

Like a script that uses NNC on the CPU, it switches CPU fusion on itself (Debian's libtorch has
no LLVM: NNC then interprets its kernels).
"""
import os
import sys

import torch

torch._C._jit_override_can_fuse_on_cpu(True)
torch._C._jit_set_te_must_use_llvm_cpu(False)
model = torch.jit.load(sys.argv[1]).eval()
inputs = torch.load(sys.argv[2])
calls = int(sys.argv[3]) if len(sys.argv) > 3 else 3
child = os.fork() if sys.argv[4:] == ["fork"] else None
with torch.no_grad():
    for i in range(calls):
        out = model(*inputs)
        first = out[0] if isinstance(out, (tuple, list)) else out
        print("%s call %d: first output sum %f" % ("child" if child == 0 else "process", i, first.sum().item()))
if child == 0:
    os._exit(0)
if child:
    os.waitpid(child, 0)
