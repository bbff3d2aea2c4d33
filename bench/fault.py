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
              hot instructions patched to trampolines, hot pages aliased)
  no alias    the same with MEMTAP_FAULT_ALIAS=off (hot pages read and
              written through /proc/self/mem)
  completed   the same with MEMTAP_FAULT_PATH=complete (no site patched)
  stepped     the same with MEMTAP_FAULT_PATH=step (the trap-flag path)
  lackey      valgrind --tool=lackey --trace-mem=yes (its trace to /dev/null)

Printed (a Markdown table): native seconds of CPU (user + sys of the
whole run, from wait4) and wall, each way's CPU over native, us per
traced event ((time - native) / events the default run traced) of CPU
and of wall, and the share of the default run's traced accesses that
took no signal (hot sites); then the CPU of one more hot access (the
walk four times as long) by default and with no aliases.

    bench/fault.py [RUNS]          (builds build/ first if needed)
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

from table4 import measured

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


def run(prefix, cmd, env):
    """(wall, CPU) seconds of one run; env adds to the environment."""
    e = dict(os.environ)
    e.update(env or {})
    wall_s, cpu_s, _ = measured(prefix + cmd, subprocess.DEVNULL, e)
    return wall_s, cpu_s


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    if not os.path.exists(os.path.join(BIN, "heap_threads")):
        subprocess.run([os.path.join(ROOT, "scripts", "build.sh")], check=True)
    tmp = tempfile.mkdtemp(prefix="memtap-fault-")
    trace = os.path.join(tmp, "t.mtr")
    fault = [MEMTAP, "run", "-q", "--keep-going", "--engine", "fault", "-o", trace, "--"]
    lackey = ["valgrind", "--tool=lackey", "--trace-mem=yes", "--log-file=/dev/null"]
    ways = {"native": ([], None), "default": (fault, None),
            "no alias": (fault, {"MEMTAP_FAULT_ALIAS": "off"}),
            "completed": (fault, {"MEMTAP_FAULT_PATH": "complete"}),
            "stepped": (fault, {"MEMTAP_FAULT_PATH": "step"}), "lackey": (lackey, None)}
    traced = [w for w in ways if w != "native"]
    print("| workload | native s (CPU) | " +
          " | ".join("%s x native" % w for w in traced) + " | " +
          " | ".join("%s us/event CPU (wall)" % w for w in traced) + " | no signal |")
    print("| --- " * (3 + 2 * len(traced)) + "|")
    marginal = {}
    for name, argv in WORKLOADS:
        cmd = [os.path.join(BIN, argv[0])] + argv[1:]
        run(fault, cmd, None)
        counts = info(trace)
        times = {w: [] for w in ways}
        for _ in range(runs):  # interleaved: the machine's drift hits all alike
            for w, (prefix, env) in ways.items():
                times[w].append(run(prefix, cmd, env))
        t = {w: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v))
             for w, v in times.items()}
        per = {w: [(t[w][k] - t["native"][k]) / counts["events"] * 1e6 for k in (0, 1)]
               for w in ways}
        if name == "linked":
            marginal[64] = (counts["events"], t)
        hot = counts.get("hot_accesses", 0)
        print("| %s | %.4f (%.4f) | " % (name, t["native"][0], t["native"][1]) +
              " | ".join("%.0f" % (t[w][1] / t["native"][1]) for w in traced) + " | " +
              " | ".join("%.2f (%.2f)" % (per[w][1], per[w][0]) for w in traced) +
              " | %.1f %% |" % (100.0 * hot / max(hot + counts["faults"], 1)))
    # a hot access's own cost: the walk four times as long, the difference
    # in CPU over the difference in loads
    cmd = [os.path.join(BIN, "rewrite_workloads"), "walk", "16"]
    run(fault, cmd, None)
    events16 = info(trace)["events"]
    for w in ("default", "no alias"):
        prefix, env = ways[w]
        long_cpu = statistics.median(run(prefix, cmd, env)[1] for _ in range(runs))
        events64, t = marginal[64]
        print("marginal CPU of a hot access, %s: %.3f us" %
              (w, (long_cpu - t[w][1]) / (events16 - events64) * 1e6))
    shutil.rmtree(tmp, True)


if __name__ == "__main__":
    main()
