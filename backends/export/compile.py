# export's compile (the PyTorch 2 compile server, backends/pt2_compile_server.py, calls it): the
# route's ExportedProgram (torch.export.export of the module form, or PyTorch's TorchScript
# converter), its module run eagerly. A model export cannot take fails here, at the route.


def compile(route, config, options, args, work, seed):
    module = route.exported().module()
    return module, module, {}
