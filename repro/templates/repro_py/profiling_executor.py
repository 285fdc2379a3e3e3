

def set_jit_switch(name, *args):
    """Sets one of torch._C's global JIT switches; a PyTorch without it keeps its default."""
    setter = getattr(torch._C, name, None)
    if setter is not None:
        setter(*args)


def set_jit_switches(fuse_on_cpu=False, inlining=True, dynamic_shapes=False, reductions=False, strategy=None):
    """The global switches tsrepro sets around a profiling-executor backend. Each side runs in its
    own process, so they are set once and never restored."""
    set_jit_switch("_jit_set_profiling_executor", True)
    set_jit_switch("_jit_set_profiling_mode", True)
    set_jit_switch("_set_graph_executor_optimize", True)
    set_jit_switch("_jit_override_can_fuse_on_cpu", fuse_on_cpu)
    set_jit_switch("_jit_set_texpr_fuser_enabled", True)
    set_jit_switch("_debug_set_fusion_group_inlining", inlining)
    set_jit_switch("_jit_set_texpr_dynamic_shape_enabled", dynamic_shapes)
    set_jit_switch("_jit_set_texpr_reductions_enabled", reductions)
    # tsrepro's libtorch may lack LLVM: NNC's kernels run in its IR interpreter there, and so here.
    set_jit_switch("_jit_set_te_must_use_llvm_cpu", False)
    if strategy is not None:
        set_jit_switch("_jit_set_fusion_strategy", [(strategy.upper(), 2)])


def option_enabled(key, default):
    return BACKEND_OPTIONS.get(key, "1" if default else "0") in ("1", "true", "on")


class ProfiledGraph:
    """The profiling graph executor (what TorchScript runs by default), warmed up: its profiling
    runs happen here; the optimized plan is built on the first real run."""

    def __init__(self, graph, sample_inputs, dropped_inputs=(), outputs=None):
        self.outputs = output_count(graph) if outputs is None else outputs  # a tuple output may stand for several
        self.dropped_inputs = set(dropped_inputs)
        graph = graph.copy()
        if self.outputs != 1:  # the executor wants exactly one output: pack them in a tuple
            graph.makeMultiOutputIntoTuple()
        self.function = torch._C._create_function_from_graph("repro", graph)
        profiled_runs = getattr(torch._C, "_jit_get_num_profiled_runs", lambda: 1)()
        for _ in range(profiled_runs):
            self(clone_values(sample_inputs))

    def __call__(self, inputs):
        kept = [value for i, value in enumerate(inputs) if i not in self.dropped_inputs]
        return unpack_outputs(self.function(*kept), self.outputs)

    def plan_ready(self):
        """Whether the optimized plan exists: a failure before it is a compile error."""
        try:
            self.function.get_debug_state()  # asserts that the optimized plan exists
            return True
        except RuntimeError:
            return False
