def __ROLE__(__PARAMETERS__):  # ofi: torch.jit.optimize_for_inference(torch.jit.freeze(module))
    frozen = torch.jit.freeze(torch.jit.load(io.BytesIO(CASE_MODULE)), optimize_numerics=__NUMERICS__)  #[!module]
    frozen = torch.jit.freeze(torch.jit.script(Repro().eval().to(__DEVICE__)), optimize_numerics=__NUMERICS__)  #[module]
    frozen = torch.jit.optimize_for_inference(frozen)  #[mkldnn]
    torch._C._jit_pass_fuse_frozen_conv_add_relu(frozen.graph)  # optimize_for_inference without MKLDNN  #[!mkldnn]
    torch._C._jit_pass_transpose_frozen_linear(frozen.graph)  #[!mkldnn]
    inputs = [inputs[i] for i in [__FORWARD_INPUTS__]]  # the graph inputs forward takes  #[!module]
    frozen.__deepcopy__({})(*fresh(inputs))  # the profiling run, on a copy (forward may update the module's state)
    torch.manual_seed(RUN_SEED)  #[random]
    return frozen(*inputs)  # the executor is the copy's too: this call runs the optimized plan
