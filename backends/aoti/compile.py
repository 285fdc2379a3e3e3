# aoti's compile (the PyTorch 2 compile server, backends/pt2_compile_server.py, calls it):
# torch._inductor.aoti_compile_and_package of the route's ExportedProgram under the options'
# torch._inductor.config, a .pt2 package the worker loads and runs in C++ (AOTIModelPackageLoader),
# the path a C++ service takes.
import os

import torch


def compile(route, config, options, args, work, seed):
    program = route.exported()
    path = os.path.join(work, "model.pt2")
    package = torch._inductor.aoti_compile_and_package(program, package_path=path, inductor_configs=config)
    return None, None, {"package": package}
