def __ROLE__(__PARAMETERS__):  # jit: the profiling executor with its default passes
    return profiled(inputs)
