# aoti's compile (the PyTorch 2 compile server, backends/pt2_compile_server.py, calls it):
# torch._inductor.aoti_compile_and_package of the route's ExportedProgram under the options'
# torch._inductor.config, a .pt2 package the worker loads and runs in C++ (AOTIModelPackageLoader),
# the path a C++ service takes. With bisect=export (`tsrepro explain --passes`), the ExportedProgram's
# module run here, eagerly: the stage before Inductor.
import os

import torch


def compile(route, config, options, args, work, seed):
    program = route.exported()
    if options.get("bisect") == "export":
        module = program.module()
        return module, module, {}
    path = os.path.join(work, "model.pt2")
    package = torch._inductor.aoti_compile_and_package(program, package_path=path, inductor_configs=config)
    return None, None, {"package": package}


def bisect_plan():
    """What `tsrepro explain --passes` may switch: torch.export's program run eagerly, then inside
    aoti_compile_and_package the subsystems PyTorch's CompilerBisector switches: the decompositions
    (keyed on its aot_eager_decomp_partition backend, whose switch the decomposing trace consults
    wherever it runs), then Inductor's."""
    from torch._inductor.compiler_bisector import BACKENDS, BisectSubsystem

    decompositions = [{"stage": "aot_eager_decomp_partition", "name": s.name, "counted": True, "within": "inductor"}
                      for s in BACKENDS["aot_eager_decomp_partition"] if s.name == "decomposition"]
    return {"stages": ["export"], "last": "inductor",
            "subsystems": decompositions + [{"stage": "inductor", "name": s.name, "counted": isinstance(s, BisectSubsystem)}
                                            for s in BACKENDS["inductor"]],
            "texts": {"export": "torch.export (the ExportedProgram run eagerly)", "inductor": "Inductor"}}
