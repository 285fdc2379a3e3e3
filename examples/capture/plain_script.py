"""An ordinary Python script that knows nothing of tsrepro: it loads a TorchScript model and calls
it a few times. libtsrepro_capture.so captures what it runs by environment alone:

    TSREPRO_AFTER=fusion TSREPRO_LEVEL=4 LD_PRELOAD=build/libtsrepro_capture.so \\
        /usr/bin/python3 examples/capture/plain_script.py model.pt inputs.pt [calls] [fork|threads|exit|optimize]

With `fork`, the script forks before its first call and both processes call the model (a program
that forks: each process's cases go to a run directory of its own). With `threads`, four threads
call the model at once, CPU fusion off (libtorch 1.13's NNC interpreter fails when two threads
run kernels at once, with or without tsrepro). With `exit`, the script ends with os._exit(3) right
after its last call (a program that exits early, skipping every cleanup). With `optimize`, it
serves the model through torch.jit.optimize_for_inference (frozen: the weights become constants
of the graph, and its module input goes unused).

Like a script that uses NNC on the CPU, it switches CPU fusion on itself (where the libtorch has no
LLVM, Debian 12's, NNC then interprets its kernels).
"""
import os
import sys
import threading

import torch

mode = sys.argv[4] if len(sys.argv) > 4 else ""
torch._C._jit_override_can_fuse_on_cpu(mode != "threads")
torch._C._jit_set_te_must_use_llvm_cpu(torch._C._llvm_enabled())  # NNC's interpreter only without LLVM
model = torch.jit.load(sys.argv[1]).eval()
if mode == "optimize":
    model = torch.jit.optimize_for_inference(model)
inputs = torch.load(sys.argv[2])
calls = int(sys.argv[3]) if len(sys.argv) > 3 else 3
child = os.fork() if mode == "fork" else None


def call_model(who):
    with torch.no_grad():
        for i in range(calls):
            out = model(*inputs)
            first = out[0] if isinstance(out, (tuple, list)) else out
            print("%s call %d: first output sum %f" % (who, i, first.sum().item()), flush=True)


if mode == "threads":
    threads = [threading.Thread(target=call_model, args=("thread %d" % t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
else:
    call_model("child" if child == 0 else "process")
if mode == "exit":
    os._exit(3)
if child == 0:
    os._exit(0)
if child:
    os.waitpid(child, 0)
