"""tsrepro's env-var workflow for Python programs: TorchScript's TORCHDYNAMO_REPRO_AFTER.

    import tsrepro      # installed by `cmake --install`; from a build tree: PYTHONPATH=build/python
    fn = tsrepro.wrap(torch.jit.script(model), backend="nnc")
    out = fn(x)

`fn(*inputs)` runs the module the way the backend would in this process (nnc: the TensorExpr
fuser on the CPU; jit: the profiling executor; ofi: torch.jit.optimize_for_inference; eager: no
optimization; inject:<fault>@<op>: tsrepro's fault injection, emulated). With no TSREPRO_*
variable set, that is all. With them it honours what the C++ side (tsrepro/after.h) does:

    TSREPRO_AFTER=graph|fusion   the whole graph, or each fusion group the backend formed
    TSREPRO_LEVEL=1..4           1: case + repro.py on failure; 2: + minify.sh; 3: the case is
                                 written before running, the minifier runs on failure;
                                 4: + compare against eager, minify accuracy failures
    TSREPRO_DIR                  where run_<timestamp>-pid_<pid>/ goes (./tsrepro_out)
    TSREPRO_BIN                  the tsrepro executable (default: the build's or the install's
                                 that this package came with, then PATH)

It saves the module (torch.jit.save) and the real inputs, imports them with `tsrepro import`,
and lets `tsrepro after` run the imported graph through the C++ workflow, which writes the
cases, reproducers and minifier runs into this process's run directory. The program's own
failure still reaches it: the exception is re-raised, the crash happens. Nothing beyond PyTorch
and the tsrepro executable is needed.

What `tsrepro after` checks costs a second or two (a libtorch process start): it runs when the
call raised, and, for checks that need no exception (level 4 comparisons, fusion groups), on the
first call of each wrapped module.
"""

import datetime
import itertools
import logging
import os
import shutil
import signal
import subprocess
import time

import torch

from . import _paths

__all__ = ["wrap", "Settings", "TsreproError", "tsrepro_executable"]

log = logging.getLogger("tsrepro")
if not log.handlers:
    _handler = logging.StreamHandler()
    _handler.setFormatter(logging.Formatter("[tsrepro %(asctime)s] [%(levelname)s] %(message)s", "%H:%M:%S"))
    log.addHandler(_handler)
    log.setLevel({"debug": logging.DEBUG, "warn": logging.WARNING}.get(os.environ.get("TSREPRO_LOG", ""), logging.INFO))
    log.propagate = False

_wrapped_count = itertools.count(1)


class TsreproError(RuntimeError):
    """A TSREPRO_* variable the shim cannot take, or a tsrepro step that could not run."""


class Settings:
    def __init__(self, stage, level, directory):
        self.stage, self.level, self.directory = stage, level, directory

    @staticmethod
    def from_environment():
        after = os.environ.get("TSREPRO_AFTER", "")
        if after in ("", "0", "off"):
            stage = None
        elif after in ("graph", "fusion"):
            stage = after
        else:
            raise TsreproError("TSREPRO_AFTER=%s: expected graph or fusion" % after)
        level_text = os.environ.get("TSREPRO_LEVEL", "1")
        if level_text not in ("1", "2", "3", "4"):
            raise TsreproError("TSREPRO_LEVEL=%s: expected 1, 2, 3 or 4" % level_text)
        return Settings(stage, int(level_text), os.environ.get("TSREPRO_DIR") or "tsrepro_out")


def tsrepro_executable():
    """$TSREPRO_BIN, else the tsrepro built or installed with this package, else PATH's."""
    if os.environ.get("TSREPRO_BIN"):
        return os.environ["TSREPRO_BIN"]
    beside = os.path.join(_paths.BIN_DIR, "tsrepro")
    if os.path.exists(beside):
        return beside
    return shutil.which("tsrepro") or "tsrepro"


_run_dir = None


def run_directory(root):
    """This process's run_<timestamp>-pid_<pid>/, made on first use, never an existing one."""
    global _run_dir
    if _run_dir is None:
        os.makedirs(root, exist_ok=True)
        base = os.path.abspath(os.path.join(root, "run_%s-pid_%d" % (
            datetime.datetime.now().strftime("%Y%m%d-%H%M%S"), os.getpid())))
        for attempt in itertools.count(1):
            candidate = base if attempt == 1 else "%s-%d" % (base, attempt)
            try:
                os.mkdir(candidate)  # the claim: fails when another run holds the name
            except FileExistsError:
                continue
            _run_dir = candidate
            break
        log.info("this run's cases go to %s", _run_dir)
    return _run_dir


# --- running the module the way the backend would, in this process ------------------------------

def _force_nnc_on_cpu():
    """The nnc backend's switches; jit leaves torch's defaults alone, as a program that sets none
    gets them (CPU fusion is off by default in 1.13 without LLVM, on in 2.6 with LLVM)."""
    torch._C._jit_override_can_fuse_on_cpu(True)
    torch._C._jit_set_texpr_fuser_enabled(True)
    torch._C._jit_set_te_must_use_llvm_cpu(torch._C._llvm_enabled())  # NNC's interpreter only without LLVM


def _inject_spec(backend):
    """'inject:segfault@aten::relu+aten::abs' -> ('segfault', ['aten::relu', 'aten::abs'])."""
    fault, _, ops = backend[len("inject:"):].partition("@")
    return fault, ops.split("+")


def _ops_of(module):
    graph = module.inlined_graph if hasattr(module, "inlined_graph") else module.graph
    found = set()

    def walk(block):
        for node in block.nodes():
            found.add(node.kind())
            for inner in node.blocks():
                walk(inner)
    walk(graph)
    return found


def _perturbed(value):
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value + 1
    if isinstance(value, tuple):
        return tuple(_perturbed(v) for v in value)
    if isinstance(value, list):
        return [_perturbed(v) for v in value]
    return value


class _InProcessBackend:
    """The backend's run in this process (what the program itself gets)."""

    def __init__(self, module, backend):
        self.module, self.backend = module, backend
        self.ofi = None
        self.fault = None
        if backend.startswith("inject:"):
            fault, ops = _inject_spec(backend)
            self.fault = fault if all(op in _ops_of(module) for op in ops) else None
            self.fault_ops = "+".join(ops)

    def __call__(self, inputs):
        if self.fault in ("compile-error", "runtime-error"):
            raise RuntimeError("tsrepro injected %s at %s" % (self.fault.replace("-", " "), self.fault_ops))
        if self.fault == "abort":
            os.abort()
        if self.fault == "segfault":
            signal.signal(signal.SIGSEGV, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGSEGV)
        if self.fault == "hang":
            while True:
                time.sleep(1)
        if self.backend == "eager":
            with torch.jit.optimized_execution(False):
                return self.module(*inputs)
        if self.backend == "ofi":
            if self.ofi is None:
                self.ofi = torch.jit.optimize_for_inference(torch.jit.freeze(self.module.eval()))
            return self.ofi(*inputs)
        if self.backend == "nnc":
            _force_nnc_on_cpu()
        out = self.module(*inputs)
        return _perturbed(out) if self.fault == "accuracy" else out


# --- the wrapper ----------------------------------------------------------------------------------

class Wrapped:
    def __init__(self, module, backend, backend_options):
        if not isinstance(module, torch.jit.ScriptModule):
            raise TsreproError("tsrepro.wrap: expected a scripted or traced module (torch.jit.script / torch.jit.trace)")
        self.module, self.backend = module, backend
        self.backend_options = dict(backend_options or {})
        self.settings = Settings.from_environment()
        self.id = next(_wrapped_count)
        self.run = _InProcessBackend(module, backend)
        self.checked_once = False
        self.model_path = None

    def __call__(self, *inputs):
        if self.settings.stage is None:
            return self.run(inputs)
        # The values as they were before the call: the run may change them in place.
        snapshot = [x.detach().clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        case_dir = None
        if self.settings.level >= 3:
            case_dir = self._dump(snapshot)
            log.info("wrote %s before running (if the program crashes: %s run %s --backend %s)",
                     case_dir, tsrepro_executable(), case_dir, self.backend)
        try:
            out = self.run(inputs)
        except Exception:
            self._after(case_dir or self._dump(snapshot))
            raise
        if not self.checked_once and (self.settings.level >= 4 or self.settings.stage == "fusion"):
            case_dir = case_dir or self._dump(snapshot)
            if self._after(case_dir) == 0:
                subprocess.run(["rm", "-rf", case_dir], check=True)
        elif case_dir:
            subprocess.run(["rm", "-rf", case_dir], check=True)  # it ran fine: only failures stay
        self.checked_once = True
        return out

    def _dump(self, inputs):
        """The module (once) and this call's real inputs, imported as RUN/graph_<id>/."""
        run_dir = run_directory(self.settings.directory)
        saved = os.path.join(run_dir, "python")
        os.makedirs(saved, exist_ok=True)
        if self.model_path is None:
            self.model_path = os.path.join(saved, "module_%d.pt" % self.id)
            torch.jit.save(self.module, self.model_path)
        inputs_path = os.path.join(saved, "inputs_%d.pt" % self.id)
        torch.save(list(inputs), inputs_path)
        case_dir = os.path.join(run_dir, "graph_%d" % self.id)
        subprocess.run(["rm", "-rf", case_dir], check=True)
        imported = subprocess.run([tsrepro_executable(), "import", self.model_path, "--inputs", inputs_path, "-o", case_dir],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        if imported.returncode != 0:
            raise TsreproError("tsrepro import of the wrapped module failed: " + imported.stderr.strip())
        return case_dir

    def _after(self, case_dir):
        """`tsrepro after`: the C++ workflow on the imported graph writes what the level asks."""
        command = [tsrepro_executable(), "after", case_dir, "--backend", self.backend, "--id", str(self.id)]
        for key, value in self.backend_options.items():
            command += ["--backend-opt", "%s=%s" % (key, value)]
        env = dict(os.environ, TSREPRO_RUN_DIR=run_directory(self.settings.directory))
        result = subprocess.run(command, env=env)
        if result.returncode < 0:
            log.warning("tsrepro after died by signal %d: the case %s reproduces the crash "
                        "(tsrepro run %s --backend %s)", -result.returncode, case_dir, case_dir, self.backend)
        return result.returncode


def wrap(module, backend="nnc", backend_options=None):
    """The module's forward under `backend`, with the TSREPRO_* workflow around it."""
    return Wrapped(module, backend, backend_options)
