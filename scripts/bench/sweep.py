"""Sweep benchmark: `tsrepro sweep` of the torchvision corpus (tests/corpus/make_corpus.py, random
weights, nothing downloaded) under jit, nnc and ofi, with the local executor (-j 2) and with the
Slurm executor on a one-node Slurm started on this machine (tests/fixtures/slurm/start_cluster.sh),
side by side in one run: wall seconds, jobs, distinct bugs, whether both found the same bugs, and
the work per phase (the seconds each job ran), from which the time
on N nodes is estimated: the phases run one after the other, and a phase takes at least its
longest job and at least its work spread over every slot.

Usage: /usr/bin/python3 scripts/bench/sweep.py [--build build] [--models resnet18,...]
                                               [--write docs/BENCHMARKS.md]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

import markdown_section  # noqa: E402

BACKENDS = "jit,nnc,ofi"
PHASES = ["import", "run", "rerun", "minify", "report"]


def torchvision_models():
    listed = subprocess.run([sys.executable, os.path.join(ROOT, "tests/corpus/make_corpus.py"), "--list"],
                            check=True, capture_output=True, text=True).stdout.split()
    return [name for name in listed if not name.startswith(("audio_", "construct_"))]


def torchvision_library():
    import torchvision
    directory = os.path.dirname(torchvision.__file__)
    return next(os.path.join(directory, f) for f in sorted(os.listdir(directory)) if f.startswith("_C") and f.endswith(".so"))


def sweep(tsrepro, zoo, out, extra, env=None):
    started = time.monotonic()
    result = subprocess.run([tsrepro, "sweep", zoo, "-o", out, "--backends", BACKENDS] + extra,
                            capture_output=True, text=True, env=env)
    seconds = time.monotonic() - started
    if result.returncode != 0:
        sys.exit("sweep failed (%s):\n%s" % (" ".join(extra), result.stderr[-3000:]))
    return seconds, json.load(open(os.path.join(out, "sweep.json")))


def job_seconds(out):
    """Per phase, the seconds each job ran (its `seconds` file, written by tsrepro sweep-job)."""
    per_phase = {}
    for phase in PHASES:
        directory = os.path.join(out, "jobs", phase)
        if not os.path.isdir(directory):
            continue
        for job in os.listdir(directory):
            d = os.path.join(directory, job)
            per_phase.setdefault(phase, []).append(float(open(os.path.join(d, "seconds")).read()))
    return per_phase


def bugs_of(sweep_json):
    return sorted((b["backend"], b["signature"], tuple(sorted(b["models"]))) for b in sweep_json["bugs"])


def estimate(per_phase, nodes, slots):
    return sum(max(max(times), sum(times) / (nodes * slots)) for times in per_phase.values())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--models", default="")
    parser.add_argument("--write", default="")
    args = parser.parse_args()
    tsrepro = os.path.abspath(os.path.join(args.build, "tsrepro"))
    models = args.models.split(",") if args.models else torchvision_models()
    work = tempfile.mkdtemp(prefix="tsrepro-bench-sweep-")
    cluster = os.path.join(work, "slurm")
    try:
        zoo = os.path.join(work, "zoo")
        subprocess.run([sys.executable, os.path.join(ROOT, "tests/corpus/make_corpus.py"), zoo] + models, check=True,
                       stdout=subprocess.DEVNULL)
        library = ["--load-library", torchvision_library()]  # the detection models' torchvision::nms
        local_s, local = sweep(tsrepro, zoo, os.path.join(work, "local"), ["-j", "2"] + library)
        os.makedirs(cluster)
        start = subprocess.run([os.path.join(ROOT, "tests/fixtures/slurm/start_cluster.sh"), cluster],
                               capture_output=True, text=True)
        if start.returncode != 0:
            sys.exit("Slurm did not start: " + start.stdout + start.stderr)
        env = dict(os.environ, SLURM_CONF=os.path.join(cluster, "slurm.conf"))
        slurm_s, slurm = sweep(tsrepro, zoo, os.path.join(work, "slurm-out"), ["--executor", "slurm"] + library, env)
        per_phase = job_seconds(os.path.join(work, "local"))
    finally:
        if os.path.isdir(cluster):
            subprocess.run([os.path.join(ROOT, "tests/fixtures/slurm/stop_cluster.sh"), cluster])
        shutil.rmtree(work, ignore_errors=True)

    failed_imports = [m["name"] for m in local["models"] if "import_error" in m]
    lines = [
        "## Sweep: the torchvision corpus, local -j 2 vs Slurm (scripts/bench/sweep.py)",
        "",
        "%d torchvision models (tests/corpus, random weights) under %s; every failure run again 3 times; "
        "one machine, 2 cores." % (len(models), BACKENDS),
        "",
        "| executor | wall s | jobs | distinct bugs | same bugs as local |",
        "| --- | --- | --- | --- | --- |",
        "| local, -j 2 | %.0f | %d | %d | |" % (local_s, local["jobs"], len(local["bugs"])),
        "| slurm, one node (2 CPUs) | %.0f | %d | %d | %s |" % (slurm_s, slurm["jobs"], len(slurm["bugs"]),
                                                             "yes" if bugs_of(local) == bugs_of(slurm) else "NO"),
        "",
        "Bugs: " + ("; ".join("%s `%s` in %s" % (b[0], b[1], ", ".join(b[2])) for b in bugs_of(local)) or "none") +
        (". Import failed: " + ", ".join(failed_imports) if failed_imports else "") + ".",
        "",
        "| phase | jobs | work s (sum) | longest job s |",
        "| --- | --- | --- | --- |",
    ]
    for phase, times in per_phase.items():
        lines.append("| %s | %d | %.0f | %.1f |" % (phase, len(times), sum(times), max(times)))
    lines += ["", "Estimated wall time on N such nodes (2 slots each; jobs are independent, phases in order): " +
              ", ".join("%d: %.0f s" % (n, estimate(per_phase, n, 2)) for n in (1, 2, 4, 8, 16)) + ". "
              "The estimate counts the jobs' own seconds: the sweep's work between them (starting "
              "processes, reading results, matching graphs) comes on top, and under Slurm its "
              "scheduling too (the one-node cluster here starts each array task in about a second). "
              "Past a few nodes the longest jobs (a large model's run under nnc) bound it."]
    print("\n".join(lines))
    if args.write:
        markdown_section.replace(args.write, "sweep", lines)


if __name__ == "__main__":
    main()
