#!/usr/bin/env python3
"""What a recorded access costs under `memtap run` (the static engine),
the default run (heap and static data only, filtered at run time) beside
the full trace (--only heap,static,stack), as CPU time (user+sys of the
whole run: the program, memtap's writer thread, the command) and wall
time, each run's excess over the native run of its round divided by the
records it wrote; medians of RUNS interleaved rounds.

    bench/record.py [--against DIR] [RUNS] [WORKLOADS]
                                     (builds build/ first if needed)

WORKLOADS is a comma-separated list of rewrite_workloads' workloads
(default walk,threads,sort).  --against DIR adds both settings of
another build (DIR/bin/memtap, a worktree of an earlier commit say),
interleaved with the rest.
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile

from table4 import measured

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
SETTINGS = (("default", []), ("full", ["--only", "heap,static,stack"]))


def timed(argv):
    """(wall seconds, CPU seconds of argv and every process it waited for)."""
    return measured(argv, subprocess.DEVNULL)[:2]


def records(memtap, trace):
    info = subprocess.run([memtap, "info", trace], capture_output=True, text=True,
                          check=True).stdout
    return int(re.search(r"^events: (\d+)", info, re.M).group(1))


def main():
    args, builds = [], [("", os.path.join(BIN, "memtap"))]
    it = iter(sys.argv[1:])
    for a in it:
        if a == "--against":
            builds.append(("against ", os.path.join(next(it), "bin", "memtap")))
        else:
            args.append(a)
    runs = int(args[0]) if args else 5
    workloads = args[1].split(",") if len(args) > 1 else ["walk", "threads", "sort"]
    prog = os.path.join(BIN, "rewrite_workloads")
    if not os.path.exists(prog):
        subprocess.run([os.path.join(ROOT, "scripts", "build.sh")], check=True)
    tmp = tempfile.mkdtemp(prefix="memtap-bench-")
    os.environ["MEMTAP_CACHE_DIR"] = os.path.join(tmp, "cache")
    configs = {}
    for tag, memtap in builds:
        for name, opts in SETTINGS:
            trace = os.path.join(tmp, (tag + name).replace(" ", "_") + ".mtr")
            configs[tag + name] = (memtap, trace, opts)
    print("%-8s %-16s %9s %9s %9s %13s %13s" % ("workload", "setting", "records", "CPU s",
                                                 "wall s", "CPU ns/rec", "wall ns/rec"))
    for w in workloads:
        for memtap, trace, opts in configs.values():  # copies made before timing
            subprocess.run([memtap, "run", "-q", "-o", trace] + opts + ["--", prog, w],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        counts = {n: records(m, t) for n, (m, t, _) in configs.items()}
        t = {n: [] for n in ["native"] + list(configs)}
        for _ in range(runs):
            t["native"].append(timed([prog, w]))
            for name, (memtap, trace, opts) in configs.items():
                t[name].append(timed([memtap, "run", "-q", "-o", trace] + opts + ["--", prog, w]))
        nat = t.pop("native")
        print("%-8s %-16s %9s %9.3f %9.3f" % (w, "native", "", statistics.median(c for _, c in nat),
                                              statistics.median(s for s, _ in nat)))
        for name, v in t.items():
            # paired with the native run of the same round: drift cancels
            per = lambda k: statistics.median((a[k] - b[k]) / counts[name] * 1e9
                                              for a, b in zip(v, nat))
            print("%-8s %-16s %9d %9.3f %9.3f %13.1f %13.1f"
                  % ("", name, counts[name], statistics.median(c for _, c in v),
                     statistics.median(s for s, _ in v), per(1), per(0)))


if __name__ == "__main__":
    main()
