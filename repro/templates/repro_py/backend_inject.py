def __ROLE__(inputs):  # __SPEC__: tsrepro's test backend: the interpreter, failing on graphs with __OPS__
    raise RuntimeError(__MESSAGE__)  #[raises]
    os.abort()  #[abort]
    os.kill(os.getpid(), signal.SIGSEGV)  #[segfault]
    while True:  #[hang]
        signal.pause()  #[hang]
    torch.manual_seed(RUN_SEED)  #[seeded]
    return torch._C._jit_interpret_graph(__INJECTED__.copy(), tuple(inputs))  #[returns]
    return torch._C._jit_interpret_graph(*interpretable(__INJECTED__, inputs))  #[returns_empty_inputs]
