#!/usr/bin/env python3
"""What a recorded access costs under `memtap run` (the static engine),
the default run (heap and static data only, filtered at run time) beside
the full trace (--only heap,static,stack), as CPU time (user+sys of the
whole run: the program, memtap's writer thread, the command) and wall
time, each run's excess over the native run of its round divided by the
records it wrote; medians of RUNS interleaved rounds.

    bench/record.py [--against DIR] [--writer-off] [RUNS] [WORKLOADS]
                                     (builds build/ first if needed)

WORKLOADS is a comma-separated list of rewrite_workloads' workloads and
of two programs of the distribution: gzip (gzip -9) and xz (xz -6), each
compressing 2 MB of text (16 copies of bench/input.txt); default
walk,threads,sort.  --against DIR adds both settings of another build
(DIR/bin/memtap, a worktree of an earlier commit say), interleaved with
the rest; --writer-off adds both settings with MEMTAP_WRITER=off (each
thread packs, compresses and writes its own chunks: no writer thread).
"""
import os
import re
import statistics
import subprocess
import sys

from table4 import measured, scratch_dir, text_copies

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
SETTINGS = (("default", []), ("full", ["--only", "heap,static,stack"]))
PROGRAMS = {"gzip": ["gzip", "-9", "-c"], "xz": ["xz", "-6", "-c"]}


def records(memtap, trace):
    info = subprocess.run([memtap, "info", trace], capture_output=True, text=True,
                          check=True).stdout
    return int(re.search(r"^events: (\d+)", info, re.M).group(1))


def main():
    args, builds, writer_off = [], [("", os.path.join(BIN, "memtap"))], False
    it = iter(sys.argv[1:])
    for a in it:
        if a == "--against":
            builds.append(("against ", os.path.join(next(it), "bin", "memtap")))
        elif a == "--writer-off":
            writer_off = True
        else:
            args.append(a)
    runs = int(args[0]) if args else 5
    workloads = args[1].split(",") if len(args) > 1 else ["walk", "threads", "sort"]
    prog = os.path.join(BIN, "rewrite_workloads")
    if not os.path.exists(prog):
        subprocess.run([os.path.join(ROOT, "scripts", "build.sh")], check=True)
    tmp = scratch_dir("memtap-bench-")
    os.environ["MEMTAP_CACHE_DIR"] = os.path.join(tmp, "cache")
    text = text_copies(tmp, 16)  # 2 MB
    writers = [("", None)] + ([(", writer off", "off")] if writer_off else [])
    configs = {}
    for tag, memtap in builds:
        for name, opts in SETTINGS:
            for wtag, writer in writers:
                env = dict(os.environ, MEMTAP_WRITER=writer) if writer else None
                label = tag + name + wtag
                trace = os.path.join(tmp, re.sub(r"[ ,]+", "_", label) + ".mtr")
                configs[label] = (memtap, trace, opts, env)
    print("%-8s %-24s %9s %9s %9s %13s %13s" % ("workload", "setting", "records", "CPU s",
                                                 "wall s", "CPU ns/rec", "wall ns/rec"))
    for w in workloads:
        argv = PROGRAMS[w] + [text] if w in PROGRAMS else [prog, w]
        run = lambda c: [c[0], "run", "-q", "-o", c[1]] + c[2] + ["--"] + argv
        for c in configs.values():  # copies made before timing
            subprocess.run(run(c), check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, env=c[3])
        counts = {n: records(c[0], c[1]) for n, c in configs.items()}
        t = {n: [] for n in ["native"] + list(configs)}
        for _ in range(runs):
            t["native"].append(measured(argv, subprocess.DEVNULL)[:2])
            for name, c in configs.items():
                t[name].append(measured(run(c), subprocess.DEVNULL, c[3])[:2])
        nat = t.pop("native")
        print("%-8s %-24s %9s %9.3f %9.3f" % (w, "native", "", statistics.median(c for _, c in nat),
                                              statistics.median(s for s, _ in nat)))
        for name, v in t.items():
            # paired with the native run of the same round: drift cancels
            per = lambda k: statistics.median((a[k] - b[k]) / counts[name] * 1e9
                                              for a, b in zip(v, nat))
            print("%-8s %-24s %9d %9.3f %9.3f %13.1f %13.1f"
                  % ("", name, counts[name], statistics.median(c for _, c in v),
                     statistics.median(s for s, _ in v), per(1), per(0)))


if __name__ == "__main__":
    main()
