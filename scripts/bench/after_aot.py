"""tsrepro against PyTorch's own minifiers on the same real Inductor bug (issues 43 and 52).

The peers are PyTorch's accuracy minifiers as their documentation tells a user to run them:
TORCHDYNAMO_REPRO_AFTER="aot" (or "dynamo") and TORCHDYNAMO_REPRO_LEVEL=4 around torch.compile of
the model, which checks the compiled graph against eager, writes minifier_launcher.py when they
differ, and that launcher then minifies:
  - after_aot: functorch's fx_minifier on the graph AOTAutograd hands Inductor, every query in a
    fresh Python process (--isolate, the default);
  - after_aot --no-isolate: the same launcher, every query in its own process;
  - after_dynamo: fx_minifier on the graph Dynamo captured (before AOTAutograd's decompositions),
    in process (after_dynamo has no --isolate).
The model they get is the one tsrepro's inductor backend compiles on the module route (issue 52):
the case's eager module form, plain PyTorch (the Repro class of the first checkpoint tsrepro
writes: the imported graph, not yet cut), on the same inputs.

tsrepro side: `tsrepro import` of the bug's model.pt, then `tsrepro minify --backend inductor`.
Every minify runs RUNS times, each from a cold Inductor cache of its own (TORCHINDUCTOR_CACHE_DIR),
and the table gives the median wall time; each one's final repro.py is run to see whether it still
reproduces (exit 1 for tsrepro's; for the peers', AccuracyError).

Usage, on Debian 13 (torch 2.6) from the repository root:
    /usr/bin/python3 scripts/bench/after_aot.py --tsrepro build/tsrepro [--bugs NAME,...] [--runs 3] [--out DIR]
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


def bug_kind(bug):
    """bugs.json's kind: the peers check accuracy at TORCHDYNAMO_REPRO_LEVEL=4 and, for a compile
    error, write their launcher at level 2 (the compile error itself is then what they minify)."""
    with open(os.path.join(BUGS, "bugs.json")) as f:
        return next(b["kind"] for b in json.load(f)["bugs"] if b["name"] == bug)


def env_with(**extra):
    env = dict(os.environ)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def timed(cmd, **kwargs):
    started = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    return done, time.monotonic() - started


# ---- tsrepro --------------------------------------------------------------------------------


def run_tsrepro(tsrepro, bug, work, run):
    case, out = os.path.join(work, "case"), os.path.join(work, "tsrepro")
    env = env_with(TORCHINDUCTOR_CACHE_DIR=os.path.join(work, f"inductor-cache-tsrepro-{run}"))
    model = os.path.join(BUGS, bug, "model.pt")
    inputs = os.path.join(BUGS, bug, "inputs.pt")
    shutil.rmtree(case, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run([tsrepro, "import", model, "--inputs", inputs, "-o", case], check=True, capture_output=True)
    done, seconds = timed([tsrepro, "minify", case, "--backend", "inductor", "-o", out, "--json"], env=env)
    if done.returncode != 0 and "does not fail as required" in done.stderr:
        # A bug of this CPU's code (bugs.json's cpu_dependent): a row, and no peer asked about it.
        return {"fails_here": False, "why": done.stderr.strip().splitlines()[0][:160], "seconds": seconds}
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


# ---- the peers -------------------------------------------------------------------------------


AGREED = 3  # launch()'s exit code when the peer's check passed the compiled graph

# side -> (TORCHDYNAMO_REPRO_AFTER, the launcher's arguments)
PEERS = {
    "after_aot": ("aot", []),
    "after_aot --no-isolate": ("aot", ["minify", "--no-isolate"]),
    "after_dynamo": ("dynamo", []),
}


def launch(repro_py):
    """torch.compile under TORCHDYNAMO_REPRO_AFTER, LEVEL=4 of the module tsrepro's inductor backend
    compiles on the module route: the case's eager module form (repro.py's Repro class)."""
    import importlib.util

    import torch

    spec = importlib.util.spec_from_file_location("module_form", repro_py)
    form = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(form)
    if not hasattr(form, "Repro"):
        raise SystemExit(f"after_aot.py: {repro_py} is not in the module form")
    module, inputs = form.Repro().eval(), list(form.INPUTS)
    compiled = torch.compile(module, backend="inductor")
    try:
        with torch.no_grad():
            compiled(*inputs)
    except Exception as error:  # AccuracyError, wrapped by Dynamo; at level 2 the compile error
        accuracy = "AccuracyError" in repr(error) or "Bad accuracy" in str(error)
        if not accuracy and os.environ.get("TORCHDYNAMO_REPRO_LEVEL") != "2":
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


def launch_peer(after, work, level):
    """The peer's check around torch.compile: its minifier_launcher.py, or None where the check
    passed the compiled graph (with why)."""
    side = os.path.join(work, "after_" + after)
    shutil.rmtree(side, ignore_errors=True)
    os.makedirs(side)
    env = env_with(
        TORCHDYNAMO_REPRO_AFTER=after,
        TORCHDYNAMO_REPRO_LEVEL=level,
        TORCHINDUCTOR_CACHE_DIR=os.path.join(side, "inductor-cache-launch"),
        PATH=python_shim_dir(work) + os.pathsep + os.environ.get("PATH", ""),
    )
    me = os.path.abspath(__file__)
    launched, _ = timed([sys.executable, me, "--launch", module_form(work)], cwd=side, env=env)
    launchers = glob.glob(os.path.join(side, "torch_compile_debug", "**", "minifier_launcher.py"), recursive=True)
    if launched.returncode == AGREED:
        why = [line for line in launched.stderr.splitlines() if "Found nan" in line or line.startswith("launch:")]
        return None, " / ".join(why)
    if not launchers:
        # The error came before the peer's hook (Dynamo's own trace), or the peer's own check failed
        # (after_dynamo's symbolic shapes): it has nothing to minify with, which is its row.
        errors = [line.strip() for line in launched.stderr.splitlines() if "Error" in line]
        return None, "no minifier_launcher.py: " + (errors or ["exit %d" % launched.returncode])[-1][:140]
    return launchers[0], ""


def run_peer(launcher, arguments, side, run, exception):
    """One minify by the launcher, as its user runs it: without the TORCHDYNAMO_REPRO_* that made it
    (set, every query's compile would check itself again, and 2.6's after_aot minifier then fails
    on inductor_lookup_seed's aliasing)."""
    cwd = os.path.join(side, f"run-{run}")
    shutil.rmtree(cwd, ignore_errors=True)
    os.makedirs(cwd)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCHDYNAMO_REPRO_")}
    env.update(TORCHINDUCTOR_CACHE_DIR=os.path.join(cwd, "inductor-cache"),
               PATH=python_shim_dir(os.path.dirname(side)) + os.pathsep + env.get("PATH", ""))
    minify, seconds = timed([sys.executable, launcher] + arguments, cwd=cwd, env=env)
    stats = fx_minifier_counts(minify.stderr)
    if minify.returncode != 0 or not stats:
        # A peer that cannot finish its own minify is a row of the table, not the end of the bench.
        errors = [line.strip() for line in minify.stderr.splitlines() if "Error" in line]
        why = (errors or minify.stderr.strip().splitlines() or ["exit %d" % minify.returncode])[-1]
        print(f"after_aot.py: {launcher}: the minifier did not finish: {minify.stderr.strip()[-800:]}", file=sys.stderr)
        return {"finished": False, "why": why[:160], "seconds": seconds}
    repro = subprocess.run([sys.executable, "repro.py"], cwd=cwd, capture_output=True, text=True, env=env)
    raised = repro.returncode != 0 and (exception or "AccuracyError" in repro.stderr)  # the bug's own kind
    stats.update(seconds=seconds, reproduces=raised)
    return stats


def median_of(runs):
    """The run of median wall time, its seconds the median (RUNS odd)."""
    ordered = sorted(runs, key=lambda r: r["seconds"])
    return dict(ordered[len(ordered) // 2], times=[round(r["seconds"]) for r in runs])


# ---- the table ------------------------------------------------------------------------------


def row(bug, tool, r):
    if not r.get("fails_here", True):
        return f"| `{bug}` | {tool} | does not fail on this machine: `{r['why']}` | | | |"
    if not r.get("detected", True) and r["why"].startswith("no minifier_launcher.py"):
        return f"| `{bug}` | {tool} | not minified: {r['why']} | | | |"
    if not r.get("detected", True):
        return f"| `{bug}` | {tool} | not detected: its accuracy check passed the compiled graph | | | |"
    if not r.get("finished", True):
        return f"| `{bug}` | {tool} | did not finish: `{r['why']}` | | {r['seconds']:.0f} s | |"
    times = ", ".join(str(t) for t in r["times"])
    return (
        f"| `{bug}` | {tool} | {r['original_nodes']} → {r['final_nodes']} | {r['queries']} | "
        f"{r['seconds']:.0f} s ({times}) | {'yes' if r['reproduces'] else 'no'} |"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launch", metavar="REPRO_PY", help=argparse.SUPPRESS)  # the child's step
    parser.add_argument("--tsrepro", default=os.path.join(ROOT, "build", "tsrepro"))
    parser.add_argument("--bugs", default=",".join(inductor_bugs()))
    parser.add_argument("--runs", type=int, default=3, help="minifies per side, the median reported (odd)")
    parser.add_argument("--out", default=None, help="where the work goes (default: a temporary directory)")
    args = parser.parse_args()
    if args.launch:
        return launch(args.launch)

    out = args.out or tempfile.mkdtemp(prefix="tsrepro-after-aot-")
    lines = [
        "| bug | minifier | nodes | queries | minify wall, median (each run) | its repro.py reproduces |",
        "|---|---|---|---|---|---|",
    ]
    for bug in args.bugs.split(","):
        work = os.path.join(out, bug)
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        # Alternating sides, run by run: a slower minute of the machine falls on all of them.
        launchers = {}
        runs = {"tsrepro": []}
        for run in range(args.runs):
            runs["tsrepro"].append(run_tsrepro(os.path.abspath(args.tsrepro), bug, work, run))
            if not runs["tsrepro"][-1].get("fails_here", True):
                runs["tsrepro"] = runs["tsrepro"][-1:]
                break
            for side, (after, arguments) in PEERS.items():
                if after not in launchers:
                    launchers[after] = launch_peer(after, work, 2 if bug_kind(bug) == "exception" else 4)
                launcher, why = launchers[after]
                if launcher is None:
                    runs[side] = [{"detected": False, "why": why}]
                    continue
                if any(not r.get("finished", True) for r in runs.get(side, [])):
                    continue  # it could not finish once: its failure is its row, not asked again
                folder = os.path.join(work, side.replace(" --", "_").replace("-", "_"))
                exception = bug_kind(bug) == "exception"
                runs.setdefault(side, []).append(run_peer(launcher, arguments, folder, run, exception))
        for side, results in runs.items():
            failed = [r for r in results if not r.get("finished", True)]
            first = results[0]
            known = not first.get("detected", True) or not first.get("fails_here", True)
            result = first if known else failed[0] if failed else median_of(results)
            lines.append(row(bug, side, result))
            print(f"{bug}: {side}: {result}", file=sys.stderr)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
