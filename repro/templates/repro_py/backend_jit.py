def __ROLE__(inputs):  # jit: the profiling executor with its default passes
    function = torch._C._create_function_from_graph("repro", GRAPH.copy())
    function(*fresh(inputs))  # the profiling run (PyTorch profiles one); the next call compiles the graph
    torch.manual_seed(RUN_SEED)  #[random]
    return function(*inputs)
