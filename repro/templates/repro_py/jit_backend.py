

def prepare_jit(graph, sample_inputs):
    """jit: the profiling executor with its default passes and fusion settings (no CPU fusion)."""
    set_jit_switches()
    return ProfiledGraph(graph, sample_inputs)
