"""Where in the compiler (issue 54), on the TorchScript backends: `tsrepro explain --passes` on each
bundled TorchScript bug of examples/bugs that this libtorch reproduces, imported whole (the model,
not minified). For each: the model's compute nodes, the stops the backend offers (freezing's passes,
the profiling executor's graph passes from its JIT log, NNC's kernels), the one named, the runs
(the whole backend once, then each stop asked) and wall seconds.

Usage, from the repository root after scripts/build.sh (Debian 12; on Debian 13 inside
scripts/in-debian13.sh):
    /usr/bin/python3 scripts/bench/explain_passes.py [--build build]
Prints one Markdown table; docs/BENCHMARKS.md ("Which pass: the cost") keeps it.
"""

import argparse
import json
import os
import re
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TORCHSCRIPT_BACKENDS = ("jit", "nnc", "ofi")


def libtorch_line(tsrepro):
    """"1.13" or "2.6": the line bugs.json's reproduces_on names."""
    out = subprocess.run([tsrepro, "--version"], capture_output=True, text=True).stdout
    found = re.search(r"libtorch (\d+\.\d+)", out)
    return found.group(1) if found else ""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    args = parser.parse_args()
    tsrepro = os.path.join(ROOT, args.build, "tsrepro")
    line = libtorch_line(tsrepro)
    bugs = json.load(open(os.path.join(ROOT, "examples/bugs/bugs.json")))["bugs"]
    print("| bug | nodes | stops | named | runs | wall |")
    print("|---|---|---|---|---|---|")
    for bug in bugs:
        if bug["backend"] not in TORCHSCRIPT_BACKENDS or line not in bug["reproduces_on"]:
            continue
        source = os.path.join(ROOT, "examples/bugs", bug["name"])
        with tempfile.TemporaryDirectory() as tmp:
            case = os.path.join(tmp, "case")
            imported = subprocess.run([tsrepro, "import", source + "/model.pt", "--inputs", source + "/inputs.pt",
                                       "-o", case], capture_output=True, text=True, check=True).stdout
            nodes = re.search(r"(\d+) compute nodes", imported).group(1)
            subprocess.run([tsrepro, "run", case, "--backend", bug["backend"], "--save-repro"], capture_output=True)
            start = time.monotonic()
            out = subprocess.run([tsrepro, "explain", "--passes", case, "--json"], capture_output=True, text=True,
                                 check=True).stdout
            wall = time.monotonic() - start
            found = json.loads(out)
            named = found["pass"] or "none: " + found["finding"]
            at = " (stop %d)" % found["pass_index"] if found["pass_index"] else ""
            of_all = re.search(r"of (\d+) of " + bug["backend"], found["finding"])  # "(pass 13 of 17 of nnc)"
            stops = of_all.group(1) if of_all else str(len(found["passes"]))
            print("| `%s` | %s | %s | %s%s | %d | %.1f s |" % (bug["name"], nodes, stops, named, at, found["runs"], wall))


if __name__ == "__main__":
    main()
