#!/usr/bin/env python3
"""Programs nobody here wrote, under both engines, against their own native
output: each command runs natively (bash -c), then under `memtap run
--keep-going --engine static` and `--engine fault`; a line per run says
whether the exit status and stdout are the native ones, the time both
ways and memtap's last two messages.  A command whose first word is not
installed is skipped and said so.  What it found (and what was fixed) is
in doc/measurements.md ("Programs under both engines").

    bench/programs.py [--engine static|fault] [--only WORD,...] [--timeout S]

Compilers and runtimes (gfortran, gnat, fpc, cobc, java, node, lli) build
their small programs under bench/programs/ first, natively.  A run over
the timeout (default 900 s) counts as a difference; the fault engine
takes minutes on the JVM's JIT and on hundreds of millions of accesses.
Rewritten copies go to MEMTAP_CACHE_DIR when it is set (kept from one run
to the next), else to a directory of the run's own.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMTAP = os.path.join(ROOT, "build", "bin", "memtap")
HERE = os.path.join(ROOT, "bench", "programs")

# (engines, command); "both" or one engine (the fault engine on the JVM's
# JIT ran past 15 minutes)
COMMANDS = [
    ("both", "./f90"),
    ("both", "./ada"),
    ("both", "./pascal"),            # a static program: a warning, no trace
    ("both", "./cobol"),
    ("both", "./exceptions"),
    ("both", "lli sum.ll"),
    ("both", "java -Xint -cp . Hello"),
    ("static", "java -cp . Hello"),
    ("static", "javac -d jc Hello.java && echo javac_ok"),
    ("both", "sort -n nums.txt | sha256sum"),
    ("both", "sort -n --parallel=2 -S 1M nums.txt | tail -3"),
    ("both", "awk '{s+=$1; c[$1%7]++} END {print s; for (k in c) print k, c[k]}' nums.txt | sort"),
    ("both", "sed -e 's/1/one/g;s/\\(..\\)$/[\\1]/' nums.txt | md5sum"),
    ("both", "grep -P '^(1+|2\\d{3})$' nums.txt | wc -l"),
    ("both", "find /usr/include -name '*.h' | sort | head -500 | xargs cat | wc"),
    ("both", "bzip2 -9 -c nums.txt | bzip2 -d | cmp - nums.txt && echo same"),
    ("both", "zstd -T2 -q -c nums.txt | zstd -d -q | md5sum"),
    ("both", "xz -T2 -6 -c nums.txt | xz -d | md5sum"),
    ("both", "base64 nums.txt | base64 -d | b2sum"),
    ("both", "make -s -f Makefile.t -B"),
    ("both", "gdb -batch -nx -ex 'print 6*7' -ex 'print sizeof(long)'"),
    ("both", "gpg --batch --yes --passphrase pw --symmetric -o n.gpg nums.txt && "
             "gpg --batch --passphrase pw -d n.gpg 2>/dev/null | sha256sum"),
    ("both", "factor 1234567891011 9999999967 600851475143"),
    ("both", "tclsh <<< 'set s 0; for {set i 0} {$i < 100000} {incr i} {incr s $i}; puts $s'"),
    ("both", "timeout 1 sleep 5; echo rc=$?"),
    ("both", "seq 1 40 | xargs -P2 -n 5 echo | sort | md5sum"),
    ("both", "strace -f -o /dev/null sh -c 'sort -n nums.txt | tail -2' && echo strace_ok"),
    ("both", "python3.11 -c 'import concurrent.futures as f; "
             "print(sum(f.ThreadPoolExecutor(4).map(lambda x: sum(range(x)), range(2000))))'"),
    ("both", "python3.11 -c 'import multiprocessing as m; print(sum(m.Pool(2).map(abs, range(-500, 500))))'"),
    ("both", "node -e 'const z=require(\"zlib\"),c=require(\"crypto\"); const b=Buffer.alloc(1<<20, \"ab\"); "
             "console.log(z.gzipSync(b).length, c.createHash(\"sha256\").update(b).digest(\"hex\").slice(0,16))'"),
    ("both", "perl -Mthreads -e 'my @t = map { threads->create(sub { my $s=0; $s+=$_ for 1..100000; $s }) } 1..3; "
             "my $s=0; $s+=$_->join for @t; print \"$s\\n\"'"),
    ("both", "rustc --version"),     # rustup's proxy execs the toolchain's rustc
]

BUILDS = [  # (tool, command), run in the work directory before the runs
    ("gfortran", "gfortran -O2 -o f90 hello.f90"),
    ("gnatmake", "gnatmake -q -O2 hello.adb -o ada"),
    ("fpc", "fpc -O2 -opascal hello.pas"),
    ("cobc", "cobc -x -o cobol hello.cob"),
    ("g++", "g++ -O2 -pthread -o exceptions exceptions.cpp"),
    ("javac", "javac Hello.java"),
]


def run(argv, cwd, timeout):
    start = time.monotonic()
    try:
        p = subprocess.run(argv, capture_output=True, timeout=timeout, cwd=cwd)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - start
    except subprocess.TimeoutExpired:
        return "timeout", b"", b"", time.monotonic() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", choices=("static", "fault"))
    ap.add_argument("--only")
    ap.add_argument("--timeout", type=float, default=900)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="memtap-programs-")
    for name in os.listdir(HERE):
        shutil.copy(os.path.join(HERE, name), work)
    with open(os.path.join(work, "nums.txt"), "w") as f:  # 1..200000, shuffled
        f.write("".join("%d\n" % (i * 7919 % 200003) for i in range(1, 200001)))
    for tool, cmd in BUILDS:
        if shutil.which(tool):
            subprocess.run(cmd, shell=True, cwd=work, capture_output=True)
    # copies made once: MEMTAP_CACHE_DIR when set (a run rewrites libLLVM,
    # the JVM and gdb's libraries: minutes), else the work directory's
    os.environ.setdefault("MEMTAP_CACHE_DIR", os.path.join(work, "cache"))
    only = a.only.split(",") if a.only else None
    differ = 0
    for engines, cmd in COMMANDS:
        word = cmd.split()[0]
        if only and word not in only:
            continue
        if not word.startswith("./") and not shutil.which(word) or \
                word.startswith("./") and not os.path.exists(os.path.join(work, word)):
            print("skip   %-6s %s: not installed" % ("", cmd[:60]))
            continue
        native = run(["bash", "-c", cmd], work, 120)
        for e in ("static", "fault"):
            if engines not in ("both", e) or (a.engine and a.engine != e):
                continue
            trace = os.path.join(work, "t_%s.mtr" % e)
            r = run([MEMTAP, "run", "-q", "--keep-going", "--engine", e, "-o", trace, "--",
                     "bash", "-c", cmd], work, a.timeout)
            same = r[0] == native[0] and r[1] == native[1]
            differ += not same
            said = [l for l in r[2].decode(errors="replace").splitlines()
                    if l.startswith("memtap")][-2:]
            print("%-6s %-6s %6.1fs %7.1fs  %s | %s" % (
                "same" if same else "DIFFER", e, native[3], r[3], cmd[:60],
                " / ".join(said)[:240]), flush=True)
            for name in os.listdir(work):  # the traces (gpg's: 180 MB)
                if name.startswith("t_%s." % e):
                    os.remove(os.path.join(work, name))
    shutil.rmtree(work, ignore_errors=True)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
