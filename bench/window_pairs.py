#!/usr/bin/env python3
"""What recording costs a rewritten program's thread beyond logging, paired
inside one process (bench/window_pairs.c: a walk over 1 M nodes in random
order, memory latency bound; a step is two records, the load of the
node's value and of its next pointer, one entry):

  native          the original: the method's own bias (both halves alike)
  memtap run      its non-selective copy under memtap run: every access
                  logged all along, handed to the trace (packed,
                  compressed, written by memtap's writer on the other CPU
                  or by the thread itself) only in the open halves

Whole-run medians of the walk move by several ns a record from one batch
of runs to the next on a shared virtual machine; halves a few hundred
milliseconds apart in one process see the same machine.

    bench/window_pairs.py [ROUNDS]       (builds build/ first if needed)
"""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")


def main():
    rounds = sys.argv[1] if len(sys.argv) > 1 else "31"
    orig = os.path.join(BIN, "window_pairs")
    if not os.path.exists(orig):
        subprocess.run([os.path.join(ROOT, "scripts", "build.sh")], check=True)
    memtap = os.path.join(BIN, "memtap")
    tmp = tempfile.mkdtemp(prefix="memtap-bench-")
    copy = os.path.join(tmp, "window_pairs.mt")
    subprocess.run([memtap, "instrument", "-q", "--nonselective", orig, "-o", copy],
                   check=True)
    trace = os.path.join(tmp, "t.mtr")
    for name, cmd in (("native", [orig, rounds]),
                      ("memtap run", [memtap, "run", "-q", "-o", trace, "--", copy, rounds])):
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        print("%-11s %s" % (name, out.strip()))
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
