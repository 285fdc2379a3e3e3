"""Runs one command and reports, as one JSON line on stdout: its exit code, its stdout, its wall
time, the largest resident set of any process of its tree (getrusage of the waited children:
exact, but per process), and the peak of the tree's summed proportional set size (PSS, sampled
from /proc every 5 ms: pages shared between the CLI, the zygote and the workers, libtorch's
among them, are counted once, so this is what the whole tree costs the machine).

Usage: /usr/bin/python3 measure.py TIMEOUT_SECONDS COMMAND [ARG...]

A separate small process, so that what it measures is the command's tree alone; and none of its
ancestors may hold libtorch (torch_side.py), or it would take a share of the tree's pages.
"""

import json
import os
import resource
import subprocess
import sys
import threading
import time


def children_of():
    """pid -> list of child pids, from /proc."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except OSError:
            continue
    return children


def tree_pss_kib(root):
    children = children_of()
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        try:
            with open("/proc/%d/smaps_rollup" % pid) as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            continue
    return total


def main():
    timeout = float(sys.argv[1])
    argv = sys.argv[2:]
    started = time.monotonic()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    peak_pss = [0]
    done = threading.Event()

    def sample():  # on its own thread, so that the wall time is the process's, not the sampling's
        while not done.wait(0.005):
            peak_pss[0] = max(peak_pss[0], tree_pss_kib(process.pid))

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        out = process.communicate(timeout=timeout)[0]
    except subprocess.TimeoutExpired:
        process.kill()
        out = process.communicate()[0]
    wall = time.monotonic() - started
    done.set()
    sampler.join()
    print(json.dumps({"rc": process.returncode, "out": out, "wall": wall,
                      "rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
                      "tree_pss_mib": peak_pss[0] / 1024}))


if __name__ == "__main__":
    main()
