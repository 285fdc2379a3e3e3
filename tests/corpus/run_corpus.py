#!/usr/bin/python3
"""Run tsrepro over the real-model corpus, as a new user would, and check each step.

    /usr/bin/python3 tests/corpus/run_corpus.py --tsrepro build/tsrepro \\
        --corpus CORPUS_DIR --work WORK_DIR [NAME ...] [--table OUT.md]

CORPUS_DIR is what tests/corpus/make_corpus.py wrote (NAME/model.pt,
NAME/inputs.pt), or examples/models (its MANIFEST.json names each model's
files); no NAME means every model in CORPUS_DIR/MANIFEST.json. For each model:

  1. `tsrepro import model.pt --inputs inputs.pt`: must succeed;
  2. `tsrepro run --backend B --json` for B in jit, nnc, ofi: must say `pass`,
     except where EXPECTED_FAILURES records a real libtorch bug the model was
     made to show; then the case's own repro.py (`run --save-repro`) must
     reproduce it;
  3. the differential test against the public API (tests/corpus/public_graph.py, on the original
     model file): its verdict (pass, accuracy, exception, or a hang) must be tsrepro's, and the
     graph each backend executed (`tsrepro run --explain-backend`) must hold the same
     operators, in the same order, as the graph the public API optimizes for the original
     module, modulo value names and the nodes that only say how the module's state is read
     (constants, prim::GetAttr) or guarded (type checks);
  2b. `tsrepro run --backend pyeager` (issue 52): the case's eager module form, the plain PyTorch
     that PyTorch 2's module route hands torch.compile and torch.export, run uncompiled, must
     agree with the TorchScript reference (`pass`; a difference is tsrepro's defect, exit 2);
  1b. with `--verify` on the backends of step 2 (issue 42): the saved model through its public
     calls and the case through tsrepro must agree on every verdict and output;
  4. `tsrepro minify --backend inject:runtime-error@OP` for four culprits (issue 42): OP the
     operator of the first, the middle and the last tensor-making node of the graph's top level
     (among operators that occur once, when there are such), and an operator on a container that
     other operators mutate (FPN's dict of feature maps: aten::keys); a torchvision or torchaudio
     model must end each in at most 3 nodes and at most 2·⌈log2 N⌉ + 10 queries;
  5. the minified repro.py, run by /usr/bin/python3, must reproduce (exit 1).

It prints one table row per model (the closing-note table of issue 11) and
exits 1 when any check failed, naming the model and the step.
"""

import argparse
import collections
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time

BACKENDS = ["jit", "nnc", "ofi"]
MAX_MINIFIED_NODES = 3

# Failures that are real bugs of a libtorch line, which tsrepro must show as the public API does:
# (model, backend) -> {libtorch line: [(status, signature)]}; a line not named expects a pass. A
# failure is expected by its signature too (a regular expression searched in the verdict's
# signature; None for a status without one, a timeout): another exception on the same model is
# another bug, and fails the corpus.
SIGFPE = ("crash", r"^crash:SIGFPE$")
OFI_MKLDNN_ASSERT = ("exception", r"INTERNAL ASSERT FAILED")
EXPECTED_FAILURES = {
    # optimize_for_inference in 1.13: prim::MKLDNNClamp_ after an MKLDNN convolution writes into a
    # resized buffer; negative values get through the clamp (wrong numbers, no error). Fixed in 2.6.
    ("construct_mkldnn_clamp", "ofi"): {"1.13": [("accuracy", r"^accuracy:float32$")]},
    # A training-mode program: ofi freezes m.eval() as users must, and eval-mode batch norm gives
    # other numbers than the training-mode reference.
    ("conv_bn_train_scripted", "ofi"): {"1.13": [("accuracy", r"^accuracy:float32$")],
                                        "2.6": [("accuracy", r"^accuracy:float32$")]},
}
# optimize_for_inference in 1.13: MKLDNN's adaptive_avg_pool2d cannot pool a map up to a larger
# one ("input size is not divisible by the output size is not supported yet"): alexnet and VGG at
# their smallest inputs pool 1x1 up to 6x6 or 7x7; the public API raises the same.
for _model in ("alexnet", "vgg11_bn"):
    EXPECTED_FAILURES[(_model, "ofi")] = {"1.13": [("exception", r"not divisible by the output size")]}
# optimize_for_inference in 2.6 (Debian 13): the MKLDNN max_pool2d it puts after a convolution
# raises "INTERNAL ASSERT FAILED at .../KernelFunction.cpp:23" on the first call; the public API
# raises the same on every torchvision model that max-pools a convolution's output (and on the
# MKLDNN batch_norm of the dilated resnet50 backbones of fcn and deeplabv3, and of MaxViT).
for _model in ("resnet18", "squeezenet1_1", "googlenet", "shufflenet_v2_x0_5", "densenet121", "alexnet", "vgg11_bn",
               "resnet50", "resnext50_32x4d", "retinanet_resnet50_fpn", "inception_v3", "fcn_resnet50",
               "deeplabv3_resnet50", "fcos_resnet50_fpn", "ssd300_vgg16", "maxvit_t", "fasterrcnn_resnet50_fpn",
               "fasterrcnn_resnet50_fpn_v2", "maskrcnn_resnet50_fpn", "keypointrcnn_resnet50_fpn"):
    EXPECTED_FAILURES.setdefault((_model, "ofi"), {})["2.6"] = [OFI_MKLDNN_ASSERT]
# torch 2.6: with CPU fusion on (its default with LLVM), the profiling executor's second call of
# optimize_for_inference'd mobilenet_v3_small (and _large, and the Faster R-CNN built on it) never
# leaves LLVMCodeGen's constructor (a fused kernel's compile); the public API hangs the same way.
# So does MViT v1's (2026-11-27: tsrepro and the public API, each past 120 s). On 2026-11-28 the
# same compile died by SIGFPE instead, in tsrepro and in the public API alike: either is this bug.
for _model in ("mobilenet_v3_small", "mobilenet_v3_large", "fasterrcnn_mobilenet_v3_large_320_fpn", "mvit_v1_b"):
    EXPECTED_FAILURES[(_model, "ofi")] = {"2.6": [("timeout", None), SIGFPE]}
# The same SIGFPE took deeplabv3_mobilenet_v3_large's ofi run on 2026-11-28's machine (it passed on
# the machines before): tsrepro and the public API died alike.
EXPECTED_FAILURES[("deeplabv3_mobilenet_v3_large", "ofi")] = {"2.6": [("pass", None), SIGFPE]}


def expected_verdicts(name, backend, torch_line):
    """The verdicts a (model, backend) may give on a libtorch line, each (status, signature
    pattern): a pass unless a real bug of that line is recorded above."""
    return EXPECTED_FAILURES.get((name, backend), {}).get(torch_line, [("pass", None)])


def unexpected(verdict, wanted):
    """Why a verdict is none of the wanted ones; None when it is one of them."""
    status, signature = verdict.get("status"), verdict.get("signature", "")
    statuses = [s for s, _ in wanted]
    if status not in statuses:
        return f"{status}, expected {' or '.join(statuses)}"
    patterns = [p for s, p in wanted if s == status and p is not None]
    if patterns and not any(re.search(p, signature) for p in patterns):
        return f"{status} with the signature {signature!r}, expected one matching {' or '.join(patterns)}"
    return None


def torch_line(tsrepro):
    """"1.13", "2.6": the libtorch tsrepro was built with (`tsrepro --version`)."""
    version = subprocess.run([tsrepro, "--version"], capture_output=True, text=True).stdout
    found = re.search(r"libtorch (\d+)\.(\d+)", version)
    return f"{found.group(1)}.{found.group(2)}" if found else "?"




HERE = os.path.dirname(os.path.abspath(__file__))
GRAPH_NODE = re.compile(r"(?:^|= )([a-z_]+::[A-Za-z0-9_]+)[\[(]")
# Nodes that differ between a module and tsrepro's standalone graph of it without changing what
# runs: how parameters are read (prim::GetAttr on the module, a graph input in the case) and how
# the profiling executor guards the inputs it specialized on (one more guard per lifted input).
# A list of parameters (nn.LSTM's _flat_weights) is one prim::GetAttr in the module and a
# prim::ListConstruct of lifted inputs in the case: lists are compared by what reads them. A
# module reads a parameter anew at each use, a case has one input for it, so CSE merges repeated
# metadata queries (prim::dtype, prim::device) of a parameter in the case only. Import drops
# aten::warn (runner/import/ir_representable.cpp says why). An attribute write (prim::SetAttr, RAFT's
# correlation pyramid) is a threaded value in the case (runner/import/attribute_state.h). A with statement
# (torch.no_grad in RetinaNet's loss) is prim::Enter/prim::Exit in the module, and the __enter__
# and __exit__ they call, inlined, in the case (runner/import/module_lifting.cpp): grad mode reads and sets.
NOT_COMPARED = {"prim::Constant", "prim::GetAttr", "prim::SetAttr", "prim::TypeCheck", "prim::RequiresGradCheck",
                "prim::profile", "prim::BailOut", "prim::Guard", "prim::ListConstruct", "prim::dtype",
                "prim::device", "aten::warn", "prim::Enter", "prim::Exit", "aten::is_grad_enabled",
                "aten::set_grad_enabled"}


PUBLIC_GRAPH_BACKENDS = {"jit", "nnc", "ofi"}
HANG_SECONDS = 60  # what an expected hang gets from tsrepro run and repro.py
PUBLIC_HANG_SECONDS = 2 * HANG_SECONDS


def timeout_args(verdict):
    """A run that hangs (or is expected to) is given a short while, not tsrepro's 300 s; the
    repro.py it saves inherits it."""
    return ["--timeout", str(HANG_SECONDS)] if verdict == "timeout" else []
# Where the module's own executor cannot run what a standalone graph runs. A call through an
# interface stays a prim::CallMethod in the module's executed graph (its body runs in the callee's
# executor); a case has no module to call, so tsrepro inlines the concrete submodule's body.
# RetinaNet's heads loop over the feature maps; in the module the loop body also reads every
# convolution's weight and bias (prim::GetAttr), which counts toward libtorch's limit on the size of
# a loop body it unrolls, so the module's loop stays rolled while the case's (parameters are inputs)
# is unrolled 8 times: the case runs the same operators, its loop bodies repeated.
# RAFT's forward writes its correlation pyramid to a submodule (prim::SetAttr) and its update loop
# reads it back. The module reads it through the module (prim::GetAttr): a list of unknown length,
# whose loop libtorch 2.6's ofi unrolls 8 times with a remainder loop (8 more fusion groups, 7 more
# grid_sampler). The case threads the written list to its readers (issue 27, point 3), so its
# length is known and the loop over the levels is unrolled whole: fewer copies, same operators.
RAFT_PYRAMID = "the pyramid loop unrolled whole in the case (the module reads the list it wrote through the module)"
GRAPH_DIFFERENCES = {
    ("construct_module_interface", "jit"): "prim::CallMethod through an interface (inlined in the case)",
    ("construct_module_interface", "nnc"): "prim::CallMethod through an interface (inlined in the case)",
    ("retinanet_resnet50_fpn", "jit"): "the heads' loops unrolled in the case only (parameter reads count in the module)",
    ("retinanet_resnet50_fpn", "nnc"): "the heads' loops unrolled in the case only (parameter reads count in the module)",
    ("raft_small", "ofi"): RAFT_PYRAMID,
    ("raft_large", "ofi"): RAFT_PYRAMID,
}


# A branch that only picks one of two values (`self.dropout if self.training else 0.0`) reads an
# attribute inside one branch in the module, so it stays a prim::If; in the case the attribute is
# an input, both branches only return values, and 2.6's executor makes the If a prim::IfThenElse.
SAME_OPERATOR = {"prim::IfThenElse": "prim::If"}


# A fusion group's kind is numbered by a counter of the process (prim::TensorExprGroup_9): the
# public API's process, which optimized more of the module's graph first, counts further.
NUMBERED_GROUP = re.compile(r"^(prim::[A-Za-z]+Group)_[0-9]+$")


def operators(graph_text):
    """The operators of an IR dump in order (fusion groups' bodies included), as compared."""
    kinds = []
    for line in graph_text.splitlines():
        for kind in GRAPH_NODE.findall(line.strip()):
            kind = NUMBERED_GROUP.sub(r"\1", SAME_OPERATOR.get(kind, kind))
            if kind not in NOT_COMPARED:
                kinds.append(kind)
    return kinds


# A module's non-tensor attributes that a case input cannot hold (the Dict[str, str] return_layers
# of torchvision's segmentation backbones, the R-CNN poolers' scales, lists of strings) are
# constants in the case, so the case's executor folds what they decide: the lookups in them, the
# branches they pick, the loops over them, the scalar arithmetic on them; the module reads them
# anew (prim::GetAttr) and runs all that. So the case may run fewer operators than the module, but
# never another one, nor in another order (its operators are a subsequence of the public API's),
# and never compiles otherwise: the operators that say what the backend made of the graph
# (fusion groups, MKLDNN conversions) must be the public API's exactly.
COMPILED_STRUCTURE = {"prim::TensorExprGroup", "prim::TensorExprDynamicGroup", "prim::FusionGroup",
                      "prim::CudaFusionGroup", "prim::DifferentiableGraph", "prim::MKLDNNGroup",
                      "prim::ConstantMKLDNNTensor", "aten::to_mkldnn", "aten::to_dense"}


def only_folded_constants(mine, theirs):
    """Whether `theirs` is `mine` with operators inserted, none of COMPILED_STRUCTURE, and how many."""
    remaining = iter(theirs)
    if not all(op in remaining for op in mine):  # consumes `remaining`: a subsequence test
        return False, 0
    structure = collections.Counter(op for op in mine if op in COMPILED_STRUCTURE)
    if structure != collections.Counter(op for op in theirs if op in COMPILED_STRUCTURE):
        return False, 0
    return True, len(theirs) - len(mine)


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"operator {i}: {x} (tsrepro) vs {y} (PyTorch)"
    return f"{len(a)} operators (tsrepro) vs {len(b)} (PyTorch)"


def run(command, timeout):
    """The finished process and its seconds; one that outlives `timeout` is killed and reported
    as exit 124 with a one-line reason, like timeout(1)."""
    started = time.monotonic()
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        done = subprocess.CompletedProcess(command, 124, "", f"timed out after {timeout:.0f} s")
    return done, time.monotonic() - started


def last_line(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def query_bound(nodes):
    """2·⌈log2 N⌉ + 10: what one culprit among N compute nodes may cost (issue 14)."""
    return 2 * math.ceil(math.log2(max(nodes, 2))) + 10


# The places a culprit is put, each minified on its own (issue 42): the first, middle and last
# tensor operator of the graph's top level, and an operator on a container that other operators
# mutate (a dict or list of tensors, as FPN's OrderedDict of feature maps).
POSITIONS = ["first", "middle", "last", "container"]
# What writes into a list or dict, and what reads one whole.
CONTAINER_WRITES = {"aten::append", "aten::_set_item", "aten::insert", "aten::extend", "aten::add_"}
CONTAINER_OPS = {"aten::append", "aten::_set_item", "aten::insert", "aten::extend", "aten::keys", "aten::values",
                 "aten::items", "aten::__getitem__", "aten::len", "aten::cat", "aten::stack"}
TOP_NODE = re.compile(r"^(\s+)(?:%([^ ]+) : ([^=]+?) = )?((?:aten|prim)::[A-Za-z0-9_]+)\((.*)\)")


def top_level_nodes(graph_ir, nested=False):
    """(op, output type, input names, output name) of each node of the graph's top level (with
    `nested`, of every node)."""
    nodes, top = [], None
    for line in graph_ir.splitlines():
        m = TOP_NODE.match(line)
        if not m or m.group(4) == "prim::Constant":
            continue
        indent = len(m.group(1))
        top = indent if top is None else min(top, indent)
        args = re.findall(r"%([A-Za-z0-9_.]+)", m.group(5))
        nodes.append((indent, m.group(4), (m.group(3) or "").strip(), args, m.group(2)))
    return [(op, out_type, args, out) for indent, op, out_type, args, out in nodes if nested or indent == top]


def tensor_operators(graph_ir):
    """The operators of the top level's tensor-making nodes, in order (faults go where a real
    backend bug sits: a node that computes a tensor, not the container plumbing)."""
    return [op for op, out_type, _, _ in top_level_nodes(graph_ir)
            if out_type == "Tensor" and op.startswith("aten::") and not op.startswith("aten::__")]


def operator_near(graph_ir, position):
    """The operator of a tensor-making node of the graph's top level (a node in a branch may be one
    the model never runs, such as a detection model's training-only loss, and one in a loop body
    runs many times) at `position` ("first", "middle", "last"): within the third of the graph at
    that position, the one that occurs fewest times in the whole graph (once, where one does: the
    injected fault then has one place to be), nearest its place. (A unique operator
    outside the middle third is no cheaper: deeplabv3's final aten::cat took 49 queries, its
    middle aten::conv2d 17.)"""
    ops = tensor_operators(graph_ir)
    if not ops:
        return None
    counts = collections.Counter(op for op, _, _, _ in top_level_nodes(graph_ir, nested=True))
    third = max(len(ops) // 3, 1)
    place, region = {"first": (0, range(0, third)), "middle": (len(ops) // 2, range(third, max(2 * third, third + 1))),
                     "last": (len(ops) - 1, range(len(ops) - third, len(ops)))}[position]
    candidates = [i for i in region if i < len(ops)] or [min(place, len(ops) - 1)]
    return ops[min(candidates, key=lambda i: (counts[ops[i]], abs(i - place)))]


def container_operator(graph_ir):
    """An operator of the top level on a list or dict some operator mutates, or None: one that
    reads the whole container after the writes where there is one (aten::keys of FPN's dict of
    feature maps), else a write; of those, the one that occurs fewest times."""
    nodes = top_level_nodes(graph_ir)
    mutated = {args[0] for op, _, args, _ in top_level_nodes(graph_ir, nested=True)
               if op in CONTAINER_WRITES and args and op != "aten::add_"}
    on_mutated = [op for op, _, args, _ in nodes if op in CONTAINER_OPS and args and args[0] in mutated]
    if not on_mutated:
        return None
    counts = collections.Counter(op for op, _, _, _ in nodes)
    readers = [op for op in on_mutated if op not in CONTAINER_WRITES]
    pool = readers or on_mutated
    return min(pool, key=lambda op: (counts[op], pool.index(op)))


def culprit_operator(graph_ir, position):
    return container_operator(graph_ir) if position == "container" else operator_near(graph_ir, position)


class ModelRun:
    def __init__(self, args, entry):
        """`entry`: the model's MANIFEST.json entry. make_corpus.py's keep NAME/model.pt and
        NAME/inputs.pt; examples/models/MANIFEST.json names its files ("model", "inputs")."""
        self.args = args
        name = entry["name"]
        self.name = name
        self.model_path = os.path.join(args.corpus, entry.get("model", os.path.join(name, "model.pt")))
        self.inputs_path = os.path.join(args.corpus, entry.get("inputs", os.path.join(name, "inputs.pt")))
        self.family = entry.get("family", "example")
        # Models that call an extension library's operators (torchvision::nms) name it: every
        # tsrepro command and the public API load it, as a user's program does.
        self.library_args = ["--load-library", entry["load_library"]] if entry.get("load_library") else []
        self.row = {"model": name, "nodes": None, "import": "no", "minify": {}}
        self.failures = []

    def fail(self, step, why):
        self.failures.append(f"{self.name}: {step}: {why}")

    def go(self):
        case_dir = os.path.join(self.args.work, self.name, "case")
        shutil.rmtree(os.path.join(self.args.work, self.name), ignore_errors=True)
        os.makedirs(os.path.join(self.args.work, self.name))
        done, seconds = run([self.args.tsrepro, "import", self.model_path, "--inputs", self.inputs_path, "-o", case_dir]
                            + self.verify_args() + self.library_args, self.args.timeout)
        self.row["import_s"] = round(seconds, 1)
        if done.returncode != 0:
            self.row["import"] = last_line(done.stderr)
            return self.fail("import", last_line(done.stderr))
        self.row["import"] = "yes"
        with open(os.path.join(case_dir, "case.json")) as f:
            self.row["nodes"] = json.load(f)["compute_nodes"]
        verdicts = {backend: self.check_backend(case_dir, backend) for backend in self.args.backends}
        if not self.args.no_public_graphs:
            publics = self.public_verdicts({b: v["status"] for b, v in verdicts.items() if b in PUBLIC_GRAPH_BACKENDS})
            for backend, public in publics.items():
                self.check_public_api(backend, verdicts[backend].get("backend_graph", ""),
                                      verdicts[backend]["status"], public)
        self.check_module_form(case_dir)
        if not self.args.no_minify:
            with open(os.path.join(case_dir, "graph.ir")) as f:
                graph_ir = f.read()
            for position in self.args.positions:
                self.minify(case_dir, position, culprit_operator(graph_ir, position))

    def verify_args(self):
        """import --verify (issue 42): every backend with public calls on the saved model, but one
        that meets a recorded libtorch bug on this model: the bug's way of failing is not the
        model's to keep (2.6's optimize_for_inference of resnet18 raises the dispatcher's assert
        on the case and in Python, and dies by SIGSEGV in a C++ program that freezes the saved
        model; a hang would cost the timeout twice). run and the public API judge those below."""
        if not self.model_path.endswith(".pt") or self.args.no_verify:
            return []
        backends = [b for b in self.args.backends if b in PUBLIC_GRAPH_BACKENDS and
                    expected_verdicts(self.name, b, self.args.torch_line) == [("pass", None)]]
        return ["--verify", ",".join(backends)] if backends else []

    def check_backend(self, case_dir, backend):
        wanted = expected_verdicts(self.name, backend, self.args.torch_line)
        done, _ = run([self.args.tsrepro, "run", case_dir, "--backend", backend, "--json", "--explain-backend"]
                      + timeout_args("timeout" if ("timeout", None) in wanted else "pass") + self.library_args,
                      self.args.timeout)
        try:
            verdict = json.loads(done.stdout)
            status = verdict["status"]
        except (ValueError, KeyError):
            status, verdict = "error", {"message": last_line(done.stderr)}
        self.row[backend] = status
        why = unexpected({"status": status, "signature": verdict.get("signature", "")}, wanted)
        if why:
            self.fail(f"run --backend {backend}", f"{why}: {verdict.get('message', '')[:300]}")
        if status not in ("pass", "error"):
            self.check_repro_agrees(case_dir, backend, status)
        return dict(verdict, status=status)

    def check_module_form(self, case_dir):
        """The eager module form agrees with the TorchScript reference (step 2b)."""
        done, _ = run([self.args.tsrepro, "run", case_dir, "--backend", "pyeager", "--json"] + self.library_args,
                      self.args.timeout)
        try:
            verdict = json.loads(done.stdout)
        except ValueError:
            verdict = {"status": "error", "message": last_line(done.stderr)}
        self.row["module form"] = verdict.get("status")
        if verdict.get("status") != "pass":
            self.fail("run --backend pyeager (the eager module form)",
                      f"{verdict.get('status')}: {verdict.get('message', '')[:300]}")

    def check_repro_agrees(self, case_dir, backend, status):
        """A backend that fails: the case's own repro.py (which runs the public API) must fail too."""
        copy = os.path.join(self.args.work, self.name, f"{backend}-repro")
        shutil.copytree(case_dir, copy)
        run([self.args.tsrepro, "run", copy, "--backend", backend, "--save-repro"] + timeout_args(status)
            + self.library_args, self.args.timeout)
        repro, _ = run([sys.executable, os.path.join(copy, "repro.py")], self.args.timeout)
        if repro.returncode != 1 and repro.returncode >= 0:  # below 0: a crash the short repro left to happen
            self.fail(f"repro.py of the {backend} failure",
                      f"exit {repro.returncode}: {last_line(repro.stdout + repro.stderr)}")

    def public_verdicts(self, statuses):
        """tests/corpus/public_graph.py's verdicts on the model file, {backend: its JSON object, or
        the finished process where it gave none}. The backends share one process (one start of torch
        for all), nnc last (its switches stay on); one that ends the process or hangs leaves the
        later ones to a process of their own. Where tsrepro's backend hung, the public API gets a
        bounded while alone, to show it hangs too."""
        if not self.model_path.endswith(".pt"):
            return {}  # IR text: there is no module for the public API to run
        order = [b for b in ("jit", "ofi", "nnc") if b in statuses]
        found = {}
        for group in ([b for b in order if statuses[b] != "timeout"], *[[b] for b in order if statuses[b] == "timeout"]):
            timeout = PUBLIC_HANG_SECONDS if statuses[group[0]] == "timeout" else self.args.timeout
            while group:
                done, _ = run([sys.executable, os.path.join(HERE, "public_graph.py"), self.model_path,
                               self.inputs_path, ",".join(group)] + self.library_args, timeout)
                for line in done.stdout.splitlines():
                    try:
                        public = json.loads(line)
                    except ValueError:
                        continue
                    found[public.pop("backend")] = public
                group = [b for b in group if b not in found]
                if group:  # the first without a verdict ended the process (or hung): it keeps the process
                    found[group.pop(0)] = done if done.returncode != 124 else \
                        {"status": "timeout", "message": f"no answer in {timeout:.0f} s"}
        return found

    def check_public_api(self, backend, ours, status, public):
        """The differential test: the public API's own verdict on the model file (`public`, a
        public_graph.py object, or its process where it died before giving one) must be tsrepro's,
        and where both ran, its optimized graph must hold tsrepro's operators in tsrepro's order."""
        if isinstance(public, subprocess.CompletedProcess):
            if public.returncode != 0 and status in ("exception", "crash"):
                # The public API died on its way to a verdict (2.6's dispatcher assert on an
                # MKLDNN max_pool2d ends the process; LLVM's SIGFPE): it fails too.
                self.row[backend] += " (the public API raises too)" if status == "exception" else \
                    " (the public API dies too)"
                return
            self.row[backend] += " (no public verdict)"
            return self.fail(f"public {backend} verdict", last_line(public.stderr))
        if public["status"] != status:
            self.row[backend] += f" (the public API: {public['status']})"
            return self.fail(f"{backend} verdict vs the public API's",
                             f"tsrepro {status}, the public API {public['status']}: {public['message'][:300]}")
        if status == "timeout":
            self.row[backend] += " (the public API hangs too)"  # no graph to compare: it agrees
            return
        if status == "exception":
            self.row[backend] += " (the public API raises too)"
            return
        mine, theirs = operators(ours), operators(public["graph"])
        folded, count = only_folded_constants(mine, theirs) if mine != theirs else (False, 0)
        if mine != theirs and (self.name, backend) in GRAPH_DIFFERENCES:
            self.row[backend] += " (graph: " + GRAPH_DIFFERENCES[(self.name, backend)] + ")"
        elif folded:
            self.row[backend] += f" ({count} operator{'' if count == 1 else 's'} on constant attributes folded²)"
        elif mine != theirs:
            self.row[backend] += " (graph differs)"
            self.fail(f"{backend} graph vs the public API's", first_difference(mine, theirs))

    def minify(self, case_dir, position, op):
        result = self.row["minify"].setdefault(position, {"op": op})
        if op is None:
            if position != "container":
                self.fail(f"minify ({position})", "no aten operator in the graph")
            return  # no container that operators mutate: nothing to place there
        out = os.path.join(self.args.work, self.name, "minify-" + position)
        done, seconds = run([self.args.tsrepro, "minify", case_dir, "--backend", f"inject:runtime-error@{op}",
                             "-o", out, "--json", "-j", "2"] + self.library_args, self.args.timeout)
        result["seconds"] = round(seconds, 1)
        step = f"minify ({position}, {op})"
        if done.returncode != 0:
            return self.fail(step, last_line(done.stderr))
        summary = json.loads(done.stdout)
        result["queries"] = summary["queries"]
        result["final_nodes"] = summary["final_nodes"]
        if self.family in ("torchvision", "torchaudio") and summary["final_nodes"] > MAX_MINIFIED_NODES:
            self.fail(step, f"{summary['final_nodes']} nodes left, at most {MAX_MINIFIED_NODES} wanted")
        # Issue 14's bound on a real model, whatever the culprit (issue 42). -j 2 may add a
        # speculative query or two.
        bound = query_bound(summary["original_nodes"])
        if self.family in ("torchvision", "torchaudio") and summary["queries"] > bound:
            self.fail(step, f"{summary['queries']} queries for {summary['original_nodes']} nodes, at most {bound}")
        repro, _ = run([sys.executable, os.path.join(out, "minified", "repro.py")], self.args.timeout)
        result["repro"] = "reproduces" if repro.returncode == 1 else f"exit {repro.returncode}"
        if repro.returncode != 1 and repro.returncode >= 0:  # below 0: a crash the short repro left to happen
            self.fail(f"repro.py ({position})", f"exit {repro.returncode}: {last_line(repro.stdout + repro.stderr)}")


def minify_cell(result):
    """"`aten::keys` 23 (1 node)": the culprit, the queries its minify took and the nodes left;
    the repro.py's exit where it did not reproduce."""
    if not result or result.get("op") is None:
        return "—"
    cell = f"`{result['op']}` {result.get('queries', '?')}"
    if result.get("final_nodes") is not None and result["final_nodes"] != 1:
        cell += f" ({result['final_nodes']} nodes)"
    if result.get("repro") not in (None, "reproduces"):
        cell += f", repro.py {result['repro']}"
    return cell


def table(rows, backends, positions):
    head = ["model", "nodes", "bound", "import"] + backends + ["module form"] + [
        f"{p} culprit: queries" for p in positions]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        bound = query_bound(r["nodes"]) if r["nodes"] else None
        cells = [r["model"], r["nodes"], bound, r["import"]] + [r.get(b) for b in backends] + [
            r.get("module form")] + [minify_cell(r["minify"].get(p)) for p in positions]
        lines.append("| " + " | ".join("" if c is None else str(c) for c in cells) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*")
    parser.add_argument("--tsrepro", required=True)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--no-minify", action="store_true")
    parser.add_argument("--no-verify", action="store_true", help="import without --verify")
    parser.add_argument("--positions", default=",".join(POSITIONS),
                        help="where culprits go, each minified: " + ", ".join(POSITIONS))
    parser.add_argument("--no-public-graphs", action="store_true", help="skip step 3")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--table", help="also write the table (markdown) here")
    args = parser.parse_args()
    args.backends = [b for b in args.backends.split(",") if b]
    args.positions = [p for p in args.positions.split(",") if p]
    args.torch_line = torch_line(args.tsrepro)
    with open(os.path.join(args.corpus, "MANIFEST.json")) as f:
        entries = {entry["name"]: entry for entry in json.load(f)}
    unknown = [name for name in args.names if name not in entries]
    if unknown:
        raise SystemExit(f"run_corpus.py: not in {args.corpus}/MANIFEST.json: {', '.join(unknown)}")
    names = args.names or list(entries)

    rows, failures = [], []
    for name in names:
        model = ModelRun(args, entries[name])
        model.go()
        rows.append(model.row)
        failures += model.failures
        print(table([model.row], args.backends, args.positions).splitlines()[-1], flush=True)
    text = table(rows, args.backends, args.positions)
    print(text)
    if args.table:
        with open(args.table, "w") as f:
            f.write(text + "\n")
    for failure in failures:
        print("FAILED", failure)
    print(f"{len(names) - len({f.split(':')[0] for f in failures})} passed, {len({f.split(':')[0] for f in failures})} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
