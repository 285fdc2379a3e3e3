"""The eager backend in the Python shim (tsrepro.wrap): TorchScript's interpreter, no optimization."""

import torch


def runner(module, backend, options):
    def run(inputs):
        with torch.jit.optimized_execution(False):
            return module(*inputs)
    return run
