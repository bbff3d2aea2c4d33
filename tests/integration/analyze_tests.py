#!/usr/bin/env python3
"""memtap analyze: whole programs and libraries, checked against objdump.

Every instruction objdump decodes inside a function of the program (its
padding aside) must lie in one of memtap's basic blocks, and every direct
branch target inside a function must start a block.  The case bodies of
the test program's switches are reachable only through jump tables, so
covering them means the tables were read.

Usage: analyze_tests.py TEST_NAME   (MEMTAP_BUILD names the build tree)
"""
import json
import os
import re
import subprocess
import sys

from memtap_tests import TMP, check, check_eq, expect_error, memtap, prog, run_named

PADDING = re.compile(r"^(nop|xchg\s+%ax,%ax|int3|data16|cs nop|ds nop)")
INSN = re.compile(r"^\s*([0-9a-f]+):\t(?:[0-9a-f]{2} )+\s*\t(.*)$")
BRANCH = re.compile(r"^(j[a-z]+|call|loop[a-z]*)\s+([0-9a-f]+) <")


def functions(path):
    """(start, end, name) of the program's sized functions in .text, from nm."""
    out = subprocess.run(["nm", "-S", "--defined-only", path], capture_output=True,
                         text=True, check=True).stdout
    funcs = []
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "Tt" and int(f[1], 16) > 0:
            funcs.append((int(f[0], 16), int(f[0], 16) + int(f[1], 16), f[3]))
    return funcs


def objdump_insns(path):
    """[(address, text)] of every instruction objdump decodes in .text."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-j", ".text", path],
                         capture_output=True, text=True, check=True).stdout
    insns = []
    for line in out.splitlines():
        m = re.match(r"^\s*([0-9a-f]+):\t(.*)$", line)
        if m:
            insns.append((int(m.group(1), 16), m.group(2).strip()))
    return insns


def blocks(path, *opts):
    out = memtap("analyze", "--blocks", *opts, path).stdout
    return [tuple(int(x, 16) for x in l.split()[:2]) for l in out.splitlines()
            if not l.startswith("#")]


def analyze_json(path, *opts):
    return json.loads(memtap("analyze", "--json", *opts, path).stdout)


def check_against_objdump(binary, symbols_from=None):
    """Coverage and leaders of binary's blocks, with functions from
    symbols_from (the unstripped twin of a stripped binary)."""
    funcs = functions(symbols_from or binary)
    check(len(funcs) >= 5, "%s: functions from nm" % binary)
    bl = blocks(binary)
    starts = {s for s, _ in bl}
    inside = {}
    for s, e in bl:
        for a in range(s, e):
            inside[a] = s
    missing, leaders, compared = [], [], 0
    for addr, text in objdump_insns(binary):
        f = next((f for f in funcs if f[0] <= addr < f[1]), None)
        if not f or PADDING.match(text):
            continue
        compared += 1
        if addr not in inside:
            missing.append("%x %s (%s)" % (addr, text, f[2]))
        m = BRANCH.match(text)
        if m and not text.startswith("call"):
            t = int(m.group(2), 16)
            if f[0] <= t < f[1] and t not in starts:
                leaders.append("%x -> %x" % (addr, t))
    check(compared > 100, "%s: %d instructions compared" % (binary, compared))
    check_eq(missing[:5], [], "%s: instructions outside every block" % binary)
    check_eq(leaders[:5], [], "%s: branch targets that start no block" % binary)


SWITCHERS = ["switcher_O0", "switcher_O2", "switcher_O2_nopie",
             "switcher_clang_O3", "switcher_clang_O2_nopie"]


def test_analyze_cfg_objdump():
    for name in SWITCHERS:
        check_against_objdump(prog(name))
        d = analyze_json(prog(name))["disassembly"]
        # dispatch() is a table in every build, name() in most
        check(d["jump_tables"] >= 1, "%s: jump tables found: %r" % (name, d))
        check_eq(d["undecodable_bytes"], 0, "%s: undecodable bytes" % name)
        check_eq(d["overlaps"], 0, "%s: overlapping instructions" % name)


def frame_operands(binary, function, base):
    """objdump's count of the instructions of function with a memory
    operand based on register base (lea aside)."""
    dump = subprocess.run(["objdump", "-d", "--no-show-raw-insn", binary],
                          capture_output=True, text=True, check=True).stdout
    body = dump[dump.index("<%s>:" % function):].split("\n\n")[0]
    return sum(1 for l in body.splitlines()[1:]
               if re.search(r"\(%%%s[,)]" % base, l) and "\tlea" not in l)


def test_analyze_frame_pointer():
    """--only without stack leaves out the operands addressed from the
    frame pointer of a function that sets one up (-O0: uninit_reads' main,
    every (%rbp) operand objdump shows), and not those of a function that
    uses rbp for anything else (-O2: regions' main stores into its heap
    block through rbp; only its two (%rsp) operands are the stack's)."""
    for name, base in (("uninit_reads", "rbp"), ("regions", "rsp")):
        out = analyze_json(prog(name), "--nonselective", "--only", "heap,static")
        main = [f for f in out["functions"] if f["name"] == "main"][0]
        check_eq(main["bypass"]["stack"], frame_operands(prog(name), "main", base),
                 "%s: main's stack operands" % name)
    check(frame_operands(prog("regions"), "main", "rbp") >= 1, "regions: an rbp-based store")


def test_analyze_stripped():
    for name in ("switcher_O2", "switcher_clang_O3"):
        stripped = os.path.join(TMP, name + ".stripped")
        subprocess.run(["strip", "-o", stripped, prog(name)], check=True)
        check_against_objdump(stripped, symbols_from=prog(name))
        full, bare = analyze_json(prog(name)), analyze_json(stripped)
        check(bare["stripped"] and not full["stripped"], "stripped flag")
        # the same code is found, named or not
        check_eq(bare["total"]["instructions"], full["total"]["instructions"],
                 "%s: instructions with and without symbols" % name)
        check_eq(bare["total"]["n"], full["total"]["n"], "%s: accesses" % name)


def test_analyze_libc():
    libc = "/lib/x86_64-linux-gnu/libc.so.6"
    d = analyze_json(libc, "--omega", "0.25", "--chunk", "64")
    t = d["total"]
    check(t["instructions"] > 100000, "libc instructions: %d" % t["instructions"])
    check(len(d["functions"]) > 2000, "libc functions: %d" % len(d["functions"]))
    check(d["disassembly"]["jump_tables"] > 10, "libc jump tables")
    check(0 < t["selected"] <= t["m"] <= t["n"], "selected <= m <= n")
    check(0 < t["ma"] <= t["aia"] <= 1, "MA <= AIA")
    ns = analyze_json(libc, "--nonselective")["total"]
    check_eq((ns["selected"], ns["ma"], ns["aia"]), (ns["n"], 1.0, 1.0),
             "non-selective: every access instrumented")
    full = analyze_json(libc, "--omega", "1")["total"]
    check_eq(full["selected"], full["m"], "omega 1 selects every class")


def test_analyze_omega_monotonic():
    path = prog("switcher_O2")
    last = None
    for omega in ("0", "0.1", "0.25", "0.5", "1"):
        t = analyze_json(path, "--omega", omega, "--chunk", "64")["total"]
        if last:
            check(t["selected"] >= last["selected"] and t["ma"] >= last["ma"],
                  "more is selected as omega grows (%s)" % omega)
        last = t
    check_eq(analyze_json(path, "--omega", "0")["total"]["selected"], 0, "omega 0")


def test_analyze_block_detail():
    out = memtap("analyze", "--omega", "0.5", "--chunk", "16", "--block", "0x1000",
                 os.path.join(os.environ["MEMTAP_BUILD"], "tests/static/cases.o")).stdout
    check("n = 18, m = 8, W = 4" in out, "block header: %s" % out[:200])
    check(out.count("SELECTED") == 4, "four representatives selected")
    check("MA_b = 10/18" in out and "AIA_b = 16/18" in out, "MA_b and AIA_b")
    check("RRI{%rbp.0, nil, -0x4}" in out, "BID expression shown")
    check("IRR{0x601120, %rax*4." in out, "IRR expression shown")


def test_analyze_bad_input():
    expect_error(["analyze", "/nonexistent/prog"],
                 r"^memtap: /nonexistent/prog: No such file")
    text = os.path.join(TMP, "notelf")
    open(text, "w").write("not a program\n" * 20)
    expect_error(["analyze", text], r"^memtap: .*notelf: not an ELF file")
    fifo = os.path.join(TMP, "fifo")
    os.mkfifo(fifo)  # opening it to read would wait for a writer forever
    for args in (["analyze", fifo], ["instrument", fifo, "-o", fifo + ".out"],
                 ["analyze", TMP]):
        expect_error(args, r"^memtap: .*: not a regular")
    data = bytearray(open(prog("switcher_O2"), "rb").read())
    arm = os.path.join(TMP, "arm")
    arm_data = bytearray(data)
    arm_data[18:20] = (183).to_bytes(2, "little")   # e_machine = EM_AARCH64
    open(arm, "wb").write(arm_data)
    expect_error(["analyze", arm], r"arm: not an x86-64 ELF file")
    for cut in (64, 2000, len(data) // 2, len(data) - 100):
        path = os.path.join(TMP, "cut%d" % cut)
        open(path, "wb").write(bytes(data[:cut]))
        p = expect_error(["analyze", path], r"^memtap: .*cut%d: " % cut)
        check(p.returncode == 1, "truncated at %d: exit 1, not a crash (%d)"
              % (cut, p.returncode))
    bad_sh = bytearray(data)
    bad_sh[0x28:0x30] = (0x7fffffff0000).to_bytes(8, "little")  # e_shoff
    path = os.path.join(TMP, "badshoff")
    open(path, "wb").write(bytes(bad_sh))
    expect_error(["analyze", path], r"badshoff: (corrupt|not an ELF|no executable)")
    src = os.path.join(TMP, "data.c")
    open(src, "w").write("int table[4] = {1, 2, 3, 4};\n")
    obj = os.path.join(TMP, "data.o")
    subprocess.run(["cc", "-c", src, "-o", obj], check=True)
    expect_error(["analyze", obj], r"data.o: no executable code")
    expect_error(["analyze", "--omega", "2", prog("switcher_O2")], r"omega must be")
    expect_error(["analyze", "--scores", "1,4,5", prog("switcher_O2")],
                 r"s1 \+ s2 < s3")
    expect_error(["analyze", "--block", "0x10", prog("switcher_O2")],
                 r"no basic block holds 0x10")
    # a static executable is analysed like any other
    t = analyze_json(prog("static_prog"))["total"]
    check(t["instructions"] > 50000, "static executable analysed")


if __name__ == "__main__":
    sys.exit(run_named(globals(), sys.argv[1]))
