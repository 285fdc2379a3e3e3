def __ROLE__(inputs):  # eager: TorchScript's interpreter, without optimization passes
    torch.manual_seed(RUN_SEED)  #[random]
    return torch._C._jit_interpret_graph(GRAPH.copy(), tuple(inputs))  #[!empty_inputs]
    return torch._C._jit_interpret_graph(*interpretable(GRAPH, inputs))  #[empty_inputs]
