# The PyTorch 2 compile server: one per tsrepro worker (backends/pt2_program.cpp starts it with
# `python3 -c` on this file's text, embedded at build time). It turns a case's module (a
# torch::jit::Module archive the worker saved) into what a TorchScript user moving to PyTorch 2
# gets: torch.export's ExportedProgram through PyTorch's own TorchScript converter
# (torch._export.converter.TS2EPConverter, which ends in torch.export.export), then
#   export:   the ExportedProgram's module, run eagerly;
#   inductor: torch.compile(that module, backend="inductor"), run twice (the first call compiles);
#   aoti:     torch._inductor.aoti_compile_and_package of it, a .pt2 the worker loads in C++.
#
# Protocol: one JSON object per line, requests on stdin, answers on stdout. What anything else
# prints (Inductor, the converter) goes to stderr, the worker's log: the server keeps stdout's
# file for itself and points file descriptor 1 at stderr.
#   {"op": "compile", "key", "backend", "module", "inputs", "work", "options", "libraries", "seed"}
#       -> {"ok": true} or, for aoti, {"ok": true, "package": PATH}
#   {"op": "run", "key", "inputs", "outputs", "seed"} -> {"ok": true}, outputs torch.save'd
#   any failure -> {"ok": false, "type": "module.Class", "message": "..."}
# A compiled program stays here under its key (the worker's hash of graph, backend and options),
# so a candidate compiled once runs again without compiling; the last few only (KEPT_PROGRAMS):
# each holds a copy of the model's state, and a minify compiles hundreds of candidates.

import ast
import collections
import ctypes
import json
import os
import signal
import sys

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


class Compiled:
    """torch.compile(module, backend="inductor") under the options' config, compiled by a first call."""

    def __init__(self, module, options, seed, args):
        import torch

        self.module = module
        self.config = inductor_config(options)
        mode = options.get("mode", "default")
        dynamic = {"0": False, "1": True}.get(options.get("dynamic", "auto"), None)  # auto: torch.compile's default
        self.compiled = torch.compile(module, backend="inductor", mode=None if mode == "default" else mode,
                                      dynamic=dynamic)
        torch.manual_seed(seed)
        self(*args)  # the first call compiles

    def __call__(self, *inputs):
        import torch

        with torch._inductor.config.patch(self.config):
            return self.compiled(*inputs)


class Program:
    """A compiled case: what a run calls (None for aoti: the worker runs the package), the module
    whose state every run starts from as compiling found it, and the compile's answer."""

    def __init__(self, call, module, answer):
        self.call, self.module, self.answer = call, module, answer
        self.pristine = {k: v.clone() for k, v in module.state_dict().items()} if module is not None else {}


class Server:
    def __init__(self):
        import torch  # after the parent check: importing torch takes seconds

        self.torch = torch
        self.programs = collections.OrderedDict()  # key -> Program, the most recently used last
        self.libraries = set()  # extension libraries loaded (torchvision's operators), as the worker has them

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

    def exported(self, request, args):
        from torch._export.converter import TS2EPConverter

        scripted = self.torch.jit.load(request["module"])
        return TS2EPConverter(scripted, tuple(args)).convert()

    def compile(self, request):
        torch = self.torch
        if request["key"] in self.programs:
            self.programs.move_to_end(request["key"])
            return {"ok": True, **self.programs[request["key"]].answer}
        self.load_libraries(request.get("libraries", []))
        args = torch.load(request["inputs"], weights_only=False)
        options = request["options"]
        program = self.exported(request, args)
        if request["backend"] == "export":
            module = program.module()
            compiled = Program(module, module, {})
        elif request["backend"] == "inductor":
            call = Compiled(program.module(), options, request["seed"], args)
            compiled = Program(call, call.module, {})
        elif request["backend"] == "aoti":
            path = os.path.join(request["work"], "model.pt2")
            package = torch._inductor.aoti_compile_and_package(
                program, package_path=path, inductor_configs=inductor_config(options))
            compiled = Program(None, None, {"package": package})
        else:
            raise ValueError("unknown backend " + request["backend"])
        self.programs[request["key"]] = compiled
        while len(self.programs) > KEPT_PROGRAMS:
            _, dropped = self.programs.popitem(last=False)
            if "package" in dropped.answer:  # the worker loaded it when it was compiled
                os.remove(dropped.answer["package"])
        return {"ok": True, **compiled.answer}

    def run(self, request):
        torch = self.torch
        program = self.programs[request["key"]]
        with torch.no_grad():  # every run starts from the state compiling found (buffers it updates)
            for name, value in program.module.state_dict().items():
                value.copy_(program.pristine[name])
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


def failure(error):
    kind = type(error)
    name = kind.__qualname__ if kind.__module__ == "builtins" else kind.__module__ + "." + kind.__qualname__
    return {"ok": False, "type": name, "message": str(error).strip() or repr(error)}


def main():
    die_with_parent()
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # what anything prints goes to the worker's log, not into the protocol
    server = None
    for line in sys.stdin:
        request = json.loads(line)
        try:
            server = server or Server()
            answer = getattr(server, request["op"])(request)
        except Exception as error:  # a compile or run failure: the worker turns it into a verdict
            answer = failure(error)
        answers.write(json.dumps(answer) + "\n")


if __name__ == "__main__":
    main()
