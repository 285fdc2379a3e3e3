def __ROLE__(__PARAMETERS__):  # eager: TorchScript's interpreter, without optimization passes
    torch.manual_seed(RUN_SEED)  #[random]
    return torch._C._jit_interpret_graph(GRAPH.copy(), tuple(inputs))  #[graph_inputs]
    return torch._C._jit_interpret_graph(*interpretable(GRAPH, inputs))  #[empty_inputs]
    m = torch.jit.script(Repro().to(__DEVICE__, torch.float64 if fp64 else None))  #[module]
    with torch.jit.optimized_execution(False):  # a fresh function of forward's graph, run as it is  #[module]
        return torch._C._create_function_from_graph("forward", m.graph)(m, *inputs)  #[module]
