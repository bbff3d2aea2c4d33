#!/usr/bin/env python3
"""The data cache model's cost, side by side with Valgrind's Cachegrind on
the same programs and geometry: per program, the CPU time (user + sys of
the whole run, every thread) and the wall time of the program natively,
under Cachegrind (--cache-sim=yes), memtap's way in two steps (`memtap
run` to a trace, then `memtap cachesim`, each timed) and in one (`memtap
cachesim -- PROGRAM`: the model beside the program), medians of RUNS
runs, interleaved; then the line accesses memtap simulated and its rate
(offline, CPU), and both tools' D1 and LL data misses (memtap runs with
--only heap,static,stack; Cachegrind's also count the loader's start-up,
which runs before memtap traces).

    bench/cachesim.py [RUNS]       (default 3; builds nothing: build/ first)
"""
import os
import re
import resource
import statistics
import subprocess
import sys
import time

from table4 import scratch_dir, text_copies

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMTAP = os.path.join(ROOT, "build", "bin", "memtap")
D1, LL = "32768,8,64", "1048576,16,64"


def programs(tmp):
    text = text_copies(tmp, 4)
    return [("cache_walk", [os.path.join(ROOT, "build", "bin", "cache_walk")]),
            ("gzip -6", ["gzip", "-6", "-c", text]),
            ("xz -0", ["xz", "-0", "-c", text])]


def cpu_of(argv):
    """((CPU seconds, wall seconds) of argv's whole run, its stdout and
    stderr)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    p = subprocess.run(argv, capture_output=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    p.stdout = p.stdout.decode(errors="replace")  # a compressor's output too
    p.stderr = p.stderr.decode(errors="replace")
    if p.returncode != 0:
        sys.exit("bench/cachesim.py: %s: exit %d\n%s" % (argv[0], p.returncode, p.stderr))
    return ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall), p


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    tmp = scratch_dir("memtap-cachesim-")
    print("| program | native CPU s (wall) | Cachegrind CPU s (wall) "
          "| memtap run + cachesim CPU s (wall) | memtap cachesim -- PROG CPU s (wall) "
          "| line accesses | cachesim rate | D1 misses memtap / Cachegrind "
          "| LL misses memtap / Cachegrind |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, argv in programs(tmp):
        trace = os.path.join(tmp, "t.mtr")
        times = {"native": [], "cachegrind": [], "run": [], "sim": [], "online": []}
        for _ in range(runs):
            times["native"].append(cpu_of(argv)[0])
            t, p = cpu_of(["valgrind", "--tool=cachegrind", "--cache-sim=yes",
                           "--D1=" + D1, "--LL=" + LL,
                           "--cachegrind-out-file=/dev/null"] + argv)
            times["cachegrind"].append(t)
            cg = p.stderr
            # every data access, as Cachegrind sees them (the stack too)
            times["run"].append(cpu_of([MEMTAP, "run", "-q", "--only", "heap,static,stack",
                                        "-o", trace, "--"] + argv)[0])
            t, p = cpu_of([MEMTAP, "cachesim", "--D1", D1, "--LL", LL, "--top", "0", trace])
            times["sim"].append(t)
            ours = p.stdout
            times["online"].append(cpu_of([MEMTAP, "cachesim", "-q", "--D1", D1, "--LL", LL,
                                           "--top", "0", "--"] + argv)[0])
        med = {k: (statistics.median(c for c, _ in v), statistics.median(w for _, w in v))
               for k, v in times.items()}
        n = int(re.search(r"line accesses: (\d+)", ours).group(1))
        d1 = re.search(r"D1 misses: (\d+)", ours).group(1)
        ll = re.search(r"LL misses: (\d+)", ours).group(1)
        cg_d1 = re.search(r"D1  misses:\s+([\d,]+)", cg).group(1)
        cg_ll = re.search(r"LLd misses:\s+([\d,]+)", cg).group(1)
        two = (med["run"][0] + med["sim"][0], med["run"][1] + med["sim"][1])
        print("| %s | %.2f (%.2f) | %.2f (%.2f) | %.2f + %.2f = %.2f (%.2f) | %.2f (%.2f) "
              "| %d | %.1f M/s | %s / %s | %s / %s |" % (
                  name, *med["native"], *med["cachegrind"], med["run"][0], med["sim"][0],
                  *two, *med["online"], n, n / med["sim"][0] / 1e6 if med["sim"][0] else 0,
                  d1, cg_d1, ll, cg_ll))
        sys.stdout.flush()
    subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
