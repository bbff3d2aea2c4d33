#!/usr/bin/env python3
"""memtap integration tests: run programs written for the purpose under
`memtap run` and check `memtap show` line by line.

Expected call sites come from objdump's disassembly of the test program
(the return address after each call), never from memtap's own output.

Usage: memtap_tests.py TEST_NAME   (MEMTAP_BUILD names the build tree)
"""
import csv
import io
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile

BUILD = os.environ.get("MEMTAP_BUILD", os.path.join(os.path.dirname(__file__), "../../build"))
BIN = os.path.join(BUILD, "bin")
LIB = os.path.join(BUILD, "lib")
MEMTAP = os.path.join(BIN, "memtap")
TMP = tempfile.mkdtemp(prefix="memtap-it-")

EVENT = re.compile(r"^([LSYWGMCPREFU])([$#])(\d+):(.*)$")


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


def check_eq(got, want, what):
    if got != want:
        raise Failure("%s:\n  got:  %r\n  want: %r" % (what, got, want))


def run_bounded(cmd, timeout, **kw):
    """subprocess.run(cmd, capture_output=True) in a session of its own: on
    timeout the whole session is killed (memtap and the program it runs,
    which would otherwise spin on and slow every later test), then
    subprocess.TimeoutExpired is raised."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True, **kw)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        p.communicate()
        raise
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


def prog(name):
    return os.path.join(BIN, name)


def program_children(pid):
    """The children of memtap run `pid` but its processes' writers (which
    it takes in as the run's subreaper): the programs it started."""
    kids = []
    with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
        for kid in map(int, f.read().split()):
            try:
                with open("/proc/%d/comm" % kid) as c:
                    if c.read().strip() in ("memtap-writer", "memtap-ending"):
                        continue
            except OSError:  # (ended and reaped since)
                continue
            kids.append(kid)
    return kids


def memtap(*args, env=None, check_rc=True):
    e = dict(os.environ)
    if env:
        e.update(env)
    p = subprocess.run([MEMTAP] + list(args), capture_output=True, text=True, env=e)
    if check_rc and p.returncode != 0:
        raise Failure("memtap %s: exit %d\n%s" % (" ".join(args), p.returncode, p.stderr))
    return p


def trace(name, *args, out="t.mtr", env=None, expect_rc=0, heap_only=False,
          keep_going=False):
    path = os.path.join(TMP, out)
    opts = (["--heap-only"] if heap_only else []) + (["--keep-going"] if keep_going else [])
    # these tests are the fault engine's (engine_tests.py has the static
    # engine's, against this one)
    p = memtap("run", "--engine", "fault", "-o", path, *opts, "--",
               prog(name) if "/" not in name else name,
               *args, env=env, check_rc=False)
    # memtap's stderr says why a run it calls incomplete was
    check_eq(p.returncode, expect_rc, "exit status of memtap run %s; its stderr:\n%s"
             % (name, p.stderr[-2000:]))
    return path, p


def chunks(data):
    """(offset, length, type) of each chunk of a trace file's bytes."""
    off, out = int.from_bytes(data[12:16], "little"), []
    while off + 32 <= len(data):
        ctype = int.from_bytes(data[off + 4:off + 6], "little")
        stored = int.from_bytes(data[off + 8:off + 12], "little")
        out.append((off, 32 + stored, ctype))
        off += 32 + stored
    return out


def show(path, *opts):
    return memtap("show", *opts, path).stdout.splitlines()


def events(lines):
    """Table I lines without their sequence numbers, in order; checks that
    the sequence numbers increase."""
    out, last = [], -1
    for line in lines:
        m = EVENT.match(line)
        if not m:
            continue
        seq = int(m.group(3))
        check(seq > last or (seq == last), "sequence numbers increase: %s" % line)
        last = seq
        out.append("%s%s:%s" % (m.group(1), m.group(2), m.group(4)))
    return out


def disassembly(binary):
    """{function: [(address, text)]} from objdump -dC (demangled)."""
    text = subprocess.run(["objdump", "-dC", "--no-show-raw-insn", binary],
                          capture_output=True, text=True, check=True).stdout
    funcs, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^([0-9a-f]+) <(.+)>:$", line)
        if m:
            cur = m.group(2)
            funcs[cur] = [(int(m.group(1), 16), "")]
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(.*)$", line)
        if m and cur:
            funcs[cur].append((int(m.group(1), 16), m.group(2)))
    return funcs


def call_sites(binary, func, callee=None):
    """Return addresses of the calls in func (to callee when given), as
    (callee, func+offset) in order: the call site memtap must report."""
    insns = disassembly(binary)[func]
    start = insns[0][0]
    sites = []
    for i, (addr, text) in enumerate(insns):
        m = re.match(r"call\s+[0-9a-f]+ <(.+)@plt>", text)
        if m and (callee is None or m.group(1) == callee):
            sites.append((m.group(1), "%s+%d" % (func, insns[i + 1][0] - start)))
    return sites


def site(binary, func, callee, nth=0):
    return call_sites(binary, func, callee)[nth][1]


def heap_lines(lines):
    return [e for e in events(lines) if e[0] in "MCPREFU"]


# ---------------------------------------------------------------- heap tracker

def test_three_mallocs():
    for variant in ("three_mallocs", "three_mallocs_O2", "three_mallocs_nopie"):
        binary = prog(variant)
        path, _ = trace(variant)
        a = site(binary, "alloc_a", "malloc")
        b = site(binary, "alloc_b", "malloc")
        c = site(binary, "alloc_c", "malloc")
        check_eq(heap_lines(show(path)), [
            "M$:<malloc0000@%s>,16" % a,
            "M$:<malloc0001@%s>,32" % b,
            "M$:<malloc0002@%s>,48" % c,
            "F$:<freed:0001@%s>" % b,
        ], variant + ": symbolic heap lines")
        raw = heap_lines(show(path, "--raw"))
        check_eq(len(raw), 4, variant + ": raw lines")
        check(re.match(r"^M#:0x[0-9a-f]+,16, 0x[0-9a-f]+$", raw[0]), "raw M line: " + raw[0])
        check(re.match(r"^F#:0x[0-9a-f]+, 0x[0-9a-f]+$", raw[3]), "raw F line: " + raw[3])
        both = [l for l in show(path, "--both") if EVENT.match(l) and l[0] in "MF"]
        check_eq(len(both), 8, variant + ": --both gives a raw and a symbolic line each")
        check(both[0].startswith("M#") and both[1].startswith("M$"), "--both order")


def test_source_lines():
    src = os.path.join(os.path.dirname(__file__), "../programs/three_mallocs.c")
    lines = open(src).read().splitlines()
    want = [str(lines.index(l) + 1) for l in lines if "= malloc(" in l or "free(keep" in l]
    path, _ = trace("three_mallocs")
    got = [l.rsplit(":", 1)[1] for l in heap_lines(show(path, "--lines"))]
    check_eq(got, want, "source lines of the allocation calls")
    check(all(" three_mallocs.c:" in l for l in heap_lines(show(path, "--lines"))), "file names")


def test_stripped():
    binary = prog("three_mallocs_stripped")
    path, _ = trace("three_mallocs_stripped")
    # no function symbols: sites are module+offset, offsets from objdump
    insns = [i for f in disassembly(binary).values() for i in f]
    insns.sort()
    rets = [insns[k + 1][0] for k, (_, t) in enumerate(insns)
            if re.match(r"call\s+[0-9a-f]+ <malloc@plt>", t)]
    check_eq(len(rets), 3, "three calls to malloc in the stripped binary")
    name = "three_mallocs_stripped"
    lines = heap_lines(show(path))
    check_eq(lines[:3], ["M$:<malloc%04d@%s+0x%x>,%d" % (i, name, r, 16 * (i + 1))
                         for i, r in enumerate(rets)], "stripped binary sites")


def test_alloc_family():
    binary = prog("alloc_family")
    calls = [s for c, s in call_sites(binary, "main")]
    callees = [c for c, s in call_sites(binary, "main")]
    check_eq(callees, ["malloc", "calloc", "realloc", "realloc", "realloc",
                       "reallocarray", "posix_memalign", "aligned_alloc",
                       "memalign", "valloc", "pvalloc"] + ["free"] * 9,
             "calls in alloc_family's main")
    s = calls
    page = os.sysconf("SC_PAGESIZE")
    want = [
        "M$:<malloc0000@%s>,10" % s[0],
        "C$:<calloc0001@%s>,100" % s[1],
        "R$:<realloc0002@%s>,100000,<freed:0000@%s>" % (s[2], s[0]),
        "R$:<realloc0003@%s>,7,0x0" % s[3],
        "R$:0x0,0,<freed:0003@%s>" % s[3],
        "R$:<realloc0005@%s>,24,0x0" % s[5],
        "M$:<malloc0006@%s>,40" % s[6],
        "M$:<malloc0007@%s>,256" % s[7],
        "M$:<malloc0008@%s>,33" % s[8],
        "M$:<malloc0009@%s>,5" % s[9],
        "M$:<malloc0010@%s>,%d" % (s[10], page),
    ] + ["F$:<freed:%04d@%s>" % (i, s[i]) for i in (2, 1, 5, 6, 7, 8, 9, 10)]
    path, _ = trace("alloc_family")
    check_eq(heap_lines(show(path)), want, "malloc family lines")
    # flags: the memalign family is marked aligned in the CSV
    rows = [l.split(",") for l in show(path, "--format", "csv")[1:]]
    aligned = [r for r in rows if r[2] == "M" and int(r[9]) & 4]
    check_eq(len(aligned), 5, "aligned allocations flagged")


def test_mappings():
    binary = prog("mappings")
    s = dict()
    for callee, where in call_sites(binary, "main"):
        s.setdefault(callee, []).append(where)
    page = os.sysconf("SC_PAGESIZE")
    want = [
        "P$:<memmap0000@%s>,%d" % (s["mmap"][0], 4 * page),
        "E$:<mremap0001@%s>,%d,<unmap:0000@%s>" % (s["mremap"][0], 64 * page, s["mmap"][0]),
        "U$:<unmap:0001@%s>,%d" % (s["mremap"][0], 4 * page),
        "U$:<unmap:0001@%s>,%d" % (s["mremap"][0], 60 * page),
        "P$:<memmap0002@%s>,%d" % (s["sbrk"][1], 2 * page),
        "U$:<unmap:0002@%s>,%d" % (s["sbrk"][1], page),
        "U$:<unmap:0002@%s>,%d" % (s["sbrk"][1], page),
    ]
    path, _ = trace("mappings")
    check_eq(heap_lines(show(path)), want, "mapping lines")


def test_mapping_replaced():
    """mmap(MAP_FIXED) over a traced page: the old mapping's stores are
    its own, and the fresh page is a new mapping whose store and loads are
    recorded as its own (what was traced there is forgotten in one step
    with the call)."""
    path, p = trace("fixed_over")
    check_eq(p.stdout.strip(), "3 0", "the program's result")
    page = os.sysconf("SC_PAGESIZE")
    got = [re.sub(r"\$\d+:", "$:", re.sub(r"@main\+\d+", "", l)) for l in show(path)
           if "memmap" in l]
    want = ["P$:<memmap0000>,%d" % (2 * page),
            "S$:<memmap0000>+0, [mmap], main+", "S$:<memmap0000>+%d, [mmap], main+" % page,
            "P$:<memmap0001>,%d" % page,
            "S$:<memmap0001>+8, [mmap], main+"]
    check_eq([re.sub(r"main\+\d+$", "main+", l) for l in got[:5]], want, "the two mappings")
    check_eq(sorted(re.sub(r", main\+\d+$", "", l) for l in got[5:]),
             ["L$:<memmap0001>+0, [mmap]", "L$:<memmap0001>+8, [mmap]"], "the loads")


def test_cxx():
    binary = prog("cxx_alloc")
    news = [w for c, w in call_sites(binary, "main") if c.startswith("operator new")]
    widget = [w for c, w in call_sites(binary, "make_widget(int)") if c.startswith("operator new")]
    check_eq(len(news), 4, "operator new calls in main (3 + the throwing one)")
    path, p = trace("cxx_alloc")
    check("caught bad_alloc" in p.stdout, "the program caught bad_alloc")
    mine = [l for l in heap_lines(show(path)) if "main+" in l or "make_widget" in l]
    want = [
        "M$:<malloc0000@%s>,16" % widget[0],
        "M$:<malloc0001@%s>,40" % news[0],
        "M$:<malloc0002@%s>,64" % news[1],
        "M$:<malloc0003@%s>,4" % news[2],
        "F$:<freed:0000@%s>" % widget[0],
        "F$:<freed:0001@%s>" % news[0],
        "F$:<freed:0002@%s>" % news[1],
        "F$:<freed:0003@%s>" % news[2],
    ]
    check_eq(mine, want, "C++ allocations named with their operator's call site")
    rows = list(csv.reader(io.StringIO("\n".join(show(path, "--format", "csv")))))
    check(all(len(r) == 14 for r in rows), "14 CSV fields in every row")
    flags = [int(r[9]) for r in rows[1:] if r[2] == "M"][:4]
    check_eq(flags, [1, 3, 5, 1], "new / new[] / aligned new / nothrow new flags")
    # a name with a comma is one quoted field (RFC 4180)
    made = [r for r in rows if r[2] == "M" and "make_from<Widget, long>" in r[10]]
    check_eq(len(made), 1, "make_from's allocation, its name in one field")
    check(re.match(r"^<malloc0004@Widget\* make_from<Widget, long>\(long\)\+\d+>\+0$",
                   made[0][10]), "make_from's block: " + made[0][10])


def test_threads():
    path, _ = trace("threads", heap_only=True)
    rows = [l.split(",") for l in show(path, "--format", "csv", "--raw")[1:]]
    per = {}
    live = {}
    seqs = [int(r[0]) for r in rows]
    check_eq(seqs, sorted(seqs), "events merged in sequence order")
    ids = set()
    for r in rows:
        kind, tid, size = r[2], r[1], int(r[5])
        if kind == "M" and 1000 <= size < 1004:
            per.setdefault(tid, []).append(size)
            ids.add(int(r[7]))
            live[r[4]] = tid
        if kind == "F" and r[4] in live:
            check_eq(live.pop(r[4]), tid, "a block is freed by the thread that made it")
    check_eq(len(per), 4, "four allocating threads")
    for tid, sizes in per.items():
        check_eq(len(sizes), 5000, "blocks of thread %s" % tid)
        check_eq(len(set(sizes)), 1, "one size per thread")
    check_eq(len(ids), 20000, "allocation numbers are unique")
    starts = [r for r in rows if r[2] == "t"]
    check_eq(len(starts), 5, "thread start events (main + 4)")


def test_own_memory_invisible():
    path, _ = trace("noalloc")
    lines = show(path)
    heap = heap_lines(lines)
    check(not [l for l in heap if l[0] in "PU"], "no mappings recorded: %r" % heap)
    check(not [l for l in heap if "libmemtap" in l or "ZSTD" in l or "tracer" in l],
          "no allocation by memtap itself: %r" % heap)
    # noalloc never calls getenv; memtap reads its environment before the
    # program starts, and nothing of that is the program's
    check(not [l for l in lines if re.match(r"^[LS]\$", l) and ", getenv+" in l],
          "no access of memtap's getenv recorded")


def test_fork():
    binary = prog("forker")
    pb = site(binary, "parent_block", "malloc")
    cb = site(binary, "child_block", "malloc")
    path, p = trace("forker")
    parent = show(path)
    check_eq(heap_lines(parent), ["M$:<malloc0000@%s>,111" % pb,
                                  "F$:<freed:0000@%s>" % pb], "parent trace")
    forks = [l for l in parent if ": fork: child " in l]
    check_eq(len(forks), 1, "fork event in the parent trace")
    child_pid = forks[0].split()[-1]
    child_path = os.path.join(TMP, "t.%s.mtr" % child_pid)
    check(os.path.exists(child_path), "child trace %s" % child_path)
    check("also wrote " + child_path in p.stderr, "memtap run lists the child's trace")
    check_eq(heap_lines(show(child_path)), [
        "F$:<freed:0000@%s>" % pb,      # inherited block, named from the parent
        "M$:<malloc0001@%s>,222" % cb,
        "F$:<freed:0001@%s>" % cb,
    ], "child trace")


def test_exec():
    for arg, failed in (("", 0), ("fail", 1)):
        path, p = trace("execer", *([arg] if arg else []), out="e%d.mtr" % failed, expect_rc=3)
        first = show(path)
        check_eq([l for l in heap_lines(first) if l.endswith(",1234")].__len__(), 1, "before exec")
        check_eq(len([l for l in first if l.endswith(": exec failed")]), failed, "failed exec")
        check("end: exec" in memtap("info", path).stdout.splitlines(), "first image ended by exec")
        others = [l.split("also wrote ")[1] for l in p.stderr.splitlines() if "also wrote" in l]
        check_eq(len(others), 1, "one more trace, from the new image")
        second = heap_lines(show(others[0]))
        check_eq(len([l for l in second if l.endswith(",4321")]), 1, "after exec")


def test_vfork():
    path, _ = trace("vforker")
    r = memtap("show", path)
    sizes = [l.split(",")[-1] for l in heap_lines(r.stdout.splitlines()) if l[0] == "M"]
    check_eq(sizes[:1] + sizes[-1:], ["500", "600"], "parent blocks around the vforks")
    check_eq(len([l for l in heap_lines(r.stdout.splitlines()) if l[0] == "F"]) >= 2, True,
             "frees after the vforks")
    check("no end record" not in r.stderr, "the parent's trace ends normally")
    check("end: exit" in memtap("info", path).stdout.splitlines(), "ended by exit, not exec")


def test_dlopen():
    plugin = os.path.join(LIB, "libplugin.so")
    path, _ = trace("dlopener", plugin)
    lines = show(path)
    ps = site(plugin, "plugin_make", "malloc")
    check("M$:<malloc%s@%s>,77" % ("", ps) not in heap_lines(lines), "")
    mine = [l for l in heap_lines(lines) if ps in l]
    check_eq(len(mine), 2, "plugin's block allocated and freed: %r" % mine)
    check(re.match(r"^M\$:<malloc\d{4}@%s>,77$" % re.escape(ps), mine[0]), mine[0])
    check(any(re.search(r": load .*libplugin\.so at", l) for l in lines), "load event")
    check(any(re.search(r": unload .*libplugin\.so at", l) for l in lines), "unload event")


def test_exit_status():
    for code in (0, 7, 200):
        path, _ = trace("exit_status", str(code), expect_rc=code)
        info = memtap("info", path).stdout.splitlines()
        check("end_code: %d" % code in info, "the end record holds main's return value")
        path, _ = trace("exit_status", str(code), "exit", expect_rc=code)
        info = memtap("info", path).stdout.splitlines()
        check("end_code: %d" % code in info, "the end record holds exit's argument")


def test_crash_keeps_trace():
    path, p = trace("crasher", expect_rc=-11)
    check("killed by signal 11" in p.stderr, "memtap reports the signal")
    r = memtap("show", path)
    check_eq([l.split(",")[-1] for l in heap_lines(r.stdout.splitlines())], ["64", "128"],
             "blocks allocated before the crash")
    check("ended by signal 11" in r.stderr, "show notes the signal")
    path, p = trace("crasher", "abort", expect_rc=-6)
    check_eq(len(heap_lines(show(path))), 2, "trace kept after abort()")


def test_kill9_keeps_flushed_chunks():
    path, p = trace("crasher", "kill", "2000", env={"MEMTAP_BUFFER_RECORDS": "64"},
                    expect_rc=-9)
    r = memtap("show", path)
    n = len(heap_lines(r.stdout.splitlines()))
    total = 2 + 2 * 2000
    # lost: at most the buffer being filled and the three hands for the
    # writer (HANDS in tracer.c), 64 records each; the writer, a process of
    # memtap's that memtap run waits for, writes the hands queued for it
    # after the kill, but not one the thread took back to write itself
    # (when the writer lagged behind) nor those queued after that one
    check(total - 4 * 64 <= n <= total, "%d of %d events survive kill -9" % (n, total))
    check("no end record" in r.stderr, "show warns that the process was killed")
    # and every allocation that survived names a call stack the trace holds
    # (its row was written before the chunk that holds the allocation)
    rep = json.loads(memtap("report", "-q", "--json", "-", path).stdout)
    named = sum(st["allocs"] for st in rep["stacks"] if st["frames"])
    check(rep["heap"]["allocs"] > 1000 and named == rep["heap"]["allocs"],
          "allocations with their stacks: %d of %d" % (named, rep["heap"]["allocs"]))


# ---------------------------------------------------------------- symbolizer

def globals_name(var, o):
    """The name of byte o of globals.c's variable var, from its declaration
    (x86-64 layout: int 4 bytes, double and long 8)."""
    plus = lambda r: "+%d" % r if r else ""
    if var == "table":
        return "table[%d]%s" % (o // 8, plus(o % 8))
    if var == "word":  # union: the int first, then the chars past it
        return ("word.i" + plus(o) if o < 4 else "word.c[%d]" % o if o < 6
                else "word+%d" % o)
    if o < 8:
        return "config.name[%d]" % o
    if o < 40:
        k, r = divmod(o - 8, 8)
        return ("config.limits[%d].lo%s" % (k, plus(r)) if r < 4
                else "config.limits[%d].hi%s" % (k, plus(r - 4)))
    q = o - 40
    return "config.grid[%d][%d]%s" % (q // 40, q % 40 // 8, plus(q % 8))


def test_symbolize_every_byte():
    # every byte of three variables, from the last one down (the names of
    # a row of scalars come from the range kept after the first address
    # named; the array of a union whose int overlaps it is named from the
    # DWARF each time), against their declarations
    path, p = trace("globals")
    places = dict(l.rsplit(" ", 1) for l in p.stdout.splitlines())
    starts = {"config": int(places["config.name[2]"], 16) - 2,
              "table": int(places["table[5]"], 16) - 40,
              "word": int(places["word.c[5]"], 16) - 5}
    sizes = {"config": 160, "table": 128, "word": 8}
    for var in starts:
        offs = range(sizes[var] - 1, -1, -1)
        got = memtap("symbolize", path, *["%x" % (starts[var] + o) for o in offs])
        want = ["0x%x: %s, [globals]" % (starts[var] + o, globals_name(var, o))
                for o in offs]
        got = got.stdout.splitlines()
        wrong = [(g, w) for g, w in zip(got, want) if g != w]
        check(len(got) == len(want) and not wrong,
              "every byte of %s: %d names, first wrong (got, want): %s"
              % (var, len(got), wrong[:1]))


def test_symbolize_globals():
    binary = prog("globals")
    path, p = trace("globals")
    places = dict(l.rsplit(" ", 1) for l in p.stdout.splitlines())
    names = list(places)
    r = memtap("symbolize", path, *[places[n][2:] for n in names if n != "main"])
    got = dict(zip([n for n in names if n != "main"], r.stdout.splitlines()))
    mb = site(binary, "make_buffer", "malloc")
    for name in ("config.limits[3].hi", "config.name[2]", "config.grid[2][4]",
                 "config.limits[1].lo+2", "counter", "table[5]", "table[15]",
                 "word.c[5]"):
        check_eq(got[name].split(": ", 1)[1], "%s, [globals]" % name, "data name")
    check(not got["past_table"].split(": ", 1)[1].startswith("table"),
          "the byte after table is not table's: " + got["past_table"])
    check_eq(got["stdout"].split(": ", 1)[1], "stdout+0, [globals]", "copy-relocated data")
    # from libc's .dynsym, or down to the field when libc's debug file is
    # installed (struct _IO_FILE: _IO_read_ptr is at offset 8)
    check(got["_IO_2_1_stdin_+8"].split(": ", 1)[1] in
          ("_IO_2_1_stdin_+8, [libc.so.6]", "_IO_2_1_stdin_.file._IO_read_ptr, [libc.so.6]"),
          "a shared library's data: " + got["_IO_2_1_stdin_+8"])
    check_eq(got["buffer+17"].split(": ", 1)[1], "<malloc0000@%s>+17, [heap]" % mb, "heap name")
    check(re.match(r"^0x[0-9a-f]+: <freed:0001@main\+\d+>\+3, \[heap\]$", got["gone+3"]),
          "use after free named: " + got["gone+3"])
    r = memtap("symbolize", "--code", path, places["main"][2:])
    check(re.match(r"^0x[0-9a-f]+: main\+0 globals\.c:\d+$", r.stdout.strip()),
          "code name with line: " + r.stdout)
    for bad in ("x", "-1", "12x"):
        p = memtap("symbolize", "--at", bad, path, places["main"][2:], check_rc=False)
        check(p.returncode == 2 and "--at: '%s' is not an event's sequence number" % bad
              in p.stderr, "--at %s refused: %r" % (bad, p.stderr))


def test_build_id_mismatch():
    copy = os.path.join(TMP, "rebuilt")
    shutil.copy(prog("three_mallocs"), copy)
    path, _ = trace(copy)
    shutil.copy(prog("alloc_family"), copy)   # "rebuilt" since the run
    r = memtap("show", path)
    check("build-id differs" in r.stderr, "warning about the changed binary")
    first = heap_lines(r.stdout.splitlines())[0]
    check(re.match(r"^M\$:<malloc0000@rebuilt\+0x[0-9a-f]+>,16$", first),
          "raw fallback for the changed binary: " + first)


# ---------------------------------------------------------------- bad input

def expect_error(args, pattern, rc_nonzero=True):
    p = memtap(*args, check_rc=False)
    if rc_nonzero:
        check(p.returncode != 0, "non-zero exit for memtap %s" % " ".join(args))
    check(re.search(pattern, p.stderr), "message for memtap %s: %r" % (" ".join(args), p.stderr))
    return p


def test_bad_programs():
    out = os.path.join(TMP, "x.mtr")
    p = expect_error(["run", "-o", out, "--", "/nonexistent/prog"],
                     r"^memtap: /nonexistent/prog: no such program")
    check_eq(p.returncode, 127, "a program not found, as a shell says it")
    # used wrongly: getopt's message under the command's name, the
    # synopsis and where the help is, exit 2
    p = expect_error(["run", "--bogus", "--", "/bin/true"],
                     r"^memtap run: unrecognized option '--bogus'\nusage: memtap run .*\n"
                     r"Try 'memtap run --help' for more\.\n$")
    check_eq(p.returncode, 2, "a usage error's status")
    expect_error(["run", "-o", out, "--", prog("static_prog")],
                 r"static executable: neither engine can trace it")
    # a shared library is no program; a static-pie one is (ET_DYN too)
    expect_error(["run", "-o", out, "--", "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0"],
                 r"libsqlite3\.so\.0: a shared library, not a program")
    spie = os.path.join(TMP, "static_pie")
    src = os.path.join(TMP, "static_pie.c")
    with open(src, "w") as f:
        f.write("int main(void) { return 0; }\n")
    subprocess.run(["gcc", "-static-pie", src, "-o", spie], check=True)
    expect_error(["run", "-o", out, "--", spie], r"static_pie: static executable")
    text = os.path.join(TMP, "notelf")
    with open(text, "w") as f:
        f.write("hello, not a program\n" * 10)
    os.chmod(text, 0o755)
    expect_error(["run", "-o", out, "--", text], r"notelf: not an ELF file")
    arm = os.path.join(TMP, "arm")
    data = bytearray(open(prog("three_mallocs"), "rb").read())
    data[18:20] = (183).to_bytes(2, "little")       # e_machine = EM_AARCH64
    open(arm, "wb").write(data)
    os.chmod(arm, 0o755)
    expect_error(["run", "-o", out, "--", arm], r"arm: not an x86-64 ELF file")
    cut = os.path.join(TMP, "cut")
    open(cut, "wb").write(bytes(data[:100]))
    os.chmod(cut, 0o755)
    expect_error(["run", "-o", out, "--", cut], r"^memtap: .*cut: ")
    expect_error(["run", "-o", "/nonexistent-dir/x.mtr", "--", prog("three_mallocs")],
                 r"cannot write the trace")
    # a run refused before the program starts keeps the older trace where it is
    memtap("run", "-q", "-o", out, "--", prog("three_mallocs"))
    before = open(out, "rb").read()
    if os.path.exists(out + ".old"):
        os.unlink(out + ".old")
    for opts, what in ((["--consumer", "/nonexistent/c.so"], "c.so"),
                       (["--watch", "no_such_symbol"], "--watch")):
        expect_error(["run", "-o", out] + opts + ["--", prog("three_mallocs")], what)
        check(open(out, "rb").read() == before and not os.path.exists(out + ".old"),
              "%s: the older trace kept in place" % opts)
    victim = os.path.join(TMP, "victim")
    shutil.copy(prog("three_mallocs"), victim)
    before = open(victim, "rb").read()
    expect_error(["run", "-o", victim, "--", victim], r"exists and is not a memtap trace")
    check(open(victim, "rb").read() == before, "the program is untouched")


def test_bad_traces():
    junk = os.path.join(TMP, "junk.mtr")
    with open(junk, "w") as f:
        f.write("not a trace at all, only text\n" * 5)
    expect_error(["show", junk], r"junk\.mtr: not a memtap trace file")
    expect_error(["show", os.path.join(TMP, "absent.mtr")], r"No such file or directory")
    future = os.path.join(TMP, "future.mtr")
    with open(future, "wb") as f:
        f.write(b"MEMTAPTR" + (99).to_bytes(4, "little") + bytes(200))
    expect_error(["info", future], r"future\.mtr: trace format 99, and this memtap reads "
                                   r"formats 1 to \d+")
    path, _ = trace("threads", out="big.mtr", env={"MEMTAP_BUFFER_RECORDS": "1024"},
                    heap_only=True)
    full = len(heap_lines(show(path, "--raw")))
    data = open(path, "rb").read()
    cut = os.path.join(TMP, "half.mtr")
    half = len(data) // 2
    if data[half:half + 4] == b"MTCK":  # a chunk starts there: cut inside it
        half += 1
    open(cut, "wb").write(data[:half])
    r = memtap("show", "--raw", cut)
    n = len(heap_lines(r.stdout.splitlines()))
    check(0 < n < full, "half a trace shows part of the events (%d of %d)" % (n, full))
    check("ends inside a chunk" in r.stderr, "truncation reported")


def test_streaming_memory():
    path = os.path.join(TMP, "huge.mtr")
    subprocess.run([prog("gen_trace"), path, "4000000"], check=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    p = subprocess.run([MEMTAP, "show", "--raw", "--format", "lackey", path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    check_eq(p.returncode, 0, "show of a large trace")
    lines = p.stdout.count(b"\n")
    check_eq(lines, 4000000, "every access shown")
    rss_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    raw_mb = 4000000 * 56 / 1e6
    check(rss_kb / 1024 < raw_mb / 2,
          "show streams: peak RSS %.0f MB for %.0f MB of records (before: %d KB)"
          % (rss_kb / 1024, raw_mb, before))


def test_quiet_notes():
    """A run's notes (here what the bypass rules left out) are said, once
    a run and by the run alone, and -q silences them; the summary's
    warnings would stay."""
    out = os.path.join(TMP, "quiet.mtr")
    loud = memtap("run", "-o", out, "--", prog("heap_sharing"))
    check("memtap: note: " in loud.stderr, "the note: %s" % loud.stderr)
    quiet = memtap("run", "-q", "-o", out, "--", prog("heap_sharing"))
    check("note:" not in quiet.stderr, "-q: no note: %s" % quiet.stderr)
    check("note:" not in memtap("show", "-q", out).stderr, "show -q: no note")
    # once a run, by the run: not per file of a forked child, not by show
    forked = memtap("run", "-o", out, "--", prog("fork_work"))
    check_eq(forked.stderr.count("the bypass rules left"), 1, "the note once: %s" % forked.stderr)
    check("bypass rules" not in memtap("show", out).stderr, "show does not repeat the run's note")


def test_help_lists_real_options():
    """Every command of the command table (memtap --commands) has a --help
    whose options the command accepts."""
    commands = memtap("--commands").stdout.split()
    check("run" in commands and "cachesim" in commands, "the command table: %s" % commands)
    for cmd in [[]] + [[c] for c in commands]:
        p = memtap(*(cmd + ["--help"]))
        check(p.stdout.startswith("usage: memtap"), "help of %s" % cmd)
        for opt in set(re.findall(r"(?m)^\s+(?:-\w, )?(--[a-z-]+)", p.stdout)):
            q = memtap(*(cmd + [opt, "x"] if cmd else [opt]), check_rc=False)
            check("unrecognized option" not in q.stderr and "unknown command" not in q.stderr,
                  "%s %s is accepted" % (cmd, opt))


def test_demo_example():
    binary = prog("disparity")
    f = site(binary, "fMallocHandle", "malloc")
    i = site(binary, "iMallocHandle", "malloc")
    path, p = trace("disparity")
    check("disparity checksum" in p.stdout, "the example ran")
    heap = heap_lines(show(path))
    check_eq(heap[:4], ["M$:<malloc0000@%s>,528" % f, "M$:<malloc0001@%s>,528" % f,
                        "M$:<malloc0002@%s>,528" % f, "M$:<malloc0003@%s>,528" % i],
             "the allocations of Listing 2's shape")
    # Listing 2: the loads of retSAD->width (+0) and retSAD->data[j] (+8...)
    loop = [l for l in show(path) if "findDisparity+" in l]
    check(any(re.match(r"^L\$\d+:<malloc\d{4}@%s>\+0, \[heap\], findDisparity\+\d+$"
                       % re.escape(f), l) for l in loop), "loads of the structure's width")
    check(any(re.match(r"^S\$\d+:<malloc0003@%s>\+8, \[heap\], findDisparity\+\d+$"
                       % re.escape(i), l) for l in loop), "stores into retDisp->data[0]")
    # the README's excerpt is what scripts/demo.sh prints: every line of it
    # a line of `memtap run --from-main --text`, in the same order
    readme = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                               "README.md")).read()
    block = readme.split("form of the MadT paper's Listing 2:", 1)[1].split("\n\n", 2)[1]
    excerpt = [l.strip() for l in block.splitlines() if l.strip() not in ("", "...")]
    text = os.path.join(TMP, "demo.txt")
    memtap("run", "-q", "--from-main", "-o", os.path.join(TMP, "demo.mtr"), "--text", text,
           "--", binary)
    lines = open(text).read().splitlines()
    at = [lines.index(l) if l in lines else -1 for l in excerpt]
    check(len(excerpt) >= 10 and -1 not in at and at == sorted(at),
          "the README's excerpt, line by line in the run's text: %r" %
          [l for l, a in zip(excerpt, at) if a < 0])


# ---------------------------------------------------------------- fault engine

def offset_of(binary, func, pattern):
    insns = disassembly(binary)[func]
    for addr, text in insns[1:]:
        if re.search(pattern, text):
            return "%s+%d" % (func, addr - insns[0][0])
    raise Failure("no %r in %s" % (pattern, func))


def test_signals():
    native = subprocess.run([prog("signals")], capture_output=True, text=True)
    path, p = trace("signals")
    check_eq(p.stdout, native.stdout, "the program's own handlers behave as natively")
    lines = show(path)
    check(any(re.match(r"^S\$\d+:from_handler, \[signals\], on_usr1\+\d+$", l) for l in lines),
          "a store from a signal handler is traced")
    stores = [l for l in lines if re.match(r"^S\$\d+:<malloc\d+@main\+\d+>\+\d+, \[heap\]", l)]
    check_eq(len(stores), 4096, "every heap store of the loop, signals or not")


def test_edge_instructions():
    binary = prog("edge_insns")
    path, _ = trace("edge_insns")
    lines = [re.sub(r"^(.)\$\d+:", r"\1:", l) for l in show(path)]
    movs = offset_of(binary, "main", r"rep movsb")
    stos = offset_of(binary, "main", r"rep stos")
    xadd = offset_of(binary, "main", r"lock (xadd|add)")
    cas = offset_of(binary, "main", r"lock cmpxchg")
    check("Y:dst[0],src[0],300, %s" % movs in lines, "rep movsb as one copy")
    check("W:pages[0],100, %s" % stos in lines, "rep stosb as one block store")
    for site in (xadd, cas):
        check("L:counter, [edge_insns], %s" % site in lines and
              "S:counter, [edge_insns], %s" % site in lines, "atomic at " + site)
    straddle = [l for l in lines if l.startswith("S:pages[4092]")]
    check_eq(len(straddle), 1, "a store across two pages is one store")
    push = offset_of(binary, "main", r"push\s+0x[0-9a-f]+\(%rip\)")
    check("L:counter, [edge_insns], %s" % push in lines, "push of a memory operand")


def test_threads_exact():
    """Threads hammering one shared page: the other threads are stopped
    while a page is open, so every store is recorded and no window is
    exposed."""
    for _ in range(3):  # a thread starting inside a window must be parked too
        path, p = trace("hammer")
        check_eq(p.stdout.strip(), "12000", "the program's result")
        lines = show(path)
        stores = len([l for l in lines if re.match(r"^S\$\d+:shared\[\d\], \[hammer\], hammer\+\d+$", l)])
        loads = len([l for l in lines if re.match(r"^L\$\d+:shared\[\d\], \[hammer\], hammer\+\d+$", l)])
        info = dict(l.split(": ", 1) for l in memtap("info", path).stdout.splitlines()
                    if ": " in l)
        check_eq((stores, loads, info["exposed_windows"]), (12000, 12000, "0"),
                 "stores, loads and exposed windows")


def run_info(path):
    return dict(l.split(": ", 1) for l in memtap("info", path).stdout.splitlines() if ": " in l)


def fault_counts(path):
    info = run_info(path)
    return int(info["faults"]), int(info.get("faults_completed", "0")), info["exposed_windows"]


def test_fault_paths():
    """Instruction forms with a traced memory operand (integer
    read-modify-writes with their flags, an atomic exchange-add and
    compare-exchange, bit tests, a high-byte register, SSE, x87, AVX2, a
    VEX load clearing a zmm's upper half, AVX-512 loads, a compare into a
    mask register and a masked store, rip-relative, an index register,
    an indirect call through the heap, and forms only the trap flag runs:
    push, div), three rounds of them: completed in the handler, stepped, or
    (hot) patched after their first completion so that the later rounds
    run through trampolines.  The program prints what its native run
    prints and the three traces hold the same accesses, instruction by
    instruction; each access the handler path took a fault for is, on the
    hot path, a fault or a trampoline's access."""
    rounds = 3
    native = subprocess.run([prog("complete_forms"), str(rounds)], capture_output=True,
                            text=True, check=True).stdout
    lines, info = {}, {}
    for way in ("complete", "step", "hot"):  # all set: one environment size
        path, p = trace("complete_forms", str(rounds), out="forms-%s.mtr" % way,
                        env={"MEMTAP_FAULT_PATH": way})
        check_eq(p.stdout, native, "%s: the program's output" % way)
        lines[way] = [re.sub(r"\$\d+:", ":", l) for l in show(path) if not l.startswith("#")]
        info[way] = run_info(path)
        faults, completed, exposed = fault_counts(path)
        if way == "step":
            check_eq(completed, 0, "step: nothing completed in the handler")
            check("hot_sites" not in info[way], "step: no site patched")
        else:
            # all but the stepped forms' faults
            check(completed >= faults - 10 * rounds, "%s: completed %d of %d faults"
                  % (way, completed, faults))
    for way in ("complete", "hot"):
        check(len(lines["step"]) > 100 and lines[way] == lines["step"],
              "the same accesses %s and stepped (%d and %d lines)"
              % (way, len(lines[way]), len(lines["step"])))
    for form in ("integer_forms", "vector_forms", "stepped_forms"):
        check(any(l.endswith(", %s" % form) or (", %s+" % form) in l for l in lines["complete"]),
              "accesses of %s recorded" % form)
    hot = {k: int(v) for k, v in info["hot"].items() if k.startswith("hot_")}
    check(hot["hot_sites"] > 50 and hot["hot_accesses"] > int(info["complete"]["faults"]) // 2,
          "hot: most of the later rounds' accesses through trampolines: %r" % hot)
    check_eq(int(info["hot"]["faults"]) + hot["hot_accesses"], int(info["complete"]["faults"]),
             "hot: faults and trampolines' accesses against the handler path's faults")
    check_eq((hot["hot_untraced"], hot["hot_unpatched"]), (0, 0),
             "hot: every trampoline access traced, no site given back")


def hot_neighbour_run(name, mode, function, loads_stores):
    """Runs a test program of the hot path's under the fault engine (by
    default: hot sites patched) beside its native run: the same output, and
    `function`'s (loads, stores) as given.  Its output, and its run's notes
    on faults and hot sites."""
    argv = [mode] if mode else []
    native = subprocess.run([prog(name)] + argv, capture_output=True, text=True,
                            check=True).stdout
    path, p = trace(name, *argv, out="hot-%s.mtr" % (mode or name))
    check_eq(p.stdout, native, "%s: the program's output" % name)
    mine = [l[0] for l in show(path) if ", %s" % function in l]
    check_eq((mine.count("L"), mine.count("S")), loads_stores,
             "%s: its loads and stores recorded" % function)
    return native, {k: int(v) for k, v in run_info(path).items()
                    if k.startswith(("hot_", "faults"))}


def test_fault_hot_nopie():
    """Hot sites of a program linked at 0x400000, not position-independent
    (Debian's python3.11 is): half the reach of a jump from its text lies
    below address 0, and every site whose jump could go anywhere in reach
    was refused (the window wrapped around below 0; python3.11 ran 9.0 M
    of its 15.8 M accesses through the signal handler, 2.8 M now).  Its two
    long stores, 1000 times: patched, nearly all through trampolines."""
    _, hot = hot_neighbour_run("nopie_stores", None, "main", (2, 2000))
    check(hot.get("hot_accesses", 0) >= 1900, "the stores through trampolines: %r" % hot)


def test_fault_hot_before():
    """A store of four bytes right before a load already patched (made hot
    first, alone): a jump over the store takes the load's jump bytes for
    the high bytes of its displacement, and the store is patched too (it
    was refused, the load's site closer than five bytes: lz4 -d of apt's
    Packages file took 83,373 faults, 3,215 now).  Of the 4,000 loads and
    3,000 stores nearly all through trampolines, their records all there."""
    _, hot = hot_neighbour_run("hot_neighbours", "before", "touch_before", (4000, 3000))
    check(hot.get("hot_accesses", 0) >= 6900 and hot["faults"] < 2000,
          "the store and the load through trampolines: %r" % hot)


def test_fault_hot_retry():
    """A store refused while the window its jump could reach was taken (the
    program maps it PROT_NONE while the store and the load after it become
    hot, then unmaps it) is tried again at 32 completions, its jump's tail
    now the load's jump, and patched: of the 3,100 stores and loads each,
    nearly all through trampolines (3,084 on c8d3b8a, which never tried a
    site twice; liblz4's decompressor under apt-cache had such a store,
    its window inside memtap's own mappings: 73,724 -> 6,034 faults)."""
    native, hot = hot_neighbour_run("hot_neighbours", "retry", "touch_pair", (3100, 3100))
    check(native.endswith(" 1\n"), "the window was taken at first: %r" % native)
    check(hot.get("hot_accesses", 0) >= 6000, "the store patched when tried again: %r" % hot)


def test_fault_system_programs():
    """Programs of the distribution under the fault engine as it runs by
    default (hot instructions patched): the output of their native runs.
    `ls -la` once crashed: memtap's own memset, called while completing a
    trampoline's access, ran into a site calloc had made hot in libc's
    memset, and accesses nested until the stack ran out."""
    data = os.path.join(TMP, "lines")
    with open(data, "w") as f:
        f.write("".join("%d %s\n" % ((i * 7919) % 1000, "x" * (i % 13)) for i in range(3000)))
    for argv in (["ls", "-la", "/usr/lib"], ["sort", data], ["gzip", "-c", "-6", data]):
        prog_path = shutil.which(argv[0])
        native = subprocess.run([prog_path] + argv[1:], capture_output=True, check=True).stdout
        path = os.path.join(TMP, "sys.mtr")
        p = subprocess.run([MEMTAP, "run", "-q", "--engine", "fault", "-o", path, "--",
                            prog_path] + argv[1:], capture_output=True)
        check_eq((p.returncode, p.stdout == native), (0, True),
                 "%s: exit status and output; stderr:\n%s" % (argv[0], p.stderr[-1000:]))
        info = run_info(path)
        check(int(info.get("hot_sites", "0")) > 0 and int(info.get("hot_accesses", "0")) > 0,
              "%s: hot sites ran: %r" % (argv[0], info))


def test_fault_fork_stores():
    """A forked child's completed stores go to its own memory, not its
    parent's (the descriptor that reaches memory is the child's, in the
    handler and in the trampolines of sites patched before the fork): each
    process reads back its own 512 values, and each trace holds its 512
    stores and 512 loads."""
    path, p = trace("fork_stores")
    check_eq(sorted(p.stdout.splitlines()), ["child: 0 wrong", "parent: 0 wrong"],
             "each process reads its own values")
    children = [l.split("also wrote ")[1] for l in p.stderr.splitlines() if "also wrote" in l]
    check_eq(len(children), 1, "the child's trace")
    for who, t in (("parent", path), ("child", children[0])):
        kinds = [l[0] for l in show(t) if re.match(r"^[LS]\$\d+:<malloc\d+@main\+\d+>\+\d+, "
                                                     r"\[heap\], fill_and_check\+\d+$", l)]
        check_eq((kinds.count("S"), kinds.count("L")), (512, 512), "%s: stores and loads" % who)
        info = run_info(t)
        done = int(info.get("faults_completed", "0")) + int(info.get("hot_accesses", "0"))
        check(done >= 1024, "%s: its accesses completed in the handler or a trampoline "
              "(%d)" % (who, done))


def test_fault_alias_pages():
    """Pages the fault engine reaches through aliases (hot ones), then
    dropped by madvise, moved by mremap (by hand and by realloc), unmapped
    and mapped anew, given back by the heap and forked: the program prints
    what it prints natively (each check 0 wrong), the pages had aliases
    and lost them when unmapped; with MEMTAP_FAULT_ALIAS=off none is made
    and the output is the same."""
    native = subprocess.run([prog("alias_pages")], capture_output=True, text=True)
    check_eq(native.returncode, 0, "alias_pages natively")
    want = sorted(native.stdout.splitlines())
    check(len(want) == 7 and all(l.endswith(": 0 wrong") for l in want), "native: %r" % want)
    for off in (False, True):
        path, p = trace("alias_pages", out="alias%d.mtr" % off,
                        env={"MEMTAP_FAULT_ALIAS": "off"} if off else None)
        check_eq(sorted(p.stdout.splitlines()), want, "traced output (alias off: %s)" % off)
        info = run_info(path)
        made = int(info.get("alias_pages_made", "0"))
        if off:
            check_eq(made, 0, "no alias with MEMTAP_FAULT_ALIAS=off")
        else:
            check(made >= 16 and int(info.get("alias_pages_forgotten", "0")) >= 16,
                  "pages aliased and forgotten: %r" % {k: v for k, v in info.items()
                                                        if k.startswith("alias")})


def test_heap_threads_exact():
    """64 threads each allocate a block, store to it and load it back (4000
    heap accesses each), then read 5000 bytes of a file into it, while the
    others run: every access and every read is recorded, and no window is
    exposed (the allocator's futex waits and the reads keep their pages
    closed), so memtap calls the trace complete.  Then the same with the
    read a readv into two pieces of the block, a writev of two more to
    /dev/null, and a sendmsg and recvmsg through a socket pair."""
    data = os.path.join(TMP, "5000-bytes")
    with open(data, "wb") as f:
        f.write(bytes(range(250)) * 20)
    block = r"^%s\$\d+:<malloc\d+@work\+\d+>\+%s, (?:read_into|readv|writev|sendmsg|recvmsg)\+\d+$"
    for mode, moves in (((), (("W", "0,5000"),)),
                        (("vector",), (("W", "0,2000"), ("W", "2000,3000"),
                                       ("G", "0,100"), ("G", "100,200"),
                                       ("G", "300,50"), ("W", "400,50")))):
        path, p = trace("heap_threads", "64", data, *mode)
        check_eq(p.stdout.strip(), "64 threads, 0 wrong", "the program's result")
        lines = show(path)
        for kind, piece in moves:
            got = [l for l in lines if re.match(block % (kind, piece), l)]
            check_eq(len(got), 64, "%s: %s %s of the blocks" % (mode, kind, piece))
        work = [l for l in lines if re.match(r"^[LS]\$\d+:<malloc\d+@work\+\d+>\+\d+, \[heap\], work\+\d+$", l)]
        check_eq(len(work), 64 * 4000, "%s: the blocks' loads and stores" % (mode,))
        faults, completed, exposed = fault_counts(path)
        check(completed > 0.9 * faults, "completed %d of %d faults" % (completed, faults))
        check_eq(exposed, "0", "%s: exposed windows" % (mode,))


def test_moved_calls():
    """stat, fstat, open and readlink of a path in the heap into heap
    buffers, getrandom, pipe2, poll, nanosleep, uname, epoll_ctl and
    epoll_wait (sized by maxevents), select (by nfds), ppoll, ioctl
    FIONREAD (a request memtap knows the size of) and fcntl's F_SETLK and
    F_GETLK (struct flock) on heap memory,
    while a second thread runs, under the fault engine: each call is made
    on a buffer of memtap's with the program's bytes copied in and the
    bytes the kernel changed copied back, so no window is open while the
    other thread runs (gdb's 434 windows, of stat, openat and getdents64,
    made its runs incomplete).  The program prints what it prints natively;
    nanosleep's remainder, which the kernel leaves alone, keeps its bytes."""
    native = subprocess.run([prog("moved_calls")], capture_output=True, text=True)
    check_eq(native.stdout, "stat: same file\nreadlink: the program\ngetrandom: filled\n"
             "pipe2 and poll: x\nnanosleep: 0, rem untouched\nuname: Linux\n"
             "epoll: 1, data 0x1234, rest untouched\nselect: 1, readable\n"
             "ppoll: 1, readable\nioctl FIONREAD: 1 byte\n"
             "fcntl F_GETLK: unlocked, F_SETLK: 0\n",
             "the native output")
    path, p = trace("moved_calls")
    check_eq(p.stdout, native.stdout, "its output")
    faults, completed, exposed = fault_counts(path)
    check_eq(exposed, "0", "exposed windows")


def test_program_flags():
    """Traced heap accesses made while the program has AC set (alignment
    check: each unaligned access of memtap's handlers would raise SIGBUS,
    as the JVM's processor probe found) or ID toggled (sigreturn does not
    restore ID: a handler that changed it, as the completion's return to
    memtap's flags did, changed it for the program, and the JVM took the
    processor for a 486).  Each store and load is recorded, each loads 7,
    and the flag is as the program set it after the access (program_flags
    reads it back); natively the same."""
    expected = ("AC: loaded 7, flipped as set\n" * 3 +
                "ID: loaded 7, flipped as set\n" * 3)
    native = subprocess.run([prog("program_flags")], capture_output=True, text=True)
    check_eq(native.stdout, expected, "the native output")
    path, p = trace("program_flags")
    check_eq(p.stdout, expected, "its output under the fault engine")
    seen = []
    for l in show(path):
        m = re.match(r"([SL])\$\d+:<malloc0000@main\+\d+>\+(\d+), \[heap\], "
                     r"access_with\+(\d+)$", l)
        if m:
            seen.append((m.group(1), int(m.group(2)), int(m.group(3))))
    check_eq([(k, off) for k, off, _ in seen], [(k, off) for off in (8, 16, 24) * 2
                                               for k in "SL"],
             "the accesses made with the flags set: %s" % seen)
    check(len({pc for k, _, pc in seen if k == "S"}) == 1 and
          len({pc for k, _, pc in seen if k == "L"}) == 1,
          "one store and one load instruction: %s" % seen)


def test_late_thread():
    """A thread that cannot be stopped for a while (waiting in vfork for a
    child that sleeps 2.5 s) makes the windows opened meanwhile exposed,
    not every window after it returns: the main thread's 200 accesses to
    heap pages after it, each a window (the step path), stop it again, as
    they stop it while it sleeps in nanosleep (a call memtap makes for it:
    it counts as stopped).  Before, one thread late by the 2 s the stop
    waits made every later window of the run exposed (java -version:
    1,090,144 of them)."""
    path, p = trace("late_thread", env=dict(os.environ, MEMTAP_FAULT_PATH="step"),
                    expect_rc=125)
    check_eq(p.stdout, "sum 20101\n", "its output (1 + 1 + ... + 200)")
    faults, _, exposed = fault_counts(path)
    check(faults > 200 and 0 < int(exposed) < 50,
          "windows exposed only while the thread was in vfork: %s of %d" % (exposed, faults))


def test_sleep_beside():
    """A thread's 20 sleeps of 10 ms while the main thread's stores, each a
    window (the step path), stop the other threads: none ends early with
    EINTR, as natively (before, every one did: the park signal interrupted
    it).  A thread waiting in a call memtap makes for it is not signalled,
    and a call that the park signal interrupts anyway is made again, a
    sleep for what it had left (each mechanism alone keeps this test
    passing; with both reverted: 20 of 20)."""
    native = subprocess.run([prog("sleep_beside")], capture_output=True, text=True)
    check_eq(native.stdout, "sleeps ended early: 0\n", "the native output")
    path, p = trace("sleep_beside", env=dict(os.environ, MEMTAP_FAULT_PATH="step"))
    check_eq(p.stdout, native.stdout, "its output under the fault engine")


def test_exposed_window_named():
    """A call the fault engine runs with a traced page open while another
    thread lives (an ioctl request memtap does not know, into a heap block:
    its argument's size is not known) is an exposed window: the run is
    incomplete and names the first window's system call (ioctl: 16).
    uname into a heap block before it, whose size is known, went through a
    buffer of memtap's: no window."""
    path, p = trace("exposed_call", expect_rc=125)
    check(re.match(r"uname: 0, Linux\nioctl: -1, ENOTTY, -1\n$", p.stdout),
          "the program's result: %r" % p.stdout)
    check("1 access windows were open while other threads ran" in p.stderr and
          "(the first: syscall 16)" in p.stderr, "the warning names the call: %r" % p.stderr)
    info = memtap("info", path).stdout
    check("exposed_first: syscall 16" in info, "memtap info: %s" % info)


def test_read_one_cpu():
    """show, export and report read the trace on a second CPU when there
    is one: with one CPU (taskset) they print the same, in every form, for 16
    threads' 64,000 heap accesses (several of the read-ahead's batches of
    16,384); a copy cut short prints the same lines and warning either
    way."""
    path, p = trace("heap_threads", "16")
    check_eq(p.stdout.strip(), "16 threads, 0 wrong", "the program's result")
    cut = os.path.join(TMP, "cut.mtr")
    data = open(path, "rb").read()
    open(cut, "wb").write(data[:len(data) * 3 // 5])
    forms = (["show"], ["show", "--raw"], ["show", "--format", "csv"],
             ["show", "--format", "lackey"], ["export"], ["export", "--format", "dinero"],
             ["report", "-q", "--json", "-"])
    for trace_path, rc in ((path, 0), (cut, None)):
        for form in forms:
            two = memtap(*form, trace_path, check_rc=False)
            one = subprocess.run(["taskset", "-c", "0", MEMTAP] + form + [trace_path],
                                 capture_output=True, text=True)
            check(two.stdout.count("\n") > (50000 if trace_path == path else 100) or
                  form[0] == "report", "%s %s: lines" % (trace_path, form))
            check_eq((one.returncode, one.stdout, one.stderr),
                     (two.returncode, two.stdout, two.stderr),
                     "%s %s: one CPU and two" % (trace_path, form))
            if rc is not None:
                check_eq(two.returncode, rc, "%s %s: exit status" % (trace_path, form))


def test_blocking_threads_exact():
    """Threads blocked on traced words and buffers (a condition variable
    with a timed wait, a semaphore wait that times out, a socket pair's
    send and recv on heap buffers) while others run: the program's results
    hold (the timeout lasts its 30 ms), both transfers are recorded, and no
    page is opened across a blocking call (no exposed window: the trace is
    complete)."""
    for _ in range(3):
        path, p = trace("timed_waits")
        check_eq(p.stdout.strip(), "ok", "the program's results: %s" % p.stderr)
        lines = show(path)
        check(any(re.match(r"^G\$\d+:<malloc\d+@sender\+\d+>\+0,1000, sender\+\d+$", l)
                  for l in lines), "the send from the heap")
        check(any(re.match(r"^W\$\d+:<malloc\d+@main\+\d+>\+0,1000, main\+\d+$", l)
                  for l in lines), "the recv into the heap")
        check_eq(fault_counts(path)[2], "0", "exposed windows")


# ---------------------------------------------------------------- Lackey

STACK_MNEMONICS = ("push", "pop", "call", "ret", "leave", "enter")


def stack_or_implicit(text):
    """Instructions whose memory access is the stack (or has no explicit
    operand): Lackey sees them, memtap never traces the stack."""
    mnem = text.split()[0] if text else ""
    if mnem.startswith(STACK_MNEMONICS) or mnem in ("endbr64", "nop"):
        return True
    return bool(re.search(r"\(%r[sb]p[,)]", text))


def text_range(binary):
    out = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD" and "E" in f[-2]:
            lo = int(f[2], 16)
            return lo, lo + int(f[5], 16)
    raise Failure("no text segment in " + binary)


def read_only_ranges(binary):
    """Static memory that is not data or bss: read-only segments and the
    part made read-only after relocation (RELRO: the GOT)."""
    out = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True,
                         check=True).stdout
    ranges = []
    for line in out.splitlines():
        f = line.split()
        if f and (f[0] == "GNU_RELRO" or (f[0] == "LOAD" and "W" not in f[-2])):
            lo = int(f[2], 16)
            ranges.append((lo, (lo + int(f[5], 16) + 4095) & ~4095))
    return ranges


def lackey_counts(binary, args=()):
    log = os.path.join(TMP, "lackey.log")
    subprocess.run(["valgrind", "--tool=lackey", "--trace-mem=yes", "--log-file=" + log,
                    binary] + list(args), check=True, capture_output=True)
    counts, cur, lo_hi = {}, None, text_range(binary)
    stores, ro = [], read_only_ranges(binary)
    for line in open(log):
        if line.startswith("I  "):
            cur = int(line[3:].split(",")[0], 16)
            continue
        if len(line) < 4 or line[0] != " " or line[1] not in "LSM":
            continue
        addr, size = line[3:].strip().split(",")
        if line[1] in "SM":
            stores.append((cur, int(addr, 16), int(size)))
        if not (lo_hi[0] <= cur < lo_hi[1]):
            continue
        if any(lo <= int(addr, 16) < hi for lo, hi in ro):
            continue  # not heap, data or bss
        c = counts.setdefault(cur, [0, 0])
        if line[1] in "LM":
            c[0] += 1
        if line[1] in "SM":
            c[1] += 1
    return counts, stores


def memtap_counts(binary, args=()):
    # the comparison with Lackey is the check: a trace that only may be
    # incomplete (a window other threads could run into) is still compared
    path, _ = trace(binary, *args, out="lk.mtr", keep_going=True)
    rows = [l.split(",") for l in show(path, "--raw", "--format", "csv")[1:]]
    lo, hi = text_range(prog(binary))
    counts = {}
    for r in rows:
        if r[2] in "LS":
            pc = int(r[3], 16)
            if lo <= pc < hi:
                c = counts.setdefault(pc, [0, 0])
                c[0 if r[2] == "L" else 1] += 1
    return counts, rows


def compare_with_lackey(name, args=()):
    binary = prog(name)
    insns = {a: t for f in disassembly(binary).values() for a, t in f[1:]}
    theirs, stores = lackey_counts(binary, args)
    ours, rows = memtap_counts(name, args)
    diffs = []
    for pc in sorted(set(theirs) | set(ours)):
        if stack_or_implicit(insns.get(pc, "")):
            continue
        t, o = theirs.get(pc, [0, 0]), ours.get(pc, [0, 0])
        if t != o:
            diffs.append("0x%x %s: lackey L%d S%d, memtap L%d S%d"
                         % (pc, insns.get(pc, "?"), t[0], t[1], o[0], o[1]))
    check(not diffs, "%s: per-instruction counts differ:\n    %s" % (name, "\n    ".join(diffs[:20])))
    compared = sum(1 for pc in theirs if not stack_or_implicit(insns.get(pc, "")))
    check(compared > 0, name + ": some instructions compared")
    return stores, rows


def test_lackey_globals():
    compare_with_lackey("lk_globals")


def test_lackey_heap():
    compare_with_lackey("lk_heap")


def test_lackey_structs():
    compare_with_lackey("lk_structs")


def test_lackey_realloc():
    compare_with_lackey("lk_realloc")


def test_lackey_mmap():
    compare_with_lackey("lk_mmap")


def test_lackey_threads():
    compare_with_lackey("lk_threads")


def covered(ranges, lo, hi):
    s = set()
    for a, n in ranges:
        s.update(b for b in range(a, a + n) if lo <= b < hi)
    return s


def test_lackey_strings():
    """Block operations: the bytes of gdst that Lackey sees stored (by the
    C library) must be the bytes memtap's Y/W events cover."""
    stores, rows = compare_with_lackey("lk_strings")
    syms = subprocess.run(["nm", prog("lk_strings")], capture_output=True, text=True).stdout
    addr = {l.split()[2]: int(l.split()[0], 16) for l in syms.splitlines() if len(l.split()) == 3}
    for buf in ("gdst", "gsrc"):
        lo, hi = addr[buf], addr[buf] + 4096
        theirs = covered([(a, n) for _, a, n in stores], lo, hi)
        ours = covered([(int(r[4], 16), int(r[5])) for r in rows if r[2] in "YW"], lo, hi)
        ours |= covered([(int(r[4], 16), int(r[5])) for r in rows if r[2] in "S"], lo, hi)
        check_eq(len(ours ^ theirs), 0, "%s: bytes stored (lackey %d, memtap %d)"
                 % (buf, len(theirs), len(ours)))


def run_named(tests, name):
    """Runs tests["test_" + name], printing ok or FAIL; returns the exit
    status."""
    try:
        tests["test_" + name]()
    except Failure as e:
        print("FAIL %s: %s" % (name, e))
        return 1
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    print("ok %s" % name)
    return 0


if __name__ == "__main__":
    sys.exit(run_named(globals(), sys.argv[1]))
