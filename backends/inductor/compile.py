# inductor's compile (the PyTorch 2 compile server, backends/pt2_compile_server.py, calls it):
# torch.compile(model, backend="inductor") of the route's module (the eager module form itself, or
# the ExportedProgram's module on the converter route) under the options' torch._inductor.config,
# compiled by a first call. That call starts from the case's state and leaves it as it found it,
# as repro.py's does: a graph that writes its buffers would otherwise start the call that counts
# from the state the warm-up left.
#
# torch.compile compiles inside that first call and then runs what it compiled, so the call's
# failure may be either. Dynamo raises its own exceptions (TorchDynamoException: BackendCompilerFailed
# wraps Inductor's, Unsupported, InternalTorchDynamoError) for what failed while compiling; any other
# exception came from the compiled code running, which is the run phase's: the first call forgets
# it, and the case's run meets it again (cpp.inject_relu_bug_TESTING_ONLY='runtime_error' is such
# a failure: a kernel that throws).
import torch
import torch._dynamo.exc
from torch._dynamo.utils import counters


class Compiled:
    def __init__(self, module, config, options, args, seed):
        mode = options.get("mode", "default")
        dynamic = {"0": False, "1": True}.get(options.get("dynamic", "auto"), None)  # auto: torch.compile's default
        self.config = config
        self.compiled = torch.compile(module, backend="inductor", mode=None if mode == "default" else mode,
                                      dynamic=dynamic)
        state = {k: v.clone() for k, v in module.state_dict().items()}
        torch.manual_seed(seed)
        counters.clear()
        try:
            self(*args)  # the first call compiles
        except torch._dynamo.exc.TorchDynamoException:
            raise
        except Exception:
            pass  # compiled; the compiled code failed, which the run meets again
        finally:
            with torch.no_grad():
                for name, value in module.state_dict().items():
                    value.copy_(state[name])
        self.captured = captured()

    def __call__(self, *inputs):
        with torch._inductor.config.patch(self.config):
            return self.compiled(*inputs)


def captured():
    """What Dynamo made of the first call, for `tsrepro run --explain-backend`: no graph at all means
    the model ran in eager (a graph break inside a loop gives up the whole frame)."""
    stats = counters["stats"]
    text = "Dynamo captured %d graph(s), %d op call(s)" % (stats["unique_graphs"], stats["calls_captured"])
    for title, reasons in (("graph breaks", counters["graph_break"]), ("not traced", counters["unimplemented"])):
        if reasons:
            text += "; %s: %s" % (title, "; ".join("%s (%d)" % (why.splitlines()[0][:200], n) for why, n in reasons.items()))
    return text


def compile(route, config, options, args, work, seed):
    module = route.module()
    compiled = Compiled(module, config, options, args, seed)
    return compiled, module, {"captured": compiled.captured}


def bisect_plan():
    """What `tsrepro explain --passes` may switch (the server's CompilerBisect): the stages it runs
    instead of Inductor, in CompilerBisector's order (its BACKENDS: Dynamo alone, then with
    AOTAutograd, then with decompositions and the partitioner; the crossref check is a checker, no
    stage of a compile), and the subsystems of each and of Inductor."""
    from torch._inductor.compiler_bisector import BACKENDS, BisectSubsystem

    stages = [name for name in BACKENDS if name not in ("inductor", "aot_eager_decomp_partition_crossref")]
    return {"stages": stages, "last": "inductor",
            "subsystems": [{"stage": stage, "name": s.name, "counted": isinstance(s, BisectSubsystem)}
                           for stage in stages + ["inductor"] for s in BACKENDS[stage]],
            "texts": {"eager": "Dynamo's capture (torch.compile backend eager: the graph Dynamo captured, run eagerly)",
                      "aot_eager": "AOTAutograd's trace (backend aot_eager: Dynamo's graph through AOTAutograd, "
                                   "run eagerly)",
                      "aot_eager_decomp_partition": "the decompositions and the partitioner (backend "
                                                    "aot_eager_decomp_partition, run eagerly)",
                      "inductor": "Inductor"}}
