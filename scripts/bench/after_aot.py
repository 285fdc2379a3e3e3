"""tsrepro against PyTorch's own minifier on the same real Inductor bug (issue 43, point 5).

The peer is PyTorch's after_aot accuracy minifier as its documentation tells a user to run it:
TORCHDYNAMO_REPRO_AFTER="aot" and TORCHDYNAMO_REPRO_LEVEL=4 around torch.compile of the model,
which checks the compiled graph against eager, writes minifier_launcher.py when they differ, and
that launcher then minifies (functorch's fx_minifier, every query in a fresh Python process: the
default --isolate). The model it gets is what tsrepro's inductor backend compiles: PyTorch's TorchScript converter's
program of the case's module form, from the first checkpoint tsrepro writes (the imported graph,
not yet cut), on the same inputs.

tsrepro side: `tsrepro import` of the bug's model.pt, then `tsrepro minify --backend inductor`.
Both sides start from a cold Inductor cache of their own (TORCHINDUCTOR_CACHE_DIR), and each
one's final repro.py is run to see whether it still reproduces (exit 1 for tsrepro's; for
after_aot's, its run command raising AccuracyError).

Usage, on Debian 13 (torch 2.6) from the repository root:
    /usr/bin/python3 scripts/bench/after_aot.py --tsrepro build/tsrepro [--bugs NAME,...] [--out DIR]
Prints one Markdown table (docs/BENCHMARKS.md keeps the last one).
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BUGS = os.path.join(ROOT, "examples", "bugs")


def inductor_bugs():
    with open(os.path.join(BUGS, "bugs.json")) as f:
        listed = json.load(f)["bugs"]
    return [b["name"] for b in listed if b.get("backend") == "inductor"]


def env_with(**extra):
    env = dict(os.environ)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def timed(cmd, **kwargs):
    started = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    return done, time.monotonic() - started


# ---- tsrepro --------------------------------------------------------------------------------


def run_tsrepro(tsrepro, bug, work):
    case, out = os.path.join(work, "case"), os.path.join(work, "tsrepro")
    env = env_with(TORCHINDUCTOR_CACHE_DIR=os.path.join(work, "inductor-cache-tsrepro"))
    model = os.path.join(BUGS, bug, "model.pt")
    inputs = os.path.join(BUGS, bug, "inputs.pt")
    subprocess.run([tsrepro, "import", model, "--inputs", inputs, "-o", case], check=True, capture_output=True)
    done, seconds = timed([tsrepro, "minify", case, "--backend", "inductor", "-o", out, "--json"], env=env)
    if done.returncode != 0:
        raise SystemExit(f"after_aot.py: tsrepro minify of {bug} failed: {done.stderr.strip()[-500:]}")
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    repro = subprocess.run([sys.executable, os.path.join(out, "minified", "repro.py")], capture_output=True, env=env)
    return {
        "queries": summary["queries"],
        "seconds": seconds,
        "original_nodes": summary["original_nodes"],
        "final_nodes": summary["final_nodes"],
        "reproduces": repro.returncode == 1,
    }


def module_form(work):
    """The repro.py of tsrepro's largest checkpoint: the imported graph's module form."""
    checkpoints = glob.glob(os.path.join(work, "tsrepro", "checkpoints", "*_nodes"))
    largest = max(checkpoints, key=lambda d: int(os.path.basename(d).split("_")[0]))
    return os.path.join(largest, "repro.py")


# ---- after_aot -------------------------------------------------------------------------------


AGREED = 3  # launch()'s exit code when after_aot's check passed the compiled graph


def launch(repro_py):
    """torch.compile under TORCHDYNAMO_REPRO_AFTER=aot, LEVEL=4 of the module tsrepro's inductor
    backend compiles: PyTorch's TorchScript converter's program of the case's module form (the
    Repro class, or for a graph libtorch cannot print as source, the saved CASE_MODULE)."""
    import importlib.util
    import io

    import torch
    from torch._export.converter import TS2EPConverter

    spec = importlib.util.spec_from_file_location("module_form", repro_py)
    form = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(form)
    if hasattr(form, "Repro"):
        scripted, inputs = torch.jit.script(form.Repro().eval()), list(form.INPUTS)
    else:  # the inputs forward takes: the graph's own, not the lifted ones (buffers of CASE_MODULE)
        with open(os.path.join(os.path.dirname(repro_py), "case.json")) as f:
            lifted = [entry.get("lifted", False) for entry in json.load(f)["inputs"]]
        scripted = torch.jit.load(io.BytesIO(form.CASE_MODULE))
        inputs = [v for v, is_lifted in zip(form.INPUTS, lifted) if not is_lifted]
    module = TS2EPConverter(scripted, tuple(inputs)).convert().module()
    compiled = torch.compile(module, backend="inductor")
    try:
        with torch.no_grad():
            compiled(*inputs)
    except Exception as error:  # AccuracyError, wrapped by Dynamo
        if "AccuracyError" not in repr(error) and "Bad accuracy" not in str(error):
            raise
        print(f"launch: {type(error).__name__}: {str(error).splitlines()[0]}", file=sys.stderr)
        return 0
    print("launch: torch.compile agreed with eager: no minifier_launcher.py", file=sys.stderr)
    return AGREED


def fx_minifier_counts(stderr):
    """Queries and sizes from the launcher's own log: "Made N queries", and each strategy's
    "(X nodes, Y inputs)", whose nodes count the Y placeholders and the output besides the ops."""
    made = re.search(r"Made (\d+) queries", stderr)
    sizes = [(int(n), int(i)) for n, i in re.findall(r"\((\d+) nodes, (\d+) inputs\)", stderr)]
    if not made or not sizes:
        return None
    ops = [nodes - inputs - 1 for nodes, inputs in sizes]
    return {"queries": int(made.group(1)), "original_nodes": ops[0], "final_nodes": ops[-1]}


def python_shim_dir(work):
    """fx_minifier's --isolate starts each query as `python FILE`; Debian has only python3."""
    shim = os.path.join(work, "python-shim")
    os.makedirs(shim, exist_ok=True)
    link = os.path.join(shim, "python")
    if not os.path.exists(link):
        os.symlink(sys.executable, link)
    return shim


def run_after_aot(bug, work):
    side = os.path.join(work, "after_aot")
    os.makedirs(side, exist_ok=True)
    env = env_with(
        TORCHDYNAMO_REPRO_AFTER="aot",
        TORCHDYNAMO_REPRO_LEVEL=4,
        TORCHINDUCTOR_CACHE_DIR=os.path.join(work, "inductor-cache-after-aot"),
        PATH=python_shim_dir(work) + os.pathsep + os.environ.get("PATH", ""),
    )
    me = os.path.abspath(__file__)
    launched, launch_seconds = timed([sys.executable, me, "--launch", module_form(work)], cwd=side, env=env)
    launchers = glob.glob(os.path.join(side, "torch_compile_debug", "**", "minifier_launcher.py"), recursive=True)
    if launched.returncode == AGREED:  # its check passed the compiled graph: nothing to minify
        why = [line for line in launched.stderr.splitlines() if "Found nan" in line or line.startswith("launch:")]
        return {"detected": False, "launch_seconds": launch_seconds, "why": " / ".join(why)}
    if launched.returncode != 0 or not launchers:
        raise SystemExit(f"after_aot.py: {bug}: no minifier_launcher.py: {launched.stderr.strip()[-500:]}")
    # As its user runs it: without the TORCHDYNAMO_REPRO_* that made it (set, every query's compile
    # would check itself again, and 2.6's minifier then fails on inductor_lookup_seed's aliasing).
    plain = {k: v for k, v in env.items() if not k.startswith("TORCHDYNAMO_REPRO_")}
    minify, seconds = timed([sys.executable, launchers[0]], cwd=side, env=plain)
    stats = fx_minifier_counts(minify.stderr)
    if minify.returncode != 0 or not stats:
        raise SystemExit(f"after_aot.py: {bug}: the minifier did not finish: {minify.stderr.strip()[-800:]}")
    repro = subprocess.run([sys.executable, "repro.py"], cwd=side, capture_output=True, text=True, env=plain)
    stats.update(
        detected=True,
        seconds=seconds,
        launch_seconds=launch_seconds,
        reproduces=repro.returncode != 0 and "AccuracyError" in repro.stderr,
    )
    return stats


# ---- the table ------------------------------------------------------------------------------


def row(bug, tool, r):
    if not r.get("detected", True):
        return f"| `{bug}` | {tool} | not detected: its accuracy check passed the compiled graph | | | |"
    return (
        f"| `{bug}` | {tool} | {r['original_nodes']} → {r['final_nodes']} | {r['queries']} | "
        f"{r['seconds']:.0f} s | {'yes' if r['reproduces'] else 'no'} |"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launch", metavar="REPRO_PY", help=argparse.SUPPRESS)  # the child's step
    parser.add_argument("--tsrepro", default=os.path.join(ROOT, "build", "tsrepro"))
    parser.add_argument("--bugs", default=",".join(inductor_bugs()))
    parser.add_argument("--out", default=None, help="where the work goes (default: a temporary directory)")
    args = parser.parse_args()
    if args.launch:
        return launch(args.launch)

    out = args.out or tempfile.mkdtemp(prefix="tsrepro-after-aot-")
    lines = [
        "| bug | minifier | nodes | queries | minify wall | its repro.py reproduces |",
        "|---|---|---|---|---|---|",
    ]
    for bug in args.bugs.split(","):
        work = os.path.join(out, bug)
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        ours = run_tsrepro(os.path.abspath(args.tsrepro), bug, work)
        peer = run_after_aot(bug, work)
        lines += [row(bug, "tsrepro", ours), row(bug, "after_aot (fx_minifier)", peer)]
        print(f"{bug}: tsrepro {ours}; after_aot {peer}", file=sys.stderr)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
