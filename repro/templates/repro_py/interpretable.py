def interpretable(graph, inputs):  # _jit_interpret_graph cannot type an empty list or dict: such an input is built in the graph
    graph, inputs = graph.copy(), list(inputs)
    for i in reversed([i for i, v in enumerate(inputs) if isinstance(v, (list, dict)) and not v]):
        value = list(graph.inputs())[i]
        empty = graph.prependNode(graph.create("prim::ListConstruct" if isinstance(inputs[i], list) else "prim::DictConstruct"))
        empty.output().setType(value.type())
        value.replaceAllUsesWith(empty.output())
        graph.eraseInput(i)
        del inputs[i]
    return graph, tuple(inputs)
