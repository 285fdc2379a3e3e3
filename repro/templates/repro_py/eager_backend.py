

# ---- Backends ------------------------------------------------------------------------------------
# prepare_<backend>(graph, sample_inputs) compiles (everything before the real run: a failure
# there is a compile error) and returns a callable: inputs -> list of outputs.

class InterpretedGraph:
    """eager: the TorchScript interpreter with no optimization passes at all."""

    def __init__(self, graph):
        self.graph = graph
        self.outputs = output_count(graph)

    def __call__(self, inputs):
        graph = self.graph.copy()  # _jit_interpret_graph writes the input types into its graph
        if hasattr(torch._C, "_jit_interpret_graph"):
            result = torch._C._jit_interpret_graph(graph, tuple(inputs))
        else:  # the plain executor with its optimizations off runs no passes either
            if self.outputs != 1:
                graph.makeMultiOutputIntoTuple()
            function = torch._C._create_function_from_graph("repro_eager", graph)
            with torch.jit.optimized_execution(False):
                result = function(*inputs)
        return unpack_outputs(result, self.outputs)

    def plan_ready(self):
        return True


def prepare_eager(graph, sample_inputs):
    return InterpretedGraph(graph.copy())
