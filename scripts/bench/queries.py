"""Queries per minify where each query may be a compile (issue 53): the synthetic chains of twins.py
and every bundled bug of examples/bugs that reproduces on this libtorch line (bugs.json's
reproduces_on), each minified once with `-j 1` (the query count does not vary from run to run; the
wall time is one run's).

Usage, from the repository root after scripts/build.sh (on Debian 13 inside scripts/in-debian13.sh):
    /usr/bin/python3 scripts/bench/queries.py [--build build] [--cases chain_200,...] [--bugs NAME,...]
Prints one Markdown table; docs/BENCHMARKS.md ("Queries where each is a compile") keeps them.
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import run  # noqa: E402  prepare(): a twin case imported
import twins  # noqa: E402


def this_line():
    """The libtorch line bugs.json's reproduces_on names ("1.13" or "2.6"), from python3-torch's version
    (asked in a child: a driver holding libtorch would share its pages, see torch_side.py)."""
    version = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"], capture_output=True,
                             text=True, check=True).stdout.strip()
    return ".".join(version.split(".")[:2])


def bound(nodes):
    return math.ceil(math.log2(max(nodes, 2))) + 4


def minify(tsrepro, case, backend, out):
    shutil.rmtree(out, ignore_errors=True)
    started = time.monotonic()
    done = subprocess.run([tsrepro, "minify", case, "--backend", backend, "-o", out, "--json", "-j", "1"],
                          capture_output=True, text=True)
    seconds = time.monotonic() - started
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["exit %d" % done.returncode])[-1]
        return {"why": last[:140], "seconds": seconds}
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    return {"queries": summary["queries"], "original": summary["original_nodes"], "final": summary["final_nodes"],
            "seconds": seconds}


def row(name, backend, r):
    if "why" in r:
        return f"| `{name}` ({backend}) | | | | did not minify: {r['why']} |"
    return (f"| `{name}` ({backend}) | {r['original']} → {r['final']} | {r['queries']} | {bound(r['original'])} | "
            f"{r['seconds']:.1f} s |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--cases", default="chain_200,chain_1000,chain_5000,residual_1000,two_culprits_1000,accuracy_1000")
    ap.add_argument("--bugs", default=None, help="bundled bugs (default: all of examples/bugs/bugs.json)")
    args = ap.parse_args()
    tsrepro = os.path.join(os.path.abspath(args.build), "tsrepro")
    work = tempfile.mkdtemp(prefix="tsrepro-queries-")
    lines = ["| case | nodes | queries | ⌈log2 N⌉ + 4 | minify wall |", "|---|---|---|---|---|"]
    twin_cases = twins.cases()
    for name in [c for c in args.cases.split(",") if c]:
        spec, backend, _ = twin_cases[name]
        case_dir = run.prepare(name, spec, work, tsrepro)
        lines.append(row(name, backend, minify(tsrepro, os.path.join(case_dir, "case"), backend,
                                               os.path.join(case_dir, "out"))))
        print(lines[-1], file=sys.stderr, flush=True)
    with open(os.path.join(ROOT, "examples", "bugs", "bugs.json")) as f:
        bugs = json.load(f)["bugs"]
    wanted = set(args.bugs.split(",")) if args.bugs else None
    line = this_line()
    for bug in bugs:
        if (wanted is not None and bug["name"] not in wanted) or line not in bug["reproduces_on"]:
            continue
        folder = os.path.join(ROOT, "examples", "bugs", bug["name"])
        case = os.path.join(work, bug["name"] + ".case")
        imported = subprocess.run([tsrepro, "import", os.path.join(folder, "model.pt"), "--inputs",
                                   os.path.join(folder, "inputs.pt"), "-o", case], capture_output=True, text=True)
        if imported.returncode != 0:
            r = {"why": "import: " + (imported.stderr.strip().splitlines() or ["?"])[-1][:120], "seconds": 0.0}
        else:
            r = minify(tsrepro, case, bug["backend"], os.path.join(work, bug["name"] + ".out"))
        lines.append(row(bug["name"], bug["backend"], r))
        print(lines[-1], file=sys.stderr, flush=True)
    shutil.rmtree(work, ignore_errors=True)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
