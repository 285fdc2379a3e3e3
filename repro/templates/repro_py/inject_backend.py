

def prepare_inject(graph, sample_inputs):
    """inject:<fault>@<op>[+<op>...]: tsrepro's test backend. It runs the interpreter but fails
    when every listed op is in the graph (nested blocks included)."""
    fault, op_text = BACKEND[len("inject:"):].split("@", 1)
    ops = op_text.split("+")
    graph = graph.copy()
    triggered = all(graph.findAllNodes(op, True) for op in ops)
    if triggered and fault == "compile-error":
        raise RuntimeError("tsrepro injected compile error at " + op_text)
    if triggered and fault == "accuracy":
        add_one_to_outputs_of(graph, ops[0])
    if not triggered or fault == "accuracy":
        return InterpretedGraph(graph)
    return FaultyGraph(InterpretedGraph(graph), fault, op_text)


def add_one_to_outputs_of(graph, op):
    """After every `op` node its tensor outputs get +1: a wrong answer that changes no dtype."""
    for node in graph.findAllNodes(op, True):
        for output in list(node.outputs()):
            if not output.type().isSubtypeOf(torch._C.TensorType.get()):
                continue
            with graph.insert_point_guard(node):
                one = graph.insertConstant(1)
            add = graph.create("aten::add", [output, one, one])
            add.insertAfter(node)
            add.output().setType(output.type())
            output.replaceAllUsesAfterNodeWith(add, add.output())


class FaultyGraph:
    def __init__(self, inner, fault, op_text):
        self.inner, self.fault, self.op_text = inner, fault, op_text

    def __call__(self, inputs):
        if self.fault == "runtime-error":
            raise RuntimeError("tsrepro injected runtime error at " + self.op_text)
        if self.fault == "abort":
            os.abort()
        if self.fault == "segfault":
            signal.signal(signal.SIGSEGV, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGSEGV)
        if self.fault == "hang":
            while True:
                time.sleep(1)
        return self.inner(inputs)

    def plan_ready(self):
        return True
