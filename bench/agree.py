#!/usr/bin/env python3
"""Do the engines record the same accesses, instruction by instruction, on
programs of the distribution?  For each program (small inputs, so that the
fault engine and Valgrind finish quickly):

  static vs fault   `memtap run` (the default engine) and `memtap run
                    --engine fault`, default options: per instruction
                    (module + offset), the loads and the stores of each
                    engine; the accesses of instructions whose counts
                    differ, and the instructions.
  lackey            for the module named (liblzma, libsqlite3, lua5.4's
                    own executable, where its virtual machine is),
                    `memtap run --only heap,static,stack --implicit
                    --string-elements` against `valgrind --tool=lackey
                    --trace-mem=yes` (a modify counts as a load and a
                    store), per instruction of that library.

    bench/agree.py [--top N] [--no-lackey] [--only xz,lua5.4,...]
"""
import argparse
import collections
import os
import re
import shutil
import struct
import subprocess
import sys

from table4 import scratch_dir

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMTAP = os.path.join(ROOT, "build", "bin", "memtap")

SQL = ("create table t(a, b); with recursive n(i) as (select 1 union all select i+1 from n "
       "where i < 200) insert into t select i, 'v' || i from n; "
       "select count(*) from t where b like '%7%'; select count(*) from t where b glob '*1?';"
       "select json_group_array(a) from t where a % 50 = 0;")
LUA = ("local t = {} for i = 1, 300 do t[i] = (i * 37) % 101 end table.sort(t) "
       "local s = 0 for _, v in ipairs(t) do s = s + v end "
       "print(s, ('x'):rep(20):gsub('x', 'y'))")


def programs(tmp):
    text = os.path.join(tmp, "input.txt")
    # memtap's README as it was at b610c25, kept apart so that the README
    # may change and the figures measured on it stay reproducible
    with open(os.path.join(ROOT, "bench", "input.txt"), "rb") as f:
        open(text, "wb").write(f.read()[:3000])
    return [
        ("xz -0", ["xz", "-0", "-c", text], "liblzma.so.5"),
        ("sqlite3", ["sqlite3", ":memory:", SQL], "libsqlite3.so.0"),
        # the VM is in the program; its string hashes take a seed from the
        # time and addresses, so runs differ from each other (measured)
        ("lua5.4", ["lua5.4", "-e", LUA], "lua5.4"),
        ("gzip -6", ["gzip", "-6", "-c", text], None),
        ("bzip2", ["bzip2", "-c", text], None),
    ]


def modules(trace):
    """[(base, path)] of the trace's module table."""
    out = subprocess.run([MEMTAP, "info", trace], capture_output=True, text=True).stdout
    return [(int(m.group(1), 16), m.group(2))
            for m in re.finditer(r"^module \d+: (0x[0-9a-f]+) \S+ (\S+)$", out, re.M)]


def where(pc, mods):
    """(module base name, offset) of a runtime pc: the module with the
    highest base at or below it."""
    best = None
    for base, path in mods:
        if base <= pc and (best is None or base > best[0]):
            best = (base, path)
    return (os.path.basename(best[1]), pc - best[0]) if best else ("?", pc)


def memtap_counts(argv, tmp, name, *opts):
    trace = os.path.join(tmp, name + ".mtr")
    p = subprocess.run([MEMTAP, "run", "-q", "-o", trace, *opts, "--", *argv],
                       capture_output=True)
    counts = collections.Counter()
    mods = modules(trace)
    show = subprocess.run([MEMTAP, "show", "--raw", "--format", "csv", trace],
                          capture_output=True, text=True).stdout
    for line in show.splitlines()[1:]:
        f = line.split(",")
        if len(f) > 8 and f[2] in ("L", "S"):
            counts[(where(int(f[3], 16), mods), f[2])] += int(f[8])
    return counts, p.stdout, p.returncode


def entry_and_span(path):
    """(e_entry, end of the highest PT_LOAD) of an ELF64 file."""
    with open(path, "rb") as f:
        data = f.read(1 << 16)
    entry, phoff = struct.unpack_from("<QQ", data, 24)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    span = 0
    for i in range(phnum):
        ptype, _, _, vaddr, _, _, memsz, _ = struct.unpack_from("<IIQQQQQQ", data,
                                                                phoff + i * phentsize)
        if ptype == 1:
            span = max(span, vaddr + memsz)
    return entry, span


def lackey_counts(argv, lib):
    """Per instruction of lib (offset), Lackey's loads and stores; lib is a
    shared library's file name or the program's own (argv[0])."""
    main = lib == argv[0]
    env = dict(os.environ, LD_DEBUG="files")
    if main:  # the loader names libraries only; the entry point places the program
        env["LD_SHOW_AUXV"] = "1"
    p = subprocess.run(["valgrind", "--tool=lackey", "--trace-mem=yes"] + argv,
                       capture_output=True, env=env)
    err = p.stderr.decode(errors="replace")
    base, wanted = None, False
    if main:
        entry, size = entry_and_span(shutil.which(lib))
        # the last one printed: valgrind's own launcher prints its auxv first
        m = re.findall(r"^AT_ENTRY:\s+0x([0-9a-f]+)", p.stdout.decode(errors="replace"), re.M)
        base = int(m[-1], 16) - entry if m else None
    for line in err.splitlines():  # LD_DEBUG's lines among Lackey's
        if main:
            break
        if re.search(r"file=(\S*/)?%s \[0\];\s+generating link map" % re.escape(lib), line):
            wanted = True
        m = wanted and re.match(r"^\s*\d+:\s+dynamic: \S+\s+base: (0x[0-9a-f]+)\s+size: "
                                r"(0x[0-9a-f]+)", line)
        if m:
            base, size, wanted = int(m.group(1), 16), int(m.group(2), 16), False
    counts, pc = collections.Counter(), None
    for line in err.splitlines():
        if line.startswith("I  "):
            pc = int(line[3:].split(",")[0], 16)
        elif line[:3] in (" L ", " S ", " M ") and pc is not None and base is not None:
            off = pc - base
            if 0 <= off < size:
                kinds = ("L", "S") if line[1] == "M" else (line[1],)
                for k in kinds:
                    counts[((lib, off), k)] += 1
    return counts, base


def compare(a, b):
    """(accesses in a, in b, instructions that differ, their accesses)."""
    keys = set(a) | set(b)
    insns = {k[0] for k in keys if a.get(k, 0) != b.get(k, 0)}
    diff = sum(abs(a.get(k, 0) - b.get(k, 0)) for k in keys)
    return sum(a.values()), sum(b.values()), insns, diff


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--top", type=int, default=4)
    ap.add_argument("--no-lackey", action="store_true")
    ap.add_argument("--only", default="", help="the programs named (xz,lua5.4,...)")
    a = ap.parse_args()
    tmp = scratch_dir("memtap-agree-")
    print("| program | static | fault | instructions that differ | accesses that differ |")
    print("| --- | --- | --- | --- | --- |")
    notes = []
    for name, argv, lib in programs(tmp):
        if a.only and argv[0] not in a.only.split(","):
            continue
        s, out_s, _ = memtap_counts(argv, tmp, name.split()[0] + "-static")
        f, out_f, _ = memtap_counts(argv, tmp, name.split()[0] + "-fault", "--engine", "fault")
        ns, nf, insns, diff = compare(s, f)
        print("| %s | %d | %d | %d | %d (%.3f %%) |" % (name, ns, nf, len(insns), diff,
                                                      100.0 * diff / max(ns, nf, 1)))
        worst = sorted(insns, key=lambda i: -sum(abs(s.get((i, k), 0) - f.get((i, k), 0))
                                                 for k in "LS"))[:a.top]
        for i in worst:
            notes.append("  %s %s+0x%x: static L%d S%d, fault L%d S%d" % (
                name, i[0], i[1], s.get((i, "L"), 0), s.get((i, "S"), 0),
                f.get((i, "L"), 0), f.get((i, "S"), 0)))
        if out_s != out_f:
            notes.append("  %s: the outputs differ" % name)
        if lib and not a.no_lackey:
            m, _, _ = memtap_counts(argv, tmp, name.split()[0] + "-lk", "--only",
                                    "heap,static,stack", "--implicit", "--string-elements")
            m = collections.Counter({k: v for k, v in m.items() if k[0][0] == lib})
            lk, base = lackey_counts(argv, lib)
            nm, nl, insns, diff = compare(m, lk)
            print("| %s, %s, Lackey's options | %d | Lackey %d | %d | %d (%.3f %%) |" % (
                name, lib, nm, nl, len(insns), diff, 100.0 * diff / max(nm, nl, 1)))
            if argv[0] == "lua5.4":  # what two of Lackey's own runs differ by
                lk2, _ = lackey_counts(argv, lib)
                n1, n2, insns2, diff2 = compare(lk, lk2)
                print("| %s, %s, Lackey against Lackey | %d | Lackey %d | %d | %d (%.3f %%) |" % (
                    name, lib, n1, n2, len(insns2), diff2, 100.0 * diff2 / max(n1, n2, 1)))
            for i in sorted(insns)[:a.top]:
                notes.append("  %s (Lackey) %s+0x%x: memtap L%d S%d, Lackey L%d S%d" % (
                    name, i[0], i[1], m.get((i, "L"), 0), m.get((i, "S"), 0),
                    lk.get((i, "L"), 0), lk.get((i, "S"), 0)))
        sys.stdout.flush()
    if notes:
        print("\nlargest differences:")
        print("\n".join(notes))
    subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
