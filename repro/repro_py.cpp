// repro.py: a standalone Python reproducer of a case, for stock PyTorch.
//
// The script mirrors what tsrepro's runner does (runner/evaluate.cpp, runner/backends/,
// runner/compare.cpp, runner/inputs.cpp): reference in the script's own process, tested backend
// in a child process (a crash or hang becomes a verdict), same()-style comparison, the same
// verdict statuses and signatures. Everything taken from the case (IR text, names, values, the
// command line) goes through repro/python_literal.h: no case can inject code into the script.
//
// The source is assembled from fixed Python sections (below, as raw strings) and generated
// parts: the header comment, the settings, the IR text, the input specs and the backend table.
// Only the backends the case needs are included, so the script stays short enough to paste
// into a bug report.

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <torch/version.h>

#include "repro/python_literal.h"
#include "runner/extension_libraries.h"
#include "tsrepro/error.h"
#include "tsrepro/writer.h"

#ifndef TSREPRO_VERSION
#define TSREPRO_VERSION "unknown"
#endif

namespace tsrepro {
namespace {

// ---- Fixed Python sections ----------------------------------------------------------------------

constexpr const char* kImports = R"PY(
import cmath
import math
import multiprocessing
import os
import re
import signal
import sys
import tempfile
import time
from typing import Dict, List, Optional, Tuple  # noqa: F401 (CaseModule's annotations, where ofi runs)

import torch
from torch import Tensor  # noqa: F401
)PY";

constexpr const char* kInputsAndGraph = R"PY(
HERE = os.path.dirname(os.path.abspath(__file__))


def give_up(message):
    """The repro cannot run here: say why and exit 2 (neither reproduced nor healthy)."""
    print("repro.py: " + message, file=sys.stderr)
    sys.exit(2)


# ---- Inputs --------------------------------------------------------------------------------------

def load_inputs():
    """One value per graph input, on DEVICE."""
    if FAKE_INPUTS_SEED is None:
        values = load_saved_inputs(os.path.join(HERE, "inputs.pt"))
    else:
        values = [fake_input(spec, FAKE_INPUTS_SEED, i) for i, spec in enumerate(INPUT_SPECS)]
    if len(values) != len(INPUT_SPECS):
        give_up("inputs: the graph takes %d inputs, got %d" % (len(INPUT_SPECS), len(values)))
    return [to_device(value) for value in values]


def load_saved_inputs(path):
    # Written by tsrepro (torch::pickle_save of a tuple); it may hold int lists, which
    # torch.load's weights_only mode refuses: this file is your own case, so it is trusted.
    try:
        stored = torch.load(path, map_location="cpu", weights_only=False)
    except TypeError:  # a PyTorch without weights_only
        stored = torch.load(path, map_location="cpu")
    if isinstance(stored, (tuple, list)):
        return list(stored)
    if isinstance(stored, torch.Tensor):
        return [stored]
    give_up("%s: expected a tuple of inputs, got %s" % (path, type(stored).__name__))


def fake_input(spec, seed, index):
    """The value tsrepro's runner makes for a spec: tensor i from a generator seeded with seed + i."""
    kind = spec["kind"]
    scalar_types = {"int": int, "float": float, "bool": bool, "int[]": list, "str": str}
    if kind in scalar_types:
        return scalar_types[kind](spec["value"])
    if kind == "none":
        return None
    if kind != "tensor":
        give_up("input %r: cannot make a fake value of kind %r; use real inputs" % (spec["name"], kind))
    dtype = getattr(torch, spec["dtype"].replace("torch.", ""))
    generator = torch.Generator().manual_seed(seed + index)
    sizes, strides = spec["sizes"], spec["strides"]
    if strides_are_dense(sizes, strides):
        tensor = torch.empty_strided(sizes, strides, dtype=dtype)
    else:
        tensor = torch.empty(sizes, dtype=dtype)
    floating = dtype.is_floating_point or dtype.is_complex
    lo = spec["min"] if spec["min"] is not None else (-1.0 if floating else 0.0)
    hi = spec["max"] if spec["max"] is not None else (1.0 if floating else 1.0 if dtype == torch.bool else 9.0)
    lo, hi = min(lo, hi), max(lo, hi)
    if dtype == torch.bool:
        tensor.random_(0, 2, generator=generator)
    elif floating:
        if lo == hi:
            tensor.fill_(lo)
        else:
            tensor.uniform_(lo, hi, generator=generator)
    else:
        tensor.random_(math.ceil(lo), math.floor(hi) + 1, generator=generator)
    return tensor.to(spec.get("device", "cpu"))


def strides_are_dense(sizes, strides):
    """Strides that describe each element exactly once: only those keep their layout when filled."""
    if len(strides) != len(sizes):
        return False
    expected = 1
    for dim in sorted(range(len(sizes)), key=lambda d: strides[d]):
        if sizes[dim] == 1:
            continue
        if strides[dim] != expected:
            return False
        expected *= sizes[dim]
    return True


def to_device(value):
    if isinstance(value, torch.Tensor):
        return value.to(DEVICE)
    if isinstance(value, tuple):
        return tuple(to_device(item) for item in value)
    if isinstance(value, list):
        return [to_device(item) for item in value]
    return value


def clone_values(values):
    """Deep copies, so that no run sees another's in-place mutations."""
    def clone(value):
        if isinstance(value, torch.Tensor):
            return value.detach().clone().requires_grad_(value.requires_grad)
        if isinstance(value, tuple):
            return tuple(clone(item) for item in value)
        if isinstance(value, list):
            return [clone(item) for item in value]
        return value
    return [clone(value) for value in values]


def gradient_inputs():
    """Which inputs get gradients with --backward: floating user inputs, and the lifted ones that
    required grad in the module (parameters, not buffers)."""
    return [BACKWARD and (not spec.get("lifted") or spec.get("requires_grad", False)) for spec in INPUT_SPECS]


def fresh_inputs(inputs, with_grad):
    """Fresh copies for one run; inputs that get gradients become leaves that require grad."""
    copies = clone_values(inputs)
    for i, wanted in enumerate(with_grad):
        if wanted and isinstance(copies[i], torch.Tensor) and copies[i].is_floating_point():
            copies[i] = copies[i].detach().requires_grad_(True)
    return copies


def cast_floating_to_fp64(value):
    """The fp64 reference run's inputs: floating tensors as float64, nested containers followed."""
    if isinstance(value, torch.Tensor):
        if not value.is_floating_point() or value.dtype == torch.float64:
            return value
        copy = value.detach().to(torch.float64)
        return copy.requires_grad_(True) if value.requires_grad else copy
    if isinstance(value, tuple):
        return tuple(cast_floating_to_fp64(item) for item in value)
    if isinstance(value, list):
        return [cast_floating_to_fp64(item) for item in value]
    if isinstance(value, dict):
        return {key: cast_floating_to_fp64(item) for key, item in value.items()}
    return value


# ---- The graph -----------------------------------------------------------------------------------

def load_graph():
    for library in EXTENSION_LIBRARIES:  # the custom operators the graph calls
        torch.ops.load_library(library)
    graph = torch._C.parse_ir(GRAPH_IR)
    if DEVICE != "cpu":
        point_device_constants_at(graph, DEVICE)
    return graph


def point_device_constants_at(graph, device):
    """Every Device constant (nested blocks too) names DEVICE, as tsrepro's --device does."""
    for node in graph.findAllNodes("prim::Constant", True):
        if node.output().type().kind() == "DeviceObjType" and node.hasAttribute("value"):
            node.s_("value", str(torch.device(device)))


def output_count(graph):
    return len(list(graph.outputs()))


def unpack_outputs(result, count):
    """One Python value per graph output, from what a call returned."""
    if count == 0:
        return []
    return [result] if count == 1 else list(result)
)PY";

constexpr const char* kEagerBackend = R"PY(

# ---- Backends ------------------------------------------------------------------------------------
# prepare_<backend>(graph, sample_inputs) compiles (everything before the real run: a failure
# there is a compile error) and returns a callable: inputs -> list of outputs.

class InterpretedGraph:
    """eager: the TorchScript interpreter with no optimization passes at all."""

    def __init__(self, graph):
        self.graph = graph
        self.outputs = output_count(graph)

    def __call__(self, inputs):
        graph = self.graph.copy()  # _jit_interpret_graph writes the input types into its graph
        if hasattr(torch._C, "_jit_interpret_graph"):
            result = torch._C._jit_interpret_graph(graph, tuple(inputs))
        else:  # the plain executor with its optimizations off runs no passes either
            if self.outputs != 1:
                graph.makeMultiOutputIntoTuple()
            function = torch._C._create_function_from_graph("repro_eager", graph)
            with torch.jit.optimized_execution(False):
                result = function(*inputs)
        return unpack_outputs(result, self.outputs)

    def plan_ready(self):
        return True


def prepare_eager(graph, sample_inputs):
    return InterpretedGraph(graph.copy())
)PY";

constexpr const char* kProfilingExecutor = R"PY(

def set_jit_switch(name, *args):
    """Sets one of torch._C's global JIT switches; a PyTorch without it keeps its default."""
    setter = getattr(torch._C, name, None)
    if setter is not None:
        setter(*args)


def set_jit_switches(fuse_on_cpu=False, inlining=True, dynamic_shapes=False, reductions=False, strategy=None):
    """The global switches tsrepro sets around a profiling-executor backend. Each side runs in its
    own process, so they are set once and never restored."""
    set_jit_switch("_jit_set_profiling_executor", True)
    set_jit_switch("_jit_set_profiling_mode", True)
    set_jit_switch("_set_graph_executor_optimize", True)
    set_jit_switch("_jit_override_can_fuse_on_cpu", fuse_on_cpu)
    set_jit_switch("_jit_set_texpr_fuser_enabled", True)
    set_jit_switch("_debug_set_fusion_group_inlining", inlining)
    set_jit_switch("_jit_set_texpr_dynamic_shape_enabled", dynamic_shapes)
    set_jit_switch("_jit_set_texpr_reductions_enabled", reductions)
    # tsrepro's libtorch may lack LLVM: NNC's kernels run in its IR interpreter there, and so here.
    set_jit_switch("_jit_set_te_must_use_llvm_cpu", False)
    if strategy is not None:
        set_jit_switch("_jit_set_fusion_strategy", [(strategy.upper(), 2)])


def option_enabled(key, default):
    return BACKEND_OPTIONS.get(key, "1" if default else "0") in ("1", "true", "on")


class ProfiledGraph:
    """The profiling graph executor (what TorchScript runs by default), warmed up: its profiling
    runs happen here; the optimized plan is built on the first real run."""

    def __init__(self, graph, sample_inputs, dropped_inputs=(), outputs=None):
        self.outputs = output_count(graph) if outputs is None else outputs  # a tuple output may stand for several
        self.dropped_inputs = set(dropped_inputs)
        graph = graph.copy()
        if self.outputs != 1:  # the executor wants exactly one output: pack them in a tuple
            graph.makeMultiOutputIntoTuple()
        self.function = torch._C._create_function_from_graph("repro", graph)
        profiled_runs = getattr(torch._C, "_jit_get_num_profiled_runs", lambda: 1)()
        for _ in range(profiled_runs):
            self(clone_values(sample_inputs))

    def __call__(self, inputs):
        kept = [value for i, value in enumerate(inputs) if i not in self.dropped_inputs]
        return unpack_outputs(self.function(*kept), self.outputs)

    def plan_ready(self):
        """Whether the optimized plan exists: a failure before it is a compile error."""
        try:
            self.function.get_debug_state()  # asserts that the optimized plan exists
            return True
        except RuntimeError:
            return False
)PY";

constexpr const char* kJitBackend = R"PY(

def prepare_jit(graph, sample_inputs):
    """jit: the profiling executor with its default passes and fusion settings (no CPU fusion)."""
    set_jit_switches()
    return ProfiledGraph(graph, sample_inputs)
)PY";

constexpr const char* kNncBackend = R"PY(

def prepare_nnc(graph, sample_inputs):
    """nnc: the profiling executor with the TensorExpr fuser forced on for the CPU."""
    set_jit_switches(fuse_on_cpu=True,
                     inlining=option_enabled("inline", True),
                     dynamic_shapes=option_enabled("dynamic_shapes", False),
                     reductions=option_enabled("reductions", False),
                     strategy=BACKEND_OPTIONS.get("strategy"))
    return ProfiledGraph(graph, sample_inputs)
)PY";

constexpr const char* kOfiBackend = R"PY(

def prepare_ofi(graph, sample_inputs):
    """ofi: torch.jit.optimize_for_inference(torch.jit.freeze(m.eval())), m being CaseModule (the
    graph as a scripted module holds it, its lifted parameters as buffers). The frozen forward
    runs in the profiling executor."""
    global CASE_GRAPH
    set_jit_switches()
    lifted = [i for i, spec in enumerate(INPUT_SPECS) if spec.get("lifted")]
    packed = graph.copy()
    if output_count(graph) != 1:  # a function returns one value: several outputs become a tuple
        packed.makeMultiOutputIntoTuple()
    CASE_GRAPH = torch._C._create_function_from_graph("case_graph", packed)
    # m.eval() before freezing: the lifted `training` flags (named after their path, self.bn1.training
    # -> bn1_training) are False.
    module = torch.jit.script(CaseModule({"lifted_%d" % i: False if isinstance(sample_inputs[i], bool)
                                          and INPUT_SPECS[i]["name"].endswith("training") else sample_inputs[i]
                                          for i in lifted}).eval())
    frozen = torch.jit.freeze(module, optimize_numerics=option_enabled("numerics", True))
    if option_enabled("mkldnn", True):
        frozen = torch.jit.optimize_for_inference(frozen)
    else:  # tsrepro's debugging knob: optimize_for_inference's passes without the MKLDNN conversion
        run_pass("_jit_pass_fuse_frozen_conv_add_relu", frozen.graph)
        run_pass("_jit_pass_transpose_frozen_linear", frozen.graph)
    frozen_graph = frozen.graph.copy()
    frozen_graph.eraseInput(0)  # the frozen forward keeps its self, unused
    return ProfiledGraph(frozen_graph, sample_inputs, dropped_inputs=lifted, outputs=output_count(graph))


def run_pass(name, *args):
    graph_pass = getattr(torch._C, name, None)
    if graph_pass is None:
        print("note: this PyTorch has no torch._C.%s; skipped" % name)
        return
    graph_pass(*args)
)PY";

constexpr const char* kInjectBackend = R"PY(

def prepare_inject(graph, sample_inputs):
    """inject:<fault>@<op>[+<op>...]: tsrepro's test backend. It runs the interpreter but fails
    when every listed op is in the graph (nested blocks included)."""
    fault, op_text = BACKEND[len("inject:"):].split("@", 1)
    ops = op_text.split("+")
    graph = graph.copy()
    triggered = all(graph.findAllNodes(op, True) for op in ops)
    if triggered and fault == "compile-error":
        raise RuntimeError("tsrepro injected compile error at " + op_text)
    if triggered and fault == "accuracy":
        add_one_to_outputs_of(graph, ops[0])
    if not triggered or fault == "accuracy":
        return InterpretedGraph(graph)
    return FaultyGraph(InterpretedGraph(graph), fault, op_text)


def add_one_to_outputs_of(graph, op):
    """After every `op` node its tensor outputs get +1: a wrong answer that changes no dtype."""
    for node in graph.findAllNodes(op, True):
        for output in list(node.outputs()):
            if not output.type().isSubtypeOf(torch._C.TensorType.get()):
                continue
            with graph.insert_point_guard(node):
                one = graph.insertConstant(1)
            add = graph.create("aten::add", [output, one, one])
            add.insertAfter(node)
            add.output().setType(output.type())
            output.replaceAllUsesAfterNodeWith(add, add.output())


class FaultyGraph:
    def __init__(self, inner, fault, op_text):
        self.inner, self.fault, self.op_text = inner, fault, op_text

    def __call__(self, inputs):
        if self.fault == "runtime-error":
            raise RuntimeError("tsrepro injected runtime error at " + self.op_text)
        if self.fault == "abort":
            os.abort()
        if self.fault == "segfault":
            signal.signal(signal.SIGSEGV, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGSEGV)
        if self.fault == "hang":
            while True:
                time.sleep(1)
        return self.inner(inputs)

    def plan_ready(self):
        return True
)PY";

constexpr const char* kRunning = R"PY(

# ---- Running one side ----------------------------------------------------------------------------

def reduce_to_scalar_loss(out):
    """torch._dynamo.testing.reduce_to_scalar_loss: mean of each floating tensor, averaged."""
    if isinstance(out, torch.Tensor):
        if not out.is_floating_point() or out.numel() == 0 or not out.requires_grad:
            return None
        return out.sum() / out.numel()
    items = list(out) if isinstance(out, (tuple, list)) else []
    total = None
    for item in items:
        part = reduce_to_scalar_loss(item)
        if part is not None:
            total = part if total is None else total + part
    return total / len(items) if total is not None else None


def input_gradients(outputs, inputs):
    """Backpropagates the scalar loss of `outputs`: d loss / d input for every input (or None)."""
    loss = reduce_to_scalar_loss(tuple(outputs))
    if loss is not None:
        loss.backward()
    return [value.grad if isinstance(value, torch.Tensor) and value.is_floating_point() else None
            for value in inputs]


def detached(value):
    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, tuple):
        return tuple(detached(item) for item in value)
    if isinstance(value, list):
        return [detached(item) for item in value]
    if isinstance(value, dict):
        return {key: detached(item) for key, item in value.items()}
    return value


def run_reference(graph, inputs, with_grad):
    """The reference side, in this process (it is known to be healthy): outputs and gradients."""
    run_inputs = fresh_inputs(inputs, with_grad)
    prepared = BACKENDS[REFERENCE](graph, fresh_inputs(inputs, with_grad))
    outputs = prepared(run_inputs)
    grads = input_gradients(outputs, run_inputs) if any(with_grad) else []
    return detached(outputs), grads


class Failure(Exception):
    """A verdict that ends the evaluation early: an exception, crash or timeout of the backend."""

    def __init__(self, status, phase, signature, message):
        super().__init__(message)
        self.status, self.phase, self.signature, self.message = status, phase, signature, message


# ---- The tested backend, in a child process ------------------------------------------------------
# A crash or hang of the backend is observed here, not suffered: the child is killed after
# TIMEOUT_SECONDS, and a signal that kills it becomes the verdict.

def run_tested_backend():
    """Outputs and gradients of the tested backend, or raises Failure."""
    # A fork is cheap (no second `import torch`) and safe before this process has run anything;
    # CUDA does not survive a fork, so a CUDA repro starts a fresh interpreter instead.
    context = multiprocessing.get_context("fork" if DEVICE == "cpu" and hasattr(os, "fork") else "spawn")
    stage = context.Array("c", 16, lock=False)  # shared memory: readable even after a crash
    with tempfile.TemporaryDirectory(prefix="repro-") as scratch:
        result_path = os.path.join(scratch, "result.pt")
        child = context.Process(target=tested_backend_child, args=(result_path, stage))
        child.start()
        child.join(TIMEOUT_SECONDS)
        stage_name = stage.value.decode() or "start"
        if child.is_alive():
            child.kill()
            child.join()
            raise Failure("timeout", stage_name, "timeout",
                          "no answer within %g s during %s" % (TIMEOUT_SECONDS, stage_name))
        if child.exitcode < 0:
            name = signal_name(-child.exitcode)
            raise Failure("crash", stage_name, "crash:" + name,
                          "the backend process died by %s during %s" % (name, stage_name))
        if stage_name == "setup":
            give_up("the backend process failed before it could run the graph (its error is above)")
        if child.exitcode != 0 or not os.path.exists(result_path):
            raise Failure("crash", stage_name, "crash:exit %d" % child.exitcode,
                          "the backend process exited with status %d during %s" % (child.exitcode, stage_name))
        result = load_result(result_path)
    if "exception" in result:
        phase, kind, message = result["exception"]
        raise Failure("exception", phase, exception_signature(phase, kind, message), kind + ": " + message)
    return result["outputs"], result["grads"]


def tested_backend_child(result_path, stage):
    def enter(name):
        stage.value = name.encode()

    def finish(result):
        torch.save(result, result_path)

    enter("setup")
    inputs = load_inputs()
    with_grad = gradient_inputs()
    graph = load_graph()
    enter("compile")
    try:
        prepared = BACKENDS[BACKEND](graph, fresh_inputs(inputs, with_grad))
    except Exception as error:
        return finish({"exception": ("compile",) + describe_exception(error)})
    enter("run")
    run_inputs = fresh_inputs(inputs, with_grad)
    try:
        outputs = prepared(run_inputs)
    except Exception as error:
        # The profiling executor builds its optimized plan inside the first real run; tsrepro
        # builds it before: a failure while no plan exists yet is a compile error there.
        phase = "run" if prepared.plan_ready() else "compile"
        return finish({"exception": (phase,) + describe_exception(error)})
    grads = []
    if BACKWARD:
        enter("backward")
        try:
            grads = input_gradients(outputs, run_inputs)
        except Exception as error:
            return finish({"exception": ("backward",) + describe_exception(error)})
    finish({"outputs": detached(outputs), "grads": grads})


def load_result(path):
    try:
        return torch.load(path, weights_only=False)
    except TypeError:  # a PyTorch without weights_only
        return torch.load(path)


def describe_exception(error):
    """(type, message) as tsrepro names them: the TorchScript interpreter's traceback is
    unwrapped to the error it carries."""
    kind, message = type(error).__name__, str(error)
    if "The following operation failed in the TorchScript interpreter" in message:
        errors = list(re.finditer(r"(^|\n)([A-Za-z_.]*Error): ", message))
        if errors:
            kind, message = errors[-1].group(2), message[errors[-1].end():]
    return kind, message


def exception_signature(phase, kind, message):
    """exception:<phase>:<Type>: <first line> with addresses, paths and numbers masked."""
    first_line = next((line for line in message.split("\n") if line.strip(" \t\r")), "")
    masked = re.sub(r"0x[0-9a-fA-F]+", "0x?", first_line)
    masked = re.sub(r"(/[^\s:'\"(),]+)+", "<path>", masked)
    masked = re.sub(r"[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?", "N", masked)
    return "exception:%s:%s: %s" % (phase, kind, masked)


def signal_name(number):
    """The names tsrepro knows; others as "signal N", as tsrepro writes them."""
    for name in ("SIGSEGV", "SIGABRT", "SIGBUS", "SIGFPE", "SIGILL",
                 "SIGKILL", "SIGTERM", "SIGTRAP", "SIGSYS", "SIGPIPE"):
        if getattr(signal, name, None) == number:
            return name
    return "signal %d" % number
)PY";

constexpr const char* kComparison = R"PY(

# ---- Comparison: tsrepro's port of torch._dynamo.utils.same() ------------------------------------
# allclose at tol; where that fails, an fp64 reference run can still excuse a result whose RMSE
# against it is within a multiplier of the reference's own. Integer tensors must be equal
# exactly, shapes must match, tuples/lists/dicts are compared element by element.

LOOSE_TOL = 1e-2 * 4  # same(): ref has NaN where res and fp64 agree loosely: res is better
MIN_COSINE_SIMILARITY = 0.99


class Diff:
    """One compared leaf of the outputs: a tensor or a scalar."""

    def __init__(self, path, dtype, ok=True, max_abs=0.0, max_rel=0.0, reason=""):
        self.path, self.dtype, self.ok = path, dtype, ok
        self.max_abs, self.max_rel, self.reason = max_abs, max_rel, reason
        self.nonfinite_mismatches = 0


def mismatch(path, dtype, reason):
    return Diff(path, dtype, ok=False, max_abs=math.inf, max_rel=math.inf, reason=reason)


def compare_outputs(ref, res, fp64_ref):
    """Diffs for every leaf; `fp64_ref` may be None (then ref is its own fp64 reference)."""
    diffs = []
    if len(ref) != len(res):
        diffs.append(mismatch("", "outputs", "output count mismatch: %d vs %d" % (len(ref), len(res))))
    for i in range(min(len(ref), len(res))):
        fp64 = fp64_ref[i] if fp64_ref is not None and i < len(fp64_ref) else ref[i]
        compare_values(ref[i], res[i], fp64, str(i), diffs)
    return diffs


def compare_values(ref, res, fp64, path, diffs):
    if isinstance(ref, (tuple, list)) and isinstance(res, (tuple, list)):
        compare_sequences(ref, res, fp64, path, diffs)
    elif isinstance(ref, dict) and isinstance(res, dict):
        compare_dicts(ref, res, fp64, path, diffs)
    elif isinstance(ref, torch.Tensor) and isinstance(res, torch.Tensor):
        diffs.append(compare_tensors(ref, res, fp64, path))
    elif kind_name(ref) != kind_name(res):
        diffs.append(mismatch(path, kind_name(ref), "type mismatch: %s vs %s" % (kind_name(ref), kind_name(res))))
    else:
        diffs.append(compare_scalars(ref, res, path))


def child_path(parent, child):
    return child if not parent else parent + "." + child


def kind_name(value):
    if isinstance(value, torch.Tensor):
        return "Tensor"
    for kind, name in ((bool, "bool"), (int, "int"), (float, "float"), (complex, "complex"), (str, "str"),
                       (type(None), "None"), (torch.device, "device"), (tuple, "tuple"), (list, "list"),
                       (dict, "dict")):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def compare_sequences(ref, res, fp64, path, diffs):
    if len(ref) != len(res):
        diffs.append(mismatch(path, kind_name(ref), "length mismatch: %d vs %d" % (len(ref), len(res))))
        return
    # An fp64 counterpart of another shape is no reference at all: fall back to ref itself.
    if not isinstance(fp64, (tuple, list)) or len(fp64) != len(ref):
        fp64 = ref
    for i, (a, b, c) in enumerate(zip(ref, res, fp64)):
        compare_values(a, b, c, child_path(path, str(i)), diffs)


def compare_dicts(ref, res, fp64, path, diffs):
    if len(ref) != len(res):
        diffs.append(mismatch(path, "dict", "key count mismatch: %d vs %d" % (len(ref), len(res))))
        return
    for key, value in ref.items():
        key_path = child_path(path, dict_key_name(key))
        if key not in res:
            diffs.append(mismatch(key_path, kind_name(value), "key missing from the result"))
            continue
        counterpart = fp64.get(key, value) if isinstance(fp64, dict) else value
        compare_values(value, res[key], counterpart, key_path, diffs)


def dict_key_name(key):
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "True" if key else "False"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        return "%.6g" % key
    return type(key).__name__


def dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def comparable(tensor):
    """A plain dense CPU tensor: outputs may live on CUDA, require grad, be sparse or quantized."""
    plain = tensor.detach()
    if plain.is_sparse:
        plain = plain.to_dense()
    if plain.is_quantized:
        plain = plain.dequantize()
    return plain.cpu()


def compare_tensors(ref_in, res_in, fp64, path):
    ref, res = comparable(ref_in), comparable(res_in)
    diff = Diff(path, dtype_name(ref.dtype))
    if ref.shape == res.shape:
        diff.max_abs, diff.max_rel, diff.nonfinite_mismatches = measure_differences(ref, res)
    else:
        diff.max_abs = diff.max_rel = math.inf
    reason = tensor_failure(ref, res, fp64)
    if reason is not None:
        diff.ok, diff.reason = False, reason
    return diff


def measure_differences(ref, res):
    """max |res - ref| and max |res - ref| / |ref| (where ref != 0), in float64, over the
    elements where both are finite; and how many of the other elements differ."""
    if ref.numel() == 0:
        return 0.0, 0.0, 0
    wide = torch.complex128 if ref.is_complex() or res.is_complex() else torch.float64
    a, b = ref.to(wide), res.to(wide)
    finite = a.isfinite() & b.isfinite()
    agree = a == b
    if COMPARE["equal_nan"]:
        agree = agree | (a.isnan() & b.isnan())
    nonfinite_mismatches = int((~finite & ~agree).sum().item())
    abs_diff = (b - a).abs().masked_select(finite)
    if abs_diff.numel() == 0:
        return 0.0, 0.0, nonfinite_mismatches
    ref_abs = a.abs().masked_select(finite)
    rel_diff = (abs_diff / ref_abs).masked_fill(abs_diff == 0, 0.0).masked_select(ref_abs != 0)
    return abs_diff.max().item(), rel_diff.max().item() if rel_diff.numel() else 0.0, nonfinite_mismatches


def tensor_failure(ref, res, fp64):
    """None when the tensors match, else the reason they do not."""
    if COMPARE["exact_dtype"] and ref.dtype != res.dtype:
        return "dtype mismatch: %s vs %s" % (dtype_name(ref.dtype), dtype_name(res.dtype))
    # Without exact_dtype same() casts ref to res's dtype, so res's dtype decides the rule.
    exact_kind = not res.dtype.is_floating_point and not res.dtype.is_complex
    if exact_kind and COMPARE["ignore_non_fp"]:
        return None
    if ref.shape != res.shape:
        return "shape mismatch: %s vs %s" % (list(ref.shape), list(res.shape))
    if res.dtype == torch.bool:
        # same(): "triton stores bool as int8", so bools are compared as uint8 under allclose.
        if allclose(ref.to(torch.uint8), res.to(torch.uint8), COMPARE["equal_nan"]):
            return None
        return "bool tensors differ at %d of %d elements" % (unequal_count(ref.to(torch.bool), res), res.numel())
    if exact_kind:
        if torch.equal(ref.to(res.dtype), res):
            return None
        return "integer tensors differ at %d of %d elements" % (unequal_count(ref.to(res.dtype), res), res.numel())
    if COMPARE["cos_similarity"]:
        return cosine_failure(ref, res)
    return floating_failure(ref, res, fp64)


def allclose(ref, res, equal_nan, tol=None):
    tol = COMPARE["tol"] if tol is None else tol
    return torch.allclose(ref, res, rtol=tol, atol=tol, equal_nan=equal_nan)


def unequal_count(ref, res):
    return int(ref.ne(res).sum().item())


def cosine_failure(ref, res):
    ref_flat, res_flat = ref.flatten().to(torch.float32), res.flatten().to(torch.float32)
    # same(): allclose first, because the similarity of two zero vectors is 0.
    if allclose(ref_flat, res_flat, equal_nan=True):
        return None
    score = torch.nn.functional.cosine_similarity(ref_flat, res_flat, dim=0, eps=1e-6).item()
    if score >= MIN_COSINE_SIMILARITY:
        return None
    return "cosine similarity %.6g < %.6g" % (score, MIN_COSINE_SIMILARITY)


def floating_failure(ref_in, res, fp64_value):
    ref = ref_in if COMPARE["exact_dtype"] else ref_in.to(res.dtype)
    if allclose(ref, res, COMPARE["equal_nan"]):
        return None
    allclose_failed = "allclose failed at tol=%.6g" % COMPARE["tol"]
    fp64_ref = usable_fp64_reference(fp64_value, ref, res)
    if fp64_ref is None:
        return None if COMPARE["ignore_non_fp"] else allclose_failed + " and there is no fp64 reference"
    if ref_has_nan_that_res_avoids(ref, res, fp64_ref):
        return None
    return rmse_failure(ref, res, fp64_ref, allclose_failed)


def usable_fp64_reference(fp64_value, ref, res):
    """same() uses the fp64 run only when it produced float64 of ref's shape."""
    if not isinstance(fp64_value, torch.Tensor) or not res.is_floating_point():
        return None
    if fp64_value.dtype != torch.float64 or fp64_value.shape != ref.shape:
        return None
    return comparable(fp64_value)


def ref_has_nan_that_res_avoids(ref, res, fp64_ref):
    return (not fp64_ref.isnan().any().item() and not res.isnan().any().item() and ref.isnan().any().item()
            and allclose(fp64_ref.to(res.dtype), res, COMPARE["equal_nan"], tol=LOOSE_TOL))


def rmse(fp64_ref, tensor):
    return (fp64_ref - tensor.to(torch.float64)).square().mean().sqrt().item()


def rmse_failure(ref, res, fp64_ref, allclose_failed):
    """same()'s RMSE rule over the elements where both references are finite; the others must
    match ref's inf/NaN pattern (one inf in ref would otherwise excuse any result)."""
    finite = ref.isfinite() & fp64_ref.isfinite()
    failures = []
    nonfinite_count = int((~finite).sum().item())
    if nonfinite_count:
        a, b = ref.masked_select(~finite).to(torch.float64), res.masked_select(~finite).to(torch.float64)
        agree = a == b
        if COMPARE["equal_nan"]:
            agree = agree | (a.isnan() & b.isnan())
        differing = int((~agree).sum().item())
        if differing:
            failures.append("%d of the %d elements where a reference is inf or NaN differ from it"
                            % (differing, nonfinite_count))
    if nonfinite_count < ref.numel():
        fp64_finite = fp64_ref.masked_select(finite)
        ref_error = rmse(fp64_finite, ref.masked_select(finite))
        res_error = rmse(fp64_finite, res.masked_select(finite))
        multiplier = rmse_multiplier(ref, res, fp64_ref)
        threshold = multiplier * ref_error + COMPARE["tol"] / 10.0
        if not res_error <= threshold:
            failures.append("RMSE(res,fp64)=%.6g > %.6g*RMSE(ref,fp64)+tol/10=%.6g (RMSE(ref,fp64)=%.6g, over the "
                            "%d elements where both references are finite)"
                            % (res_error, multiplier, threshold, ref_error, ref.numel() - nonfinite_count))
    if not failures:
        return None
    return " and ".join([allclose_failed] + failures)


def rmse_multiplier(ref, res, fp64_ref):
    """same()'s get_multiplier(): 3 for fp16/bf16 results, small tensors, 1x1 kernels and
    large tolerances, else 2."""
    multiplier = 3.0 if res.dtype in (torch.float16, torch.bfloat16) else 2.0
    one_by_one_kernel = ref.dim() == 4 and ref.shape[-1] == 1 and ref.shape[-2] == 1
    if fp64_ref.numel() < 1000 or one_by_one_kernel or COMPARE["tol"] >= 2 * 1e-2:
        multiplier = 3.0
    return multiplier


def compare_scalars(ref, res, path):
    diff = Diff(path, kind_name(ref))
    if isinstance(ref, (float, complex)):
        measure_scalar(ref, res, diff)
        if not numbers_close(ref, res) and not COMPARE["ignore_non_fp"]:
            diff.ok = False
            diff.reason = "values differ beyond tol=%.6g: %s vs %s" % (
                COMPARE["tol"], scalar_text(ref), scalar_text(res))
        return diff
    if kind_name(ref) == "int":
        measure_scalar(ref, res, diff)
    if not COMPARE["ignore_non_fp"] and not values_equal(ref, res):
        diff.ok = False
        diff.reason = "values differ: %s vs %s" % (scalar_text(ref), scalar_text(res))
    return diff


def numbers_close(ref, res):
    """same() on floats: allclose(ref, res, atol=tol, rtol=tol, equal_nan)."""
    a, b = complex(ref), complex(res)
    if cmath.isnan(a) or cmath.isnan(b):
        return cmath.isnan(a) and cmath.isnan(b) and COMPARE["equal_nan"]
    if a == b:  # equal infinities
        return True
    return abs(a - b) <= COMPARE["tol"] + COMPARE["tol"] * abs(b)


def measure_scalar(ref, res, diff):
    a, b = complex(ref), complex(res)
    diff.max_abs = 0.0 if a == b else abs(b - a)
    diff.max_rel = 0.0 if abs(a) == 0 or diff.max_abs == 0 else diff.max_abs / abs(a)


def values_equal(ref, res):
    try:
        return bool(ref == res)
    except Exception:
        return False


def scalar_text(value):
    if isinstance(value, float):
        return "%.6g" % value
    if isinstance(value, str):
        return "'" + value + "'"
    return str(value)


def compare_sides(ref, res, fp64):
    """Outputs followed by input gradients (paths "grad.<i>"): one comparison covers both."""
    ref_outputs, ref_grads = ref
    res_outputs, res_grads = res
    diffs = compare_outputs(ref_outputs, res_outputs, fp64[0] if fp64 else None)
    if ref_grads:
        for diff in compare_outputs(ref_grads, res_grads, fp64[1] if fp64 and fp64[1] else None):
            diff.path = "grad." + diff.path
            diffs.append(diff)
    return diffs
)PY";

constexpr const char* kVerdictAndMain = R"PY(

# ---- Verdict -------------------------------------------------------------------------------------

def evaluate():
    """(status, phase, signature, message, diffs), as tsrepro judges a candidate."""
    try:
        res = run_tested_backend()
    except Failure as failure:
        res = failure
    inputs = load_inputs()
    with_grad = gradient_inputs()
    graph = load_graph()
    try:
        ref = run_reference(graph, inputs, with_grad)
    except Exception as error:
        kind, message = describe_exception(error)
        return "invalid", "ref", "", "the reference (%s) fails on this graph: %s: %s" % (REFERENCE, kind, message), []
    if isinstance(res, Failure):
        return res.status, res.phase, res.signature, res.message, []
    diffs = compare_sides(ref, res, None)
    if any(not diff.ok for diff in diffs) and COMPARE["use_fp64"]:
        # Only now is the fp64 run worth its cost: it can excuse a float32 result that is merely noisy.
        try:
            fp64 = run_reference(graph, [cast_floating_to_fp64(value) for value in inputs], with_grad)
            diffs = compare_sides(ref, res, fp64)
        except Exception:
            pass  # no fp64 reference for this graph (dtype-specific ops): allclose alone decides
    worst = next((diff for diff in diffs if not diff.ok), None)
    if worst is None:
        return "pass", "", "", "", diffs
    return "accuracy", "run", "accuracy:" + worst.dtype, describe_diff(worst), diffs


def describe_diff(diff):
    text = "output %s (%s): max_abs %g, max_rel %g" % (diff.path, diff.dtype, diff.max_abs, diff.max_rel)
    if diff.nonfinite_mismatches:
        text += ", %d inf/NaN elements differ" % diff.nonfinite_mismatches
    return text + (": " + diff.reason if diff.reason else "")


def reproduces(status, signature):
    if not EXPECTED_KIND:  # no failure was recorded: any failure counts
        return status not in ("pass", "invalid")
    if status != EXPECTED_KIND:
        return False
    # A crash must be the same signal (crash:SIGSEGV is not crash:SIGABRT).
    return status != "crash" or not EXPECTED_SIGNATURE or signature == EXPECTED_SIGNATURE


def check_device():
    if DEVICE != "cpu" and torch.device(DEVICE).type == "cuda" and not torch.cuda.is_available():
        give_up("this repro runs on %s, but this PyTorch sees no CUDA device (torch.cuda.is_available() "
                "is False): run it on a machine with a GPU" % DEVICE)


def main():
    check_device()
    print("repro: %s vs %s on %s%s, PyTorch %s" % (REFERENCE, BACKEND, DEVICE, " with backward" if BACKWARD else "",
                                                 torch.__version__))
    started = time.monotonic()
    status, phase, signature, message, diffs = evaluate()
    for diff in diffs:
        print("  output %-8s %-9s max_abs %-12g max_rel %-12g %s" % (
            diff.path, diff.dtype, diff.max_abs, diff.max_rel, "ok" if diff.ok else "FAIL: " + diff.reason))
    print("verdict: %s%s, %.1f s" % (status, " (phase %s)" % phase if phase else "", time.monotonic() - started))
    if signature:
        print("signature: " + signature)
    if message:
        print("message: " + message)
    reproduced = reproduces(status, signature)
    expected = (EXPECTED_KIND or "any failure") + (" (%s)" % EXPECTED_SIGNATURE if EXPECTED_SIGNATURE else "")
    print("expected: %s: %s" % (expected, "reproduced (exit 1)" if reproduced else "not reproduced (exit 0)"))
    return 1 if reproduced else 0


if __name__ == "__main__":
    sys.exit(main())
)PY";

// ---- Generated parts ----------------------------------------------------------------------------

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

// What the header says the repro was made on: /proc/cpuinfo's model name (x86) or the
// equivalent line of other architectures.
std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trimmed(line.substr(0, colon));
    const std::string value = trimmed(line.substr(colon + 1));
    if ((key == "model name" || key == "Hardware" || key == "cpu model") && !value.empty()) return value;
  }
  return "an unknown CPU";
}

// "nnc" for "nnc", "inject" for "inject:segfault@aten::relu".
std::string backend_family(const std::string& spec) { return spec.substr(0, spec.find(':')); }

void check_backend_has_python_version(const std::string& spec) {
  if (!find_backend(spec))
    throw UserError("repro.py: unknown backend '" + spec + "' (known: " + known_backends_text() + ")");
  // The backends with a Python version below (a new backend needs one before it gets a repro.py).
  static const std::set<std::string> kWithPythonVersion = {"eager", "jit", "nnc", "ofi", "inject"};
  if (!kWithPythonVersion.count(backend_family(spec)))
    throw UserError("repro.py: backend '" + spec + "' has no Python version yet (repro/repro_py.cpp)");
  if (backend_family(spec) == "inject" && spec.find('@') == std::string::npos)
    throw UserError("repro.py: backend '" + spec + "': write inject:<fault>@<op>");
}

std::string options_text(const BackendOptions& options) {
  std::string text;
  for (const auto& [key, value] : options) text += (text.empty() ? "" : ", ") + key + "=" + value;
  return text.empty() ? "" : " (" + text + ")";
}

bool uses_fake_inputs(const Case& c, const ReproSettings& settings) {
  return settings.run.fake_inputs || !c.values.has_value();  // a fake-only case has no inputs.pt
}

std::string header_comment(const Case& c, const ReproSettings& s) {
  std::ostringstream out;
  out << "#!/usr/bin/env python3\n"
      << "# Reproducer made by tsrepro " << TSREPRO_VERSION << " with libtorch " << TORCH_VERSION << " on "
      << python_comment_text(cpu_model_name()) << ".\n";
  if (!s.command_line.empty()) out << "# Command: " << python_comment_text(s.command_line) << "\n";
  out << "# Expected failure: "
      << (s.expected_kind.empty() ? "none recorded (any failure counts)" : python_comment_text(s.expected_kind));
  if (!s.expected_signature.empty()) out << ", signature " << python_comment_text(s.expected_signature);
  out << "\n# Reference " << python_comment_text(s.run.ref) << " vs backend " << python_comment_text(s.run.backend)
      << python_comment_text(options_text(s.run.backend_options)) << " on " << python_comment_text(s.run.device)
      << (s.run.backward ? ", with backward" : "") << ".\n# Inputs: "
      << (uses_fake_inputs(c, s) ? "fake, seed " + std::to_string(s.run.seed)
                                 : std::string("inputs.pt beside this file"))
      << ".\n"
      << "#\n"
      << "# Needs only PyTorch: `python3 repro.py` runs the graph below in the reference and in the\n"
      << "# tested backend (in a child process, so that a crash or a hang is observed, not suffered),\n"
      << "# compares the outputs like torch._dynamo.utils.same() and prints a verdict. Exit status:\n"
      << "# 1 when the expected failure reproduces, 0 when it does not, 2 when it cannot run here.\n";
  return out.str();
}

const char* python_bool(bool value) { return value ? "True" : "False"; }

std::string settings_block(const Case& c, const ReproSettings& s) {
  nlohmann::json options = nlohmann::json::object();
  for (const auto& [key, value] : s.run.backend_options) options[key] = value;
  const CompareOptions& cmp = s.run.compare;
  std::ostringstream out;
  out << "# ---- How tsrepro saw the failure " << std::string(65, '-') << "\n\n"
      << "REFERENCE = " << python_string_literal(s.run.ref) << "\n"
      << "BACKEND = " << python_string_literal(s.run.backend) << "\n"
      << "BACKEND_OPTIONS = " << python_literal(options) << "\n"
      << "DEVICE = " << python_string_literal(s.run.device) << "\n"
      << "BACKWARD = " << python_bool(s.run.backward) << "\n"
      << "# None: read inputs.pt beside this file; a number: make tsrepro's seeded fake inputs.\n"
      << "FAKE_INPUTS_SEED = " << (uses_fake_inputs(c, s) ? std::to_string(s.run.seed) : "None") << "\n"
      << "TIMEOUT_SECONDS = " << python_float_literal(s.run.timeout_seconds) << "  # a slower backend counts as hung\n"
      << "COMPARE = dict(tol=" << python_float_literal(cmp.tol)
      << ", cos_similarity=" << python_bool(cmp.cos_similarity) << ", equal_nan=" << python_bool(cmp.equal_nan)
      << ", exact_dtype=" << python_bool(cmp.exact_dtype)
      << ",\n               ignore_non_fp=" << python_bool(cmp.ignore_non_fp)
      << ", use_fp64=" << python_bool(cmp.use_fp64) << ")\n"
      << "EXPECTED_KIND = " << python_string_literal(s.expected_kind)
      << "  # the verdict status that means \"reproduced\"\n"
      << "EXPECTED_SIGNATURE = " << python_string_literal(s.expected_signature) << "\n"
      << "EXTENSION_LIBRARIES = [";
  for (const std::string& library : loaded_extension_libraries())
    out << python_string_literal(library) << (library == loaded_extension_libraries().back() ? "" : ", ");
  out << "]  # loaded with torch.ops.load_library before the graph is read\n";
  return out.str();
}

// The IR text as one literal per line, so that the script reads (and pastes) like the graph.
std::string graph_ir_block(const std::string& ir) {
  if (ir.empty()) return "GRAPH_IR = \"\"\n";
  std::string out = "GRAPH_IR = (\n";
  for (size_t start = 0; start < ir.size();) {
    size_t end = ir.find('\n', start);
    end = end == std::string::npos ? ir.size() : end + 1;
    out += "    " + python_string_literal(std::string_view(ir).substr(start, end - start)) + "\n";
    start = end;
  }
  return out + ")\n";
}

// One dict per graph input, in order: what tsrepro knows of it (case.json's "inputs"). Fields at
// their defaults (device cpu, no grad, not lifted) are left out to keep the lines short.
std::string input_spec_literal(const InputSpec& spec) {
  std::vector<std::pair<std::string, nlohmann::json>> fields = {{"name", spec.name}, {"kind", spec.kind}};
  if (spec.kind == "tensor") {
    fields.insert(fields.end(), {{"dtype", spec.dtype}, {"sizes", spec.sizes}, {"strides", spec.strides}});
    if (spec.device != "cpu") fields.emplace_back("device", spec.device);
    fields.emplace_back("min", spec.min ? nlohmann::json(*spec.min) : nlohmann::json());
    fields.emplace_back("max", spec.max ? nlohmann::json(*spec.max) : nlohmann::json());
  } else {
    fields.emplace_back("value", spec.value);
  }
  if (spec.requires_grad) fields.emplace_back("requires_grad", true);
  if (spec.lifted) fields.emplace_back("lifted", true);
  std::string dict;
  for (const auto& [key, value] : fields)
    dict += (dict.empty() ? "" : ", ") + python_string_literal(key) + ": " + python_literal(value);
  return "{" + dict + "}";
}

std::string input_specs_block(const std::vector<InputSpec>& specs) {
  std::string out = "INPUT_SPECS = [\n";
  for (const InputSpec& spec : specs) {
    out += "    " + input_spec_literal(spec) + ",";
    if (spec.lifted && !spec.lifted_from.empty()) out += "  # " + python_comment_text(spec.lifted_from);
    out += "\n";
  }
  return out + "]\n";
}

// The prepare_* function behind each backend spec the script uses.
std::string backend_table(const ReproSettings& s) {
  std::string table;
  std::set<std::string> listed;
  for (const std::string& spec : {s.run.ref, s.run.backend}) {
    if (!listed.insert(spec).second) continue;
    table += (table.empty() ? "" : ", ") + python_string_literal(spec) + ": prepare_" + backend_family(spec);
  }
  return "BACKENDS = {" + table + "}\n";
}

// ofi freezes a module: CaseModule is the case's graph as a scripted module holds it, its lifted
// inputs as buffers. Its forward takes the graph's other inputs, with their TorchScript types.
std::string case_module_block(const Case& c) {
  std::string parameters, arguments;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const std::string name = "in_" + std::to_string(i);
    if (c.inputs[i].lifted) {
      arguments += (arguments.empty() ? "" : ", ") + std::string("self.lifted_") + std::to_string(i);
      continue;
    }
    parameters += ", " + name + ": " + c.graph->inputs()[i]->type()->annotation_str();
    arguments += (arguments.empty() ? "" : ", ") + name;
  }
  return "CASE_GRAPH = None  # the graph as a TorchScript function, made by prepare_ofi\n\n\n"
         "class CaseModule(torch.nn.Module):\n"
         "    \"\"\"The graph as a scripted module holds it: the lifted parameters and buffers are buffers.\"\"\"\n\n"
         "    def __init__(self, lifted):\n"
         "        super().__init__()\n"
         "        for name, value in lifted.items():\n"
         "            if isinstance(value, torch.Tensor):\n"
         "                self.register_buffer(name, value)\n"
         "            else:  # a scalar attribute (training, eps, ...): scripting infers its type\n"
         "                setattr(self, name, value)\n\n"
         "    def forward(self" +
         parameters +
         "):\n"
         "        return CASE_GRAPH(" +
         arguments + ")\n";
}

// Only the backend sections the case needs: the script stays short enough to paste.
std::vector<const char*> backend_sections(const ReproSettings& s) {
  std::set<std::string> families = {"eager", backend_family(s.run.ref), backend_family(s.run.backend)};
  std::vector<const char*> sections = {kEagerBackend};
  if (families.count("jit") || families.count("nnc") || families.count("ofi")) sections.push_back(kProfilingExecutor);
  if (families.count("jit")) sections.push_back(kJitBackend);
  if (families.count("nnc")) sections.push_back(kNncBackend);
  if (families.count("ofi")) sections.push_back(kOfiBackend);
  if (families.count("inject")) sections.push_back(kInjectBackend);
  return sections;
}

// Appends a top-level section with the two blank lines PEP 8 puts between them.
void append_section(std::string& source, const std::string& section) {
  const auto first = section.find_first_not_of('\n');
  if (first == std::string::npos) return;
  const auto last = section.find_last_not_of('\n');
  if (!source.empty()) source += "\n\n";
  source += section.substr(first, last - first + 1) + "\n";
}

}  // namespace

std::string repro_py_source(const Case& c, const ReproSettings& settings) {
  check_backend_has_python_version(settings.run.ref);
  check_backend_has_python_version(settings.run.backend);
  std::string source = header_comment(c, settings);
  source += kImports;  // directly under the header, one blank line apart
  append_section(source, settings_block(c, settings));
  append_section(source, "# ---- The case: graph.ir and the inputs of case.json " + std::string(46, '-') + "\n\n" +
                             graph_ir_block(graph_to_ir(*c.graph)) + "\n" + input_specs_block(c.inputs));
  append_section(source, kInputsAndGraph);
  for (const char* section : backend_sections(settings)) append_section(source, section);
  if (backend_family(settings.run.backend) == "ofi" || backend_family(settings.run.ref) == "ofi")
    append_section(source, case_module_block(c));
  append_section(source, backend_table(settings));
  append_section(source, kRunning);
  append_section(source, kComparison);
  append_section(source, kVerdictAndMain);
  return source;
}

}  // namespace tsrepro
