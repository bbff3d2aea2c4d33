#!/usr/bin/env python3
"""memtap run's engines side by side, median of RUNS interleaved runs:

  per traced access (the walk of rewrite_workloads, a dependent load to a
  new cache line per step; the fault engine on a 64 times smaller walk,
  as it would take most of an hour on the whole one):
    static   memtap run (the default engine, auto: static), cache warm
    fault    memtap run --engine fault
    lackey   valgrind --tool=lackey --trace-mem=yes
  ns per access = (time - native time of the same walk) / accesses traced

  whole programs of the distribution, seconds: native, the first run
  (empty cache: the program and its libraries rewritten) and later runs
  (cache warm) of memtap run; the trace's events, and the time per
  event of later runs; beside them, doing it by hand: `memtap instrument`
  of the program and of each library the cache holds after a run (with
  the run's default bypass rules), once, and `memtap run` of the copies
  (LD_LIBRARY_PATH to the libraries'), with the ratios first run /
  (instrument + copies) and later runs / copies

    bench/engines.py [RUNS]          (builds build/ first if needed)
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

from table4 import wall

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
MEMTAP = os.path.join(BIN, "memtap")
SMALL = 64


def events(trace):
    info = subprocess.run([MEMTAP, "info", trace], capture_output=True, text=True).stdout
    return int(re.search(r"^events: (\d+)", info, re.M).group(1))


def by_hand(argv, cache, tmp):
    """Instruments argv[0] and the libraries the cache holds for it into
    tmp/copies; returns (seconds taken, argv running the copy, env)."""
    listing = subprocess.run([MEMTAP, "cache", "ls"], capture_output=True, text=True,
                             check=True, env=dict(os.environ, MEMTAP_CACHE_DIR=cache)).stdout
    originals = re.findall(r" <- (\S+)$", listing, re.M)
    out = os.path.join(tmp, "copies")
    shutil.rmtree(out, True)
    os.makedirs(out)
    prog = shutil.which(argv[0])
    took = 0.0
    for path in originals:
        dest = os.path.join(out, os.path.basename(path))
        took += wall([MEMTAP, "instrument", "-q", "--nonselective", "--only", "heap,static",
                      path, "-o", dest])
    copy = os.path.join(out, os.path.basename(os.path.realpath(prog)))
    return took, [copy] + argv[1:], {"LD_LIBRARY_PATH": out}


def median(cmd, runs, env=None, before=None):
    times = []
    for _ in range(runs):
        if before:
            before()
        times.append(wall(cmd, env))
    return statistics.median(times)


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    if not os.path.exists(os.path.join(BIN, "rewrite_workloads")):
        subprocess.run([os.path.join(ROOT, "scripts", "build.sh")], check=True)
    tmp = tempfile.mkdtemp(prefix="memtap-engines-")
    cache = os.path.join(tmp, "cache")
    warm = {"MEMTAP_CACHE_DIR": cache}
    trace = os.path.join(tmp, "t.mtr")
    work = os.path.join(BIN, "rewrite_workloads")

    def run(*opts):
        return [MEMTAP, "run", "-q", *opts, "-o", trace, "--"]

    subprocess.run(run() + [work, "walk"], env=dict(os.environ, **warm), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    n_static = events(trace)
    subprocess.run(run("--engine", "fault") + [work, "walk", str(SMALL)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    n_fault = events(trace)
    native = median([work, "walk"], runs)
    native_small = median([work, "walk", str(SMALL)], runs)
    t_static = median(run() + [work, "walk"], runs, warm)
    t_fault = median(run("--engine", "fault") + [work, "walk", str(SMALL)], runs)
    t_lackey = median(["valgrind", "--tool=lackey", "--trace-mem=yes", "--log-file=/dev/null",
                       work, "walk", str(SMALL)], runs)
    per = {"static": (t_static - native) / n_static * 1e9,
           "fault": (t_fault - native_small) / n_fault * 1e9,
           "lackey": (t_lackey - native_small) / n_fault * 1e9}
    print("walk: native %.3f s (1/%d: %.4f s); events traced: static %d, fault (1/%d) %d"
          % (native, SMALL, native_small, n_static, SMALL, n_fault))
    print("ns per traced access: static %.1f, fault %.0f, lackey %.0f; fault/static %.0fx"
          % (per["static"], per["fault"], per["lackey"], per["fault"] / per["static"]))

    data = os.path.join(tmp, "data")
    with open(data, "wb") as f:
        f.write((b"memtap traces memory accesses of Linux programs. " * 20000))
    programs = [("gzip -c (1 MB)", ["gzip", "-c", data]),
                ("sort (1 MB)", ["sort", data]),
                ("python3 -c (sum of squares)",  # the distribution's, not a shim
                 ["/usr/bin/python3", "-c", "print(sum(i * i for i in range(20000)))"])]
    print("%-28s %9s %10s %10s %11s %9s %11s %9s %13s %13s"
          % ("program", "native s", "first run", "later runs", "events", "ns/event",
             "instrument", "copies", "first/by hand", "later/copies"))
    for name, argv in programs:
        if not shutil.which(argv[0]):
            continue
        nat = median(argv, runs)
        first = median(run() + argv, runs, warm, before=lambda: shutil.rmtree(cache, True))
        later = median(run() + argv, runs, warm)
        n = events(trace)
        took, copy_argv, env = by_hand(argv, cache, tmp)
        copies = median(run() + copy_argv, runs, dict(warm, **env))
        print("%-28s %9.3f %9.2fs %9.2fs %11d %9.1f %10.2fs %8.2fs %12.2fx %12.2fx"
              % (name, nat, first, later, n, (later - nat) / n * 1e9, took, copies,
                 first / (took + copies), later / copies))
    shutil.rmtree(tmp, True)


if __name__ == "__main__":
    main()
