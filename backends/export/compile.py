# export's compile (the PyTorch 2 compile server, backends/pt2_compile_server.py, calls it): the
# route's ExportedProgram (torch.export.export of the module form, or PyTorch's TorchScript
# converter), with decompose=1 lowered to core ATen by run_decompositions (what a consumer of
# torch.export such as ExecuTorch receives), its module run eagerly. A model export cannot take
# fails here, at the route.


def compile(route, config, options, args, work, seed):
    program = route.exported()
    if options.get("decompose") == "1":
        program = program.run_decompositions()
    module = program.module()
    return module, module, {}
