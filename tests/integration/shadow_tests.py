#!/usr/bin/env python3
"""memtap heat, share and uninit: programs written for the purpose, whose
every access to their own data is known in advance (see the comments at
the top of each program), checked against the reports.

Usage: shadow_tests.py TEST_NAME   (MEMTAP_BUILD names the build tree)
"""
import os
import re
import subprocess
import sys

from memtap_tests import TMP, Failure, check, check_eq, memtap, prog, run_bounded, run_named

SOURCES = os.path.join(os.path.dirname(__file__), "..", "programs")
ROW = re.compile(r"^\s+(\d+)\s+[\d.]+%\s+(?:0x([0-9a-f]+)\s+)?(.*)$")


def tool(name, program, *opts, expect_rc=0, args=()):
    """Runs memtap NAME on a test program; returns (report text, result)."""
    report = os.path.join(TMP, name + ".txt")
    out = os.path.join(TMP, name + ".mtr")
    p = memtap(name, "-o", out, "--report", report, *opts, "--", prog(program), *args,
               check_rc=False)
    check_eq(p.returncode, expect_rc, "exit status of memtap %s %s\n%s"
             % (name, program, p.stderr))
    with open(report) as f:
        return f.read(), p


def tables(text):
    """{title: [(count, address or None, rest)]} of a heat report."""
    out, title = {}, None
    for line in text.splitlines():
        if line and not line.startswith(" "):
            title = line
            out.setdefault(title, [])
            continue
        m = ROW.match(line)
        if m and title:
            out[title].append((int(m.group(1)), m.group(2) and int(m.group(2), 16),
                               m.group(3).strip()))
    return out


def block_chunks(rows, chunk=64):
    """{offset: count} of the chunks of the program's one heap block (a
    chunk is named after its hottest word; the block is chunk-aligned)."""
    got = {}
    for count, _, name in rows:
        m = re.match(r"^<\w+0000@main\+\d+>\+(\d+)$", name)
        if m:
            got[int(m.group(1)) // chunk * chunk] = count
    return got


def heat_counts_objects(text, p):
    """Checks heat_counts' block chunks and global; returns {object: count}."""
    check_eq(p.stdout, "done\n", "the program's own output")
    t = tables(text)
    # 10 stores, 20 loads, 5 x (load + store); the fourth chunk untouched
    check_eq(block_chunks(t["hottest chunks"]), {0: 10, 64: 20, 128: 10},
             "accesses per 64-byte chunk of the block")
    objects = {name.split(" ")[0]: count for count, _, name in t["hottest objects"]}
    check_eq(objects.get("hot_global"), 7, "accesses to hot_global")
    return objects


def test_heat_counts():
    text, p = tool("heat", "heat_counts", "--top", "1000")
    t = tables(text)
    objects = heat_counts_objects(text, p)
    check_eq(sum(c for o, c in objects.items() if o.startswith("<")
                 and "0000@main" in o), 40, "accesses to the block")
    pages = t["hottest pages (4096 bytes)"]
    check(all(a % 4096 == 0 for _, a, _ in pages), "pages are page-aligned")
    total = int(re.match(r"memtap heat: (\d+) accesses", text).group(1))
    check_eq(sum(c for c, _, _ in t["hottest chunks"]), total,
             "the chunks add up to the total")
    check_eq(sum(c for c, _, _ in pages), total, "the pages add up to the total")


def test_heat_rewritten():
    """The shadow tools also consume what instrumented code logs: the
    non-selective copy of heat_counts gives the counts the fault engine
    gives (and the stack besides)."""
    copy = os.path.join(TMP, "heat_counts.mt")
    p = memtap("instrument", "-q", "--nonselective", prog("heat_counts"), "-o", copy)
    check_eq(p.returncode, 0, "instrument: %s" % p.stderr)
    text, p = tool("heat", copy, "--top", "1000")
    objects = heat_counts_objects(text, p)
    check(objects.get("[stack]", 0) > 0, "the stack is seen too")


def test_heat_attributes_objects():
    """Accesses go to the object they touch, not to what holds the first
    byte of their chunk (two globals in one chunk; a heap block whose first
    chunk starts before it)."""
    text, _ = tool("heat", "heat_neighbours", "--top", "1000")
    objs = {name.split()[0]: count for count, _, name in tables(text)["hottest objects"]}
    # at -O0: a load and a store per iteration; one store; one store a byte
    check_eq((objs.get("hot_counter"), objs.get("cold_flag")), (2000, 1), "the two globals")
    heap = [c for n, c in objs.items() if n.startswith("<malloc0000@main+")]
    check_eq(heap, [40], "the heap block's byte stores")
    check(not any(n.startswith("[unknown]") for n in objs), "nothing unnamed: %r" % objs)


def test_uninit_stdio_quiet():
    """fwrite into a FILE's buffer then fclose, and an fgets loop whose
    strlen/memchr read whole vectors past the data: nothing is reported."""
    out = os.path.join(TMP, "stdio.txt")
    text, p = tool("uninit", "uninit_stdio", args=(out,))
    # 3260 bytes in 30 lines (10 of "line N: " and 20 of "line NN: ", each
    # with 100 more), plus one memchr hit per line
    check_eq(p.stdout, "3290\n", "the program's own output")
    check(text.startswith("memtap uninit: 0 instructions read heap memory that was never "
                          "written"), "no false positive: %r" % text[:600])


def test_heat_chunk_size():
    text, _ = tool("heat", "heat_counts", "--top", "1000", "--chunk", "128")
    check_eq(block_chunks(tables(text)["hottest chunks"], 128), {0: 30, 128: 10},
             "accesses per 128-byte chunk")
    check("of 128 bytes" in text, "the chunk size is stated")
    check("hottest cache lines" not in text, "no line table above 64-byte chunks")


def test_heat_mappings_move_and_unmap():
    # one store to a mapping that mremap then moves and munmap removes:
    # the count moves with the data and is written when the mapping goes
    text, _ = tool("heat", "mappings", "--top", "1000")
    rows = [r for r in tables(text)["hottest chunks"] if "mremap" in r[2]]
    check_eq([(c, re.sub(r"<mremap(\d+)@main\+\d+>", r"<mremap\1>", n)) for c, _, n in rows],
             [(1, "<mremap0001>+0")], "the moved mapping's one access")


def test_heat_crash_keeps_summary():
    text, p = tool("heat", "crasher", expect_rc=-11)
    check(re.match(r"memtap heat: [1-9]\d* accesses", text), "summary written at the crash")


def share_words(text):
    """{section: [(name, accessed-by tids, written-by tids)]}."""
    out, section = {}, None
    for line in text.splitlines():
        if line and not line.startswith(" "):
            section = line.split(" (")[0]
            out.setdefault(section, [])
        m = re.match(r"^\s+0x[0-9a-f]+\s+(\S+)\s+accessed by ([\d,#-]+); written by ([\d,#-]+)$",
                     line)
        if m and section:
            tids = lambda s: [] if s == "-" else s.split(",")
            out[section].append((m.group(1), tids(m.group(2)), tids(m.group(3))))
    return out


def test_share_false_sharing():
    text, p = tool("share", "share_lines")
    check_eq(p.stdout, "1000 1000 2\n", "the program's own output")
    w = share_words(text)
    false = {n: (a, wr) for n, a, wr in w["falsely shared cache lines"]}
    check_eq(sorted(n for n in false if n.startswith("neighbours")),
             ["neighbours.left", "neighbours.right"], "the falsely shared line's words")
    left, right = false["neighbours.left"], false["neighbours.right"]
    check(len(left[1]) == 1 and len(right[1]) == 1 and left[1] != right[1],
          "one different writer each: %r %r" % (left, right))
    shared = {n: (a, wr) for n, a, wr in w["shared words"]}
    check_eq(len(shared["together"][0]), 3, "together: main and both threads")
    check_eq(len(shared["together"][1]), 1, "together: written by main only")
    check("only_main" not in shared, "a word one thread touched is not shared")
    m = re.match(r"memtap share: (\d+) threads", text)
    check(m and int(m.group(1)) == 3, "three threads: %s" % text.splitlines()[0])


def uninit_expected(once):
    """{source line: reads} from the program's REPORT markers."""
    want = {}
    with open(os.path.join(SOURCES, "uninit_reads.c")) as f:
        for n, line in enumerate(f, 1):
            m = re.search(r"REPORT( once-only)? (\d+)", line)
            if m and line.lstrip()[0] != "*" and not (once and m.group(1)):
                want[n] = int(m.group(2))
    return want


def uninit_reported(text):
    got = {}
    for line in text.splitlines()[1:]:
        m = re.search(r"\(uninit_reads\.c:(\d+)\) reads .*; (\d+) times?$", line)
        check(m, "report line: %r" % line)
        got[int(m.group(1))] = int(m.group(2))
    return got


def test_uninit_reads():
    text, p = tool("uninit", "uninit_reads")
    check_eq(p.stdout, "1\n", "the program's own output")
    check_eq(uninit_reported(text), uninit_expected(False), "instructions and reads")
    check(re.search(r"first at <malloc0000@main\+\d+>\+4 \[heap\]", text),
          "the block named by its allocation site")


def test_uninit_check_once():
    text, _ = tool("uninit", "uninit_reads", "--check-once")
    check_eq(uninit_reported(text), uninit_expected(True),
             "an instruction that once read initialized memory is not checked again")


def rewritten_info(trace):
    info = memtap("info", trace).stdout
    return {k: int(v) for k, v in re.findall(r"^(rewritten_\w+): (\d+)$", info, re.M)}


def test_uninit_rewritten_libc():
    """A copy of edge_insns run with a copy of libc (LD_LIBRARY_PATH, both
    rewritten non-selectively by hand) under uninit: after the main
    thread's exit hook, the tool's report and the exit path run through
    the rewritten libc and log more than the 256 entries of the scratch
    buffer their entries go to.  The stub's flush used to hand back a log
    with no room, and the stub retried forever.  The run ends, with the
    original's output and a report."""
    libs = os.path.join(TMP, "rewritten-libc")
    os.makedirs(libs, exist_ok=True)
    memtap("instrument", "-q", "--nonselective", "/lib/x86_64-linux-gnu/libc.so.6",
           "-o", os.path.join(libs, "libc.so.6"))
    copy = os.path.join(libs, "edge_insns")
    memtap("instrument", "-q", "--nonselective", prog("edge_insns"), "-o", copy)
    report = os.path.join(TMP, "rewritten-libc.txt")
    try:
        p = run_bounded([prog("memtap"), "uninit", "-o", os.path.join(TMP, "rl.mtr"),
                         "--report", report, "--", copy], 60, text=True,
                        env=dict(os.environ, LD_LIBRARY_PATH=libs))
    except subprocess.TimeoutExpired:
        raise Failure("memtap uninit of the copy with the rewritten libc did not end in 60 s")
    native = subprocess.run([prog("edge_insns")], capture_output=True, text=True)
    check_eq((p.returncode, p.stdout), (0, native.stdout), "the copy's exit status and output")
    with open(report) as f:
        check("never written" in f.read(), "the report was written")


def test_uninit_check_once_rewritten():
    """uninit --check-once on rewritten copies: a load whose check passed
    stops being logged (its check-once slot becomes a jump around its log
    sequence), even while other threads run it.  uninit_reads' copy gets
    the report the original gets; edge_insns' copy, whose string
    operations' int3 are in trampolines, runs as the original does;
    checked_loop's four threads, each
    loading a zeroed block 250,000 times, give their right result, and
    their copy logs under half the entries it logs without the option."""
    def instrumented(name):
        out = os.path.join(TMP, name + ".once")
        memtap("instrument", "-q", "--nonselective", prog(name), "-o", out)
        return out

    def uninit(copy, *opts):
        trace, report = os.path.join(TMP, "once.mtr"), os.path.join(TMP, "once.txt")
        p = memtap("uninit", "-o", trace, "--report", report, *opts, "--", copy)
        with open(report) as f:
            return f.read(), p, rewritten_info(trace)
    text, _, info = uninit(instrumented("uninit_reads"), "--check-once")
    check_eq(uninit_reported(text), uninit_expected(True), "the copy's report")
    check(info.get("rewritten_checks_removed", 0) >= 1, "checks removed: %r" % info)
    # a string operation's int3 in a trampoline (edge_insns' rep movsb):
    # the page it is written on stays writable for the slots
    edge = instrumented("edge_insns")
    _, p, info = uninit(edge, "--check-once")
    native = subprocess.run([prog("edge_insns")], capture_output=True, text=True)
    check_eq(p.stdout, native.stdout, "edge_insns' copy under uninit --check-once")
    check(info.get("rewritten_checks_removed", 0) >= 1, "edge_insns: %r" % info)
    loop = instrumented("checked_loop")
    entries = {}
    for opts in ((), ("--check-once",)):
        _, p, info = uninit(loop, *opts)
        check_eq(p.stdout.strip(), "4 threads, sum 0", "the program's result %s" % (opts,))
        check_eq(info.get("rewritten_checks_removed", 0) > 0, bool(opts),
                 "checks removed %s: %r" % (opts, info))
        entries[opts] = info["rewritten_entries"]
    check(entries[()] >= 4 * 250000 * 2 and entries[("--check-once",)] < entries[()] / 2,
          "entries logged without and with --check-once: %r" % entries)


def test_tool_json():
    """--json: one JSON object per report holding what the text report
    holds (the hand-counted accesses of heat_counts, the falsely shared
    line of share_lines, the REPORT lines of uninit_reads)."""
    import json
    for name, program in (("heat", "heat_counts"), ("share", "share_lines"),
                          ("uninit", "uninit_reads")):
        trace = os.path.join(TMP, "j-%s.mtr" % name)
        memtap(name, "-o", trace, "--report", os.path.join(TMP, "j.txt"), "--",
               prog(program))
        out = os.path.join(TMP, "j-%s.json" % name)
        memtap(name, "-i", trace, "--json", "--top", "1000", "--report", out)
        d = json.load(open(out))
        check_eq(d["tool"], name, "the report names its tool")
        if name == "heat":
            objects = {o["object"]: o["accesses"] for o in d["objects"]}
            check_eq(objects.get("hot_global"), 7, "heat: accesses to hot_global")
            block = [c for c in d["hottest_chunks"] if "0000@main" in c["name"]]
            check_eq(sorted(c["accesses"] for c in block), [10, 10, 20],
                     "heat: accesses per 64-byte chunk of the block")
            check_eq(sum(c["accesses"] for c in d["hottest_pages"]), d["accesses"],
                     "heat: the pages add up to the total")
        elif name == "share":
            check_eq(d["threads"], 3, "share: three threads")
            words = [w["name"] for l in d["falsely_shared"] for w in l["words"]]
            check_eq(sorted(w for w in words if w.startswith("neighbours")),
                     ["neighbours.left", "neighbours.right"], "share: the falsely shared words")
            shared = {w["name"]: w for w in d["shared_words"]}
            check_eq(len(shared["together"]["accessed_by"]), 3, "share: together")
            check(all(isinstance(t, int) for t in shared["together"]["accessed_by"]),
                  "share: threads by id")
        else:
            got = {int(u["line"].split(":")[1]): u["times"] for u in d["sites"]}
            check_eq(got, uninit_expected(False), "uninit: instructions and reads")
            check_eq(d["reads"], sum(got.values()), "uninit: reads in all")
            check(all(u["pc"].startswith("0x") for u in d["sites"]), "addresses as hex strings")


def test_shadow_bad_input():
    p = memtap("heat", check_rc=False)
    check_eq(p.returncode, 2, "no program: usage")
    for args, what in ((["--chunk", "3"], "power of two"),
                       (["--chunk", "8192"], "power of two"),
                       (["--check-once"], "only uninit"),
                       (["--top", "0"], "positive")):
        p = memtap("heat", *args, "--", prog("noalloc"), check_rc=False)
        check(p.returncode != 0 and what in p.stderr, "heat %s: %s" % (args, p.stderr))
    p = memtap("heat", "--", prog("static_prog"), check_rc=False)
    check(p.returncode != 0 and "static executable" in p.stderr, "static program refused")
    run = os.path.join(TMP, "plain.mtr")
    memtap("run", "-o", run, "--", prog("noalloc"))
    p = memtap("heat", "-i", run, check_rc=False)
    check(p.returncode == 1 and "not written by 'memtap heat'" in p.stderr,
          "a plain trace is refused: %s" % p.stderr)
    tool("heat", "noalloc")
    p = memtap("share", "-i", os.path.join(TMP, "heat.mtr"), check_rc=False)
    check(p.returncode == 1 and "not written by 'memtap share'" in p.stderr,
          "a heat trace is not a share trace")
    p = memtap("uninit", "-i", os.path.join(TMP, "missing.mtr"), check_rc=False)
    check(p.returncode == 1 and "memtap: " in p.stderr, "missing trace: clear error")
    # a report that cannot be written stops heat before the program runs
    out = os.path.join(TMP, "never.mtr")
    p = memtap("heat", "-o", out, "--report", "/nonexistent-dir/r.txt", "--",
               prog("noalloc"), check_rc=False)
    check(p.returncode == 1 and "/nonexistent-dir/r.txt" in p.stderr and
          not os.path.exists(out), "unwritable report refused first: %s" % p.stderr)


if __name__ == "__main__":
    sys.exit(run_named(globals(), sys.argv[1]))
