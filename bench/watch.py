#!/usr/bin/env python3
"""Cost of `memtap run --watch` under the fault engine: ten_sites reads
ten blocks, one per allocation site, equally; traced whole, and with
--watch on one site (a tenth of the accesses); median wall time of RUNS
runs each, side by side with native, with the faults each run took.

    bench/watch.py [RUNS]     (builds build/ first if needed)
"""
import os
import re
import statistics
import subprocess
import sys
import time

from table4 import scratch_dir

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")


def timed(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    prog = os.path.join(BIN, "ten_sites")
    if not os.path.exists(prog):
        subprocess.run([os.path.join(ROOT, "scripts", "build.sh")], check=True)
    memtap = os.path.join(BIN, "memtap")
    trace = os.path.join(scratch_dir("memtap-bench-"), "t.mtr")
    forms = {"native": [prog],
             "fault, every site": [memtap, "run", "-q", "--engine", "fault", "-o", trace, "--", prog],
             "fault, --watch calloc@site_3": [memtap, "run", "-q", "--engine", "fault",
                                              "--watch", "calloc@site_3", "-o", trace, "--", prog]}
    base = None
    for name, cmd in forms.items():
        secs = statistics.median(timed(cmd) for _ in range(runs))
        base = base or secs
        faults = ""
        if cmd[0] == memtap:
            info = subprocess.run([memtap, "info", trace], capture_output=True, text=True).stdout
            faults = "%s faults, %s events" % (re.search(r"^faults: (\d+)", info, re.M).group(1),
                                              re.search(r"^events: (\d+)", info, re.M).group(1))
        print("%-30s %8.3f s  %7.1fx  %s" % (name, secs, secs / base, faults))


if __name__ == "__main__":
    main()
