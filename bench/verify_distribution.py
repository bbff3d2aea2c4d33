#!/usr/bin/env python3
"""The static engine on a whole distribution: every ELF executable and
shared object under the given directories (default /usr/bin, /usr/sbin and
/usr/lib/x86_64-linux-gnu, symbolic links and duplicates of one file
counted once) is rewritten as `memtap run` rewrites it (non-selective,
--only heap,static) and the copy is checked by `memtap instrument
--verify`, which decodes both files itself.  Prints the files, what the
rewriter refused and why, the instruction starts and patches checked, and
every violation (there should be none).

    bench/verify_distribution.py [-j JOBS] [--limit N] [DIR...]
"""
import argparse
import collections
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMTAP = os.path.join(ROOT, "build", "bin", "memtap")
DIRS = ["/usr/bin", "/usr/sbin", "/usr/lib/x86_64-linux-gnu"]
FIELDS = ("starts", "unchanged", "jumps", "traps", "covered", "shared", "redirected", "islands",
          "violations")


def elf_files(dirs):
    """Regular ELF files under dirs, each inode once."""
    seen, out = set(), []
    for d in dirs:
        for base, _, names in os.walk(d):
            for n in names:
                p = os.path.join(base, n)
                try:
                    st = os.stat(p)
                    if not os.path.isfile(p) or (st.st_dev, st.st_ino) in seen:
                        continue
                    with open(p, "rb") as f:
                        if f.read(4) != b"\x7fELF":
                            continue
                except OSError:
                    continue
                seen.add((st.st_dev, st.st_ino))
                out.append(p)
    return sorted(out)


def one(path, tmp):
    """(path, 'refused', reason) or (path, 'verified', counts, violation lines, seconds)."""
    copy = os.path.join(tmp, "%d.copy" % os.getpid())
    start = time.perf_counter()
    p = subprocess.run([MEMTAP, "instrument", "--nonselective", "--only", "heap,static",
                        path, "-o", copy, "--verify"], capture_output=True, text=True)
    secs = time.perf_counter() - start
    if "verified" not in p.stdout:
        reason = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "rc %d" % p.returncode
        return path, "refused", re.sub(r"^memtap: [^:]*: ", "", reason)
    counts = {}
    m = re.search(r"instruction starts (\d+): (\d+) unchanged, (\d+) jumps to trampolines, "
                  r"(\d+) int3 traps, (\d+) in padding under a jump's bytes .*; (\d+) "
                  r"unchanged ones", p.stdout)
    b = re.search(r"branches\s+(\d+) sent to trampolines, (\d+) jumps", p.stdout)
    v = re.search(r"violations\s+(\d+)", p.stdout)
    if m and b and v:
        counts = dict(zip(FIELDS, [int(x) for x in m.groups() + b.groups() + v.groups()]))
    return path, "verified", counts, p.stderr.strip().splitlines(), secs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("dirs", nargs="*", default=DIRS)
    a = ap.parse_args()
    files = elf_files(a.dirs)
    if a.limit:
        files = files[:a.limit]
    totals, refused, bad = collections.Counter(), collections.Counter(), []
    examples = collections.defaultdict(list)
    verified = 0
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ProcessPoolExecutor(a.j) as pool:
        for r in pool.map(one, files, [tmp] * len(files), chunksize=4):
            if r[1] == "refused":
                refused[r[2]] += 1
                examples[r[2]].append(r[0])
                continue
            verified += 1
            totals.update(r[2])
            if r[2].get("violations", 1):
                bad.append((r[0], r[3]))
    print("memtap instrument --nonselective --only heap,static --verify, %s" % " ".join(a.dirs))
    print("files: %d ELF, %d rewritten and verified, %d refused (%.0f s, %d jobs)"
          % (len(files), verified, sum(refused.values()), time.perf_counter() - start, a.j))
    print("instruction starts checked: %d (%d unchanged, %d jumps to trampolines, %d int3 traps,"
          " %d in padding under a jump's bytes, %d unchanged whose first byte ends a jump);"
          " branches sent to trampolines: %d; jumps into padding: %d"
          % tuple(totals[f] for f in FIELDS[:-1]))
    print("violations: %d in %d files" % (totals["violations"], len(bad)))
    for path, lines in bad[:20]:
        print("  %s: %s" % (path, "; ".join(lines[:3])))
    print("refused, by reason:")
    for why, n in refused.most_common(12):
        print("  %5d  %s (%s)" % (n, why, ", ".join(examples[why][:3])))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
