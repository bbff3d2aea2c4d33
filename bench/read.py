#!/usr/bin/env python3
"""Reading speed of `memtap show` and `memtap export --format sqlite`:
traces of the walk and sort workloads of rewrite_workloads (its
non-selective copy), shown as MadT symbolic lines, MadT raw lines and
Lackey lines to /dev/null, and written as an SQLite database; median wall
time of RUNS runs each, records per second, and the largest peak RSS of a
run.

    bench/read.py [RUNS]          (builds build/ first if needed)
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
FORMS = {"symbolic": ["show"], "raw": ["show", "--raw"],
         "lackey": ["show", "--raw", "--format", "lackey"],
         "sqlite": ["export", "--format", "sqlite", "-o"]}


def timed(cmd):
    """(seconds, peak RSS in KB) of one run of cmd."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    secs = time.perf_counter() - start
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        raise SystemExit("%s: exit %d" % (" ".join(cmd), p.returncode))
    return secs, usage.ru_maxrss


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    if not os.path.exists(os.path.join(BIN, "rewrite_workloads")):
        subprocess.run([os.path.join(ROOT, "scripts", "build.sh")], check=True)
    memtap = os.path.join(BIN, "memtap")
    tmp = tempfile.mkdtemp(prefix="memtap-bench-")
    copy = os.path.join(tmp, "rw")
    subprocess.run([memtap, "instrument", "-q", "--nonselective",
                    os.path.join(BIN, "rewrite_workloads"), "-o", copy], check=True)
    for w in ("walk", "sort"):
        trace = os.path.join(tmp, w + ".mtr")
        subprocess.run([memtap, "run", "-q", "-o", trace, "--", copy, w], check=True,
                       stdout=subprocess.DEVNULL)
        info = subprocess.run([memtap, "info", trace], capture_output=True, text=True).stdout
        n = int(re.search(r"^events: (\d+)", info, re.M).group(1))
        print("%s: %d records, %d bytes" % (w, n, os.path.getsize(trace)))
        for form, opts in FORMS.items():
            times = []
            for _ in range(runs):
                db = os.path.join(tmp, "t.db")
                if os.path.exists(db):
                    os.unlink(db)
                out = [db] if form == "sqlite" else []
                times.append(timed([memtap] + opts + out + [trace]))
            s = statistics.median(t for t, _ in times)
            print("  %-8s %6.2f s  %5.1f M records/s  peak RSS %d KB"
                  % (form, s, n / s / 1e6, max(r for _, r in times)))


if __name__ == "__main__":
    main()
