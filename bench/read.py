#!/usr/bin/env python3
"""Reading speed and memory of the commands that walk a trace: traces of
workloads of rewrite_workloads (its non-selective copy) shown as MadT
symbolic lines, MadT raw lines, Lackey lines and CSV to /dev/null, exported as
Dinero IV lines, an SQLite database and Parquet files, and reported
(`memtap report`, text and HTML); median wall time of RUNS runs each,
records per second, median CPU time (user + sys of the run and its
threads) and records per CPU-second, and the largest peak RSS of a run (flat memory: the
same RSS whatever the trace's size).

    bench/read.py [--one-cpu] [--against DIR] [RUNS] [WORKLOADS] [FORMS]
                                               (builds build/ first if needed)

--one-cpu runs the readers under taskset -c 0: what one core reads (the
walks read ahead on a second CPU when there is one).  --against DIR reads
with DIR/bin/memtap too (another build, a worktree of an earlier commit
say) the traces it writes itself of its own copy (the formats may
differ), its runs interleaved with build/'s: the two medians side by
side, from one machine in one hour.

WORKLOADS is a comma-separated list (default walk,sort; threads makes a
38 M-record trace, threads_long one of 115 M; gzip traces `gzip -9` of
2 MB of text under the default `memtap run`, 117 M records of the heap
and static data), FORMS too (default all of them).
"""
import os
import re
import statistics
import subprocess
import sys

from table4 import measured, scratch_dir, text_copies

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
FORMS = {"symbolic": ["show"], "raw": ["show", "--raw"],
         "lackey": ["show", "--raw", "--format", "lackey"],
         "csv": ["show", "--format", "csv"],
         "dinero": ["export", "--format", "dinero", "-o", "/dev/null"],
         "sqlite": ["export", "--format", "sqlite", "-o"],
         "parquet": ["export", "--format", "parquet", "-o"],
         "report": ["report", "-q"],
         "html": ["report", "-q", "--html"]}
OUTPUT = {"sqlite": "t.db", "parquet": "t.parquet", "html": "t.html"}


def options(argv):
    """(positional arguments, taskset prefix, the other build's memtap)."""
    args, pin, other = [], [], None
    it = iter(argv)
    for a in it:
        if a == "--one-cpu":
            pin = ["taskset", "-c", "0"]
        elif a == "--against":
            other = os.path.join(os.path.abspath(next(it)), "bin", "memtap")
        else:
            args.append(a)
    return args, pin, other


def report(form, n, times, label=""):
    s = statistics.median(t for t, _, _ in times)
    cpu = statistics.median(c for _, c, _ in times)
    print("  %-8s %7.2f s  %5.1f M records/s  CPU %6.2f s (%5.1f M records/CPU-s)  "
          "peak RSS %d KB%s"
          % (form, s, n / s / 1e6, cpu, n / cpu / 1e6, max(r for _, _, r in times), label))


def write_trace(memtap, copy, workload, trace):
    """Traces workload of copy (gzip: gzip -9 itself) under memtap run; its
    records."""
    argv = ([copy, workload] if workload != "gzip" else
            ["gzip", "-9", "-c", text_copies(os.path.dirname(trace), 16)])
    subprocess.run([memtap, "run", "-q", "-o", trace, "--"] + argv, check=True,
                   stdout=subprocess.DEVNULL)
    info = subprocess.run([memtap, "info", trace], capture_output=True, text=True).stdout
    return int(re.search(r"^events: (\d+)", info, re.M).group(1))


def main():
    args, pin, other = options(sys.argv[1:])
    runs = int(args[0]) if len(args) > 0 else 3
    workloads = args[1].split(",") if len(args) > 1 else ["walk", "sort"]
    forms = args[2].split(",") if len(args) > 2 else list(FORMS)
    if not os.path.exists(os.path.join(BIN, "rewrite_workloads")):
        subprocess.run([os.path.join(ROOT, "scripts", "build.sh")], check=True)
    memtap = os.path.join(BIN, "memtap")
    tmp = scratch_dir("memtap-bench-")
    readers = [memtap] + ([other] if other else [])
    copies = {}
    for i, reader in enumerate(readers):
        copies[reader] = os.path.join(tmp, "rw%d" % i)
        subprocess.run([reader, "instrument", "-q", "--nonselective",
                        os.path.join(BIN, "rewrite_workloads"), "-o", copies[reader]],
                       check=True)
    for w in workloads:
        traces, n = {}, {}
        for i, reader in enumerate(readers):
            traces[reader] = os.path.join(tmp, "%s%d.mtr" % (w, i))
            n[reader] = write_trace(reader, copies[reader], w, traces[reader])
        print("%s: %d records, %d bytes" % (w, n[memtap], os.path.getsize(traces[memtap])))
        for form in forms:
            times = {r: [] for r in readers}
            for _ in range(runs):
                for reader in readers:
                    out = [os.path.join(tmp, OUTPUT[form])] if form in OUTPUT else []
                    if out:
                        subprocess.run(["rm", "-rf", out[0]], check=True)
                    times[reader].append(measured(pin + [reader] + FORMS[form] + out +
                                                  [traces[reader]]))
            report(form, n[memtap], times[memtap])
            if other:
                report("", n[other], times[other], "  (" + other + ")")

if __name__ == "__main__":
    main()
