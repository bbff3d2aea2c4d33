#!/usr/bin/env python3
"""Whether memtap's allocation call stacks agree with heaptrack's on real
programs: each program runs once under heaptrack and once under `memtap
run --heap-only --stack-depth 64` (heaptrack keeps whole stacks), and
each side's allocations are counted per stack, a stack being its frames'
`file:line` (the function where there is no line) from the innermost to
main.  Prints, per program, the allocations and stacks of each, how many
stacks have the same count on both sides and what share of the
allocations they hold, and the largest differences.

    bench/stacks_agree.py [PROGRAMS]     (default python3,sqlite3,alloc_stacks)
"""
import collections
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from heaptrack_stacks import record, stacks  # noqa: E402
from alloc_stacks import PYTHON_JOB  # noqa: E402  (the same job measured)

from table4 import scratch_dir  # noqa: E402

MEMTAP = os.path.join(ROOT, "build", "bin", "memtap")
SQL_JOB = ("create table t(a integer primary key, b text);\n"
           "with recursive n(i) as (select 1 union all select i + 1 from n where i < 20000)\n"
           "insert into t select i, printf('%08d', i * 7) from n;\n"
           "create index tb on t(b);\n"
           "select count(*), sum(length(b)) from t where b like '%7%';\n")


def key_of(frames):
    """(function, location) pairs, innermost first, as a stack's key."""
    out = []
    for fn, where in frames:
        bare = fn.split("(")[0]
        out.append(where or ("?" if bare.startswith("0x") or "+0x" in bare else bare))
        if bare == "main":
            break
    return tuple(out)


def memtap_frame(text):
    """memtap's "function file:line" (" (inlined)" after it) as a pair."""
    text = text.replace(" (inlined)", "")
    fn, _, where = text.rpartition(" ")
    if ":" in where and not where.endswith(":0"):
        return fn, where
    return text, None


def memtap_counts(argv, tmp, stdin):
    trace = os.path.join(tmp, "t.mtr")
    subprocess.run([MEMTAP, "run", "-q", "--heap-only", "--stack-depth", "64", "-o", trace,
                    "--"] + argv, stdin=stdin, stdout=subprocess.DEVNULL, check=True)
    rep = json.loads(subprocess.run([MEMTAP, "report", "-q", "--json", "-", trace],
                                    capture_output=True, text=True, check=True).stdout)
    counts = collections.Counter()
    for s in rep["stacks"]:
        counts[key_of([memtap_frame(f) for f in s["frames"]])] += s["allocs"]
    return counts


def main():
    names = sys.argv[1].split(",") if len(sys.argv) > 1 else ["python3", "sqlite3",
                                                              "alloc_stacks"]
    tmp = scratch_dir("memtap-bench-")
    os.environ["MEMTAP_CACHE_DIR"] = os.path.join(tmp, "cache")
    job = os.path.join(tmp, "job.py")
    with open(job, "w") as f:
        f.write(PYTHON_JOB)
    sql = os.path.join(tmp, "job.sql")
    with open(sql, "w") as f:
        f.write(SQL_JOB)
    programs = {"python3": (["/usr/bin/python3", job], None),
                "sqlite3": (["/usr/bin/sqlite3", ":memory:"], sql),
                "alloc_stacks": ([os.path.join(ROOT, "build", "bin", "alloc_stacks")], None)}
    for name in names:
        argv, stdin = programs[name]
        with open(stdin or os.devnull) as f:
            theirs = collections.Counter()
            for frames, fig in stacks(record(argv, tmp, stdin=f)).items():
                theirs[key_of(frames)] += fig["allocs"]
        with open(stdin or os.devnull) as f:
            ours = memtap_counts(argv, tmp, f)
        keys = set(theirs) | set(ours)
        same = [k for k in keys if theirs[k] == ours[k]]
        print("%s: heaptrack %d allocations in %d stacks, memtap %d in %d; %d stacks of %d "
              "agree, holding %.1f %% of heaptrack's allocations"
              % (name, sum(theirs.values()), len(theirs), sum(ours.values()), len(ours),
                 len(same), len(keys), 100.0 * sum(theirs[k] for k in same) /
                 max(1, sum(theirs.values()))))
        for k in sorted(set(keys) - set(same), key=lambda k: -abs(theirs[k] - ours[k]))[:5]:
            print("   heaptrack %6d memtap %6d  %d frames: %s" % (
                theirs[k], ours[k], len(k), " < ".join(k[:5])))


if __name__ == "__main__":
    main()
