

def prepare_nnc(graph, sample_inputs):
    """nnc: the profiling executor with the TensorExpr fuser forced on for the CPU."""
    set_jit_switches(fuse_on_cpu=True,
                     inlining=option_enabled("inline", True),
                     dynamic_shapes=option_enabled("dynamic_shapes", False),
                     reductions=option_enabled("reductions", False),
                     strategy=BACKEND_OPTIONS.get("strategy"))
    return ProfiledGraph(graph, sample_inputs)
