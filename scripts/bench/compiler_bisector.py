"""Where in the compiler (issue 54), side by side: `tsrepro explain --passes` on each bundled PyTorch 2
bug's minified case (examples/bugs/NAME/minified/), and PyTorch's CompilerBisector run by hand on the
same bug's minified repro.py, the way its docstring describes: `python -m
torch._inductor.compiler_bisector start`, then after each run of the program `good` (it exited 0) or
`bad` (1), until it prints its result. Each side's runs (each a compile) and wall seconds, and what
each names.

Usage, from the repository root after scripts/build.sh, on Debian 13 inside scripts/in-debian13.sh:
    /usr/bin/python3 scripts/bench/compiler_bisector.py [--build build] [--bugs NAME,...]
Prints one Markdown table; docs/BENCHMARKS.md ("Which compiler pass: the cost") keeps it.
"""

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON = "/usr/bin/python3"
BISECTOR = [PYTHON, "-m", "torch._inductor.compiler_bisector"]
MAX_RUNS = 60


def finished(out):
    """Whether CompilerBisector's command line printed its answer (a step otherwise exits having
    written the next state, and the program is to be run again)."""
    if "Setting config" in out or "Binary search completed" in out:
        return True
    if "could not identify subsystem" in out or "All systems have been checked" in out:
        return True
    # "The issue is in the X system." alone (no subsystem to move to) is its answer.
    return "The issue is in the" in out and "Moving to the first subsystem" not in out


def by_hand(repro):
    """CompilerBisector's command line around runs of repro.py: (runs, seconds, its last words)."""
    subprocess.run(BISECTOR + ["end"], capture_output=True)
    subprocess.run(BISECTOR + ["start"], capture_output=True, check=True)
    start, runs, said = time.time(), 0, ""
    try:
        while runs < MAX_RUNS:
            ran = subprocess.run([PYTHON, repro], capture_output=True, text=True, cwd=os.path.dirname(repro))
            runs += 1
            if ran.returncode not in (0, 1):
                return runs, time.time() - start, "repro.py exited %d" % ran.returncode
            step = subprocess.run(BISECTOR + ["good" if ran.returncode == 0 else "bad"], capture_output=True, text=True)
            said = (step.stdout + step.stderr).strip()
            if finished(said):
                break
        return runs, time.time() - start, said.splitlines()[-1] if said else ""
    finally:
        subprocess.run(BISECTOR + ["end"], capture_output=True)


def by_tsrepro(build, case):
    start = time.time()
    r = subprocess.run([os.path.join(build, "tsrepro"), "explain", "--passes", case, "--json"], capture_output=True,
                       text=True)
    seconds = time.time() - start
    if r.returncode != 0:
        return 0, seconds, "exit %d: %s" % (r.returncode, r.stderr.strip()[-200:])
    found = json.loads(r.stdout.strip().splitlines()[-1])
    return found["runs"], seconds, found["pass"] or found["finding"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--bugs", default="")
    args = parser.parse_args()
    os.chdir(ROOT)
    wanted = set(filter(None, args.bugs.split(",")))
    bugs = [b for b in json.load(open("examples/bugs/bugs.json"))["bugs"]
            if b["backend"] in ("inductor", "aoti", "export") and (not wanted or b["name"] in wanted)]
    print("| bug | tsrepro explain --passes: runs, s | names | CompilerBisector by hand: runs, s | says |")
    print("|---|---|---|---|---|")
    for bug in bugs:
        case = os.path.join("examples/bugs", bug["name"], "minified")
        if not os.path.exists(os.path.join(case, "case.json")):
            continue
        ours = by_tsrepro(args.build, case)
        theirs = by_hand(os.path.abspath(os.path.join(case, "repro.py")))
        print("| %s | %d, %.0f | %s | %d, %.0f | %s |" % (bug["name"], ours[0], ours[1], ours[2].replace("|", "/"),
                                                        theirs[0], theirs[1], theirs[2].replace("|", "/")))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
