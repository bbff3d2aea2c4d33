#!/usr/bin/env python3
"""Run times of the synthetic workloads natively, under memtap run (every
access to heap, data and bss: the static engine, its cache warm, and the
fault engine) and under Valgrind Lackey (--trace-mem=yes), side by side in
one run, median of RUNS runs, normalized to native as in the MadT paper's
Table IV.  Also the cost of one traced access.

    bench/table4.py [RUNS]        (builds build/ first if needed)
"""
import atexit
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
WORKLOADS = ["calloc", "realloc", "read", "mmap", "fwrite", "mandelbrot", "kernel"]
KERNEL_ACCESSES = 100000


def scratch_dir(prefix):
    """A new directory for a benchmark's traces, copies and inputs, removed
    when the benchmark ends (a run's traces and their .old copies took 1.5
    to 5 GB each and filled the disk) unless MEMTAP_BENCH_KEEP is set."""
    path = tempfile.mkdtemp(prefix=prefix)
    if not os.environ.get("MEMTAP_BENCH_KEEP"):
        atexit.register(shutil.rmtree, path, True)
    return path


def measured(cmd, stderr=None, env=None):
    """(wall seconds, CPU seconds, peak RSS in KB) of one run of cmd, its
    output discarded (stderr: where its messages go; env: the environment,
    else this one), CPU and RSS from wait4: cmd's and every process it
    waited for; exits on a failed run."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=stderr, env=env)
    _, status, usage = os.wait4(p.pid, 0)
    secs = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code:
        raise SystemExit("%s: exit %d" % (" ".join(cmd), code))
    return secs, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def text_copies(tmp, copies):
    """A file in tmp of `copies` copies of bench/input.txt (memtap's README
    as it was at b610c25, kept apart so that the README may change and the
    figures measured on it stay reproducible); its path."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "bench", "input.txt"), "rb") as f:
        data = f.read()
    path = os.path.join(tmp, "input%d.txt" % copies)
    with open(path, "wb") as f:
        f.write(data * copies)
    return path


def wall(cmd, env=None):
    """Seconds cmd takes, its output discarded; env adds to the environment."""
    e = dict(os.environ)
    e.update(env or {})
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=e)
    return time.perf_counter() - t


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    if not os.path.exists(os.path.join(BIN, "synthetic")):
        subprocess.run([os.path.join(ROOT, "scripts", "build.sh")], check=True)
    tmp = scratch_dir("memtap-bench-")
    prog = os.path.join(BIN, "synthetic")
    tools = {
        "native": lambda w: [prog, w],
        "static": lambda w: [os.path.join(BIN, "memtap"), "run", "-o",
                             os.path.join(tmp, "t.mtr"), "--", prog, w],
        "fault": lambda w: [os.path.join(BIN, "memtap"), "run", "--engine", "fault",
                            "-o", os.path.join(tmp, "t.mtr"), "--", prog, w],
        # Lackey's trace goes to /dev/null: it is formatted, not stored
        "lackey": lambda w: ["valgrind", "--tool=lackey", "--trace-mem=yes",
                             "--log-file=/dev/null", prog, w],
    }
    os.environ["MEMTAP_CACHE_DIR"] = os.path.join(tmp, "cache")
    wall(tools["static"]("kernel"))  # the copies made once, before timing
    print("workload     native(s)   static    fault   lackey   (normalized run time, median of %d)"
          % runs)
    medians = {}
    for w in WORKLOADS:
        t = {name: [] for name in tools}
        for _ in range(runs):
            for name, cmd in tools.items():   # side by side, interleaved
                t[name].append(wall(cmd(w)))
        m = {name: statistics.median(v) for name, v in t.items()}
        medians[w] = m
        print("%-11s %9.4f %8.1f %8.0f %8.0f" % (w, m["native"], m["static"] / m["native"],
                                                 m["fault"] / m["native"],
                                                 m["lackey"] / m["native"]))
    k = medians["kernel"]
    per = {e: (k[e] - k["native"]) / KERNEL_ACCESSES * 1e6 for e in ("static", "fault")}
    print("\none traced access (kernel, %d loads): %.3f us static, %.2f us fault"
          % (KERNEL_ACCESSES, per["static"], per["fault"]))
    # the shadow-memory tools on the fault engine's kernel run
    memtap = os.path.join(BIN, "memtap")
    shadow = {tool: [memtap, tool, "-o", os.path.join(tmp, "t.mtr"), "--", prog, "kernel"]
              for tool in ("heat", "share", "uninit")}
    t = {tool: statistics.median(wall(cmd) for _ in range(runs)) for tool, cmd in shadow.items()}
    print("shadow tools on kernel (s): run --engine fault %.2f, %s (native %.4f)"
          % (k["fault"], ", ".join("%s %.2f" % kv for kv in t.items()), k["native"]))


if __name__ == "__main__":
    main()
