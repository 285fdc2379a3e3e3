"""The nnc backend in the Python shim (tsrepro.wrap): the profiling executor with the TensorExpr
fuser forced on the CPU, the switches backends/nnc/backend.cpp sets (CPU fusion is off by default
in 1.13 without LLVM, on in 2.6 with LLVM)."""

import torch


def force_on_cpu():
    torch._C._jit_override_can_fuse_on_cpu(True)
    torch._C._jit_set_texpr_fuser_enabled(True)
    torch._C._jit_set_te_must_use_llvm_cpu(torch._C._llvm_enabled())  # NNC's interpreter only without LLVM


def runner(module, backend, options):
    def run(inputs):
        force_on_cpu()
        return module(*inputs)
    return run
