#!/usr/bin/env python3
"""Exactness under asynchronous signals on a loaded machine: N copies of
tests/programs/timer_loop (6,000,000 known accesses of `cells` under a
50 µs timer whose handler loads and stores `ticks`) run at once under the
default engine; each trace's counts are compared with what the program
did (memtap report's per-object rows).  Prints the runs that are not
exact and the total.

    bench/signal_stress.py [N]      (default 24; build/ built first)
"""
import os
import re
import subprocess
import sys

from table4 import scratch_dir

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")


def counts(memtap, trace):
    rows = {}
    out = subprocess.run([memtap, "report", trace], capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = re.match(r"\s*(\d+)\s+\S+%\s+\d+\s+\d+\s.*\s(cells|ticks) \[timer_loop\]$", line)
        if m:
            rows[m.group(2)] = int(m.group(1))
    return rows


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 24
    memtap, prog = os.path.join(BIN, "memtap"), os.path.join(BIN, "timer_loop")
    tmp = scratch_dir("memtap-stress-")
    env = dict(os.environ, MEMTAP_CACHE_DIR=os.path.join(tmp, "cache"))
    # one run first: the copies are made once, not by N runs at once
    subprocess.run([memtap, "run", "-q", "-o", os.path.join(tmp, "warm.mtr"), "--", prog],
                   env=env, check=True, capture_output=True)
    procs = [subprocess.Popen([memtap, "run", "-q", "-o", os.path.join(tmp, "%d.mtr" % i),
                               "--", prog], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True) for i in range(n)]
    bad = 0
    for i, p in enumerate(procs):
        ticks = int(re.search(r"ticks (\d+)", p.communicate()[0]).group(1))
        got = counts(memtap, os.path.join(tmp, "%d.mtr" % i))
        want = {"cells": 6000000, "ticks": 2 * ticks + 1}
        if got != want:
            bad += 1
            print("run %d: %s, the program did %s" % (i, got, want))
    print("%d of %d runs exact (%d at once, %d CPUs)" % (n - bad, n, n, os.cpu_count()))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
