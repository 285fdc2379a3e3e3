"""Backward failures: how many queries tsrepro's minify spends on a 1000-node chain whose one
culprit goes wrong only in the backward pass, against the same chain's forward accuracy failure.

Usage: /usr/bin/python3 scripts/bench/backward.py [--build build] [--repeat 3] [--write docs/BENCHMARKS.md]

tsrepro alone: fx_minifier has no backward oracle to compare with. The chain is run.py's
accuracy_1000 (twins.py; the culprit relu at node 613, among ops that do not wash a difference
out); a second case is residual_1000 (its culprit an abs after a sin), where the gradient also
flows around the culprit. Each
row is the run of median wall time; the query count is the same in every run (the search is
deterministic).
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import markdown_section  # noqa: E402
import twins  # noqa: E402
from run import measured_child, median_run, prepare  # noqa: E402

# (case, spec, backend, flags): the forward row first, as the yardstick.
ROWS = [
    ("chain_1000", twins.chain(1000, {613: "relu"}, twins.NON_CONTRACTING), "inject:accuracy@aten::relu", []),
    ("chain_1000", twins.chain(1000, {613: "relu"}, twins.NON_CONTRACTING), "inject:backward-accuracy@aten::relu",
     ["--backward"]),
    ("chain_1000", twins.chain(1000, {613: "relu"}, twins.NON_CONTRACTING), "inject:backward-error@aten::relu",
     ["--backward"]),
    # No backward-accuracy row for it: its input gradients are about 1e-6 after 1000 nodes, under
    # same()'s absolute tolerance (1e-4), so a doubled gradient there is no failure as same() judges.
    ("residual_1000", twins.residual(334, 200, "abs"), "inject:backward-error@aten::abs", ["--backward"]),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--write", default="")
    args = ap.parse_args()
    tsrepro = os.path.join(args.build, "tsrepro")
    workdir = os.path.join(args.build, "bench-backward")
    results = []
    for name, spec, backend, flags in ROWS:
        case_dir = prepare(name, spec, workdir, tsrepro)
        out = os.path.join(case_dir, "out")
        runs = []
        for _ in range(args.repeat):
            subprocess.run(["rm", "-rf", out], check=True)
            runs.append(measured_child([tsrepro, "minify", os.path.join(case_dir, "case"), "--backend", backend, "-o",
                                        out, "--json"] + flags, 600))
        run = median_run(runs, lambda r: r["wall"])
        summary = json.loads(run["out"]) if run["rc"] == 0 else {}
        graph = open(os.path.join(out, "minified", "graph.ir")).read() if run["rc"] == 0 else ""
        row = {"case": name, "nodes": len(spec), "backend": backend, "flags": " ".join(flags),
               "signature": summary.get("signature"), "queries": summary.get("queries"),
               "final_nodes": summary.get("final_nodes"), "seconds": round(run["wall"], 2),
               "ends_at_culprit": backend.split("@")[1] in graph, "rss_mib": run["rss_mib"]}
        results.append(row)
        print(json.dumps(row), flush=True)
    if args.write:
        write_markdown(results, args)


def write_markdown(rows, args):
    lines = ["## Backward failures", "",
             "`scripts/bench/backward.py`: tsrepro `minify` (-j 1) on 1000-node cases whose one culprit fails only "
             "in the backward pass, beside the forward accuracy failure of the same chain. localize-divergence asks "
             "gradient attribution (minifier/gradient_attribution.h): one run with every node isolated finds a wrong "
             "gradient; an error raised in backward names no value and takes the bisection. %d runs each: the median "
             "run (the query counts do not vary)." % args.repeat, "",
             "| case | nodes | backend | flags | signature | queries | final nodes | ends at the culprit | seconds | "
             "RSS MiB |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append("| %s | %d | `%s` | %s | `%s` | %s | %s | %s | %.2f | %.0f |" % (
            r["case"], r["nodes"], r["backend"], "`%s`" % r["flags"] if r["flags"] else "", r["signature"],
            r["queries"], r["final_nodes"], "yes" if r["ends_at_culprit"] else "no", r["seconds"], r["rss_mib"]))
    lines.append("")
    markdown_section.replace(args.write, "backward", lines)


if __name__ == "__main__":
    main()
