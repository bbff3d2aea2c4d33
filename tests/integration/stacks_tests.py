#!/usr/bin/env python3
"""Heap events' call stacks: the stacks of programs whose allocations are
known by construction (alloc_stacks.c, cxx_stacks.cpp) as `memtap report`
states them, sites named past allocator wrappers, and the same program's
per-stack allocations, temporary allocations, bytes at the heap's peak and
leaked bytes equal to heaptrack's (Debian's heaptrack, heaptrack_print).

Usage: stacks_tests.py TEST_NAME   (MEMTAP_BUILD names the build tree)
"""
import json
import os
import sys

from memtap_tests import TMP, check, check_eq, memtap, prog, run_named

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../scripts"))
from heaptrack_stacks import byte_text, record as heaptrack_record, stacks as heaptrack_stacks_of  # noqa: E402

SOURCE = os.path.join(os.path.dirname(__file__), "../programs/alloc_stacks.c")


def line_of(text, nth=0):
    """The line number of the nth line of alloc_stacks.c holding text."""
    with open(SOURCE) as f:
        hits = [i + 1 for i, line in enumerate(f) if text in line]
    check(len(hits) > nth, "alloc_stacks.c has %r" % text)
    return hits[nth]


def frame(function, text):
    return "%s alloc_stacks.c:%d" % (function, line_of(text))


def expected():
    """alloc_stacks.c's stacks (their frames in the program, innermost
    first, to main) and what each allocated, worked out from its source."""
    xm = frame("xmalloc", "void *p = malloc(n);")
    want = {
        (xm, frame("make_node", "return xmalloc(24)"), frame("main", "nodes[i] = make_node()")):
            dict(allocs=100, bytes=2400, temporary=0, at_peak=2400, leaked=0),
        (xm, frame("make_name", "return xmalloc(40)"), frame("main", "names[i] = make_name()")):
            dict(allocs=50, bytes=2000, temporary=0, at_peak=2000, leaked=2000),
        (xm, frame("make_table", "return xmalloc(1 << 20)"),
         frame("main", "void *table = make_table()")):
            dict(allocs=1, bytes=1 << 20, temporary=1, at_peak=1 << 20, leaked=0),
        # both threads, one after the other: each one's last block is freed
        # before the next allocation
        (frame("worker", "p[i] = malloc(16)"),):
            dict(allocs=60, bytes=960, temporary=2, at_peak=0, leaked=0),
    }
    inner = frame("recurse", "kept[depth] = xmalloc(64)")
    call = frame("recurse", "recurse(depth - 1)")
    for depth in range(7):
        key = (xm, inner) + (call,) * depth + (frame("main", "recurse(6)"),)
        want[key] = dict(allocs=1, bytes=64, temporary=0, at_peak=64, leaked=64)
    return want


def program_frames(frames, source="alloc_stacks.c"):
    """The frames in source, up to main (the C library's start-up below
    it: heaptrack stops at main)."""
    out = []
    for f in frames:
        if source + ":" in f:
            out.append(f)
        if f.startswith("main "):
            break
    return tuple(out)


def memtap_stacks(path, *opts, source="alloc_stacks.c"):
    rep = json.loads(memtap("report", "-q", "--json", "-", *opts, path).stdout)
    stacks = {}
    for s in rep["stacks"]:
        key = program_frames(s["frames"], source)
        if key and key[0].startswith("main "):  # the threads' thread-local blocks
            continue
        if key:
            check(key not in stacks, "one stack of frames %r" % (key,))
            stacks[key] = dict(allocs=s["allocs"], bytes=s["alloc_bytes"],
                               temporary=s["temporary"], at_peak=s["at_peak"],
                               leaked=s["not_freed_bytes"])
    return rep, stacks


def run_traced(name, engine, *opts):
    path = os.path.join(TMP, "%s-%s.mtr" % (name, engine))
    memtap("run", "-q", "--engine", engine, "-o", path, *opts, "--", prog(name))
    return path


def test_alloc_stacks_known():
    """Under both engines, every stack of alloc_stacks.c has the frames and
    counts its source says, the heap's peak is the sum of what was live
    while it slept, and sites are named past xmalloc."""
    want = expected()
    for engine in ("static", "fault"):
        rep, got = memtap_stacks(run_traced("alloc_stacks", engine))
        check_eq(got, want, "the stacks of alloc_stacks.c (%s engine)" % engine)
        check_eq(rep["heap"]["peak_bytes"], 2400 + 2000 + 7 * 64 + (1 << 20),
                 "the heap's peak (%s)" % engine)
        ours = ("make_node", "make_name", "make_table", "recurse", "worker", "xmalloc")
        sites = sorted(o["name"].split("+")[0] for o in rep["objects"]
                       if o["heap"] and o["name"].split("@")[1].split("+")[0] in ours)
        check_eq(sites, ["malloc@make_name", "malloc@make_node", "malloc@make_table",
                         "malloc@recurse", "malloc@worker"],
                 "sites named past the wrapper (%s)" % engine)


def heaptrack_stacks(binary, source="alloc_stacks.c"):
    """heaptrack's per-stack figures for one run of binary, keyed as
    memtap_stacks keys memtap's."""
    found = heaptrack_stacks_of(heaptrack_record([binary], TMP))
    theirs = {}
    for frames, figures in found.items():
        key = program_frames(("%s %s" % (fn, where) for fn, where in frames if where), source)
        if key and not key[0].startswith("main "):
            theirs[key] = figures
    return theirs


def test_alloc_stacks_heaptrack():
    """heaptrack and memtap (its default engine) on the same programs
    (alloc_stacks: wrappers, recursion, threads; cxx_stacks: C++
    containers): stack by stack, the same allocations, the same bytes at
    the heap's peak, the same leaked bytes and the same temporary
    allocations.  The
    stacks of the threads' thread-local blocks are left out (each tool
    loads libraries of its own with thread-local storage, which sizes
    them)."""
    for name, source in (("alloc_stacks", "alloc_stacks.c"), ("cxx_stacks", "cxx_stacks.cpp")):
        # by the program's lines alone: the tools spell C++ names apart
        where = lambda stacks: {tuple(f.rsplit(" ", 1)[1] for f in k): v
                                for k, v in stacks.items()}
        theirs = where(heaptrack_stacks(prog(name), source))
        ours = where(memtap_stacks(run_traced(name, "static"), source=source)[1])
        check(ours, "stacks in %s" % source)
        check_eq(sorted(theirs), sorted(ours), "the same stacks of %s" % name)
        for key, mine in ours.items():
            t = theirs[key]
            check_eq(t["allocs"], mine["allocs"], "allocations of %r" % (key,))
            check_eq(t["at_peak"], byte_text(mine["at_peak"]), "peak of %r" % (key,))
            check_eq(t.get("leaked", "0B"), byte_text(mine["leaked"]),
                     "leaked by %r" % (key,))
            check_eq(int(t.get("temporary", 0)), mine["temporary"],
                     "temporary of %r" % (key,))


def test_alloc_stacks_options():
    """--stack-depth 2 keeps two frames (each with the calls inlined
    there); --stack-depth 0 keeps none (the sites are then the wrapper's); --alloc-wrapper names the blocks past
    functions of the user's choice; --stack-depth out of range is refused."""
    rep = json.loads(memtap("report", "-q", "--json", "-",
                            run_traced("alloc_stacks", "static", "--stack-depth", "2")).stdout)
    calls = [[f for f in s["frames"] if not f.endswith("(inlined)")] for s in rep["stacks"]]
    check(calls and all(len(c) <= 2 for c in calls), "two calls at most: %r" % calls)
    path = run_traced("alloc_stacks", "static", "--stack-depth", "0")
    rep = json.loads(memtap("report", "-q", "--json", "-", path).stdout)
    check(all(not s["frames"] for s in rep["stacks"]), "no frames without stacks")
    names = [o["name"] for o in rep["objects"] if o["heap"]]
    check(any(n.startswith("malloc@xmalloc+") for n in names), "the wrapper's site: %r" % names)
    rep = json.loads(memtap("report", "-q", "--json", "-", "--alloc-wrapper", "make_*",
                            run_traced("alloc_stacks", "static")).stdout)
    names = [o["name"] for o in rep["objects"] if o["heap"]]
    check_eq(len([n for n in names if n.startswith("malloc@main+")]), 3,
             "nodes, names and the table named in main: %r" % names)
    p = memtap("run", "--stack-depth", "65", "--", prog("alloc_stacks"), check_rc=False)
    check(p.returncode == 2 and "--stack-depth" in p.stderr, p.stderr)


def test_alloc_stacks_cxx():
    """Blocks made inside std::vector and std::map are named after the
    program's functions that use them, and the vector's stack holds its
    seven doublings (4 to 256 bytes)."""
    path = run_traced("cxx_stacks", "static")
    rep = json.loads(memtap("report", "-q", "--json", "-", path).stdout)
    names = [o["name"] for o in rep["objects"] if o["heap"]]
    check(any(n.startswith("malloc@fill(") for n in names) and
          any(n.startswith("malloc@index_keys(") for n in names) and
          not any("std::" in n.split("@")[1].split("(")[0] for n in names),
          "container blocks named by their users: %r" % names)
    vec = [s for s in rep["stacks"] if any(f.startswith("fill(") for f in s["frames"])]
    check_eq(len(vec), 1, "one stack into fill")
    check_eq(vec[0]["sizes"], {str(1 << b): 1 for b in range(2, 9)}, "the vector's sizes")
    nodes = [s for s in rep["stacks"] if any(f.startswith("index_keys(") for f in s["frames"])]
    check_eq([s["allocs"] for s in nodes], [25], "the map's nodes")


def test_alloc_stacks_fork():
    """A forked child writes the stacks of its own allocations into its
    own trace (the parent's table is not in its file), also those its
    thread had met before the fork: the child of alloc_stacks fork makes
    50 nodes through the parent's stack, which its trace names whole."""
    for engine in ("static", "fault"):
        path = os.path.join(TMP, "fork-%s.mtr" % engine)
        memtap("run", "-q", "--engine", engine, "-o", path, "--", prog("alloc_stacks"), "fork")
        kids = [f for f in os.listdir(TMP) if f.startswith("fork-%s." % engine) and
                f.endswith(".mtr") and f != os.path.basename(path)]
        check_eq(len(kids), 1, "one child trace: %r" % kids)
        rep = json.loads(memtap("report", "-q", "--json", "-", os.path.join(TMP, kids[0])).stdout)
        nodes = [st for st in rep["stacks"]
                 if [f.split()[0] for f in st["frames"][:3]] == ["xmalloc", "make_node", "main"]]
        check_eq([st["allocs"] for st in nodes], [50], "the child's nodes and their stack (%s)"
                 % engine)


def test_alloc_stacks_export():
    """The exports carry each block's stack and the stacks' frames: per
    stack the blocks and bytes of the SQLite and Parquet tables, and the
    accesses joined to them through their blocks, equal report's, and a
    stack's frames read in order name its functions."""
    import sqlite3
    from export_tests import parquet_rows
    path = run_traced("alloc_stacks", "static")
    rep = json.loads(memtap("report", "-q", "--json", "-", path).stdout)
    want = {s["stack"]: (s["allocs"], s["alloc_bytes"]) for s in rep["stacks"] if s["stack"]}
    db = os.path.join(TMP, "stacks.db")
    if os.path.exists(db):
        os.unlink(db)
    memtap("export", "--format", "sqlite", "-o", db, path)
    c = sqlite3.connect(db)
    got = {k: (n, b) for k, n, b in c.execute(
        "select stack, count(*), sum(size) from blocks where stack is not null"
        " and kind in ('M', 'C', 'R') group by stack")}
    check_eq(got, want, "blocks and bytes per stack (SQLite)")
    # accesses per stack through their blocks, as report counts them
    # (where no copy, which report counts for each side, touched them)
    per = {k: (n, y) for k, n, y in c.execute(
        "select b.stack, count(*), sum(a.kind = 'Y') from accesses a join blocks b"
        " on b.number = a.block where b.stack is not null group by b.stack")}
    reported = {st["stack"]: st["accesses"] for st in rep["stacks"]}
    check(per, "accessed blocks with stacks")
    for k, (n, copies) in per.items():
        if not copies:
            check_eq(n, reported[k], "accesses of stack %d's blocks" % k)
    node = [k for k, (n, _) in want.items() if n == 100]
    frames = [f for (f,) in c.execute("select frame from stacks where stack = ? order by depth",
                                      (node[0],))]
    check_eq([f.split()[0] for f in frames[:3]], ["xmalloc", "make_node", "main"],
             "the nodes' stack, innermost first")
    c.close()
    out = os.path.join(TMP, "stacks.parquet")
    import shutil
    shutil.rmtree(out, ignore_errors=True)
    memtap("export", "--format", "parquet", "-o", out, path)
    rows = parquet_rows("select stack, count(*), sum(size) from %s where stack is not null"
                        " and kind in ('M', 'C', 'R') group by stack", os.path.join(out, "blocks"))
    check_eq({int(k): (int(n), int(b)) for k, n, b in rows}, want,
             "blocks and bytes per stack (Parquet)")
    rows = parquet_rows("select frame from %s where stack = " + str(node[0]) + " order by depth",
                        os.path.join(out, "stacks"))
    check_eq([r[0] for r in rows], frames, "the same frames (Parquet)")


def test_alloc_stacks_flame():
    """The HTML page draws the stacks as flame graphs in headless
    Chromium without an error: the root box is every allocation with a
    stack (then every access to their blocks), and the nodes' stack
    (main < make_node < xmalloc) has a box of its 100 allocations at each
    of its three depths above main's callers."""
    from report_tests import open_page
    path = run_traced("alloc_stacks", "static")
    html = os.path.join(TMP, "alloc_stacks.html")
    memtap("report", "-q", "--html", html, path)
    page = open_page(html)
    check_eq(page["errors"], [], "errors in the page")
    d, charts = page["data"], page["charts"]
    stacks = [st for st in d["stacks"] if st["frames"]]
    for chart, key in (("chart-flame-allocs", "allocs"), ("chart-flame-accesses", "accesses")):
        boxes = charts[chart]["series"][0]["data"]
        root = [b for b in boxes if b[2] == 0]
        check_eq([b[4] for b in root], [sum(st[key] for st in stacks)], "the root of " + chart)
    boxes = charts["chart-flame-allocs"]["series"][0]["data"]
    for fn in ("main ", "make_node ", "xmalloc "):
        named = [b for b in boxes if b[3].startswith(fn) and b[4] == 100]
        check(len(named) == 1, "one box of 100 for %s: %r" % (fn, named))
    check(any(h.startswith("Allocation call stacks") for h in page["headings"]), page["headings"])


if __name__ == "__main__":
    sys.exit(run_named(globals(), sys.argv[1]))
