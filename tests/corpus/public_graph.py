#!/usr/bin/python3
"""What PyTorch's own API does with a saved module, as a user's program gets it: its verdict and
the graph it optimizes.

    /usr/bin/python3 tests/corpus/public_graph.py MODEL.pt INPUTS.pt BACKEND[,BACKEND...] [--load-library LIB]

Each BACKEND is one of tsrepro's: jit (torch.jit.load(...)(*inputs) with the default settings), nnc
(the same with the TensorExpr fuser forced on for the CPU, as a user turns it on with
torch._C._jit_override_can_fuse_on_cpu and friends) or ofi
(torch.jit.optimize_for_inference(torch.jit.freeze(m.eval()))). The module runs three times under
torch.no_grad() (the profiling executor optimizes after its profiling run).

Prints one JSON object a line, one for each backend as it ends ("backend" names it), in the order
given: "status" is the public API's verdict, judged as tsrepro judges its own
backend: "pass", "accuracy" (the last call's outputs against the reference's, by the comparison
repro.py carries, repro/templates/repro_py/same.py, at tsrepro's default tolerance), "exception"
(a call raised) or "invalid" (the reference raised); the reference is the module run once with
the graph executor's optimizations off (the interpreter, as tsrepro's eager), and the fp64 one
the same on a float64 copy. "message" says why; "graph" is
torch.jit.last_executed_optimized_graph() after the last call: what `tsrepro run
--explain-backend` must match.

The backends share one process (one start of Python and torch instead of one each: the corpus test
asks for three on every model), so their order matters: the JIT switches are global, and nnc's stay
on once set, so nnc must come last (main() refuses another order). A backend that ends the process
(an abort, a signal) or hangs leaves the later ones without a line: the caller runs those again in
a process of their own.
"""

import copy
import json
import os
import re
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def default_tolerance():
    """tsrepro's default `tol`, read where it is defined (include/tsrepro/compare.h)."""
    with open(os.path.join(ROOT, "include", "tsrepro", "compare.h")) as f:
        return re.search(r"double tol = ([0-9.e+-]+);", f.read()).group(1)


def run_seed():
    """tsrepro's kRunSeed (include/tsrepro/run_spec.h): the global generators are seeded with it
    right before each compared call, so random ops (Tacotron2's always-on dropout) draw alike."""
    with open(os.path.join(ROOT, "include", "tsrepro", "run_spec.h")) as f:
        return int(re.search(r"uint64_t kRunSeed = ([0-9]+);", f.read()).group(1))


def load_difference():
    """difference(ref, res, ref64): the comparison every repro.py carries, with tsrepro's defaults
    (equal NaN, exact dtype, no --cos, no --ignore-non-fp): the template's lines tagged #[flag]
    kept as tsrepro's writer keeps them for those flags (repro/template_fill.h)."""
    flags = {"exact"}
    with open(os.path.join(ROOT, "repro", "templates", "repro_py", "same.py")) as f:
        lines = []
        for line in f:
            tag = re.search(r"\s*#\[(!?)(\w+)\]$", line.rstrip("\n"))
            if tag and (tag.group(2) in flags) == (tag.group(1) == "!"):
                continue
            lines.append(line[:tag.start()] + "\n" if tag else line)
    source = "".join(lines)
    for name, value in (("__TOL__", default_tolerance()), ("__EQUAL_NAN__", "True")):
        source = source.replace(name, value)
    scope = {"torch": torch}
    exec(compile(source, "same.py", "exec"), scope)
    return scope["difference"]


def leaves(value):
    """The tensors and scalars of an output, flattened (dict values in key order), as repro.py
    flattens its outputs."""
    if isinstance(value, dict):
        return [x for key in value for x in leaves(value[key])]
    if isinstance(value, (list, tuple)):
        return [x for item in value for x in leaves(item)]
    return [value]


def fresh(value, fp64=False):
    if isinstance(value, (list, tuple)):
        return type(value)(fresh(v, fp64) for v in value)
    if isinstance(value, dict):
        return {k: fresh(v, fp64) for k, v in value.items()}
    if torch.is_tensor(value):
        wide = fp64 and value.is_floating_point()
        return value.detach().to(torch.float64 if wide else None, copy=True)
    return value


def reference(model_path, inputs, fp64=False):
    """One call of the module with the executor's optimizations off: the interpreter runs the
    graph as written."""
    torch._C._get_graph_executor_optimize(False)
    try:
        module = torch.jit.load(model_path)
        if fp64:
            module = module.double()
        with torch.no_grad():
            arguments = fresh(inputs, fp64)
            torch.manual_seed(run_seed())
            return leaves(module(*arguments))
    finally:
        torch._C._get_graph_executor_optimize(True)


def backend_run(model_path, inputs, backend):
    module = torch.jit.load(model_path)  # in the mode it was saved in, as the program runs it
    torch._C._jit_set_te_must_use_llvm_cpu(torch._C._llvm_enabled())  # NNC's interpreter only without LLVM
    if backend == "nnc":
        torch._C._jit_set_texpr_fuser_enabled(True)
        torch._C._jit_override_can_fuse_on_cpu(True)
    elif backend == "ofi":
        module = torch.jit.optimize_for_inference(torch.jit.freeze(module.eval()))
    elif backend != "jit":
        raise SystemExit("public_graph.py: unknown backend %r (jit, nnc, ofi)" % backend)
    with torch.no_grad():
        for _ in range(2):
            # The earlier calls on copies, as tsrepro's runs are: a module that updates its own
            # state still starts the last call from the state the reference started from. A copy
            # shares the module's executor, so the last call runs what they optimized.
            copy.deepcopy(module)(*fresh(inputs))
        arguments = fresh(inputs)
        torch.manual_seed(run_seed())
        outputs = leaves(module(*arguments))
    # While the module lives: the last executed graph is held weakly, by its executor.
    return outputs, graph_text(torch.jit.last_executed_optimized_graph())


def graph_text(graph):
    """The graph as text. optimize_for_inference leaves MKLDNN tensor constants in it, and the
    printer reads a one-element tensor through a view, which MKLDNN tensors refuse: those are
    printed from dense copies (as tsrepro prints its own)."""
    if graph is None:
        return "None"
    graph = graph.copy()
    blocks = [graph]
    while blocks:
        for node in blocks.pop().nodes():
            if node.hasAttribute("value") and node.kindOf("value") == "t" and node.t("value").is_mkldnn:
                node.t_("value", node.t("value").to_dense())
            blocks.extend(node.blocks())
    return str(graph)


def verdict(model_path, inputs, backend):
    # The backend first, the reference after: it turns the executor's optimizations off a while.
    try:
        res, graph = backend_run(model_path, inputs, backend)
        backend_error = None
    except Exception as error:
        backend_error = error
    try:
        ref = reference(model_path, inputs)
    except Exception as error:
        return {"status": "invalid", "message": "reference raised %s: %s" % (type(error).__name__, error)}
    if backend_error is not None:
        text = str(backend_error).strip()
        return {"status": "exception", "message": "%s: %s" % (type(backend_error).__name__, text[-300:])}
    difference = load_difference()
    if len(ref) == len(res) and all(difference(a, b, a) is None for a, b in zip(ref, res)):
        return {"status": "pass", "message": "", "graph": graph}
    try:
        ref64 = reference(model_path, inputs, fp64=True)
    except Exception:
        ref64 = ref  # dtype-specific graphs have no fp64 reference: allclose alone judges
    differences = [difference(*sides) for sides in zip(ref, res, ref64)]
    failed = len(ref) != len(res) or any(why is not None for why in differences)
    message = "; ".join("output %d: %s" % (i, why) for i, why in enumerate(differences) if why is not None)
    return {"status": "accuracy" if failed else "pass", "message": message, "graph": graph}


def main(argv):
    libraries = [argv[i + 1] for i, a in enumerate(argv) if a == "--load-library" and i + 1 < len(argv)]
    positional = [a for i, a in enumerate(argv) if a != "--load-library" and (i == 0 or argv[i - 1] != "--load-library")]
    if len(positional) != 3:
        raise SystemExit(__doc__)
    for library in libraries:
        torch.ops.load_library(library)
    model_path, inputs_path, backends = positional
    backends = backends.split(",")
    if "nnc" in backends[:-1]:
        raise SystemExit("public_graph.py: nnc must be the last backend (its fuser switches stay on)")
    inputs = torch.load(inputs_path)
    for backend in backends:
        print(json.dumps(dict(verdict(model_path, inputs, backend), backend=backend)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
