# inductor's compile (the PyTorch 2 compile server, backends/pt2_compile_server.py, calls it):
# torch.compile(model, backend="inductor") of the route's module (the eager module form itself, or
# the ExportedProgram's module on the converter route) under the options' torch._inductor.config,
# compiled by a first call. That call starts from the case's state and leaves it as it found it,
# as repro.py's does: a graph that writes its buffers would otherwise start the call that counts
# from the state the warm-up left.
import torch


class Compiled:
    def __init__(self, module, config, options, args, seed):
        mode = options.get("mode", "default")
        dynamic = {"0": False, "1": True}.get(options.get("dynamic", "auto"), None)  # auto: torch.compile's default
        self.config = config
        self.compiled = torch.compile(module, backend="inductor", mode=None if mode == "default" else mode,
                                      dynamic=dynamic)
        state = {k: v.clone() for k, v in module.state_dict().items()}
        torch.manual_seed(seed)
        self(*args)  # the first call compiles
        with torch.no_grad():
            for name, value in module.state_dict().items():
                value.copy_(state[name])

    def __call__(self, *inputs):
        with torch._inductor.config.patch(self.config):
            return self.compiled(*inputs)


def compile(route, config, options, args, work, seed):
    module = route.module()
    return Compiled(module, config, options, args, seed), module, {}
