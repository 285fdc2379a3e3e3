"""What libtsrepro_capture.so costs a program: examples/capture/plain_app (an ordinary libtorch
program) on a healthy model, run plain, with the library preloaded and TSREPRO_AFTER unset, and
with TSREPRO_AFTER=fusion (level 1) and =graph (level 1), alternating, --repeat times each.

Usage: /usr/bin/python3 scripts/bench/capture.py [--build build] [--calls 2000] [--repeat 5]
                                                   [--write docs/BENCHMARKS.md]

Reported per setting, the median run: the whole process's wall time, and the steady-state time
per call the program measures itself (calls after the profiling executor's first two). With the
variable set, the first optimized call of each graph also waits for the checks (tsrepro child
processes): that one-time cost is in the process time, not in the per-call time.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import markdown_section  # noqa: E402
import torch_side  # noqa: E402

MODELS = ["elementwise_chain_scripted", "conv_bn_relu_linear_scripted"]


def settings(build):
    preload = {"LD_PRELOAD": os.path.join(build, "libtsrepro_capture.so"), "TSREPRO_BIN": os.path.join(build, "tsrepro")}
    return [("plain", {}),
            ("preloaded, TSREPRO_AFTER unset", preload),
            ("preloaded, TSREPRO_AFTER=fusion TSREPRO_LEVEL=1", dict(preload, TSREPRO_AFTER="fusion", TSREPRO_LEVEL="1")),
            ("preloaded, TSREPRO_AFTER=graph TSREPRO_LEVEL=1", dict(preload, TSREPRO_AFTER="graph", TSREPRO_LEVEL="1"))]


def run_once(build, model, inputs, calls, env, out_dir):
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TSREPRO_") and k != "LD_PRELOAD"}
    started = time.monotonic()
    r = subprocess.run([os.path.join(build, "capture_plain_app"), model, inputs, str(calls)],
                       env=dict(clean, TSREPRO_DIR=out_dir, **env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, check=True)
    wall = time.monotonic() - started
    steady = re.search(r"steady calls: (\d+) in ([0-9.e-]+) s", r.stdout)
    return wall, float(steady.group(2)) / int(steady.group(1)) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--write", default="")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in MODELS:
            model = os.path.join(ROOT, "examples", "models", name + ".pt")
            inputs = os.path.join(tmp, name + ".inputs.pt")  # the app reads a tuple
            torch_side.run("as-tuple", os.path.join(ROOT, "examples", "models", name + ".inputs.pt"), inputs)
            runs = {label: [] for label, _ in settings(args.build)}
            for _ in range(args.repeat):  # alternating, so drift hits every setting alike
                for label, env in settings(args.build):
                    runs[label].append(run_once(args.build, model, inputs, args.calls, env, os.path.join(tmp, "out")))
            plain_ms = statistics.median(ms for _, ms in runs["plain"])
            for label, _ in settings(args.build):
                wall = statistics.median(w for w, _ in runs[label])
                ms = statistics.median(m for _, m in runs[label])
                row = {"model": name, "setting": label, "process_s": round(wall, 3), "ms_per_call": round(ms, 4),
                       "vs_plain": round(ms / plain_ms - 1, 4)}
                rows.append(row)
                print(row, flush=True)
    if args.write:
        write_markdown(rows, args)


def write_markdown(rows, args):
    lines = ["## The capture library's cost", "",
             "`scripts/bench/capture.py`: examples/capture/plain_app (an ordinary libtorch program, CPU fusion on) "
             "calling a healthy model %d times; %d runs per setting, alternating, the median. **ms/call** is the "
             "steady state the program measures itself (after the profiling executor's first two calls); "
             "**process s** includes libtorch's start and, with TSREPRO_AFTER set, the one-time checks of each "
             "graph or fusion group in tsrepro child processes." % (args.calls, args.repeat), "",
             "| model | setting | process s | ms/call | ms/call vs plain |",
             "| --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append("| %s | %s | %.2f | %.4f | %+.1f%% |" % (r["model"], r["setting"], r["process_s"], r["ms_per_call"],
                                                            100 * r["vs_plain"]))
    lines.append("")
    markdown_section.replace(args.write, "capture", lines)


if __name__ == "__main__":
    main()
