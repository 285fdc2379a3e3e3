def __ROLE__(__PARAMETERS__):  # aoti
    # aoti_compile_and_package of torch.export's program of the case, then aoti_load_package  #[!eager_module]
    # aoti_compile_and_package of torch.export.export(Repro()), then aoti_load_package  #[eager_module]
    import torch._inductor  # PyTorch 2: on 1.x an ImportError, this cannot run here (exit 2)  #[eager_module]
    from torch._export.converter import TS2EPConverter  # it ends in torch.export.export  #[!eager_module]
    scripted = torch.jit.load(io.BytesIO(CASE_MODULE))  #[!module]
    inputs = [inputs[i] for i in [__FORWARD_INPUTS__]]  # the graph inputs forward takes  #[!module]
    scripted = torch.jit.script(Repro().to(__DEVICE__))  #[scripted]
    program = TS2EPConverter(scripted, tuple(fresh(inputs))).convert()  #[!eager_module]
    program = torch.export.export(Repro().to(__DEVICE__), tuple(fresh(inputs)), strict=False)  #[plain_export]
    from torch.export._draft_export import draft_export  # the inputs' real values decide data-dependent guards  #[draft_export]
    program = draft_export(Repro().to(__DEVICE__), tuple(fresh(inputs)))  #[draft_export]
    program = program[0] if isinstance(program, tuple) else program  # 2.6 returns (program, report)  #[draft_export]
    program = torch.export.export(program.module(), tuple(fresh(inputs)), strict=False)  # its runtime checks decide the guards  #[draft_export]
    package = os.path.join(os.path.dirname(os.path.abspath(__file__)), "repro.pt2")  # repro.cpp runs it too
    torch._inductor.aoti_compile_and_package(program, package_path=package, inductor_configs=__CONFIG__)
    torch.manual_seed(RUN_SEED)  #[random]
    return torch._inductor.aoti_load_package(package)(*inputs)
