# pyeager's compile (the PyTorch 2 compile server, backends/pt2_compile_server.py, calls it):
# nothing is compiled. The route's module, the case's eager module form, is what runs.


def compile(route, config, options, args, work, seed):
    module = route.module()
    return module, module, {}
