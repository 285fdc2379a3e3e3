def __ROLE__(__PARAMETERS__):  # inductor
    # torch.compile of torch.export's program of the case (PyTorch's TorchScript converter)  #[!eager_module]
    # torch.compile(Repro()) with Inductor  #[eager_module]
    import torch._inductor.config  # PyTorch 2: on 1.x an ImportError, this cannot run here (exit 2)  #[eager_module]
    from torch._export.converter import TS2EPConverter  # it ends in torch.export.export  #[!eager_module]
    scripted = torch.jit.load(io.BytesIO(CASE_MODULE))  #[!module]
    inputs = [inputs[i] for i in [__FORWARD_INPUTS__]]  # the graph inputs forward takes  #[!module]
    scripted = torch.jit.script(Repro().to(__DEVICE__))  #[scripted]
    module = TS2EPConverter(scripted, tuple(fresh(inputs))).convert().module()  #[!eager_module]
    module = Repro().to(__DEVICE__)  #[eager_module]
    with torch._inductor.config.patch(__CONFIG__):
        compiled = torch.compile(module, __COMPILE_ARGUMENTS__)
        state = {k: v.clone() for k, v in module.state_dict().items()}
        torch.manual_seed(RUN_SEED)  #[random]
        compiled(*fresh(inputs))  # the first call compiles
        module.load_state_dict(state)  # the call that counts starts from the same state
        torch.manual_seed(RUN_SEED)  #[random]
        return compiled(*inputs)
