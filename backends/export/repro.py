def __ROLE__(__PARAMETERS__):  # export
    # torch.export's program of the case, by PyTorch's TorchScript converter, run eagerly  #[!eager_module]
    # torch.export.export(Repro()), its program run eagerly  #[eager_module]
    from torch._export.converter import TS2EPConverter  # it ends in torch.export.export  #[!eager_module]
    scripted = torch.jit.load(io.BytesIO(CASE_MODULE))  #[!module]
    inputs = [inputs[i] for i in [__FORWARD_INPUTS__]]  # the graph inputs forward takes  #[!module]
    scripted = torch.jit.script(Repro().to(__DEVICE__))  #[scripted]
    program = TS2EPConverter(scripted, tuple(fresh(inputs))).convert()  #[!eager_module]
    program = torch.export.export(Repro().to(__DEVICE__), tuple(fresh(inputs)), strict=False)  #[eager_module]
    torch.manual_seed(RUN_SEED)  #[random]
    return program.module()(*inputs)
