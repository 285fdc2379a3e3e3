#!/usr/bin/env python3
# __TITLE__
# Made by tsrepro __VERSION__ (libtorch __LIBTORCH__, __CPU__); expected failure: __EXPECTED_TEXT__.
# Seen with torch __TORCH_VERSION__, Python __PYTHON_VERSION__, __CXX_COMPILER__.  #[pt2_versions]
# Command: __COMMAND__  #[command]
# Its nodes came from: __NODE_ORIGINS__  #[origins]
# Bisected to: __BISECTED__  #[bisected]
# It runs right with PyTorch's CompilerBisector stopped just before that: __RUNS_RIGHT_WITH__ python3 repro.py  #[runs_right_with]
# Exit 1: reproduced, 0: not, 2: cannot run here. Full harness: tsrepro run <case dir>.
# The graph stays IR text (torch._C.parse_ir) here: __IR_FORM_REASON__.  #[ir_form_reason]
import io  #[case_module]
import math  #[math]
import os  #[os]
import signal
import subprocess  #[repeat]
import sys
__TYPING_IMPORT__

import torch
import torch._inductor.config  # the torch._inductor.config values that were not the defaults when tsrepro ran  #[compiler_config]
__COMPILER_CONFIG__  #[compiler_config]

for library in __LIBRARIES__:  # the custom operators the graph calls  #[libraries]
    if not os.path.exists(library):  #[libraries]
        print("repro.py: the library of custom operators %s is not here" % library)  #[libraries]
        sys.exit(2)  #[libraries]
    torch.ops.load_library(library)  #[libraries]
for package in __LIBRARY_PACKAGES__:  # the Python packages they are part of: as a program using their operators does  #[library_packages]
    try:  #[library_packages]
        __import__(package)  # its Python side registers what torch.export needs of them (fake kernels)  #[library_packages]
    except ImportError:  # not importable here (not on sys.path): the library alone is loaded, as above  #[library_packages]
        pass  #[library_packages]
__BACKEND_HEADS__
def strict_fusion_objects(graph):  # IR text writes a torch.jit.strict_fusion block's object as a string: the object again, as the executor checks it  #[strict_fusion_ir]
    def block():  #[strict_fusion_ir]
        with torch.jit.strict_fusion():  #[strict_fusion_ir]
            pass  #[strict_fusion_ir]
    cls = next(n for n in torch.jit.script(block).graph.nodes() if n.kind() == "prim::CreateObject").output().type()  #[strict_fusion_ir]
    for marker in [n for n in graph.nodes() if n.kind() == "prim::Constant" and n.output().toIValue() == "torch.jit.strict_fusion"]:  #[strict_fusion_ir]
        with graph.insert_point_guard(marker):  #[strict_fusion_ir]
            created = graph.insertNode(graph.create("prim::CreateObject"))  #[strict_fusion_ir]
        created.output().setType(cls)  #[strict_fusion_ir]
        for use in [u for u in marker.output().uses() if u.user.kind() in ("prim::Enter", "prim::Exit")]:  #[strict_fusion_ir]
            use.user.replaceInput(use.offset, created.output())  #[strict_fusion_ir]
    return graph  #[strict_fusion_ir]
#[strict_fusion_ir]
#[strict_fusion_ir]
GRAPH = torch._C.parse_ir(  #[!module]
    __GRAPH_IR__)  #[!module]
strict_fusion_objects(GRAPH)  #[strict_fusion_ir]
GRAPH.makeMultiOutputIntoTuple()  # a TorchScript function returns one value: its outputs become a tuple  #[packed]
EDITED = torch._C.parse_ir(  # GRAPH as the backend edits it, __EDIT__  #[edited]
    __EDITED_IR__)  #[edited]
CASE_MODULE = (  # torch.jit.save of GRAPH as the forward of a module in eval mode, its lifted inputs as buffers  #[case_module_inline]
    __CASE_MODULE_BYTES__)  #[case_module_inline]
CASE_MODULE = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "case_module.pt"), "rb").read()  #[case_module_file]
__INPUT_HELPER__
__CLASSES__
INPUTS = __INPUTS__

RUN_SEED = __RUN_SEED__  # each compared call starts from torch.manual_seed(RUN_SEED): random ops draw alike  #[random]


def fresh(value, fp64=False):  # a copy on DEVICE for one run (ops may mutate inputs); fp64: floats as float64
    if isinstance(value, (list, tuple)):
        return type(value)(fresh(v, fp64) for v in value)
    if isinstance(value, dict):
        return {k: fresh(v, fp64) for k, v in value.items()}
    wide = fp64 and isinstance(value, torch.Tensor) and value.is_floating_point()
    return value.detach().to(__DEVICE__, torch.float64 if wide else None, copy=True) if torch.is_tensor(value) else value


def leaves(v):  # flattened: lists and tuples in order, a dict as each key (sorted) then its value
    if isinstance(v, dict):
        return [x for k in sorted(v, key=repr) for x in [k] + leaves([v[k]])]
    return [x for i in v for x in (leaves(i) if isinstance(i, (list, tuple, dict)) else [i])]


__SECTIONS__


if __name__ == "__main__" and "TSREPRO_REPRO_RUN" not in os.environ:  # a flaky failure: __REPEAT__ runs, each a fresh process  #[repeat]
    codes = [subprocess.call([sys.executable, __file__], env=dict(os.environ, TSREPRO_REPRO_RUN=str(run))) for run in range(__REPEAT__)]  #[repeat]
    failed = sum(code not in (0, 2) for code in codes)  # 1, or the signal of a crash  #[repeat]
    print("failed %d of %d runs (tsrepro saw __FAILED_RUNS__ of __RUNS__)" % (failed, len(codes)))  #[repeat]
    sys.exit(1 if failed else 2 if 2 in codes else 0)  #[repeat]
if __name__ == "__main__":
    if not torch.cuda.is_available():  #[cuda]
        print("repro.py: this repro runs on CUDA, but this PyTorch sees no CUDA device")  #[cuda]
        sys.exit(2)  #[cuda]
    ref = None
    try:
        ref = leaves([reference(fresh(INPUTS))])  # the reference runs first: it is healthy
        signal.alarm(__TIMEOUT_S__)  # tsrepro counts a slower backend as hung: SIGALRM ends it
        res = leaves([backend(fresh(INPUTS))])  # a crash is left to happen
    except Exception as error:  # in the reference, or a backend this PyTorch lacks: cannot run here (exit 2)
        print("%s raised %s: %s" % ("reference" if ref is None else "backend", type(error).__name__, error))
        sys.exit(2 if ref is None or isinstance(error, ImportError) else __EXIT_ON_EXCEPTION__)
    print("the backend ran without failing (expected: %s)" % __EXPECTED__)  #[!accuracy]
    sys.exit(0)  #[!accuracy]
    try:  # an fp64 reference excuses results that are merely noisy (dtype-specific graphs have none)  #[fp64]
        ref64 = leaves([reference(fresh(INPUTS, fp64=True))])  #[fp64_graph]
        ref64 = leaves([reference(fresh(INPUTS, fp64=True), fp64=True)])  # Repro's floats as float64 too  #[fp64_module]
    except Exception:  #[fp64]
        ref64 = ref  #[fp64]
    ref64 = ref  # judged by allclose alone (--no-fp64)  #[no_fp64]
    failed = len(ref) != len(res)  # as many outputs, each alike  #[accuracy]
    for i, sides in enumerate(zip(ref, res, ref64)):  #[accuracy]
        why = difference(*sides)  #[accuracy]
        if why is not None:  #[accuracy]
            print("output %d: %s" % (i, why))  #[accuracy]
            failed = True  #[accuracy]
    print("verdict: %s (expected: accuracy)" % ("accuracy" if failed else "pass"))  #[accuracy]
    sys.exit(failed)  #[accuracy]
