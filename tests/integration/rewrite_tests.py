#!/usr/bin/env python3
"""memtap instrument: rewritten programs must behave exactly as the
originals (same stdout, same exit status) at every setting, run on their
own and under `memtap run`; in non-selective mode every instrumented
instruction must log as many loads and stores as Valgrind Lackey sees it
make; bad input gets a clear error and the input file is never touched.

Usage: rewrite_tests.py TEST_NAME   (MEMTAP_BUILD names the build tree)
"""
import collections
import hashlib
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time

from memtap_tests import (MEMTAP as MEMTAP_BIN, TMP, Failure, check, check_eq, chunks, disassembly,
                          memtap, prog, program_children, run_bounded, run_named, show,
                          text_range)

# programs written for the purpose: jump tables, function pointers, loops
# and recursion (switcher, built by GCC and Clang, PIE and not), heap,
# string functions, signals, threads, C++ allocation, C++ exceptions,
# setjmp/longjmp out of recursion and out of a signal handler, a stripped
# binary
CORPUS = ["switcher_O0", "switcher_O2", "switcher_O2_nopie", "switcher_clang_O3",
          "switcher_clang_O2_nopie", "alloc_family", "blockops", "signals", "threads",
          "cxx_alloc", "exceptions", "longjumps", "three_mallocs_stripped",
          "heat_counts"]
SETTINGS = {
    "nonselective": ["--nonselective"],
    "omega_1": ["--omega", "1"],
    "omega_0_5": ["--omega", "0.5"],
    "omega_0_1": ["--omega", "0.1"],
}
LIBC = "/lib/x86_64-linux-gnu/libc.so.6"
NOW = {"LD_BIND_NOW": "1"}


def run(cmd, env=None):
    e = dict(os.environ)
    if env:
        e.update(env)
    p = run_bounded(cmd, 120, env=e)
    return p.stdout, p.returncode


def instrument(binary, out, *opts):
    p = memtap("instrument", "-q", binary, "-o", out, *opts, check_rc=False)
    check_eq(p.returncode, 0, "memtap instrument %s %s: %s" % (binary, " ".join(opts), p.stderr))
    return out


# Programs that enter code where no analysis sees a way in: run on its
# own (without memtap's runtime), a copy stops there at the int3 that
# the displacement of a jump over that place carries.
HIDDEN_ENTRIES = ("lk_hazards", "lk_hazards_stripped")


def behaves_the_same(name, binary, rewritten, env=None):
    want = run([binary], env)
    if name in HIDDEN_ENTRIES:
        check_eq(run([rewritten], env)[1], -signal.SIGTRAP, "%s run on its own" % name)
    else:
        check_eq(run([rewritten], env), want, "%s run on its own" % name)
    trace = rewritten + ".mtr"
    got = run([os.path.join(os.path.dirname(prog("memtap")), "memtap"), "run", "-o", trace,
               "--", rewritten], env)
    check_eq(got, want, "%s under memtap run" % name)
    return trace


def corpus(setting):
    for name in CORPUS:
        out = instrument(prog(name), os.path.join(TMP, name + ".mt"), *SETTINGS[setting])
        trace = behaves_the_same("%s (%s)" % (name, setting), prog(name), out)
        if setting == "nonselective":
            accesses = [l for l in show(trace) if re.match(r"^[LS]\$", l)]
            check(accesses, "%s: the rewritten program logged accesses" % name)


def test_rewrite_corpus_nonselective():
    corpus("nonselective")


def test_rewrite_corpus_omega_1():
    corpus("omega_1")


def test_rewrite_corpus_omega_0_5():
    corpus("omega_0_5")


def test_rewrite_corpus_omega_0_1():
    corpus("omega_0_1")


def test_rewrite_libc():
    """The system's libc rewritten as a library: programs that load it
    behave the same, and its instructions log."""
    for setting in ("nonselective", "omega_0_5"):
        libdir = os.path.join(TMP, "libc-" + setting)
        os.makedirs(libdir, exist_ok=True)
        instrument(LIBC, os.path.join(libdir, "libc.so.6"), *SETTINGS[setting])
        env = {"LD_LIBRARY_PATH": libdir}
        for name in ("switcher_O2", "blockops", "exceptions"):
            trace = behaves_the_same("%s with libc (%s)" % (name, setting), prog(name),
                                     prog(name), env)
            in_libc = [l for l in show(trace) if re.match(r"^[LS]\$.*, (memcpy|str|__|_IO|mem)", l)]
            check(in_libc, "%s: the rewritten libc logged accesses" % name)


# ---- the site table of a rewritten file (rt/abi.h) ----

HEADER = struct.Struct("<8sIIIIQQQQQQQdQddQIIQQQQ")
SITE = struct.Struct("<QIHBBiHBB")  # memtap_site


def sites_of(path):
    """The memtap_site tuples of a rewritten file, in table order."""
    data = open(path, "rb").read()
    out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            off = int(f[1], 16)
            if data[off:off + 8] == b"MTREWR01":
                h = HEADER.unpack_from(data, off)
                nsites, sites = h[3], h[7]
                return [SITE.unpack_from(data, off + sites + i * SITE.size)
                        for i in range(nsites)]
    raise Failure("%s: no rewritten segment" % path)


def site_table(path):
    """{pc: (count, size, read, write)} of the file's instrumented operands."""
    table = {}
    for pc, count, size, rd, wr in (s[:5] for s in sites_of(path)):
        table.setdefault(pc, []).append((count, size, rd, wr))
    return table


def header(path):
    """The rewrite header's fields by name (rewrite/abi.h)."""
    data = open(path, "rb").read()
    i = data.find(b"MTREWR01")
    check(i >= 0, "%s: a rewrite header" % path)
    names = ("magic version mode nsites reserved segment_vaddr segment_size sites stub "
             "tag_slot flush_slot cursor_slot").split()
    h = HEADER.unpack_from(data, i)
    out = dict(zip(names, h))
    out.update(zip("omega chunk static_ma static_aia source_id nblocks ntraps blocks "
                   "count_stub counters_slot traps".split(), h[-11:]))
    return out


def trap_kinds(copy, original):
    """The copy's traps by pc: ([int3 places, whose bytes the file keeps
    and the runtime changes], [int3s under a window's jump, in the
    file])."""
    h = header(copy)
    with open(copy, "rb") as f:
        data = f.read()
    with open(original, "rb") as f:
        orig = f.read()
    at = data.find(b"MTREWR01") + h["traps"]
    lo, off, _ = text_section(original)
    places, under = [], []
    for k in range(h["ntraps"]):
        pc, = struct.unpack_from("<Q", data, at + 32 * k)
        (under if data[off + pc - lo] == 0xcc != orig[off + pc - lo] else places).append(pc)
    return places, under


IMPLICIT = re.compile(r"^(push|pop|call|ret|leave|enter|(rep[a-z]* )?(movs|stos|lods|cmps|scas))")
STRING_OPS = re.compile(r"^(rep[a-z]* )?(movs|stos|lods|cmps|scas)")


def lackey_all(binary, env=None):
    """({pc: [loads, stores]}, {pc: executions}) of the program's own
    instructions as Lackey sees them (stack, read-only data and all)."""
    log = os.path.join(TMP, "lackey.log")
    e = dict(os.environ)
    e.update(env or {})
    subprocess.run(["valgrind", "--tool=lackey", "--trace-mem=yes", "--log-file=" + log,
                    binary], check=True, capture_output=True, env=e)
    lo, hi = text_range(binary)
    counts, runs, cur = {}, {}, None
    for line in open(log):
        if line.startswith("I  "):
            cur = int(line[3:].split(",")[0], 16)
            if lo <= cur < hi:
                runs[cur] = runs.get(cur, 0) + 1
        elif len(line) > 3 and line[0] == " " and line[1] in "LSM" and lo <= cur < hi:
            c = counts.setdefault(cur, [0, 0])
            c[0] += line[1] in "LM"
            c[1] += line[1] in "SM"
    return counts, runs


def lackey_differential(names, *opts, env=None):
    """Non-selective copies of the programs: per instruction, the loads and
    stores logged equal Lackey's (the original, same input): for the
    instructions with explicit operands, and with --implicit for push, pop,
    call, ret, enter and leave too (string operations are block events).
    Returns the int3 sites of the copies and their executions."""
    traps = hit = 0
    elements = bool(env and env.get("MEMTAP_STRING_ELEMENTS") == "1")
    unlogged = re.compile("^$") if elements else STRING_OPS if "--implicit" in opts else IMPLICIT
    env = dict(NOW, **(env or {}))
    for name in names:
        binary = prog(name)
        out = instrument(binary, os.path.join(TMP, name + ".mt"), "--nonselective", *opts)
        # no lazy binding: two threads may both run the resolver's PLT
        # entry for one symbol, a count no two runs need agree on
        trace = behaves_the_same(name, binary, out, env)
        sites = site_table(out)
        insns = {a: t for f in disassembly(binary).values() for a, t in f[1:]}
        bias, ours = load_bias(trace), {}
        for r in [l.split(",") for l in show(trace, "--raw", "--format", "csv")[1:]]:
            if r[2] in "LS":
                ours.setdefault(int(r[3], 16) - bias, [0, 0])[0 if r[2] == "L" else 1] += 1
        theirs, runs = lackey_all(binary, env)
        check(theirs, "%s: Lackey's accesses of the program's own code (not PIE)" % name)
        for pc in theirs:
            # Valgrind makes a locked read-modify-write (but cmpxchg,
            # itself a compare-and-swap) a load and a compare-and-swap,
            # which Lackey counts as one more load
            text = insns.get(pc, "")
            if text.startswith("lock ") and not text.startswith("lock cmpxchg"):
                theirs[pc] = [theirs[pc][0] - runs.get(pc, 0), theirs[pc][1]]
        # what logs: the sites, and, element by element, the string
        # operations (through their int3)
        strings = {pc for pc, t in insns.items() if STRING_OPS.match(t)} if elements else set()
        logged = set(sites) | strings
        compared = [pc for pc in theirs if not unlogged.match(insns.get(pc, ""))]
        for what, group, on in (("push/pop/call/ret", set(sites) - strings, "--implicit" in opts),
                                ("string operations", strings, elements)):
            n = sum(1 for pc in compared if IMPLICIT.match(insns.get(pc, "")) and pc in group)
            check(bool(n) == on, "%s: %s compared: %d" % (name, what, n))
        diffs = ["0x%x %s: lackey L%d S%d, memtap L%d S%d"
                 % (pc, insns.get(pc, "?"), theirs[pc][0], theirs[pc][1],
                    ours.get(pc, [0, 0])[0], ours.get(pc, [0, 0])[1])
                 for pc in sorted(compared) if pc in logged and theirs[pc] != ours.get(pc, [0, 0])]
        check(not diffs, "%s: per-instruction counts differ:\n    %s" % (name, "\n    ".join(diffs[:20])))
        # with the int3 fallback, every one is instrumented
        missing = ["0x%x %s" % (pc, insns.get(pc, "?")) for pc in sorted(compared)
                   if pc not in logged]
        check(not missing, "%s: not instrumented: %s" % (name, missing[:10]))
        traps += header(out)["ntraps"]
        info = memtap("info", trace).stdout
        m = re.search(r"^rewritten_traps_hit: (\d+)$", info, re.M)
        check(m, "%s: memtap info counts the int3 sites hit" % name)
        hit += int(m.group(1))
        # more than 0.1 % of the records through int3: show says so
        slow = int(m.group(1)) * 1000 > int(re.search(r"^events: (\d+)", info, re.M).group(1))
        said = "went through int3" in memtap("show", trace).stderr
        check_eq(said, slow, "%s: a note on int3 executions when they are many" % name)
    return traps, hit


def test_rewrite_lackey():
    """Non-selective copies log per instruction what Lackey sees."""
    lackey_differential(("lk_globals", "lk_heap", "lk_structs", "lk_threads"))


def test_rewrite_lackey_implicit():
    """With --implicit, the stack slots of push, pop, call, ret and leave
    are logged as Lackey sees them, instruction by instruction."""
    lackey_differential(("lk_globals", "lk_heap", "lk_structs", "lk_threads"), "--implicit")


def test_rewrite_lackey_strings():
    """With --implicit and string operations element by element
    (--string-elements), edge_insns' rep movsb and rep stosb log each
    element's load and store as Lackey does: nothing of the program's own
    instructions is left out of the comparison."""
    lackey_differential(("lk_edge",), "--implicit", env={"MEMTAP_STRING_ELEMENTS": "1"})


def test_rewrite_lackey_traps():
    """The same with every site reached through int3 (--trap-all): the
    fallback's trampolines log exactly too."""
    traps, hit = lackey_differential(("lk_globals", "lk_structs", "lk_threads"), "--trap-all")
    check(traps > 20 and hit > 1000, "the sites were reached through int3 (%d sites, %d hits)"
          % (traps, hit))


def test_rewrite_block_edges():
    """Loads with no room for a jump in their own basic block, laid out by
    hand (lk_block_edges): logged as Lackey sees them, instruction by
    instruction, and the copy runs as the original.  Only after_call's
    load, which a call returns to, runs through int3: once a call, 4
    calls (420 times before windows could take room from neighbouring
    blocks and from padding, and branches were sent to int3 places'
    trampolines).
    loop_head's load (entered by falling through a branch and by the loop's
    short back edge) is reached through a window of the block before it;
    short_entry's (entered by a short branch from a block with nothing to
    instrument) through that branch, moved into a window of its own;
    tiny_load's (4 bytes with its return, entered by direct calls) by the
    calls themselves, sent to its trampoline; padded_load's (the same 4
    bytes, called through a pointer) through a jump that takes the padding
    after its return; island_load's (a block of its own that a short
    branch from a block with no room leads to) through a jump written in
    the padding after it, which the short branch is sent to.
    Since no instruction start may lie under a jump's bytes but an int3
    its displacement carries, main's add of island_load's result (4 bytes,
    where that call returns) has no window: its jump would end on the
    first byte of the next add, which cannot take a jump of its own with
    a prefix (the loop's test after it, a branch target, would lie under
    that jump).  It is an int3 place entered by a short jump to a jump
    written in the padding after main, not through int3."""
    traps, hit = lackey_differential(("lk_block_edges",))
    check_eq(hit, 4, "executions through int3")
    places, under = trap_kinds(os.path.join(TMP, "lk_block_edges.mt"), prog("lk_block_edges"))
    # the loads of short_entry, after_call and island_load, main's add
    # above (a short jump to padding in the file), and a branch target
    # inside loop_head's window, which only an unforeseen way in would
    # take (tiny_load's load has a jump now, its return under it)
    check_eq(len(places), 5, "int3 places")
    # instruction starts under a jump's bytes, each an int3 the jump's
    # displacement carries: three adds of main after a load of the same
    # window, loop_head's jle and jne, short_entry's jne, the returns of
    # tiny_load and padded_load, island_load's je
    check_eq(len(under), 9, "int3s under jumps")


def test_rewrite_hazards():
    """Code that hides its ways in (lk_hazards, as built and stripped: a
    computed-goto interpreter, a cold piece outside every symbol, reached
    by a computed jump, that jumps into the middle of a hot pair of short
    instructions, a jump table whose base moves to another register and
    whose cases fall into each other, a table kept in .text that decodes as
    stores and loads, loads of 2, 3 and 4 bytes whose next instructions
    are entered through jumps no analysis sees, under the bytes a jump over
    the load takes): the non-selective copy prints what the original
    prints (the memtap of an earlier commit died of SIGTRAP in the first,
    and patched the table of the second, which then printed another sum
    of its bytes; until the int3s under a jump's bytes, the third ran the
    jump's displacement as code), logs every access Lackey sees,
    instruction by instruction, and the verifier finds nothing wrong.
    hidden_entries's sum by hand: of every 4 rounds one runs the three
    loads (3 + 40 + 500), one enters after the first (the 500 left in rdx,
    then 40 + 500), one after the second (500 + 500), one after the third
    (500): 3083, 250 times.  The entries after the 2- and 3-byte loads
    (500 of them in each program) go through int3s.  The loads after the
    first two have the same base register: elided, their records rebuilt
    from the first's entry, which an entry past it skips.  So the copies
    compared with Lackey are made with --no-elision; the default copy says
    how many times it was entered through an int3 past such a leader (the
    250 entries after the first load; the followers themselves are not
    patched, so the entries after the second load go unseen)."""
    native, _ = run([prog("lk_hazards")])
    check(b"hidden entries: 770750\n" in native, "lk_hazards: %r" % native)
    traps, hit = lackey_differential(("lk_hazards", "lk_hazards_stripped"), "--no-elision")
    check(hit >= 2 * 500, "int3 executions of the hidden entries: %d" % hit)
    copy = instrument(prog("lk_hazards"), os.path.join(TMP, "hz_elided.mt"), "--nonselective")
    p = memtap("run", "-o", os.path.join(TMP, "hz.mtr"), "--", copy, check_rc=False)
    check(re.search(r"warning: .*: 250 time\(s\) the program entered rewritten code where no "
                    r"analysis saw a way in", p.stderr), "the loss is said: %s" % p.stderr)
    check_eq(p.returncode, 125, "the trace is incomplete")
    for name in ("lk_hazards", "lk_hazards_stripped"):
        out = os.path.join(TMP, name + ".mt")
        p = memtap("instrument", "--verify", out, prog(name), check_rc=False)
        check_eq(p.returncode, 0, "%s: the verifier: %s%s" % (name, p.stdout, p.stderr))


def test_rewrite_live_edges():
    """Loads whose block's rax, rcx or rdx are needed only after a branch,
    a loop or a jump (lk_live_edges, laid out by hand; unit.liveness checks
    what the rewriter finds live there): the copy runs as the original and
    logs as Lackey sees, instruction by instruction, though its trampolines
    save only what the blocks after them need."""
    traps, hit = lackey_differential(("lk_live_edges",))
    check_eq(hit, 0, "executions through int3")


def test_rewrite_elision():
    """Elided operands are rebuilt exactly: with and without --no-elision,
    one program (at one place, address randomization off) gives the same
    records in the same order, sequence numbers included (as symbolic
    lines: heap blocks by allocation and offset, as the copies' segments,
    of different sizes, may move a non-PIE program's brk heap by a
    page).  swaps has followers due after other accesses (a swap's store
    after the other element's) and none across a string operation; its
    copy also runs with chunks of 64 records and 100, which end runs
    anywhere but inside such a stretch (every run of it with the variable
    of one length: the environment is on the stack)."""
    elided = due = 0
    for name in ("lk_structs", "lk_heap", "switcher_O2", "heat_counts", "swaps"):
        lines = []
        runs = [((), None), (("--no-elision",), None)]
        if name == "swaps":
            runs = [((), "16384"), (("--no-elision",), "16384"), ((), "00064"), ((), "00100")]
        for opts, records in runs:
            # paths of one length: the stack holds them
            d = os.path.join(TMP, "elision-" + ("no" if opts else "on"), name)
            os.makedirs(d, exist_ok=True)
            copy = instrument(prog(name), os.path.join(d, name), "--nonselective", *opts)
            if not opts and not records:
                elided += elided_sites(copy)
                due += sum(1 for site in sites_of(copy) if site[8])
            trace = os.path.join(d, "t.mtr")
            env = dict(os.environ, MEMTAP_BUFFER_RECORDS=records) if records else None
            subprocess.run(["setarch", "-R", MEMTAP_BIN, "run", "-q", "-o", trace, "--", copy],
                           check=True, capture_output=True, cwd=d, env=env)
            lines.append([l for l in show(trace) if not l.startswith("#")])
        for other, (opts, records) in zip(lines[1:], runs[1:]):
            check(lines[0] and lines[0] == other,
                  "%s: elided and %s copies give the same records (%d and %d)"
                  % (name, "chunks of %d records of the elided" % int(records) if not opts
                     else "non-elided", len(lines[0]), len(other)))
    check(elided > 0, "some operands were elided (%d)" % elided)
    check(due >= 2, "some followers were due after other accesses (%d)" % due)


def test_rewrite_one_core():
    """A trace written with one core holds what one written with two holds
    (record for record, address randomization off)."""
    copy = instrument(prog("lk_structs"), os.path.join(TMP, "cores.mt"), "--nonselective")
    lines = []
    for pin in (["taskset", "-c", "0"], []):
        trace = os.path.join(TMP, "cores.mtr")
        subprocess.run(pin + ["setarch", "-R", MEMTAP_BIN, "run", "-q", "-o", trace, "--", copy],
                       check=True, capture_output=True)
        lines.append([l for l in show(trace, "--raw") if not l.startswith("#")])
    check(lines[0] and lines[0] == lines[1],
          "one core and two give the same records (%d and %d)" % (len(lines[0]), len(lines[1])))


def info_of(trace):
    return dict(l.split(": ", 1) for l in memtap("info", trace).stdout.splitlines() if ": " in l)


def test_background_writer():
    """The hidden writer thread changes nothing in what a trace holds: with
    64-record buffers (handed over many times) written by the threads
    alone, by the writer alone and by both as they come, one program gives
    the same records, sequence numbers included; the closing note counts
    the chunks the writer wrote.  Threads hammering a shared array keep
    every access, under both engines; a forked child starts a writer of
    its own."""
    copy = instrument(prog("lk_structs"), os.path.join(TMP, "writer.mt"), "--nonselective")
    lines, written = [], []
    for writer in ("off", "all", "mix"):  # one length: the stack holds them
        trace = os.path.join(TMP, "writer.mtr")
        subprocess.run(["setarch", "-R", MEMTAP_BIN, "run", "-q", "-o", trace, "--", copy],
                       check=True, capture_output=True,
                       env=dict(os.environ, MEMTAP_WRITER=writer, MEMTAP_BUFFER_RECORDS="64"))
        lines.append([l for l in show(trace, "--raw") if not l.startswith("#")])
        written.append(int(info_of(trace).get("writer_chunks", "0")))
    check(lines[0] and lines[0] == lines[1] == lines[2],
          "threads, writer, both: the same records (%s)" % [len(l) for l in lines])
    check(written[0] == 0 and written[1] > 100, "chunks the writer wrote (off, all): %s" % written[:2])

    shared = re.compile(r"^([LS])\$\d+:shared\[\d\], \[hammer\], hammer\+\d+$")
    os.makedirs(os.path.join(TMP, "writer-static"), exist_ok=True)
    hammer = instrument(prog("hammer"), os.path.join(TMP, "writer-static", "hammer"), "--nonselective")
    for engine, binary in (("fault", prog("hammer")), ("static", hammer)):
        trace = os.path.join(TMP, "hammer-writer.mtr")
        p = memtap("run", "-q", "-o", trace, "--", binary,
                   env={"MEMTAP_WRITER": "all", "MEMTAP_BUFFER_RECORDS": "64"})
        check_eq(p.stdout.strip(), "12000", "%s: the program's result" % engine)
        kinds = [m.group(1) for m in map(shared.match, show(trace)) if m]
        info = info_of(trace)
        check_eq((kinds.count("S"), kinds.count("L"), info["dropped"], info["corrupt_chunks"]),
                 (12000, 12000, "0", "0"), "%s: stores and loads of shared[], dropped, corrupt" % engine)
        check(int(info.get("writer_chunks", "0")) > 0, "%s: the writer wrote chunks" % engine)

    trace = os.path.join(TMP, "fork-writer.mtr")
    p = memtap("run", "-q", "-o", trace, "--", prog("fork_work"),
               env={"MEMTAP_WRITER": "all", "MEMTAP_BUFFER_RECORDS": "64"})
    children = [l.split("also wrote ")[1] for l in p.stderr.splitlines() if "also wrote" in l]
    check_eq(len(children), 1, "the forked child's trace")
    for path, who in ((trace, "parent"), (children[0], "child")):
        block = re.compile(r"^([LS])\$\d+:<malloc\d+@block_%s\+\d+>\+\d+, \[heap\], fill_and_sum\+\d+$"
                           % who)
        kinds = [m.group(1) for m in map(block.match, show(path)) if m]
        info = info_of(path)
        check_eq((kinds.count("S"), kinds.count("L"), info.get("end"), info["dropped"]),
                 (1000, 1000, "exit", "0"), "%s: stores and loads of its block, end, dropped" % who)
        check(int(info.get("writer_chunks", "0")) > 0, "%s: its writer wrote chunks" % who)


def test_writer_keeps_order():
    """Chunks handed to the writer keep their place in each thread's
    events: three threads of chunk_order each fill and read back 8 heap
    blocks of 6000 ints, more records than a chunk of 4096 holds between a
    block's malloc and its free.  With the writer writing every chunk
    (all) and without it (off), every access to a block lies between its
    malloc and its free, its 6000 stores in address order before its 6000
    loads; the closing note counts the chunks the writer wrote."""
    copy = instrument(prog("chunk_order"), os.path.join(TMP, "chunk_order.mt"),
                      "--nonselective")
    access = re.compile(r"^([LS])\$\d+:<malloc(\d+)@block_of\+\d+>\+(\d+), \[heap\], fill_and_sum")
    event = re.compile(r"^([MF])\$\d+:<(?:malloc|freed:)(\d+)@block_of")
    want = [("S", 4 * i) for i in range(6000)] + [("L", 4 * i) for i in range(6000)]
    for writer in ("off", "all"):
        trace = os.path.join(TMP, "chunk_order-%s.mtr" % writer)
        p = memtap("run", "-q", "-o", trace, "--", copy,
                   env={"MEMTAP_WRITER": writer, "MEMTAP_BUFFER_RECORDS": "4096"})
        check_eq(p.stdout.strip(), str(3 * 8 * 6000 * 5999 // 2), "%s: the program's sum" % writer)
        blocks, order = {}, []
        for line in show(trace):
            m = access.match(line)
            if m:
                blocks.setdefault(m.group(2), []).append((m.group(1), int(m.group(3))))
                order.append(("A", m.group(2)))
                continue
            m = event.match(line)
            if m:
                order.append((m.group(1), m.group(2)))
        check_eq(len(blocks), 24, "%s: blocks accessed" % writer)
        check(all(v == want for v in blocks.values()),
              "%s: each block's 6000 stores, then 6000 loads, in order" % writer)
        for b in blocks:
            at = [i for i, (k, n) in enumerate(order) if n == b]
            kinds = [order[i][0] for i in at]
            check(kinds[0] == "M" and kinds[-1] == "F" and kinds.count("A") == len(kinds) - 2,
                  "%s: block %s's accesses between its malloc and its free" % (writer, b))
        info = info_of(trace)
        check_eq(info["dropped"], "0", "%s: nothing dropped" % writer)
        chunks = int(info.get("writer_chunks", "0"))
        # 288,000 accesses in chunks of 4096: all but each thread's last
        # (written as it exits) by the writer
        check(chunks == 0 if writer == "off" else chunks >= 3 * 8 * 12000 // 4096 - 3,
              "%s: chunks the writer wrote (%d)" % (writer, chunks))


def packed_chunks(path):
    """(stored, raw) sizes of each event chunk (PACKED) of a trace file,
    but the empty ones that mark a thread's pauses."""
    with open(path, "rb") as f:
        data = f.read()
    sizes = [(n - 32, int.from_bytes(data[o + 12:o + 16], "little"))
             for o, n, t in chunks(data) if t == 5]
    return [(z, r) for z, r in sizes if r]


def stored_pattern(sizes):
    """Which event chunks are stored as they are ("s": the frame no
    smaller than the bytes), compressed ("c"), from the first compressed
    one that shrank less than 2:1 ("<") on; "" when none did."""
    first = next((i for i, (z, r) in enumerate(sizes) if z < r < 2 * z), None)
    if first is None:
        return ""
    return "<" + "".join("s" if z >= r else "c" for z, r in sizes[first + 1:])


def test_rewrite_compress():
    """--compress balanced, fast and small write traces that read back the
    same records, of a few structs and of a walk of random addresses in 64
    KiB (on the brk heap: a block memtap's own mappings do not move):
    balanced stores the walk's chunks as they are (zstd's raw blocks) after
    one that shrank less than 2:1, the 16th after it compressed again (fast
    too, but its chunks of random addresses, their literals not coded, do
    not shrink at all: their frames look the same), small stores none;
    anything else is refused before the program runs.  No writer: a
    thread's chunks compressed in turn (with a writer the thread may
    compress one beside it, before it knows how the one before shrank);
    then balanced again with the writer alone (MEMTAP_WRITER=all): the
    same records, the walk's chunks stored too (the thread encodes a chunk
    to be stored into the writer's hand itself, the writer only writes
    it)."""
    env = dict(os.environ, MEMTAP_BUFFER_RECORDS="4096")
    for name, argv in (("lk_structs", []), ("rewrite_workloads", ["walk", "256"])):
        copy = instrument(prog(name), os.path.join(TMP, "comp-%s.mt" % name),
                          "--nonselective")
        lines, patterns = [], []
        for how, writer in (("balanced", "off"), ("fast", "off"), ("small", "off"),
                            ("balanced", "all")):
            # paths of one length
            trace = os.path.join(TMP, "comp-%s.mtr" % (how[0] if writer == "off" else "w"))
            # MEMTAP_COMPRESS=HOW reaches the stack: PAD makes every setting's
            # environment one length, so the stack's addresses do not move
            subprocess.run(["setarch", "-R", MEMTAP_BIN, "run", "-q", "--compress", how,
                            "-o", trace, "--", copy] + argv, check=True,
                           capture_output=True, env=dict(env, PAD="x" * (8 - len(how)),
                                                         MEMTAP_WRITER=writer))
            lines.append([l for l in show(trace, "--raw") if not l.startswith("#")])
            patterns.append(stored_pattern(packed_chunks(trace)))
        check(lines[0] and lines[0] == lines[1] == lines[2] == lines[3],
              "%s: the same records at every setting (%s)" % (name, [len(l) for l in lines]))
        if name == "lk_structs":
            continue
        check(patterns[0].startswith("<" + "s" * 15 + "c") and "s" not in patterns[2]
              and patterns[3].count("s") > len(patterns[3]) // 2,
              "walk: chunks stored (s) and compressed (c) after one that shrank "
              "less than 2:1 (<), balanced, fast, small and balanced with the "
              "writer: %s" % patterns)
    p = memtap("run", "--compress", "zip", "--", copy, check_rc=False)
    check(p.returncode != 0 and "expected balanced, fast or small" in p.stderr
          and not p.stdout, "a bad setting is refused: %s" % p.stderr)


def elided_sites(path):
    """How many sites of a rewritten file are elided (memtap_site.elided)."""
    return sum(site[7] for site in sites_of(path))


def test_rewrite_killed():
    """A rewritten program killed by SIGKILL mid-run: every chunk written
    reads back (only the tail may be cut), accesses included."""
    copy = instrument(prog("rewrite_workloads"), os.path.join(TMP, "killed.mt"), "--nonselective")
    trace = os.path.join(TMP, "killed.mtr")
    env = dict(os.environ, MEMTAP_BUFFER_RECORDS="4096")
    p = subprocess.Popen([MEMTAP_BIN, "run", "-o", trace, "--", copy, "walk"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    child, deadline = None, time.time() + 20
    while time.time() < deadline and child is None:
        time.sleep(0.05)
        kids = program_children(p.pid)
        if kids and os.path.exists(trace) and os.path.getsize(trace) > (1 << 20):
            child = kids[0]
    check(child, "the rewritten program wrote a trace to kill it in the middle of")
    os.kill(child, 9)
    err = p.communicate(timeout=60)[1].decode()
    check("killed by signal 9" in err, "memtap run reports the kill: " + err)
    info = memtap("info", trace).stdout
    chunks = int(re.search(r"^chunks: (\d+)", info, re.M).group(1))
    written = int(re.search(r"^events: (\d+)", info, re.M).group(1))
    check(re.search(r"^corrupt_chunks: 0$", info, re.M), "no chunk damaged:\n" + info)
    r = memtap("show", "--raw", trace, check_rc=False)
    accesses = sum(1 for l in r.stdout.splitlines() if l[:1] in "LS")
    check(chunks > 10 and accesses > 100000, "%d chunks, %d accesses read back" % (chunks, accesses))
    check_eq(sum(1 for l in r.stdout.splitlines() if l[:1] in "LSMCPREFUYWG" or
                 l.startswith("#")), written, "every event written reads back")


def test_rewrite_terminated():
    """A rewritten program sent SIGTERM while it logs fast (the walk's
    set-up, where its thread packs and compresses beside memtap's writer):
    memtap's handler flushes and the program dies by the signal, however
    the signal falls, without waiting for work its own thread was doing
    when interrupted (it waited forever in 17 of 20 such runs before); the
    trace reads whole."""
    copy = instrument(prog("rewrite_workloads"), os.path.join(TMP, "termed.mt"), "--nonselective")
    trace = os.path.join(TMP, "termed.mtr")
    for k in range(8):
        if os.path.exists(trace):
            os.unlink(trace)
        p = subprocess.Popen([MEMTAP_BIN, "run", "-o", trace, "--", copy, "walk"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        child, deadline = None, time.time() + 20
        while time.time() < deadline and not os.path.exists(trace):
            time.sleep(0.001)  # its trace opened: the program runs, traced
        # (memtap run's only child by then: the loader's listing of the
        # program's libraries, a child before it, has ended)
        kids = program_children(p.pid)
        child = kids[0] if len(kids) == 1 else None
        check(child, "the rewritten program started: %s" % kids)
        time.sleep(0.01 * (k + 1))  # across the set-up (about 0.1 s)
        os.kill(child, signal.SIGTERM)
        try:
            err = p.communicate(timeout=30)[1].decode()
        except subprocess.TimeoutExpired:
            os.kill(child, signal.SIGKILL)
            p.communicate()
            check(False, "the program ended within 30 s of SIGTERM %.2f s in" % (0.01 * (k + 1)))
            continue
        check("killed by signal 15" in err, "memtap run reports SIGTERM: " + err)
        info = memtap("info", trace).stdout
        written = int(re.search(r"^events: (\d+)", info, re.M).group(1))
        check(re.search(r"^corrupt_chunks: 0$", info, re.M), "no chunk damaged:\n" + info)
        r = subprocess.run([MEMTAP_BIN, "show", "--raw", trace], capture_output=True)
        check(b"signal 15" in r.stderr, "show says how the process ended: %r" % r.stderr)
        check_eq(r.stdout.count(b"\n"), written, "every event written reads back, a line each")


def block_counts(trace, bias=0):
    """{link-time block start: executions} of a --profile run's trace."""
    out = {}
    for l in show(trace):
        m = re.match(r"^# \d+: block 0x[0-9a-f]+ \((0x[0-9a-f]+) in its file\) ran (\d+) times", l)
        if m:
            out[int(m.group(1), 16)] = int(m.group(2))
    return out


def weighted(binary, profile):
    out = memtap("analyze", binary, "--omega", "0.25", "--profile", profile).stdout
    lines = [l for l in out.splitlines() if l.startswith("weighted ")]
    check_eq(len(lines), 2, "weighted MA and AIA lines for %s" % profile)
    return lines


def test_rewrite_profile():
    """--profile: every block with memory operands that ran has a record
    whose count equals the times Lackey saw its first instruction run
    (the original program); analyze weighs MA/AIA the same from the trace
    as from those Lackey counts written as a text profile."""
    for name, opts in (("lk_structs", ["--omega", "0.25"]), ("lk_heap", ["--nonselective"])):
        binary = prog(name)
        out = instrument(binary, os.path.join(TMP, name + "-prof.mt"), "--profile", *opts)
        trace = behaves_the_same(name + " (--profile)", binary, out)
        ours = block_counts(trace)
        runs = lackey_all(binary)[1]
        blocks = [int(l.split()[0], 16) for l in
                  memtap("analyze", binary, "--blocks").stdout.splitlines()
                  if not l.startswith("#") and int(l.split()[3]) > 0]
        check(blocks, "%s: blocks with memory operands listed" % name)
        diffs = ["0x%x: lackey %d, memtap %d" % (b, runs.get(b, 0), ours.get(b, 0))
                 for b in blocks if runs.get(b, 0) != ours.get(b, 0)]
        check(not diffs, "%s: block counts differ:\n    %s" % (name, "\n    ".join(diffs[:20])))
        check(sum(ours.values()) > len(ours), "%s: some block ran more than once" % name)
        text = os.path.join(TMP, name + ".prof")
        with open(text, "w") as f:
            f.writelines("%x %d\n" % (b, runs[b]) for b in blocks if b in runs)
        check_eq(weighted(binary, trace), weighted(binary, text),
                 "%s: weighted accuracy from the trace and from Lackey's counts" % name)
    p = memtap("analyze", prog("lk_globals"), "--profile", trace, check_rc=False)
    check(p.returncode == 1 and "no block counts of" in p.stderr,
          "a profile of another file is refused: %r" % p.stderr)


def test_rewrite_consumer():
    """--consumer: the user's memtap_consume gets, per instruction, the
    loads and stores the trace gets from the same rewritten program; the
    trace then holds no accesses (threads included)."""
    for name in ("lk_heap", "lk_threads"):
        binary = prog(name)
        out = instrument(binary, os.path.join(TMP, name + "-cons.mt"), "--nonselective")
        trace = behaves_the_same(name, binary, out, NOW)
        want = {}
        for r in [l.split(",") for l in show(trace, "--raw", "--format", "csv")[1:]]:
            if r[2] in "LS":
                want.setdefault(int(r[3], 16), [0, 0])[0 if r[2] == "L" else 1] += int(r[8])
        tally = os.path.join(TMP, name + ".tally")
        ctrace = os.path.join(TMP, name + "-cons.mtr")
        got_out = run([prog("memtap"), "run", "-o", ctrace, "--consumer",
                       os.path.join(os.path.dirname(prog("memtap")), "..", "lib",
                                    "libconsumer_tally.so"), "--", out],
                      dict(NOW, TALLY_OUT=tally))
        check_eq(got_out, run([binary]), "%s under --consumer" % name)
        lines = open(tally).read().splitlines()
        check(re.match(r"^batches [1-9]\d* bad 0$", lines[0]), "tally header %r" % lines[0])
        got = {int(a, 16): [int(l), int(s)] for a, l, s in (x.split() for x in lines[1:])}
        # pcs are runtime addresses in both (non-PIE programs load where linked)
        check_eq(got, want, "%s: per-instruction counts, consumer vs trace" % name)
        check(not [l for l in show(ctrace) if re.match(r"^[LS][$#]", l)],
              "%s: with a consumer the trace holds no accesses" % name)
    p = memtap("run", "--consumer", "/nonexistent.so", "--", prog("lk_heap"), check_rc=False)
    check(p.returncode != 0 and p.stderr.startswith("memtap: /nonexistent.so"),
          "a missing consumer: clear error (%r)" % p.stderr)
    # a library without memtap_consume: said, and the trace gets the accesses
    ctrace = os.path.join(TMP, "no-consume.mtr")
    p = memtap("run", "-o", ctrace, "--consumer",
               os.path.join(os.path.dirname(prog("memtap")), "..", "lib", "libplugin.so"),
               "--", out, check_rc=False)
    check(p.returncode == 0 and "memtap_consume; writing the trace instead" in p.stderr,
          "a library without memtap_consume: %r" % p.stderr)
    check([l for l in show(ctrace) if re.match(r"^[LS][$#]", l)],
          "without a usable consumer the trace holds the accesses")


def load_bias(trace):
    m = re.search(r"module 0: (0x[0-9a-f]+)", memtap("info", trace).stdout)
    check(m, "the trace names the program's load address")
    return int(m.group(1), 16)


def test_rewrite_modes():
    """ma and aia records carry the count of their site (|[e]|, or that
    plus the classes it stands for), which exceeds 1 somewhere (at -O0 a
    block reloads the same stack slots)."""
    for mode in ("ma", "aia"):
        out = instrument(prog("switcher_O0"), os.path.join(TMP, "sw-%s.mt" % mode),
                         "--omega", "0.25", "--mode", mode)
        trace = behaves_the_same("switcher_O0 (%s)" % mode, prog("switcher_O0"), out)
        sites, bias = site_table(out), load_bias(trace)
        seen = set()
        for r in [l.split(",") for l in show(trace, "--raw", "--format", "csv")[1:]]:
            pc = int(r[3], 16) - bias
            if r[2] in "LS" and pc in sites:
                want = {c for c, _, _, _ in sites[pc]}
                check(int(r[8]) in want, "0x%x: count %s, site table %r" % (pc, r[8], want))
                seen.add(int(r[8]))
        check(seen and max(seen) > 1, "%s: counts above 1 appear: %r" % (mode, sorted(seen)))


def measured(selective, full):
    out = memtap("accuracy", selective, "--full", full).stdout
    m = re.search(r"recovered +([\d.]+) of the accesses", out)
    check(m and re.search(r"static estimate +MA [\d.]+, AIA [\d.]+", out),
          "accuracy report: %r" % out)
    return float(m.group(1))


def test_rewrite_accuracy():
    """Measured accuracy: a non-selective trace recovers all of itself; at
    omega 0.25 the log mode recovers part, ma (each record counts its
    class) more, aia (and the classes it stands for) more still."""
    traces = {}
    for name, opts in (("full", ["--nonselective"]), ("log", ["--omega", "0.25"]),
                       ("ma", ["--omega", "0.25", "--mode", "ma"]),
                       ("aia", ["--omega", "0.25", "--mode", "aia"])):
        out = instrument(prog("switcher_O0"), os.path.join(TMP, "acc-%s.mt" % name), *opts)
        traces[name] = behaves_the_same("switcher_O0 (%s)" % name, prog("switcher_O0"), out)
    check_eq(measured(traces["full"], traces["full"]), 1.0, "a full trace against itself")
    log, ma, aia = (measured(traces[k], traces["full"]) for k in ("log", "ma", "aia"))
    check(0 < log < ma <= aia <= 1.0, "log %.4f < ma %.4f <= aia %.4f" % (log, ma, aia))
    p = memtap("accuracy", traces["full"], "--full", os.path.join(TMP, "none.mtr"),
               check_rc=False)
    check(p.returncode == 1 and p.stderr.startswith("memtap: "), "missing trace: clear error")


def accuracy_chunks(selective, full, chunk):
    out = memtap("accuracy", selective, "--full", full, "--chunk", str(chunk)).stdout
    m = re.search(r"accesses +\d+ in (\d+) chunks", out)
    check(m, "accuracy report: %r" % out)
    return int(m.group(1))


def test_accuracy_chunks_by_offset():
    """A chunk is C bytes of an object by offset from its start, not a
    field: chunked's rows are 16 structs of four ints, and the run that
    touches all of them has 256 / C more chunks than the run that touches
    none (everything else the two runs touch is the same), where one chunk
    per field would make 64 more at any C."""
    out = instrument(prog("chunked"), os.path.join(TMP, "chunked.mt"), "--nonselective")
    traces = {}
    for k in ("0", "16"):
        want = run([prog("chunked"), k])
        check_eq(want, (b"", 0), "chunked %s on its own" % k)
        traces[k] = os.path.join(TMP, "chunked-%s.mtr" % k)
        check_eq(run([prog("memtap"), "run", "-o", traces[k], "--", out, k]), want,
                 "chunked %s under memtap run" % k)
    for chunk in (16, 64):
        extra = (accuracy_chunks(traces["16"], traces["16"], chunk) -
                 accuracy_chunks(traces["0"], traces["0"], chunk))
        check_eq(extra, 256 // chunk, "chunks of %d bytes in rows" % chunk)


def digest(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def expect_refusal(args, what):
    p = memtap("instrument", *args, check_rc=False)
    check(p.returncode != 0 and p.stderr.startswith("memtap: ") and what in p.stderr,
          "instrument %s: want %r, got %r" % (" ".join(args), what, p.stderr))


def test_rewrite_other_abi():
    """A file rewritten for another runtime ABI still runs as the original,
    and memtap says its instrumentation is not used instead of staying
    silent."""
    copy = instrument(prog("lk_globals"), os.path.join(TMP, "old_abi.mt"), "--nonselective")
    data = bytearray(open(copy, "rb").read())
    at = data.find(b"MTREWR01")
    check(at >= 0, "a rewrite header")
    # ABI 9, whose trampolines called a stub the runtime patched: the last
    # one before this runtime's, which would leave that stub a `ret`
    struct.pack_into("<I", data, at + 8, 9)
    open(copy, "wb").write(data)
    trace = os.path.join(TMP, "old_abi.mtr")
    p = subprocess.run([MEMTAP_BIN, "run", "-o", trace, "--", copy], capture_output=True)
    check_eq((p.stdout, p.returncode), run([prog("lk_globals")]), "runs as the original")
    check(b"rewritten by another version of memtap instrument" in p.stderr,
          "says so: %r" % p.stderr)


def test_rewrite_cannot_turn_on():
    """A rewritten module the runtime cannot turn on (its patch offsets lie
    outside its segment) logs nothing: the run says so, the trace says it
    is incomplete, and memtap exits 125 instead of passing on a silent
    loss."""
    copy = instrument(prog("lk_globals"), os.path.join(TMP, "off_segment.mt"),
                      "--nonselective")
    data = bytearray(open(copy, "rb").read())
    at = data.find(b"MTREWR01")
    check(at >= 0, "a rewrite header")
    size = header(copy)["segment_size"]
    struct.pack_into("<Q", data, at + struct.calcsize("<8sIIIIQQQQ"), size + 4096)
    open(copy, "wb").write(data)
    check_eq(header(copy)["tag_slot"], size + 4096, "tag_slot moved past the segment")
    trace = os.path.join(TMP, "off_segment.mtr")
    p = subprocess.run([MEMTAP_BIN, "run", "-o", trace, "--", copy], capture_output=True)
    want_out, _ = run([prog("lk_globals")])
    check_eq(p.stdout, want_out, "the program still runs as the original")
    err = p.stderr.decode()
    check("its rewritten code cannot be turned on" in err, "the run says so: %r" % err)
    check("1 rewritten module(s) could not be turned on" in err and "(incomplete)" in err,
          "the summary calls the trace incomplete: %r" % err)
    check_eq(p.returncode, 125, "memtap's exit status for an incomplete trace")
    p = subprocess.run([MEMTAP_BIN, "show", trace], capture_output=True)
    check(b"could not be turned on" in p.stderr, "show warns too: %r" % p.stderr[-300:])


def test_rewrite_site_records():
    """The copy carries the records each site's entry stands for (a byte a
    site, rt/abi.h's records), which the runtime copies instead of working
    them out; bytes no entry can stand for, or a records offset outside
    the segment, make it work them out again, with the same trace."""
    copy = instrument(prog("lk_globals"), os.path.join(TMP, "records.mt"), "--nonselective")
    data = bytearray(open(copy, "rb").read())
    at = data.find(b"MTREWR01")
    h = header(copy)
    off = struct.calcsize(HEADER.format + "QII8QQQ")  # mt_rewrite_header.records
    records = struct.unpack_from("<Q", data, at + off)[0]
    check(0 < records < h["segment_size"], "a records table in the segment: %d" % records)
    # trace.h: an entry stands for its site's load and store records, then
    # each elided follower's; an elided site's own entry for none
    table = sites_of(copy)
    kinds = [(1 if t[3] else 0) + (1 if t[4] else 0) for t in table]
    want = [0 if t[7] else kinds[i] + sum(kinds[i + 1:i + 1 + t[6]])
            for i, t in enumerate(table)]
    check_eq(list(data[at + records:at + records + h["nsites"]]), want,
             "a byte a site: its records")

    def lackey(path):
        trace = path + ".mtr"
        # no address randomization: the stack's addresses are compared too
        p = subprocess.run(["setarch", "x86_64", "-R", MEMTAP_BIN, "run", "-o", trace, "--",
                            path], capture_output=True)
        check_eq(p.returncode, 0, "memtap run %s: %r" % (path, p.stderr))
        return memtap("show", "--format", "lackey", trace).stdout
    good = lackey(copy)
    for name, patch in (("bad bytes", lambda d: d.__setitem__(slice(at + records, at + records + h["nsites"]),
                                                                b"\xff" * h["nsites"])),
                        ("offset outside", lambda d: struct.pack_into("<Q", d, at + off,
                                                                      h["segment_size"] + 1))):
        damaged = bytearray(data)
        patch(damaged)
        open(copy, "wb").write(damaged)  # the same path: the same stack
        check_eq(lackey(copy), good, "%s: the same accesses" % name)


def test_rewrite_data_in_text():
    """Bytes among the instructions that code takes the address of are a
    table, not code, even where they decode as code no path reaches: the
    copy leaves them as they are, so the program reads what it reads
    natively (they had been patched with jumps to trampolines)."""
    copy = instrument(prog("data_in_text"), os.path.join(TMP, "data_in_text.mt"),
                      "--nonselective")
    want = run([prog("data_in_text")])
    check(want[0].startswith(b"table checksum "), "the program: %r" % (want,))
    check_eq(run([copy]), want, "the copy reads the same table")
    trace = os.path.join(TMP, "data_in_text.mtr")
    check_eq(run([MEMTAP_BIN, "run", "-o", trace, "--", prog("data_in_text")]), want,
             "under memtap run")


def text_section(path):
    """(address, file offset, size) of path's .text."""
    out = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        if " .text " in line:
            f = line.split("]", 1)[1].split()
            return int(f[2], 16), int(f[3], 16), int(f[4], 16)
    raise Failure("no .text in " + path)


def verify(copy, original):
    p = memtap("instrument", "--verify", copy, original, check_rc=False)
    m = re.search(r"violations\s+(\d+)", p.stdout)
    check(m, "--verify %s: a count of violations: %s%s" % (copy, p.stdout, p.stderr))
    check_eq(p.returncode, 1 if int(m.group(1)) else 0, "--verify %s: exit status" % copy)
    return int(m.group(1)), p


def test_rewrite_verify():
    """The verifier, which decodes the original and the copy itself, finds
    nothing wrong in the copies of the test programs and of the system's
    libc, libstdc++, libsqlite3 and python3 (default and non-selective),
    and finds each of three faults made by hand in a copy: an int3 no trap
    names, a window's jump sent one byte off, a trampoline's jump back
    sent one byte off."""
    files = [prog(n) for n in ("lk_hazards", "lk_hazards_stripped", "lk_block_edges",
                               "switcher_O2", "switcher_clang_O3", "three_mallocs_stripped",
                               "cxx_alloc", "exceptions", "data_in_text")]
    files += [f for f in (LIBC, "/lib/x86_64-linux-gnu/libstdc++.so.6",
                          "/lib/x86_64-linux-gnu/libsqlite3.so.0", "/usr/bin/python3.11")
              if os.path.exists(f)]
    check(len(files) >= 11, "libc, libstdc++ and libsqlite3 are installed")
    for f in files:
        for opts in ((), ("--nonselective",)):
            copy = instrument(f, os.path.join(TMP, os.path.basename(f) + ".vf"), *opts)
            n, p = verify(copy, f)
            check_eq(n, 0, "%s %s: violations:\n%s%s" % (f, opts, p.stdout, p.stderr))
            starts = int(re.search(r"instruction starts (\d+)", p.stdout).group(1))
            check(starts > 100, "%s: instruction starts checked: %d" % (f, starts))
    original = prog("lk_hazards")
    copy = instrument(original, os.path.join(TMP, "hz.vf"), "--nonselective")
    a, off, size = text_section(original)
    old, new = open(original, "rb").read(), open(copy, "rb").read()
    jumps = [i for i in range(off, off + size) if old[i] != new[i] and new[i] == 0xe9]
    same = [i for i in range(off, off + size - 16) if old[i:i + 16] == new[i:i + 16]]
    check(jumps and same, "windows and unchanged code in the copy")
    seg = header(copy)
    for what, at, byte in (("an int3 no trap names", same[0], None),
                           ("a window's jump one byte off", jumps[0] + 1, None),
                           ("a trampoline's jump back one byte off", None, None)):
        bad = bytearray(new)
        if at is None:
            # the first jump back out of the segment: e9 rel32 to .text
            segoff = new.find(b"MTREWR01")
            for i in range(segoff + seg["stub"], len(new) - 5):
                if new[i] == 0xe9:
                    t = seg["segment_vaddr"] + (i - segoff) + 5 + \
                        struct.unpack_from("<i", new, i + 1)[0]
                    if a <= t < a + size:
                        at = i + 1
                        break
            check(at, "a jump back from a trampoline")
        if what.startswith("an int3"):
            bad[at] = 0xcc
        else:
            struct.pack_into("<i", bad, at, struct.unpack_from("<i", new, at)[0] + 1)
        path = os.path.join(TMP, "bad.vf")
        open(path, "wb").write(bad)
        n, p = verify(path, original)
        check(n > 0, "the verifier finds %s" % what)


def test_rewrite_dropped_window():
    """A window moved only for the jump before it (its jump with a prefix
    whose byte that jump shares) is left as it is when no stub serves its
    jump, and its int3 places with it: a short branch the rewriter had
    already sent to one of them (through a jump in padding) goes to its
    own target again, and that jump is padding again.  Before, chromium's
    copy had 100 faults of this kind and was refused (it ran untraced).
    --stubless makes every window of dropped_window miss its stub: the
    copy verifies, runs as the program does and under memtap run; of its
    two short branches to int3 places only the one to the place that
    stays goes through padding."""
    original = prog("dropped_window")
    copy = os.path.join(TMP, "dropped_window.copy")
    p = memtap("instrument", original, "-o", copy, "--nonselective", "--stubless",
               check_rc=False)
    check_eq(p.returncode, 0, "memtap instrument --stubless: %s" % p.stderr)
    check("1 jumps with a prefix for the jump before to share" in p.stdout,
          "the layout makes a window moved for the jump before: %s" % p.stdout)
    check(re.search(r"\b1 branches sent straight to an int3 place's trampoline", p.stdout),
          "one short branch sent through padding, the other one's back: %s" % p.stdout)
    n, v = verify(copy, original)
    check_eq(n, 0, "violations:\n%s%s" % (v.stdout, v.stderr))
    behaves_the_same("dropped_window", original, copy)


def test_rewrite_stub_holes():
    """A file whose trampolines take more than 15 MiB leaves holes for
    stubs among them (rt/abi.h), where a stub goes when they are the
    lowest places its constraint allows: stub_holes' 120,000 windows (two
    additions to a heap block's ints, the first 2 bytes long: an int3
    place under each jump, which fixes its displacement's second byte)
    make a segment with a hole that some of their stubs take.  The copy
    verifies (the verifier follows a jump into a hole to its stub's
    trampoline), runs as the program does (it stops at an int3 when a
    stub in a hole is not written), and under memtap run records every
    addition: 120,000 to each int, each a load and a store.  Rewriting it
    takes about a second (a chain of 120,000 blocks: a search of its
    operands per instruction made it four minutes)."""
    original = prog("stub_holes")
    copy = os.path.join(TMP, "stub_holes.copy")
    p = memtap("instrument", original, "-o", copy, "--nonselective", check_rc=False)
    check_eq(p.returncode, 0, "memtap instrument: %s" % p.stderr)
    m = re.search(r"(\d+) jumps through a stub \(.*?; (\d+) of them in (\d+) holes", p.stdout)
    check(m, "the stubs line counts holes: %s" % p.stdout)
    stubs, in_holes, holes = (int(g) for g in m.groups())
    check(stubs >= 120000 and holes >= 1 and in_holes >= 100,
          "stubs in holes: %d of %d, %d holes" % (in_holes, stubs, holes))
    n, v = verify(copy, original)
    check_eq(n, 0, "violations:\n%s%s" % (v.stdout, v.stderr))
    check_eq(run([copy])[0], b"120000 240000\n", "the copy on its own")
    trace = behaves_the_same("stub_holes", original, copy)
    heap = collections.Counter(
        (m.group(1), m.group(2)) for m in
        (re.match(r"^([LS])\$\d+:<calloc\w*@main\+\d+>\+(\d+), \[heap\], walk\+", l)
         for l in show(trace))
        if m)
    check_eq(heap, {("L", "0"): 120000, ("S", "0"): 120000,
                    ("L", "4"): 120000, ("S", "4"): 120000},
             "walk's loads and stores of the heap block's two ints")


def reseal(copy):
    """Writes the copy's seal (cache/key.h) anew: the cache then takes it
    for the copy the verifier passed."""
    st = os.stat(copy)
    h = 0xcbf29ce484222325
    for b in struct.pack("<7Q", st.st_dev, st.st_ino, st.st_size,
                         st.st_mtime_ns // 10**9, st.st_mtime_ns % 10**9,
                         st.st_ctime_ns // 10**9, st.st_ctime_ns % 10**9):
        h = ((h ^ b) * 0x100000001b3) & (2**64 - 1)
    open(copy + ".seal", "w").write("%016x\n" % h)


def test_rewrite_blames_itself():
    """A fatal fault in bytes the static engine changed is memtap's, and
    memtap says so (where, the original instruction, what to do): the
    cached copy of a program, damaged after it was verified (a window's
    jump made an invalid opcode), dies of SIGILL there.  A program's own
    crash (crasher's store to NULL, moved into a trampoline) stays the
    program's."""
    cache = os.path.join(TMP, "blame-cache")
    shutil.rmtree(cache, ignore_errors=True)
    env = {"MEMTAP_CACHE_DIR": cache}
    trace = os.path.join(TMP, "blame.mtr")
    binary = prog("globals")
    p = memtap("run", "-q", "-o", trace, "--", binary, env=env, check_rc=False)
    check_eq(p.returncode, 0, "globals under memtap run: %s" % p.stderr)
    copy = [os.path.join(cache, f) for f in os.listdir(cache) if f.endswith("-globals")]
    check_eq(len(copy), 1, "the program's copy in the cache")
    a, off, size = text_section(binary)
    old, new = open(binary, "rb").read(), bytearray(open(copy[0], "rb").read())
    at = next(i for i in range(off, off + size) if old[i] != new[i] and new[i] == 0xe9)
    new[at] = 0x06  # not an instruction in 64-bit mode
    open(copy[0], "wb").write(new)
    reseal(copy[0])  # as a fault of the rewriter's own would look: unseen
    p = memtap("run", "-o", trace, "--", binary, env=env, check_rc=False)
    check_eq(p.returncode, -signal.SIGILL, "the damaged copy dies of SIGILL: %s" % p.stderr)
    m = re.search(r"^memtap: error: .*signal 4 .* at globals\+0x([0-9a-f]+), in code memtap's "
                  r"static engine changed \(the original has '([^']+)'.*This is memtap's "
                  r"fault.*--engine fault", p.stderr, re.M)
    check(m, "memtap names its own fault: %s" % p.stderr)
    check_eq(int(m.group(1), 16), a + at - off, "where")
    p = memtap("run", "-o", trace, "--", prog("crasher"), env=env, check_rc=False)
    check_eq(p.returncode, -signal.SIGSEGV, "crasher dies of SIGSEGV: %s" % p.stderr)
    check("memtap's fault" not in p.stderr and "ended by signal 11" in p.stderr,
          "the program's own crash is the program's: %s" % p.stderr)


def test_rewrite_bad_input():
    out = os.path.join(TMP, "out.mt")
    expect_refusal([prog("static_prog"), "-o", out], "static executable")
    src = os.path.join(TMP, "copy")
    shutil.copy(prog("three_mallocs"), src)
    before = digest(src)
    expect_refusal([src, "-o", src], "overwrite the input")
    check_eq(digest(src), before, "the input is untouched")
    data = bytearray(open(src, "rb").read())
    arm = os.path.join(TMP, "arm")
    data_arm = bytearray(data)
    data_arm[18:20] = struct.pack("<H", 183)  # EM_AARCH64
    open(arm, "wb").write(data_arm)
    expect_refusal([arm, "-o", out], "x86-64")
    cut = os.path.join(TMP, "cut")
    open(cut, "wb").write(data[:300])
    expect_refusal([cut, "-o", out], "")
    text = os.path.join(TMP, "text")
    open(text, "w").write("hello\n")
    expect_refusal([text, "-o", out], "not an ELF")
    obj = os.path.join(TMP, "obj.o")
    subprocess.run(["cc", "-c", "-x", "c", "-", "-o", obj], input=b"int f(int *p){return *p;}",
                   check=True)
    expect_refusal([obj, "-o", out], "not an executable or shared library")
    check(not os.path.exists(out), "nothing written on refusal")


def phdr_types(path):
    out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout
    return [l.split()[0] for l in out.splitlines()
            if re.match(r"^  [A-Z_]+ +0x", l)]


def test_rewrite_unusual_phdrs():
    """A file whose PT_NOTE comes before its PT_LOADs: memtap's PT_LOADs
    still come after them, in address order.  The copy keeps every header
    of the input (PT_NOTE and PT_GNU_PROPERTY among them: its program
    header table moved into memtap's segment), and a file with no PT_NOTE
    at all is rewritten and runs as it did."""
    src = os.path.join(TMP, "notes_first")
    data = bytearray(open(prog("switcher_O2"), "rb").read())
    phoff, = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    ph = [bytes(data[phoff + i * phentsize:phoff + (i + 1) * phentsize]) for i in range(phnum)]
    types = [struct.unpack_from("<I", p)[0] for p in ph]
    note = types.index(4)
    first_load = types.index(1)
    ph.insert(first_load, ph.pop(note))  # the note before the loads
    for i, p in enumerate(ph):
        data[phoff + i * phentsize:phoff + (i + 1) * phentsize] = p
    open(src, "wb").write(data)
    os.chmod(src, 0o755)
    out = instrument(src, os.path.join(TMP, "notes_first.mt"), "--nonselective")
    behaves_the_same("notes first", src, out)
    loads = [l.split() for l in subprocess.run(["readelf", "-lW", out], capture_output=True,
                                               text=True).stdout.splitlines()
             if l.split() and l.split()[0] == "LOAD"]
    vaddrs = [int(f[2], 16) for f in loads]
    check_eq(vaddrs, sorted(vaddrs), "PT_LOADs in address order")
    before, after = phdr_types(src), phdr_types(out)
    check_eq([t for t in after if t != "LOAD"], [t for t in before if t != "LOAD"],
             "the input's other program headers, all kept")
    check(after.count("LOAD") > before.count("LOAD"), "memtap's PT_LOADs added")
    bare = bytearray(open(prog("switcher_O2"), "rb").read())
    for i in range(phnum):
        if struct.unpack_from("<I", bare, phoff + i * phentsize)[0] == 4:
            struct.pack_into("<I", bare, phoff + i * phentsize, 0)  # PT_NULL
    src = os.path.join(TMP, "no_notes")
    open(src, "wb").write(bare)
    os.chmod(src, 0o755)
    behaves_the_same("no notes", src, instrument(src, os.path.join(TMP, "no_notes.mt"),
                                                 "--nonselective"))


if __name__ == "__main__":
    sys.exit(run_named(globals(), sys.argv[1]))
