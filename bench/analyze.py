#!/usr/bin/env python3
"""Speed of `memtap analyze`: instructions analysed per second on large
system libraries, side by side with `objdump -d` (linear disassembly and
formatting only, no analysis) on the same files, median of RUNS runs, and
the peak memory of the analysis.

    bench/analyze.py [RUNS] [FILE...]
"""
import json
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMTAP = os.path.join(ROOT, "build", "bin", "memtap")
DEFAULT_FILES = [
    "/lib/x86_64-linux-gnu/libc.so.6",
    "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
    "/usr/lib/x86_64-linux-gnu/libzstd.so.1",
    "/usr/lib/x86_64-linux-gnu/libZydis.so.4.0",
]


def timed(cmd):
    """Wall seconds of cmd and its peak RSS in MiB (children's maximum)."""
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    return wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    files = [f for f in (sys.argv[2:] or DEFAULT_FILES) if os.path.exists(f)]
    if not os.path.exists(MEMTAP):
        subprocess.run([os.path.join(ROOT, "scripts", "build.sh"), "build"], check=True)
    print("memtap analyze (omega 0.25, chunk 64) vs objdump -d, median of %d runs" % runs)
    print("%-34s %9s %8s %10s %12s %9s %8s" % ("file", "insns", "analyze", "insns/s",
                                               "objdump -d", "ratio", "peak MiB"))
    for path in files:
        info = json.loads(subprocess.run([MEMTAP, "analyze", "--json", path],
                                         capture_output=True, text=True,
                                         check=True).stdout)
        insns = info["total"]["instructions"]
        ours, theirs, peak = [], [], 0.0
        for _ in range(runs):
            wall, rss = timed([MEMTAP, "analyze", "--json", path])
            ours.append(wall)
            peak = max(peak, rss)
            theirs.append(timed(["objdump", "-d", path])[0])
        a, o = statistics.median(ours), statistics.median(theirs)
        print("%-34s %9d %7.3fs %10.0f %11.3fs %8.2fx %8.0f" % (
            os.path.basename(path), insns, a, insns / a, o, a / o, peak))
    print("(peak MiB: the largest resident size of any child so far, "
          "objdump included)")


if __name__ == "__main__":
    main()
