# The PyTorch 2 compile server: one per tsrepro worker (backends/pt2_program.cpp starts it with
# `python3 -c` on this file's text, embedded at build time, and the folder where it wrote each
# PyTorch 2 backend's backends/<id>/compile.py). It makes the case into the model PyTorch 2 takes,
# by one of two routes, and hands it to the backend's compile():
#   module:    the case's eager module form (backends/eager_module.h: `class Repro(nn.Module)`, its
#              forward plain Python with torch.ops calls), instantiated with the case's state; its
#              ExportedProgram is torch.export.export(Repro(), args, strict=False) (draft_export
#              with the option export=draft). This is how a
#              model written in Python reaches PyTorch 2, with no TorchScript on the way.
#   converter: the case's torch::jit::Module archive through PyTorch's own TorchScript converter
#              (torch._export.converter.TS2EPConverter, which ends in torch.export.export); the
#              module is the ExportedProgram's. This is the TorchScript-to-export migration itself.
# A backend's compile(route, config, options, args, work, seed) returns (call, module, answer):
# what a run calls (None where the worker runs a package itself), the module whose state every
# run starts from, and what the worker gets back ({"package": PATH} for aoti).
#
# Protocol: one JSON object per line, requests on stdin, answers on stdout. What anything else
# prints (Inductor, the converter) goes to stderr, the worker's log: the server keeps stdout's
# file for itself and points file descriptor 1 at stderr.
#   {"op": "has", "key"} -> {"ok": true, "has": bool}: whether the program is compiled here
#   {"op": "eager", "key", "source", "state", "attributes", "inputs", "outputs", "libraries", "seed"}
#       -> {"ok": true}: the module route's model, run eagerly, its outputs torch.save'd (the
#          worker checks them against the TorchScript reference before any verdict counts)
#   {"op": "compile", "key", "backend", "route", "source"/"state"/"attributes" (module) or
#    "module" (converter), "inputs", "work", "options", "libraries", "seed"}
#       -> {"ok": true, ...the backend's answer}
#   {"op": "run", "key", "inputs", "outputs", "seed"} -> {"ok": true}, outputs torch.save'd
#   {"op": "bisect_plan", "backend"} -> {"ok": true, "stages": [...], "last": "inductor",
#       "subsystems": [{"stage", "name", "counted"[, "within"]}], "texts": {stage: words},
#       "applications": {subsystem: words}}: what `tsrepro explain --passes` may switch in the
#       backend's compile (CompilerBisect below; the backend's compile.py says its stages)
#   any failure -> {"ok": false, "type": "module.Class", "message": "...", "stage": "..."}, where
#   stage says what failed: "route" (making the model: export's tracing, the converter) or
#   "backend" (the compiler itself)
# A compile whose options hold bisect=... runs under CompilerBisect (below), and its answer has
# "applications": what the switched subsystem did, one entry per application.
# A compiled program stays here under its key (the worker's hash of the model, backend and
# options), so a candidate compiled once runs again without compiling or being sent again; the
# last few only (KEPT_PROGRAMS): each holds a copy of the model's state.

import ast
import collections
import ctypes
import importlib.util
import json
import os
import signal
import sys
import traceback

KEPT_PROGRAMS = 4  # a candidate's reference and tested runs, and a --repeat, ask for the last one


def die_with_parent():
    # The worker may be killed (a timeout, a crash): its server must not outlive it.
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() == 1:
        sys.exit(0)


def inductor_config(options):
    # torch._inductor.config keys: the "config.KEY" options, each a Python literal
    # (backends/inductor/options.h checked and wrote them).
    prefix = "config."
    return {k[len(prefix):]: ast.literal_eval(v) for k, v in options.items() if k.startswith(prefix)}


class RouteFailure(Exception):
    """Making the model failed (export's tracing, the converter): not the compiler's failure."""

    def __init__(self, error):
        super().__init__(str(error))
        self.error = error


def snapshot(module):
    return {k: v.clone() for k, v in module.state_dict().items()} if module is not None else {}


def restore(module, state):
    import torch

    with torch.no_grad():
        for name, value in module.state_dict().items():
            value.copy_(state[name])


class ModuleRoute:
    """The case's eager module form, as Python, with the case's state."""

    def __init__(self, request, args):
        import torch

        self.args = args
        namespace = {"__name__": "tsrepro_case_module"}
        with open(request["source"]) as source:
            exec(compile(source.read(), request["source"], "exec"), namespace)
        self.model = namespace["Repro"]()
        values = torch.load(request["state"], weights_only=False)
        for name, value in zip(request["attributes"], values):
            if isinstance(value, torch.Tensor):
                self.model.register_buffer(name, value)
            else:
                setattr(self.model, name, value)
        self.model.eval()  # forward reads the case's own training flags, never self.training
        self.options = {}  # the compile's, set when it takes the route
        self._exported = None

    def module(self):
        return self.model

    def exported(self):
        if self._exported is None:
            try:
                self._exported = self.export(self.model, tuple(self.args))
            except Exception as error:
                raise RouteFailure(error)
        return self._exported

    def export(self, model, args):
        # The options' export (backends/pt2_program.h): torch.export.export(strict=False), or
        # draft_export, which decides each data-dependent guard by the inputs' real values and
        # writes it into the program as a runtime check; its module is then exported again, so that
        # the compiler gets a program as torch.export.export makes it. (draft_export's own program
        # keeps the real tensors it propagated, and its fake mode propagates them: Inductor's
        # re-trace then fails where the inputs make a tensor empty that the fake one is not.)
        import torch

        if self.options.get("export") != "draft":
            return torch.export.export(model, args, strict=False)
        from torch.export._draft_export import draft_export

        draft = draft_export(model, args)
        draft = draft[0] if isinstance(draft, tuple) else draft  # 2.6: (program, report)
        return torch.export.export(draft.module(), args, strict=False)


class ConverterRoute:
    """The case's TorchScript module through PyTorch's TorchScript converter."""

    def __init__(self, request, args):
        import torch
        from torch._export.converter import TS2EPConverter

        try:
            self._exported = TS2EPConverter(torch.jit.load(request["module"]), tuple(args)).convert()
        except Exception as error:
            raise RouteFailure(error)

    def module(self):
        return self._exported.module()

    def exported(self):
        return self._exported


ROUTES = {"module": ModuleRoute, "converter": ConverterRoute}

BISECT_VARIABLES = ("TORCH_BISECT_BACKEND", "TORCH_BISECT_SUBSYSTEM", "TORCH_BISECT_MAX")


class CompilerBisect:
    """The option bisect=STAGE[:SUBSYSTEM:KEEP] (`tsrepro explain --passes`, runner/explain/pass_bisect.h):
    PyTorch's CompilerBisector (torch/_inductor/compiler_bisector.py) switched for one compile, as its
    environment interface switches it in a program of its own (TORCH_BISECT_BACKEND, _SUBSYSTEM and
    _MAX, read again here since this process outlives a compile):
      STAGE      a CompilerBisector backend: torch.compile runs it instead of the one asked for (its
                 own reading of TORCH_BISECT_BACKEND); "inductor" itself for aoti, whose
                 aoti_compile_and_package meets the same switches inside Inductor. A stage that is no
                 CompilerBisector backend (aoti's "export") is the backend's compile.py's to take.
      SUBSYSTEM  one of STAGE's subsystems, kept to its first KEEP applications ("all": every one).
                 A config change (cse, fallback_random, ...) is applied where KEEP is 0, as
                 CompilerBisector's "disabling" it does.
    Each application of SUBSYSTEM met, kept or not, is recorded with what PyTorch says of it (the op
    decomposed, the pass, the node lowered): tsrepro's search counts them and names the one at fault.
    CompilerBisector's own do_bisect is not used: its test is a Python callable, and the verdict (the
    same failure as the case, under the case's tolerances) is the C++ runner's."""

    # What one application of a counted subsystem is, for people: the words before its debug info.
    APPLICATION_TEXTS = {"lowerings": "Inductor's lowering of", "decomposition": "the decomposition of",
                         "joint_graph_passes": "Inductor's joint-graph pass",
                         "post_grad_passes": "Inductor's post-grad pass"}

    def __init__(self, options):
        parts = options.get("bisect", "").split(":") if options.get("bisect") else []
        self.stage = parts[0] if parts else None
        self.subsystem = parts[1] if len(parts) > 1 else None
        self.keep = parts[2] if len(parts) > 2 else None
        self.applications = []
        self.exits = []

    def __enter__(self):
        if self.stage is None:
            return self
        import torch
        import torch._inductor.compiler_bisector as bisector

        if self.stage not in bisector.BACKENDS:
            if self.subsystem:
                raise ValueError("bisect=%s: %s is no stage of PyTorch's CompilerBisector (%s)"
                                 % (":".join(filter(None, (self.stage, self.subsystem))), self.stage,
                                    ", ".join(bisector.BACKENDS)))
            return self  # the backend's own stage (compile.py reads the option)
        found = [s for s in bisector.BACKENDS[self.stage] if s.name == self.subsystem]
        if self.subsystem and not found:
            raise ValueError("bisect: CompilerBisector's %s has no subsystem %s (%s)" % (
                self.stage, self.subsystem, ", ".join(s.name for s in bisector.BACKENDS[self.stage])))
        saved = {name: os.environ.get(name) for name in BISECT_VARIABLES}
        self.exits.append(lambda: self.restore_environment(saved))
        os.environ["TORCH_BISECT_BACKEND"] = self.stage
        if found and isinstance(found[0], bisector.ConfigChange):
            if self.keep == "0":
                config = torch._inductor.config if found[0].config_name == "inductor" else torch._functorch.config
                patch = config.patch({found[0].config_field: found[0].config_value})
                patch.__enter__()
                self.exits.append(lambda: patch.__exit__(None, None, None))
        elif found:
            os.environ["TORCH_BISECT_SUBSYSTEM"] = self.subsystem
            # CompilerBisector switches an application off where its count (from 0) exceeds MAX.
            os.environ["TORCH_BISECT_MAX"] = str(2**62 if self.keep == "all" else int(self.keep) - 1)
            self.record_applications(bisector)
        bisector.get_env_val.cache_clear()
        bisector.reset_counters()
        enabled = bisector.CompilerBisector.bisection_enabled
        bisector.CompilerBisector.bisection_enabled = True
        self.exits.append(lambda: setattr(bisector.CompilerBisector, "bisection_enabled", enabled))
        self.exits.append(bisector.get_env_val.cache_clear)
        return self

    def __exit__(self, *exception):
        while self.exits:
            self.exits.pop()()
        return False

    @staticmethod
    def restore_environment(saved):
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

    def record_applications(self, bisector):
        original = bisector.CompilerBisector.__dict__["disable_subsystem"]
        stage, subsystem, applications = self.stage, self.subsystem, self.applications

        def recording(cls, backend, name, debug_info=None):
            disabled = original.__func__(cls, backend, name, debug_info)
            if backend == stage and name == subsystem:
                applications.append(describe_application(name, debug_info))
            return disabled

        bisector.CompilerBisector.disable_subsystem = classmethod(recording)
        self.exits.append(lambda: setattr(bisector.CompilerBisector, "disable_subsystem", original))


def describe_application(subsystem, debug_info):
    # What PyTorch's debug_info says, made readable: a lowering names the node, which says little
    # alone, so the op it lowers comes first; a decomposition's OpOverload repr is shortened to the op.
    import re

    text = debug_info() if debug_info is not None else ""
    if subsystem == "lowerings":
        from torch._inductor.virtualized import V

        try:
            node = V.get_current_node()
            return "%s (%s)" % (node.target, node.name)
        except Exception:
            return text
    found = re.fullmatch(r"<OpOverload\(op='(.*)', overload='(.*)'\)>", text)
    return "%s.%s" % found.groups() if found else text


class Program:
    def __init__(self, call, module, answer):
        self.call, self.module, self.answer = call, module, answer
        self.pristine = snapshot(module)  # every run starts from the state compiling found


class Server:
    def __init__(self, backends_folder):
        import torch  # after the parent check: importing torch takes seconds

        self.torch = torch
        self.backends_folder = backends_folder
        self.backends = {}
        self.programs = collections.OrderedDict()  # key -> Program, the most recently used last
        self.routes = {}  # key -> the module route's model, from its eager run to its compile
        self.libraries = set()  # extension libraries loaded (torchvision's operators), as the worker has them

    def backend(self, name):
        # backends/<id>/compile.py, as the worker wrote it into the folder it named
        if name not in self.backends:
            path = os.path.join(self.backends_folder, name + ".py")
            if not os.path.exists(path):
                raise ValueError("no PyTorch 2 backend " + name)
            spec = importlib.util.spec_from_file_location("tsrepro_backend_" + name, path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            self.backends[name] = module
        return self.backends[name]

    def load_libraries(self, libraries):
        # {"path", "package"}: the package (torchvision) first, whose Python side registers the
        # operators' fake kernels that torch.export traces with; then the library itself. A
        # package Python cannot import here (not on sys.path) leaves the library alone, as
        # repro.py does.
        import importlib

        for library in libraries:
            if library["path"] not in self.libraries:
                if library["package"]:
                    try:
                        importlib.import_module(library["package"])
                    except ImportError:
                        pass
                self.torch.ops.load_library(library["path"])
                self.libraries.add(library["path"])

    def has(self, request):
        return {"ok": True, "has": request["key"] in self.programs}

    def route(self, request, args):
        route = self.routes.pop(request["key"], None)
        if route is None:
            route = ROUTES[request.get("route", "converter")](request, args)
        route.args = args
        route.options = request.get("options", {})
        return route

    def eager(self, request):
        torch = self.torch
        self.load_libraries(request.get("libraries", []))
        args = torch.load(request["inputs"], weights_only=False)
        route = ModuleRoute(request, args)
        state = snapshot(route.model)
        torch.manual_seed(request["seed"])
        outputs = route.model(*args)
        torch.save(plain(outputs), request["outputs"])
        restore(route.model, state)
        self.routes = {request["key"]: route}  # the compile that follows takes it
        return {"ok": True}

    def compile(self, request):
        torch = self.torch
        if request["key"] in self.programs:
            self.programs.move_to_end(request["key"])
            return {"ok": True, **self.programs[request["key"]].answer}
        self.load_libraries(request.get("libraries", []))
        args = torch.load(request["inputs"], weights_only=False)
        route = self.route(request, args)
        with CompilerBisect(request["options"]) as bisect:
            try:
                call, module, answer = self.backend(request["backend"]).compile(
                    route, inductor_config(request["options"]), request["options"], args, request["work"],
                    request["seed"])
            except Exception as error:
                error.applications = bisect.applications  # a compile error's applications count as well
                raise
        if bisect.subsystem and bisect.keep is not None:
            answer = {**answer, "applications": bisect.applications}
        self.programs[request["key"]] = Program(call, module, answer)
        while len(self.programs) > KEPT_PROGRAMS:
            _, dropped = self.programs.popitem(last=False)
            if "package" in dropped.answer:  # the worker loaded it when it was compiled
                os.remove(dropped.answer["package"])
        return {"ok": True, **answer}

    def bisect_plan(self, request):
        plan = self.backend(request["backend"]).bisect_plan()
        plan["applications"] = CompilerBisect.APPLICATION_TEXTS
        return {"ok": True, **plan}

    def run(self, request):
        torch = self.torch
        program = self.programs[request["key"]]
        restore(program.module, program.pristine)
        args = torch.load(request["inputs"], weights_only=False)
        torch.manual_seed(request["seed"])
        outputs = program.call(*args)
        torch.save(plain(outputs), request["outputs"])
        return {"ok": True}


def plain(value):
    """FX's immutable_list and immutable_dict as the builtins they subclass: what tsrepro's reader
    of torch.save data knows (a pickled FX class would name a type it has no reason to trust)."""
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def failure(error, stage):
    kind = type(error)
    name = kind.__qualname__ if kind.__module__ == "builtins" else kind.__module__ + "." + kind.__qualname__
    answer = {"ok": False, "type": name, "message": str(error).strip() or repr(error), "stage": stage}
    if getattr(error, "applications", None) is not None:
        answer["applications"] = error.applications
    # Where in the module form it was raised, if it was: the line of forward that says which op.
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename.endswith("model.py")]
    if frames:
        answer["where"] = "model.py line %d: %s" % (frames[-1].lineno, frames[-1].line)
    return answer


def main():
    die_with_parent()
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # what anything prints goes to the worker's log, not into the protocol
    server = None
    for line in sys.stdin:
        request = json.loads(line)
        try:
            server = server or Server(sys.argv[1])
            answer = getattr(server, request["op"])(request)
        except RouteFailure as error:  # making the model: the worker names the stage that failed
            answer = failure(error.error, "route")
        except Exception as error:  # a compile or run failure: the worker turns it into a verdict
            answer = failure(error, "backend")
        answers.write(json.dumps(answer) + "\n")


if __name__ == "__main__":
    main()
