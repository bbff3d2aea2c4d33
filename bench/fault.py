#!/usr/bin/env python3
"""The fault engine's three paths side by side with native runs and Valgrind
Lackey, on four kinds of workload, median of RUNS interleaved runs:

  compute   synthetic mandelbrot (100 x 100, 100 iterations)
  linked    rewrite_workloads walk 64 (a dependent load to a new cache
            line per step, 1/64 of the static engine's walk)
  block     synthetic fwrite (8 x 64 KiB through stdio)
  threads   heap_threads 16 (16 threads, each allocating a block, storing
            to it and loading it back while the others run)

  default     memtap run --engine fault (accesses completed in the handler,
              hot instructions patched to trampolines)
  completed   the same with MEMTAP_FAULT_PATH=complete (no site patched)
  stepped     the same with MEMTAP_FAULT_PATH=step (the trap-flag path)
  lackey      valgrind --tool=lackey --trace-mem=yes (its trace to /dev/null)

Printed: seconds, each run's time over native, us per traced event
((time - native) / events the default run traced) and the share of
the default run's traced accesses that took no signal (hot sites).

    bench/fault.py [RUNS]          (builds build/ first if needed)
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

from table4 import wall

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
MEMTAP = os.path.join(BIN, "memtap")

WORKLOADS = [
    ("compute", ["synthetic", "mandelbrot"]),
    ("linked", ["rewrite_workloads", "walk", "64"]),
    ("block", ["synthetic", "fwrite"]),
    ("threads", ["heap_threads", "16"]),
]


def info(trace):
    text = subprocess.run([MEMTAP, "info", trace], capture_output=True, text=True).stdout
    return {k: int(v) for k, v in re.findall(r"^(events|faults|hot_accesses): (\d+)$",
                                              text, re.M)}


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    if not os.path.exists(os.path.join(BIN, "heap_threads")):
        subprocess.run([os.path.join(ROOT, "scripts", "build.sh")], check=True)
    tmp = tempfile.mkdtemp(prefix="memtap-fault-")
    trace = os.path.join(tmp, "t.mtr")
    fault = [MEMTAP, "run", "-q", "--keep-going", "--engine", "fault", "-o", trace, "--"]
    lackey = ["valgrind", "--tool=lackey", "--trace-mem=yes", "--log-file=/dev/null"]
    ways = {"native": ([], None), "default": (fault, None),
            "completed": (fault, {"MEMTAP_FAULT_PATH": "complete"}),
            "stepped": (fault, {"MEMTAP_FAULT_PATH": "step"}), "lackey": (lackey, None)}
    traced = [w for w in ways if w != "native"]
    print("%-8s %9s" % ("workload", "native s") + "".join(" %9s" % w for w in traced) * 2 +
          " %9s" % "no signal")
    print("%-8s %9s" % ("", "") + " %9s" % "x native" * len(traced) +
          " %9s" % "us/event" * len(traced) + " %9s" % "accesses")
    for name, argv in WORKLOADS:
        cmd = [os.path.join(BIN, argv[0])] + argv[1:]
        wall(fault + cmd, None)
        counts = info(trace)
        times = {w: [] for w in ways}
        for _ in range(runs):  # interleaved: the machine's drift hits all alike
            for w, (prefix, env) in ways.items():
                times[w].append(wall(prefix + cmd, env))
        t = {w: statistics.median(v) for w, v in times.items()}
        per = {w: (t[w] - t["native"]) / counts["events"] * 1e6 for w in ways}
        hot = counts.get("hot_accesses", 0)
        print("%-8s %9.4f" % (name, t["native"]) +
              "".join(" %9.0f" % (t[w] / t["native"]) for w in traced) +
              "".join(" %9.2f" % per[w] for w in traced) +
              " %8.1f%%" % (100.0 * hot / max(hot + counts["faults"], 1)))
    shutil.rmtree(tmp, True)


if __name__ == "__main__":
    main()
