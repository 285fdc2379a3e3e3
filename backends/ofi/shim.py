"""The ofi backend in the Python shim (tsrepro.wrap): torch.jit.freeze + optimize_for_inference of
the module, once, then its calls."""

import torch


def runner(module, backend, options):
    optimized = []

    def run(inputs):
        if not optimized:
            optimized.append(torch.jit.optimize_for_inference(torch.jit.freeze(module.eval())))
        return optimized[0](*inputs)
    return run
