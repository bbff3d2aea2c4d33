#!/usr/bin/env python3
"""How often rewritten code goes through int3 (a signal, microseconds)
instead of a jump (nanoseconds): `memtap run` (the static engine, its
default bypass rules, a fresh cache) of the rewriter's workloads, programs
of the distribution and the test corpus; per program the trace's events,
the executions through int3 (`memtap info`: rewritten_traps_hit) and
their share.  Counts, not times: one run each.

    bench/int3.py [MEMTAP]       (default build/bin/memtap; builds build/
                                  first if needed)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
CORPUS = ["switcher_O0", "switcher_O2", "switcher_O2_nopie", "switcher_clang_O3",
          "switcher_clang_O2_nopie", "alloc_family", "blockops", "signals", "threads",
          "cxx_alloc", "exceptions", "longjumps", "three_mallocs_stripped", "heat_counts"]


def counts(memtap, trace):
    info = subprocess.run([memtap, "info", trace], capture_output=True, text=True).stdout
    events = int(re.search(r"^events: (\d+)", info, re.M).group(1))
    m = re.search(r"^rewritten_traps_hit: (\d+)", info, re.M)
    return events, int(m.group(1)) if m else 0


def main():
    memtap = sys.argv[1] if len(sys.argv) > 1 else os.path.join(BIN, "memtap")
    if not os.path.exists(os.path.join(BIN, "rewrite_workloads")):
        subprocess.run([os.path.join(ROOT, "scripts", "build.sh")], check=True)
    tmp = tempfile.mkdtemp(prefix="memtap-int3-")
    env = dict(os.environ, MEMTAP_CACHE_DIR=os.path.join(tmp, "cache"))
    data = os.path.join(tmp, "data")
    with open(data, "wb") as f:
        f.write(b"memtap traces memory accesses of Linux programs. " * 20000)
    work = os.path.join(BIN, "rewrite_workloads")
    programs = [("rewrite_workloads " + w, [work, w, "16"])
                for w in ("walk", "threads", "sort", "sweep", "mandel")]
    programs += [("gzip -c (1 MB)", ["gzip", "-c", data]),
                 ("sort (1 MB)", ["sort", data]),
                 ("python3 -c (sum of squares)",
                  ["/usr/bin/python3", "-c", "print(sum(i * i for i in range(20000)))"]),
                 ("ls -la /etc", ["ls", "-la", "/etc"]),
                 ("sed s/a/b/g stdio.h", ["sed", "s/a/b/g", "/usr/include/stdio.h"]),
                 ("objdump -d /bin/true", ["objdump", "-d", "/bin/true"])]
    programs += [(name, [os.path.join(BIN, name)]) for name in CORPUS]
    trace = os.path.join(tmp, "t.mtr")
    print("%-30s %11s %9s %9s" % ("program", "events", "int3", "share"))
    for name, argv in programs:
        if not shutil.which(argv[0]):
            continue
        subprocess.run([memtap, "run", "-q", "-o", trace, "--"] + argv, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        events, hit = counts(memtap, trace)
        print("%-30s %11d %9d %8.4f%%" % (name, events, hit, 100.0 * hit / max(events, 1)))
    shutil.rmtree(tmp, True)


if __name__ == "__main__":
    main()
