"""tsrepro's env-var workflow for Python programs: TorchScript's TORCHDYNAMO_REPRO_AFTER.

    import tsrepro      # installed by `cmake --install`; from a build tree: PYTHONPATH=build/python
    fn = tsrepro.wrap(torch.jit.script(model), backend="nnc")
    out = fn(x)

`fn(*inputs)` runs the module the way the backend would in this process (backends/<id>/shim.py,
installed as tsrepro.backends.<id>: the TensorExpr fuser's switches, freezing, ...), or, for a
backend that cannot run here (fault injection, PyTorch 2's compilers), the way tsrepro runs it.
Without a backend, the one tsrepro judges programs under (backends/backends.def's "program").
With no TSREPRO_* variable set, that is all. With them it honours what the C++ side (tsrepro/after.h) does:

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

import importlib
import importlib.util
import inspect
import itertools
import json
import logging
import os
import shutil
import signal
import subprocess
import tempfile

import torch

from . import _defaults, _paths

__all__ = ["wrap", "Settings", "TsreproError", "tsrepro_executable"]

log = logging.getLogger("tsrepro")
if not log.handlers:
    _handler = logging.StreamHandler()
    _handler.setFormatter(logging.Formatter("[tsrepro %(asctime)s] [%(levelname)s] %(message)s", "%H:%M:%S"))
    log.addHandler(_handler)
    log.setLevel({"debug": logging.DEBUG, "warn": logging.WARNING}.get(os.environ.get("TSREPRO_LOG", ""), logging.INFO))
    log.propagate = False

_wrapped_count = itertools.count(1)

# torch 2.6's torch.load refuses what libtorch writes unless told the file is trusted (it is
# tsrepro's own); 1.13's has no such parameter.
_LOAD_TAKES_WEIGHTS_ONLY = "weights_only" in inspect.signature(torch.load).parameters


class TsreproError(RuntimeError):
    """A TSREPRO_* variable the shim cannot take, or a tsrepro step that could not run."""


class Settings:
    def __init__(self, stage, level, directory):
        self.stage, self.level, self.directory = stage, level, directory

    @staticmethod
    def from_environment():
        """The TSREPRO_* variables as tsrepro reads them (`tsrepro after --settings`): one reader
        for C++ programs, the capture library and this shim. No variable set: nothing to ask."""
        if not any(os.environ.get(name) for name in ("TSREPRO_AFTER", "TSREPRO_LEVEL", "TSREPRO_DIR")):
            return Settings(None, 1, "tsrepro_out")
        answer = _ask_tsrepro(["after", "--settings"])
        settings = json.loads(answer)
        return Settings(settings["stage"], settings["level"], settings["dir"])


def _ask_tsrepro(arguments):
    """tsrepro's one-line answer to `arguments`; TsreproError with its error line otherwise."""
    result = subprocess.run([tsrepro_executable()] + arguments, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            universal_newlines=True)
    if result.returncode != 0:
        lines = result.stderr.strip().splitlines()
        message = lines[-1] if lines else "exit status %d" % result.returncode
        raise TsreproError(message.replace("tsrepro: error: ", "", 1))
    return result.stdout.strip()


def tsrepro_executable():
    """$TSREPRO_BIN, else the tsrepro built or installed with this package, else PATH's."""
    if os.environ.get("TSREPRO_BIN"):
        return os.environ["TSREPRO_BIN"]
    beside = os.path.join(_paths.BIN_DIR, "tsrepro")
    if os.path.exists(beside):
        return beside
    return shutil.which("tsrepro") or "tsrepro"


_run_dir = None


def run_directory():
    """This process's run_<timestamp>-pid_<pid>/ under TSREPRO_DIR, claimed by tsrepro on first use
    (`tsrepro after --claim-run-dir`, as C++ programs claim theirs), never an existing one."""
    global _run_dir
    if _run_dir is None:
        _run_dir = _ask_tsrepro(["after", "--claim-run-dir", "--pid", str(os.getpid())])
        log.info("this run's cases go to %s", _run_dir)
    return _run_dir


# --- running the module the way the backend would, in this process ------------------------------

def run_by_tsrepro(module, backend, backend_options, inputs):
    """The backend's run made by tsrepro itself (`tsrepro after --outputs`), for a backend with no
    run in this process (no backends/<id>/shim.py): what it does is what the worker does, not an
    emulation of it (the inject test backend's faults, PyTorch 2's compilers): the outputs come
    back, a raised error is raised here, a crash kills this process with the same signal, a hang
    hangs."""
    scratch = tempfile.mkdtemp(prefix="tsrepro-run-")
    try:
        model, saved_inputs, case, outputs = (os.path.join(scratch, name)
                                              for name in ("model.pt", "inputs.pt", "case", "outputs.pt"))
        torch.jit.save(module, model)
        torch.save(list(inputs), saved_inputs)
        _ask_tsrepro(["import", model, "--inputs", saved_inputs, "-o", case])
        command = [tsrepro_executable(), "after", case, "--backend", backend, "--outputs", outputs]
        for key, value in backend_options.items():
            command += ["--backend-opt", "%s=%s" % (key, value)]
        # The run alone: the workflow around it is the wrapper's (Wrapped.__call__).
        env = {k: v for k, v in os.environ.items() if k not in ("TSREPRO_AFTER", "TSREPRO_LEVEL")}
        result = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                universal_newlines=True)
        if result.returncode < 0:
            signal.signal(-result.returncode, signal.SIG_DFL)
            os.kill(os.getpid(), -result.returncode)
        if result.returncode != 0:
            lines = result.stderr.strip().splitlines()
            line = lines[-1] if lines else "exit status %d" % result.returncode
            raise RuntimeError(line.split(" failed: ", 1)[-1])
        return torch.load(outputs, weights_only=False) if _LOAD_TAKES_WEIGHTS_ONLY else torch.load(outputs)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _backend_runner(module, backend, backend_options):
    """The backend's run in this process (what the program itself gets): backends/<id>/shim.py's
    `runner`, installed as tsrepro.backends.<id>; tsrepro runs a backend that has none."""
    shim = "tsrepro.backends." + backend.split(":", 1)[0]
    # Asked before importing: an ImportError raised inside a shim is that shim's error, not "none".
    if importlib.util.find_spec(shim) is None:
        return lambda inputs: run_by_tsrepro(module, backend, backend_options, inputs)
    return importlib.import_module(shim).runner(module, backend, backend_options)


# --- the wrapper ----------------------------------------------------------------------------------

class Wrapped:
    def __init__(self, module, backend, backend_options):
        if not isinstance(module, torch.jit.ScriptModule):
            raise TsreproError("tsrepro.wrap: expected a scripted or traced module (torch.jit.script / torch.jit.trace)")
        self.module, self.backend = module, backend
        self.backend_options = dict(backend_options or {})
        self.settings = Settings.from_environment()
        self.id = next(_wrapped_count)
        self.run = _backend_runner(module, backend, self.backend_options)
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
        run_dir = run_directory()
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
        env = dict(os.environ, TSREPRO_RUN_DIR=run_directory())
        result = subprocess.run(command, env=env)
        if result.returncode < 0:
            log.warning("tsrepro after died by signal %d: the case %s reproduces the crash "
                        "(tsrepro run %s --backend %s)", -result.returncode, case_dir, case_dir, self.backend)
        return result.returncode


def wrap(module, backend=_defaults.PROGRAM_BACKEND, backend_options=None):
    """The module's forward under `backend`, with the TSREPRO_* workflow around it."""
    return Wrapped(module, backend, backend_options)
