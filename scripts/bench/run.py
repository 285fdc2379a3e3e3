"""Side-by-side benchmark: tsrepro minify vs functorch's fx_minifier on twin cases (twins.py).

Usage: /usr/bin/python3 scripts/bench/run.py [--build build] [--cases a,b] [--jobs 1]
                                              [--peer-timeout 600] [--no-extras] [--repeat 3]
                                              [--write docs/BENCHMARKS.md]

--write replaces the file's chain section (between its marker lines); scripts/bench/real.py
writes the real-model section the same way.

For each case it writes the TorchScript IR twin and its inputs, imports them with `tsrepro
import`, then runs, one after the other on the same machine, `tsrepro minify --json` (a whole
process, start to exit) and fx_peer.py (the peer's minifier call; its Python start and torch
import are not counted in its seconds). Peak RSS is the largest resident set of the process
tree (getrusage of the waited children: tsrepro's workers included).

Each tool runs --repeat times per case (alternating); the run of median time is reported.

Three tsrepro-only tables follow (skip them with --no-extras): -j 1 against -j 2 where candidates
are slow (a user's --test command that takes 0.2 s, as a slow compiler would), peak RSS with
and without --offload on a 5000-node chain whose values are 16 KiB each, and a crash-heavy
minify with workers forked from the zygote against tsrepro-runner exec'd per start.
"""

import argparse
import json
import math
import os
import platform
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

import markdown_section  # noqa: E402
import torch_side  # noqa: E402
import twins  # noqa: E402


def measured_child(argv, timeout, env=None):
    """Runs argv under measure.py: exit code, stdout, wall time, peak RSS and tree PSS."""
    if "torch" in sys.modules:  # it would share libtorch's pages with the tree: see torch_side.py
        raise RuntimeError("a benchmark driver must not import torch; use torch_side.py")
    try:
        r = subprocess.run([sys.executable, os.path.join(HERE, "measure.py"), str(timeout)] + argv,
                           stdout=subprocess.PIPE, text=True, timeout=timeout + 30,
                           env=dict(os.environ, **(env or {})))
        return json.loads(r.stdout)
    except (subprocess.TimeoutExpired, json.JSONDecodeError, subprocess.CalledProcessError):
        return {"rc": None, "out": "", "wall": float(timeout), "rss_mib": 0.0, "tree_pss_mib": 0.0}


def prepare(name, spec, workdir, tsrepro, elements=8):
    case_dir = os.path.join(workdir, name)
    os.makedirs(case_dir, exist_ok=True)
    with open(os.path.join(case_dir, "graph.ir"), "w") as f:
        f.write(twins.to_ir(spec))
    torch_side.run("twin-inputs", elements, os.path.join(case_dir, "inputs.pt"))
    subprocess.run(["rm", "-rf", os.path.join(case_dir, "case"), os.path.join(case_dir, "out")], check=True)
    subprocess.run([tsrepro, "import", os.path.join(case_dir, "graph.ir"), "--inputs",
                    os.path.join(case_dir, "inputs.pt"), "-o", os.path.join(case_dir, "case")],
                   check=True, stdout=subprocess.DEVNULL)
    return case_dir


def query_target(name, n):
    if name.startswith("chain_"):
        return 2 * math.ceil(math.log2(n)) + 10
    return {"two_culprits_1000": 60, "residual_1000": 40, "accuracy_1000": 20}.get(name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--cases", default="")
    ap.add_argument("--jobs", default="1")
    ap.add_argument("--peer-timeout", type=float, default=600)
    ap.add_argument("--write", default="")
    ap.add_argument("--no-extras", action="store_true")
    ap.add_argument("--repeat", type=int, default=3, help="runs per tool and case; the median is reported")
    args = ap.parse_args()
    tsrepro = os.path.join(args.build, "tsrepro")
    workdir = os.path.join(args.build, "bench")
    all_cases = twins.cases()
    names = args.cases.split(",") if args.cases else list(all_cases)

    rows = []
    for name in names:
        spec, backend, _ = all_cases[name]
        case_dir = prepare(name, spec, workdir, tsrepro)
        # Each tool runs --repeat times, alternating; the row holds the run of median wall time
        # (a single run on a shared 2-core machine can be off by half a second).
        ts_runs, peer_runs = [], []
        for _ in range(args.repeat):
            subprocess.run(["rm", "-rf", os.path.join(case_dir, "out")], check=True)
            ts_runs.append(measured_child([tsrepro, "minify", os.path.join(case_dir, "case"), "--backend", backend, "-o",
                                           os.path.join(case_dir, "out"), "--json", "-j", args.jobs], args.peer_timeout))
            peer_runs.append(measured_child([sys.executable, os.path.join(HERE, "fx_peer.py"), name], args.peer_timeout))
        ts = median_run(ts_runs, lambda r: r["wall"])
        peer = median_run(peer_runs, lambda r: json.loads(r["out"])["seconds"] if r["rc"] == 0 else float("inf"))
        tj = json.loads(ts["out"]) if ts["rc"] == 0 else {}
        pj = json.loads(peer["out"]) if peer["rc"] == 0 else {}
        row = {"case": name, "nodes": len(spec), "target_queries": query_target(name, len(spec)), "runs": args.repeat,
               "tsrepro": {"queries": tj.get("queries"), "seconds": ts["wall"], "final_nodes": tj.get("final_nodes"),
                           "cache_hits": tj.get("cache_hits"), "query_ms_median": tj.get("query_ms_median"),
                           "rss_mib": ts["rss_mib"], "ok": ts["rc"] == 0,
                           "all_seconds": [round(r["wall"], 2) for r in ts_runs]},
               "fx_minifier": {"queries": pj.get("queries"), "seconds": pj.get("seconds"),
                               "process_seconds": peer["wall"], "final_nodes": pj.get("final_nodes"),
                               "rss_mib": peer["rss_mib"], "ok": peer["rc"] == 0}}
        rows.append(row)
        print(json.dumps(row), flush=True)
    extras = {} if args.no_extras else {"jobs": jobs_rows(workdir, tsrepro), "offload": offload_rows(workdir, tsrepro),
                                        "restarts": restart_rows(workdir, tsrepro)}
    if args.write:
        write_markdown(rows, extras, args)


def median_run(runs, key):
    """The run whose key is the median (the lower middle one for an even count)."""
    return sorted(runs, key=key)[(len(runs) - 1) // 2]


def tsrepro_minify(tsrepro, case_dir, out_name, flags, timeout=1800, env=None):
    out = os.path.join(case_dir, out_name)
    subprocess.run(["rm", "-rf", out], check=True)
    r = measured_child([tsrepro, "minify", os.path.join(case_dir, "case"), "-o", out, "--json"] + flags, timeout, env)
    j = json.loads(r["out"]) if r["rc"] == 0 else {}
    row = {"flags": " ".join(flags), "queries": j.get("queries"), "final_nodes": j.get("final_nodes"),
           "seconds": r["wall"], "rss_mib": r["rss_mib"], "cli_rss_mib": j.get("peak_rss_mib"), "ok": r["rc"] == 0,
           "graph": open(os.path.join(out, "minified", "graph.ir")).read() if r["rc"] == 0 else None}
    print(json.dumps({k: v for k, v in row.items() if k != "graph"}), flush=True)
    return row


def jobs_rows(workdir, tsrepro):
    """Slow candidates: the decision is a user's command that takes 0.2 s per candidate."""
    spec = twins.chain(200, {74: "relu"})
    case_dir = prepare("slow_test_200", spec, workdir, tsrepro)
    script = os.path.join(case_dir, "slow_test.sh")
    with open(script, "w") as f:
        f.write('sleep 0.2\ngrep -q aten::relu "$1/graph.ir"\n')
    flags = ["--backend", "eager", "--test", "sh " + script]
    return [dict(tsrepro_minify(tsrepro, case_dir, "out_j%d" % j, flags + ["-j", str(j)]), label="-j %d" % j)
            for j in (1, 2)]


def offload_rows(workdir, tsrepro):
    """Reference values on disk or in memory: 5000 values of 4096 floats (16 KiB) each. The
    culprit sits near the end, so truncate-suffix leaves the cutting passes nearly all of them.
    Three runs each, alternating: the peak varies from run to run (see the table's text)."""
    spec = twins.chain(5000, {4900: "relu"})
    case_dir = prepare("chain_5000_wide", spec, workdir, tsrepro, elements=4096)
    flags = ["--backend", "inject:compile-error@aten::relu"]
    configs = (("out_memory", [], "(in memory)"), ("out_offload", ["--offload"], "--offload"))
    runs = {label: [] for _, _, label in configs}
    for _ in range(3):
        for name, extra, label in configs:
            runs[label].append(tsrepro_minify(tsrepro, case_dir, name, flags + extra))
    rows = []
    for _, _, label in configs:
        row = dict(median_run(runs[label], lambda r: r["cli_rss_mib"] or 0), label=label)
        row["cli_rss_range"] = [min(r["cli_rss_mib"] or 0 for r in runs[label]), max(r["cli_rss_mib"] or 0 for r in runs[label])]
        rows.append(row)
    return rows


def restart_rows(workdir, tsrepro):
    """A crash-heavy minify: every candidate that keeps the culprit kills its worker. Workers
    forked from the zygote, against tsrepro-runner exec'd for each start (TSREPRO_RUNNER)."""
    spec = twins.chain(1000, {370: "relu"})
    case_dir = prepare("segfault_1000", spec, workdir, tsrepro)
    flags = ["--backend", "inject:segfault@aten::relu"]
    runner = os.path.join(os.path.dirname(tsrepro), "tsrepro-runner")
    return [dict(tsrepro_minify(tsrepro, case_dir, name, flags, env=env), label=label)
            for name, env, label in (("out_forked", None, "forked from the zygote (default)"),
                                     ("out_exec", {"TSREPRO_RUNNER": runner}, "tsrepro-runner exec'd (TSREPRO_RUNNER)"))]


def fmt(v, digits=1):
    if v is None:
        return "-"
    return ("%%.%df" % digits) % v if isinstance(v, float) else str(v)


def write_markdown(rows, extras, args):
    lines = [
        "## Chains and synthetic DAGs",
        "",
        "`scripts/bench/run.py` (see README) on %s, %d cores, PyTorch %s; tsrepro `-j %s`; in one run, the two "
        "tools alternating on the same case, %d times each; each row is the run of median wall time "
        "(fx: of median minifier-call time)." % (platform.processor() or platform.machine(), os.cpu_count(),
                                                 json.loads(torch_side.run("describe"))["torch"], args.jobs, args.repeat),
        "",
        "- **tsrepro s**: the whole `tsrepro minify` process, start to exit (libtorch load, worker start, "
        "checkpoints and reproducers written). **fx s**: functorch's `minifier()` call alone (its Python start "
        "and `import torch` not counted); **fx proc s**: its whole process.",
        "- **queries**: candidates actually run (tsrepro: cache hits excluded; fx: calls of its oracle, which "
        "runs eagerly, traces with torch.jit.trace and runs the trace twice, like tsrepro's reference + backend).",
        "- **RSS**: peak resident set of the process tree (tsrepro: the largest of the CLI and its workers).",
        "- **end to end**: fx proc s / tsrepro s, whole process against whole process. **vs call**: fx s / "
        "tsrepro s, which charges tsrepro its libtorch start-up (about 0.3 s here) but not the peer its Python's.",
        "",
        "| case | nodes | target q | tsrepro q | fx q | tsrepro s | fx s | fx proc s | end to end | vs call "
        "| final nodes ts / fx | ms/query median | RSS MiB ts / fx |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        t, p = r["tsrepro"], r["fx_minifier"]
        ok = t["ok"] and t["seconds"]
        vs_call = (p["seconds"] / t["seconds"]) if (ok and p["seconds"]) else None
        end_to_end = (p["process_seconds"] / t["seconds"]) if (ok and p["ok"]) else None
        lines.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s | %s / %s |" % (
            r["case"], r["nodes"], fmt(r["target_queries"]), fmt(t["queries"]) if t["ok"] else "failed",
            fmt(p["queries"]) if p["ok"] else "timeout/failed", fmt(t["seconds"], 2), fmt(p["seconds"], 2),
            fmt(p["process_seconds"], 2), fmt(end_to_end, 2) + "x" if end_to_end else "-",
            fmt(vs_call, 2) + "x" if vs_call else "-", fmt(t["final_nodes"]),
            fmt(p["final_nodes"]), fmt(t["query_ms_median"], 1), fmt(t["rss_mib"], 0), fmt(p["rss_mib"], 0)))
    lines.append("")
    if extras:
        lines += extra_tables(extras)
    markdown_section.replace(args.write, "chains", lines)


def same_graph_rows(runs, label_format):
    """Rows of queries, seconds, final nodes, and whether each run found the first one's graph."""
    return ["| %s | %s | %s | %s | %s |" % (label_format % r["label"], fmt(r["queries"]), fmt(r["seconds"]),
                                           fmt(r["final_nodes"]), "yes" if r["graph"] == runs[0]["graph"] else "no")
            for r in runs]


def extra_tables(extras):
    lines = ["### -j 2 where candidates are slow", "",
             "A 200-node chain whose interest test is a user's `--test` command that sleeps 0.2 s per candidate "
             "(a slow out-of-tree compiler). Commits stay in order, so both find the same graph.", "",
             "| flags | queries | seconds | final nodes | same graph as -j 1 |", "| --- | --- | --- | --- | --- |"]
    lines += same_graph_rows(extras["jobs"], "`%s`")
    lines += ["", "### Memory: `--offload`", "",
              "A 5000-node chain with 4096-element inputs: the cutting passes (bisect-window, cut-ranges, "
              "cut-nodes) need 5000 reference values of 16 KiB (about 80 MiB): by default the first 32 MiB "
              "stay in memory and the rest go to disk (kReferenceValuesMemoryBudget), with `--offload` all of "
              "them go to disk (written while the reference run goes, read back per candidate). The tsrepro "
              "process holds them; the "
              "tree's peak is its largest process (a worker may be the largest). Offloaded, what is left above "
              "the ~170 MiB of libtorch and the case is the instrumented reference run itself (a graph of "
              "15000 nodes and its interpreter code, about 30 MiB); the freed tensors and pickle buffers are "
              "handed back to the system every 64 values (without that, glibc kept most of them and the peak "
              "depended on allocation order). Three runs each, alternating: the median run, and the range of "
              "the tsrepro process's peak.", "",
              "| flags | queries | seconds | final nodes | peak RSS MiB, tsrepro process (range) | peak RSS MiB, tree |",
              "| --- | --- | --- | --- | --- | --- |"]
    for r in extras["offload"]:
        lines.append("| `%s` | %s | %s | %s | %s (%s-%s) | %s |" % (
            r["label"], fmt(r["queries"]), fmt(r["seconds"]), fmt(r["final_nodes"]), fmt(r["cli_rss_mib"], 0),
            fmt(r["cli_rss_range"][0], 0), fmt(r["cli_rss_range"][1], 0), fmt(r["rss_mib"], 0)))
    lines += ["", "### Worker starts: forked or exec'd", "",
              "A 1000-node chain whose culprit segfaults: every candidate that keeps it kills its worker, so the "
              "minify starts a worker about once per such query. Forked from the zygote a start costs a few "
              "milliseconds; exec'd, each pays libtorch's start-up again.", "",
              "| workers | queries | seconds | final nodes | same graph |", "| --- | --- | --- | --- | --- |"]
    lines += same_graph_rows(extras["restarts"], "%s")
    lines.append("")
    return lines


if __name__ == "__main__":
    main()
