"""The jit backend in the Python shim (tsrepro.wrap): the profiling executor with torch's own
settings, as a program that sets none gets them."""


def runner(module, backend, options):
    return lambda inputs: module(*inputs)
