#!/usr/bin/env python3
"""Run times of rewritten programs (memtap instrument) side by side with
the original and with Valgrind Lackey, median of RUNS interleaved runs:

  native          the original program
  no runtime      the non-selective copy run on its own: the runtime is
                  not loaded, each site's trampoline runs and finds
                  logging off (the cost of the jumps, saves and the check)
  log only        the non-selective copy under memtap run with
                  MEMTAP_REWRITE_DISCARD=1: every access appended to the
                  thread's buffer, nothing written (the logging path)
  non-selective,  the copies under memtap run, writing the trace
  omega 0.5, 0.25
  no writer       the non-selective copy with MEMTAP_WRITER=off: each thread
                  compresses and writes its own full buffers (what one CPU
                  gets)
  lackey          valgrind --tool=lackey --trace-mem=yes (to /dev/null)

The ratios are of medians; the ns per record below each line are the
median of each run's excess over the native run of the same round.

    bench/rewrite.py [--no-lackey] [--against DIR] [RUNS]
                                     (builds build/ first if needed)

--no-lackey leaves Lackey's column out: most of the benchmark's time (its
runs take 30 to 5000 times native), and no code of memtap's is under it.
--against DIR adds a column of another build (DIR/bin/memtap, a worktree
of an earlier commit say): its own non-selective copy under its own
memtap run, interleaved with the rest.
"""
import os
import re
import statistics
import subprocess
import sys

from table4 import scratch_dir, wall

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
WORKLOADS = ["sweep", "mandel", "sort", "walk", "threads"]


def main():
    args, lackey, other = [], True, None
    it = iter(sys.argv[1:])
    for a in it:
        if a == "--no-lackey":
            lackey = False
        elif a == "--against":
            other = os.path.join(next(it), "bin", "memtap")
        else:
            args.append(a)
    runs = int(args[0]) if args else 3
    if not os.path.exists(os.path.join(BIN, "rewrite_workloads")):
        subprocess.run([os.path.join(ROOT, "scripts", "build.sh")], check=True)
    tmp = scratch_dir("memtap-bench-")
    memtap = os.path.join(BIN, "memtap")
    orig = os.path.join(BIN, "rewrite_workloads")
    copies = {}
    for name, opts in (("non-selective", ["--nonselective"]), ("omega 0.5", ["--omega", "0.5"]),
                       ("omega 0.25", ["--omega", "0.25"])):
        copies[name] = os.path.join(tmp, name.replace(" ", "_") + ".mt")
        subprocess.run([memtap, "instrument", "-q", orig, "-o", copies[name]] + opts, check=True)
    trace = os.path.join(tmp, "t.mtr")
    under = lambda path, w: [memtap, "run", "-o", trace, "--", path, w]
    tools = {
        "native": (lambda w: [orig, w], None),
        "no runtime": (lambda w: [copies["non-selective"], w], None),
        "log only": (lambda w: under(copies["non-selective"], w),
                     {"MEMTAP_REWRITE_DISCARD": "1"}),
    }
    for name in copies:
        tools[name] = ((lambda p: lambda w: under(p, w))(copies[name]), None)
    tools["no writer"] = (lambda w: under(copies["non-selective"], w), {"MEMTAP_WRITER": "off"})
    if other:
        theirs = os.path.join(tmp, "other.mt")
        subprocess.run([other, "instrument", "-q", orig, "-o", theirs, "--nonselective"],
                       check=True)
        tools["against"] = (lambda w: [other, "run", "-o", trace, "--", theirs, w], None)
    if lackey:
        tools["lackey"] = (lambda w: ["valgrind", "--tool=lackey", "--trace-mem=yes",
                                      "--log-file=/dev/null", orig, w], None)
    print("%-8s %9s " % ("workload", "native s") +
          " ".join("%13s" % n for n in tools if n != "native") + "   records (non-sel.)")
    for w in WORKLOADS:
        t = {name: [] for name in tools}
        for _ in range(runs):
            for name, (cmd, env) in tools.items():
                for old in (trace, trace + ".old"):  # removing one is no part of a run
                    if os.path.exists(old):
                        os.unlink(old)
                t[name].append(wall(cmd(w), env))
        subprocess.run(under(copies["non-selective"], w), check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        info = subprocess.run([memtap, "info", trace], capture_output=True, text=True).stdout
        events = int(re.search(r"^events: (\d+)", info, re.M).group(1))
        size = os.path.getsize(trace)
        m = {name: statistics.median(v) for name, v in t.items()}
        print("%-8s %9.3f " % (w, m["native"]) +
              " ".join("%12.1fx" % (m[n] / m["native"]) for n in tools if n != "native") +
              "   %d" % events)
        # paired: each run's excess over the native run of its round, so
        # that the machine's drift from round to round cancels
        per = lambda n: statistics.median(
            (a - b) / events * 1e9 for a, b in zip(t[n], t["native"]))
        print("%-8s per record: no runtime %.1f ns, log only %.1f ns, traced %.1f ns "
              "(no writer %.1f ns%s), %.2f bytes"
              % ("", per("no runtime"), per("log only"), per("non-selective"),
                 per("no writer"), ", against %.1f ns" % per("against") if other else "",
                 size / events))


if __name__ == "__main__":
    main()
