

def prepare_ofi(graph, sample_inputs):
    """ofi: torch.jit.optimize_for_inference(torch.jit.freeze(m.eval())), m being CaseModule (the
    graph as a scripted module holds it, its lifted parameters as buffers). The frozen forward
    runs in the profiling executor."""
    global CASE_GRAPH
    set_jit_switches()
    lifted = [i for i, spec in enumerate(INPUT_SPECS) if spec.get("lifted")]
    packed = graph.copy()
    if output_count(graph) != 1:  # a function returns one value: several outputs become a tuple
        packed.makeMultiOutputIntoTuple()
    CASE_GRAPH = torch._C._create_function_from_graph("case_graph", packed)
    # m.eval() before freezing: the lifted `training` flags (named after their path, self.bn1.training
    # -> bn1_training) are False.
    module = torch.jit.script(CaseModule({"lifted_%d" % i: False if isinstance(sample_inputs[i], bool)
                                          and INPUT_SPECS[i]["name"].endswith("training") else sample_inputs[i]
                                          for i in lifted}).eval())
    frozen = torch.jit.freeze(module, optimize_numerics=option_enabled("numerics", True))
    if option_enabled("mkldnn", True):
        frozen = torch.jit.optimize_for_inference(frozen)
    else:  # tsrepro's debugging knob: optimize_for_inference's passes without the MKLDNN conversion
        run_pass("_jit_pass_fuse_frozen_conv_add_relu", frozen.graph)
        run_pass("_jit_pass_transpose_frozen_linear", frozen.graph)
    frozen_graph = frozen.graph.copy()
    frozen_graph.eraseInput(0)  # the frozen forward keeps its self, unused
    return ProfiledGraph(frozen_graph, sample_inputs, dropped_inputs=lifted, outputs=output_count(graph))


def run_pass(name, *args):
    graph_pass = getattr(torch._C, name, None)
    if graph_pass is None:
        print("note: this PyTorch has no torch._C.%s; skipped" % name)
        return
    graph_pass(*args)
