#!/usr/bin/env python3
"""memtap export: Lackey lines (M for a read-modify-write, block
operations split at cache lines), Dinero IV's extended din input and an
SQLite database, checked against the trace's own records (`show --format
csv`, `show`) and, for the read-modify-writes, against the rewritten
file's site table.

Usage: export_tests.py TEST_NAME   (MEMTAP_BUILD names the build tree)
"""
import json
import os
import re
import shutil
import subprocess
import sys

from memtap_tests import TMP, check, check_eq, memtap, prog, run_named, trace
from rewrite_tests import instrument, sites_of

READ_PARQUET = os.path.join(os.path.dirname(os.path.abspath(__file__)), "parquet_read.mjs")


def records(path):
    """The trace's records as (kind, pc, addr, size, addr2) tuples."""
    rows = [l.split(",") for l in memtap("show", "--raw", "--format", "csv",
                                         path).stdout.splitlines()[1:]]
    return [(r[2], int(r[3], 16), int(r[4], 16), int(r[5]), int(r[6], 16)) for r in rows]


def bytes_moved(recs):
    """(bytes loaded, bytes stored) by the accesses and block operations."""
    loads = sum(r[3] for r in recs if r[0] in "LYG")
    stores = sum(r[3] for r in recs if r[0] in "SYW")
    return loads, stores


def lackey_lines(path, *opts):
    out = memtap("export", *opts, path).stdout.splitlines()
    lines = []
    for l in out:
        check(l[:1] == " " and l[1] in "LSM" and l[2] == " ", "a Lackey data line: %r" % l)
        addr, size = l[3:].split(",")
        lines.append((l[1], int(addr, 16), int(size)))
    return lines


def test_export_lackey_modify():
    """A read-modify-write instruction is one M line: as many as the
    executions of the sites the site table says both load and store."""
    copy = instrument(prog("lk_structs"), os.path.join(TMP, "x_structs"), "--nonselective")
    path = os.path.join(TMP, "x_structs.mtr")
    memtap("run", "-q", "-o", path, "--", copy)
    both = {s[0] for s in sites_of(copy) if s[3] and s[4]}
    recs = records(path)
    bias = min(r[2] for r in recs if r[0] == "o")  # the program is loaded first
    rmw = sum(1 for r in recs if r[0] == "S" and r[1] - bias in both)
    check(rmw > 0, "the program has read-modify-writes")
    lines = lackey_lines(path)
    count = {k: sum(1 for l in lines if l[0] == k) for k in "LSM"}
    check_eq(count["M"], rmw, "M lines")
    check_eq(count["L"], sum(1 for r in recs if r[0] == "L") - rmw, "L lines")
    check_eq(count["S"], sum(1 for r in recs if r[0] == "S") - rmw, "S lines")


def test_export_lackey_blocks():
    """Block operations: by default one line per 64-byte line touched,
    with --whole-blocks one line per block (two for a copy); the bytes
    loaded and stored are the trace's either way."""
    path, _ = trace("blockops", out="x_blockops.mtr")
    recs = records(path)
    blocks = [r for r in recs if r[0] in "YWG"]
    check(any(r[3] > 64 for r in blocks), "blocks longer than a cache line")
    loads, stores = bytes_moved(recs)
    for opts in ((), ("--whole-blocks",)):
        lines = lackey_lines(path, *opts)
        got = (sum(l[2] for l in lines if l[0] in "LM"), sum(l[2] for l in lines if l[0] in "SM"))
        check_eq(got, (loads, stores), "bytes loaded and stored %s" % (opts,))
        merged = sum(1 for l in lines if l[0] == "M")
        accesses = sum(1 for r in recs if r[0] in "LS") - merged
        if opts:
            want = accesses + sum(2 if r[0] == "Y" else 1 for r in blocks)
        else:
            pieces = 0
            for r in blocks:
                spans = [(r[4], r[3]), (r[2], r[3])] if r[0] == "Y" else [(r[2], r[3])]
                for a, n in spans:
                    pieces += (a + n - 1) // 64 - a // 64 + 1 if n else 1
            want = accesses + pieces
        check_eq(len(lines), want, "lines %s" % (opts,))


def test_export_dinero():
    """Dinero IV's extended din: 'r|w hexaddr hexsize' (Dinero IV reads
    both fields in hex), no piece crossing a line (64 and 32 bytes), the
    trace's bytes loaded and stored."""
    path, _ = trace("blockops", out="x_dinero.mtr")
    loads, stores = bytes_moved(records(path))
    for line in (64, 32):
        out = memtap("export", "--format", "dinero", "--line", str(line), path).stdout
        got = {"r": 0, "w": 0}
        for l in out.splitlines():
            label, addr, size = l.split()
            a, n = int(addr, 16), int(size, 16)
            check(label in got and n >= 1, "a din line: %r" % l)
            check(a % line + n <= line, "%r stays inside a %d-byte line" % (l, line))
            got[label] += n
        check_eq((got["r"], got["w"]), (loads, stores), "bytes read and written (%d)" % line)


def test_export_sqlite():
    """--format sqlite: every access, block, module and thread of the trace
    in its table; accesses per heap block equal the symbolic lines that
    name the block; the indexes for the obvious queries exist."""
    import re
    import sqlite3
    path, _ = trace("blockops", out="x_sqlite.mtr")
    db = os.path.join(TMP, "x.db")
    if os.path.exists(db):
        os.unlink(db)
    memtap("export", "--format", "sqlite", "-o", db, path)
    recs = records(path)
    c = sqlite3.connect(db)
    kinds = dict(c.execute("select kind, count(*) from accesses group by kind"))
    want = {}
    for r in recs:
        if r[0] in "LSYWG":
            want[r[0]] = want.get(r[0], 0) + 1
    check_eq(kinds, want, "accesses by kind")
    allocs = [r for r in recs if r[0] in "MCPRE" and r[2]]
    check_eq(c.execute("select count(*) from blocks").fetchone()[0], len(allocs), "blocks")
    frees = {r[2] for r in recs if r[0] == "F"}
    freed = {a for (a,) in c.execute("select address from blocks where free_seq is not null")}
    check(frees and frees <= freed | {0}, "freed blocks have their free_seq")
    per_block = {}
    for l in memtap("show", path).stdout.splitlines():
        m = re.match(r"^[LSYWG]\$\d+:(<[^>]+>)", l)
        if m:
            per_block[m.group(1)] = per_block.get(m.group(1), 0) + 1
    got = dict(c.execute("select n.name, count(*) from accesses a join names n"
                         " on n.id = a.object where n.name like '<%' group by n.name"))
    check(per_block and got == per_block, "accesses per heap block: %r vs %r" % (got, per_block))
    check_eq(c.execute("select sum(events) from threads").fetchone()[0], len(recs),
             "the threads' events add up to the trace's")
    modules = memtap("info", path).stdout.count("\nmodule ")
    check_eq(c.execute("select count(*) from modules").fetchone()[0], modules, "modules")
    idx = {n for (n,) in c.execute("select name from sqlite_master where type = 'index'")}
    check({"accesses_object", "accesses_pc", "accesses_thread"} <= idx, "indexes: %r" % idx)
    c.close()
    before = os.path.getmtime(db)
    p = memtap("export", "--format", "sqlite", "-o", db, path, check_rc=False)
    check(p.returncode != 0 and "exists already" in p.stderr and
          os.path.getmtime(db) == before, "an existing file is refused, untouched")
    p = memtap("export", "--format", "sqlite", path, check_rc=False)
    check(p.returncode != 0 and "needs -o" in p.stderr, "no database without -o")


def test_export_heap_columns():
    """Each access of a heap block carries the block (its allocation
    number) and the allocation site as `memtap report` names it: per site
    the accesses equal report's (heap_sharing: no copies, which report
    counts twice), in SQLite and Parquet, and the site the two threads
    allocate their own blocks at has two blocks; other accesses have
    neither."""
    import sqlite3
    path = os.path.join(TMP, "heap_columns.mtr")
    memtap("run", "-q", "-o", path, "--", prog("heap_sharing"))
    db = os.path.join(TMP, "heap_columns.db")
    if os.path.exists(db):
        os.unlink(db)
    memtap("export", "--format", "sqlite", "-o", db, path)
    c = sqlite3.connect(db)
    got = dict(c.execute("select n.name, count(*) from accesses a join names n on n.id = a.site"
                         " group by n.name"))
    rep = json.loads(memtap("report", "-q", "--json", "-", path).stdout)
    want = {o["name"]: o["accesses"] for o in rep["objects"] if o["heap"] and o["accesses"]}
    check_eq(got, want, "accesses per allocation site")
    work = [k for k in got if k.startswith("malloc@work+")]
    check(len(work) == 1, "the threads' site: %r" % got)
    blocks = c.execute("select count(distinct a.block) from accesses a join names n"
                       " on n.id = a.site where n.name = ?", (work[0],)).fetchone()[0]
    check_eq(blocks, 2, "two blocks at the threads' site")
    check_eq(c.execute("select count(*) from accesses where (block is null) != (site is null)"
                       " or (block is null) = (region in ('[heap]', '[mmap]'))").fetchone()[0],
             0, "block and site exactly on heap accesses")
    c.close()
    out = os.path.join(TMP, "heap_columns.parquet")
    memtap("export", "--format", "parquet", "-o", out, path)
    rows = parquet_rows("select site, count(*) from %s where site is not null group by site",
                        os.path.join(out, "accesses"))
    check_eq({k: int(n) for k, n in rows}, want, "the same per site in Parquet")


def seq_of(line):
    """The sequence number of a `memtap show` line ("L$12:..." or "# 12: ...")."""
    m = re.match(r"^(?:\S\$|# )(\d+):", line)
    return int(m.group(1)) if m else None


def test_export_selection():
    """--tid and --seq select a trace's events in show (every format),
    export, cachesim and report: exactly the full output's lines of those
    threads and numbers, the heap blocks allocated outside the selection
    still named as the full output names them, report's accesses those of
    the selection and its heap the whole trace's; a malformed selection is
    refused with the command's usage status."""
    import sqlite3
    path = os.path.join(TMP, "selection.mtr")
    memtap("run", "-q", "-o", path, "--", prog("heap_sharing"))
    rows = [l.split(",") for l in memtap("show", "--format", "csv", path).stdout.splitlines()[1:]]
    tid_of = {int(r[0]): int(r[1]) for r in rows}
    tids = sorted(set(tid_of.values()), key=lambda t: min(s for s in tid_of if tid_of[s] == t))
    check(len(tids) == 3, "main and two threads: %r" % tids)
    full = memtap("show", path).stdout.splitlines()
    whole = json.loads(memtap("report", "-q", "--json", "-", path).stdout)
    check_eq(whole["selection"], None, "no selection")
    shared = [seq_of(l) for l in full if "<malloc0000@main" in l and l[0] in "LS"]
    check(len(shared) >= 4, "accesses to main's block: %r" % shared)
    lo, hi = shared[1], shared[-2]
    site_off = re.search(r"<malloc0000@main\+(\d+)>", "\n".join(full)).group(1)
    main_block = set(shared)
    cases = [(["--tid", str(tids[1])], lambda s: tid_of[s] == tids[1]),
             (["--seq", "%d-%d" % (lo, hi)], lambda s: lo <= s <= hi),
             (["--seq", "%d-" % lo, "--tid", "%d,%d" % (tids[0], tids[2])],
              lambda s: s >= lo and tid_of[s] in (tids[0], tids[2])),
             (["--seq", str(lo)], lambda s: s == lo),
             # main's block, by its site as report names it and by its
             # name as show does: its accesses, whoever made them
             (["--object", "malloc@main+%s" % site_off],
              lambda s: s in main_block),
             (["--object", "<malloc0000@main+%s>" % site_off, "--tid", str(tids[1])],
              lambda s: s in main_block and tid_of[s] == tids[1])]
    for opts, keep in cases:
        want = [l for l in full if seq_of(l) is not None and keep(seq_of(l))]
        got = memtap("show", *opts, path).stdout.splitlines()
        check_eq(got, want, "show %s" % " ".join(opts))
        check(any("<malloc0000@main" in l for l in got), "main's block named in %r" % opts)
        csv = memtap("show", "--format", "csv", *opts, path).stdout.splitlines()
        check_eq(csv[1:], [",".join(r) for r in rows if keep(int(r[0]))], "csv %s" % opts)
        db = os.path.join(TMP, "selection.db")
        if os.path.exists(db):
            os.unlink(db)
        memtap("export", "--format", "sqlite", "-o", db, *opts, path)
        c = sqlite3.connect(db)
        got_n = c.execute("select count(*) from accesses").fetchone()[0]
        named = c.execute("select count(*) from accesses a join names n on n.id = a.object"
                          " where n.name like '<malloc0000@main%'").fetchone()[0]
        c.close()
        check_eq(got_n, sum(1 for r in rows if r[2] in "LSYWG" and keep(int(r[0]))),
                 "sqlite accesses %s" % opts)
        check_eq(named, sum(1 for l in want if "<malloc0000@main" in l and l[0] in "LS"),
                 "sqlite accesses to main's block %s" % opts)
        rep = json.loads(memtap("report", "-q", "--json", "-", *opts, path).stdout)
        check_eq(rep["accesses"], sum(1 for r in rows if r[2] in "LSYWG" and keep(int(r[0]))),
                 "report's accesses %s" % opts)
        check(rep["selection"], "report says its selection")
        check_eq(rep["heap"], whole["heap"], "report's heap: the whole trace's")
    sim = json.loads(memtap("cachesim", "--json", "--tid", str(tids[1]), path).stdout)
    check_eq(sim["accesses"], sum(1 for r in rows if r[2] in "LS" and tid_of[int(r[0])] == tids[1]),
             "cachesim's accesses of one thread")
    for bad in (["--seq", "9-3"], ["--seq", "x"], ["--seq", "-"], ["--tid", "1,,2"],
                ["--tid", "1,"], ["--tid", ",1"], ["--tid", ""]):
        p = memtap("show", *bad, path, check_rc=False)
        check(p.returncode == 2 and "memtap show: %s:" % bad[0] in p.stderr,
              "%r refused: %d %r" % (bad, p.returncode, p.stderr))


def duckdb_query(sql):
    """The rows of a query run by DuckDB (its C library, which the build
    copies beside memtap for the tests: an independent reader of the
    Parquet files memtap writes), every value as a string."""
    import ctypes
    lib = ctypes.CDLL(os.path.join(os.environ.get("MEMTAP_BUILD", ""), "lib/memtap/libduckdb.so"))
    db, con = ctypes.c_void_p(), ctypes.c_void_p()
    result = ctypes.create_string_buffer(48)  # duckdb_result
    lib.duckdb_value_varchar.restype = ctypes.c_void_p
    lib.duckdb_result_error.restype = ctypes.c_char_p
    lib.duckdb_row_count.restype = ctypes.c_uint64
    lib.duckdb_column_count.restype = ctypes.c_uint64
    check(lib.duckdb_open(None, ctypes.byref(db)) == 0 and
          lib.duckdb_connect(db, ctypes.byref(con)) == 0, "DuckDB opens")
    try:
        ok = lib.duckdb_query(con, sql.encode(), result) == 0
        check(ok, "DuckDB: %s: %s" % (sql, lib.duckdb_result_error(result)))
        rows = []
        for r in range(lib.duckdb_row_count(result)):
            row = []
            for c in range(lib.duckdb_column_count(result)):
                v = lib.duckdb_value_varchar(result, ctypes.c_uint64(c), ctypes.c_uint64(r))
                row.append(ctypes.string_at(v).decode() if v else None)
                lib.duckdb_free(ctypes.c_void_p(v))
            rows.append(tuple(row))
        lib.duckdb_destroy_result(result)
        return rows
    finally:
        lib.duckdb_disconnect(ctypes.byref(con))
        lib.duckdb_close(ctypes.byref(db))


def parquet_rows(sql, part):
    return duckdb_query(sql % ("read_parquet('%s/**/*.parquet', hive_partitioning = true)" % part))


def test_export_cache():
    """--cache: every access row says what the cache model made of it.
    cache_walk.c's hand count (its comment) per array from the SQLite
    rows: D1 and LL misses, and each miss's cause; the rows' misses add up
    to memtap cachesim's totals in SQLite and in Parquet; without --cache
    the columns are NULL; --D1/--LL without --cache, and --cache for a
    format of lines, are refused."""
    import sqlite3
    path = os.path.join(TMP, "cache_walk-export.mtr")
    memtap("run", "-q", "-o", path, "--", prog("cache_walk"))
    geometry = ["--D1", "32K,8,64", "--LL", "1M,16,64"]
    sim = json.loads(memtap("cachesim", "--json", *geometry, path).stdout)
    db = os.path.join(TMP, "cache.db")
    if os.path.exists(db):
        os.unlink(db)
    memtap("export", "-q", "--format", "sqlite", "--cache", *geometry, "-o", db, path)
    c = sqlite3.connect(db)
    per = {name: (d1, ll) for name, d1, ll in c.execute(
        "select n.name, sum(d1_misses), sum(ll_misses) from accesses a"
        " join names n on n.id = a.object group by n.name")}
    for name, want in (("big", (2048, 1024)), ("small", (256, 256)),
                       ("conflicting", (90, 9))):
        check_eq(per.get(name), want, "%s's D1 and LL misses" % name)
    causes = {(n, cause): k for n, cause, k in c.execute(
        "select n.name, miss_cause, count(*) from accesses a join names n"
        " on n.id = a.object where miss_cause is not null group by 1, 2")}
    check_eq({k: v for k, v in causes.items() if k[0] in ("big", "small", "conflicting")},
             {("big", "compulsory"): 1024, ("big", "capacity"): 1024,
              ("small", "compulsory"): 256, ("conflicting", "compulsory"): 9,
              ("conflicting", "conflict"): 81}, "misses by cause")
    totals = c.execute("select sum(d1_misses), sum(ll_misses) from accesses").fetchone()
    check_eq(totals, (sim["d1_misses"], sim["ll_misses"]), "the rows add up to cachesim's")
    c.close()
    out = os.path.join(TMP, "cache_parquet")
    shutil.rmtree(out, ignore_errors=True)
    memtap("export", "-q", "--format", "parquet", "--cache", *geometry, "-o", out, path)
    got = parquet_rows("select sum(d1_misses), sum(ll_misses), count(miss_cause) from %s",
                       out + "/accesses")
    check_eq(got, [(str(sim["d1_misses"]), str(sim["ll_misses"]), str(sim["d1_misses"]))],
             "Parquet's rows (one miss a row here)")
    plain = os.path.join(TMP, "plain.db")
    if os.path.exists(plain):
        os.unlink(plain)
    memtap("export", "-q", "--format", "sqlite", "-o", plain, path)
    c = sqlite3.connect(plain)
    check_eq(c.execute("select count(d1_misses), count(ll_misses), count(miss_cause)"
                       " from accesses").fetchone(), (0, 0, 0), "NULL without --cache")
    c.close()
    for bad in (["--format", "sqlite", "--D1", "32K,8,64", "-o", plain + "2"],
                ["--cache"], ["--format", "sqlite", "--cache", "--LL", "1M,16,128",
                              "-o", plain + "3"]):
        p = memtap("export", *bad, path, check_rc=False)
        check(p.returncode != 0 and re.match(r"memtap:? export: ", p.stderr) and
              not os.path.exists(plain + "2") and not os.path.exists(plain + "3"),
              "%r refused: %d %s" % (bad, p.returncode, p.stderr))


def check_access_numbers(path, dataset, label):
    """Row for row, the numbers of every access (but copies) of the Parquet
    dataset (DIR/accesses or a partition of it) as `memtap show --raw`
    prints those of the trace at path; how many."""
    shown = sorted((int(r[0]), r[1], r[2], int(r[3], 16), int(r[4], 16), int(r[5]), int(r[8]))
                   for r in (l.split(",") for l in memtap("show", "--raw", "--format", "csv", path)
                             .stdout.splitlines()[1:]) if r[2] in "LSWG")
    read = sorted((int(q), t, k, int(pc), int(a), int(z), int(c)) for q, t, k, pc, a, z, c in
                  parquet_rows("select seq, tid, kind, pc, address, size, count from %s"
                               " where kind <> 'Y'", dataset))
    check_eq(read, shown, "%s: every access's numbers" % label)
    return len(shown)


def test_export_parquet():
    """--format parquet: DuckDB reads back every access (by kind and by
    thread, one partition per thread), block, module and thread of the
    trace; the traces of a parent and its child (one run) export into one
    directory side by side, every row with the run's number, and another
    run's is refused there; a table
    with no rows is one empty file (DuckDB reads every table of a heap-only
    trace); an export is never written over."""
    import shutil
    traces = {}
    for name in ("share_lines", "blockops"):
        path, _ = trace(name, out="pq_%s.mtr" % name)
        traces[name] = path
        out = os.path.join(TMP, "pq_" + name)
        shutil.rmtree(out, ignore_errors=True)
        memtap("export", "--format", "parquet", "-o", out, path)
        rows = [l.split(",") for l in memtap("show", "--raw", "--format", "csv", path).stdout.splitlines()[1:]]
        pid = re.search(r"^pid: (\d+)$", memtap("info", path).stdout, re.M).group(1)
        part = os.path.join(out, "accesses", "pid=" + pid)
        want = {}
        for r in rows:
            if r[2] in "LSYWG":
                key = (r[1], int(r[3], 16), r[2])
                want[key] = want.get(key, 0) + 1
        got = {(t, int(pc), k): int(n) for t, pc, k, n in parquet_rows(
            "select tid, pc, kind, count(*) from %s group by tid, pc, kind", part)}
        check_eq(got, want, "%s: accesses per thread, instruction and kind" % name)
        check_access_numbers(path, part, name)
        tids = sorted(d for d in os.listdir(part))
        check_eq(tids, sorted({"tid=" + t for t, _, _ in want}), "%s: a partition per thread" % name)
        allocs = sum(1 for r in rows if r[2] in "MCPRE" and int(r[4], 16))
        blocks = duckdb_query("select count(*), count(free_seq) from read_parquet('%s/blocks/pid=%s/*.parquet')"
                              % (out, pid))[0]
        check_eq(int(blocks[0]), allocs, "%s: blocks" % name)
        frees = sum(1 for r in rows if r[2] == "F" and int(r[4], 16))
        check_eq(int(blocks[1]), frees, "%s: freed blocks have their free_seq" % name)
        modules = memtap("info", path).stdout.count("\nmodule ")
        check_eq(duckdb_query("select count(*) from read_parquet('%s/modules/pid=%s/*.parquet')"
                              % (out, pid)), [(str(modules),)], "%s: modules" % name)
        events = duckdb_query("select sum(events) from read_parquet('%s/threads/pid=%s/*.parquet')"
                              % (out, pid))
        check_eq(events, [(str(len(rows)),)], "%s: the threads' events" % name)
        p = memtap("export", "--format", "parquet", "-o", out, path, check_rc=False)
        check(p.returncode != 0 and "already" in p.stderr, "a second export of one process is refused")
    # another run into share_lines' directory: refused, nothing written
    out = os.path.join(TMP, "pq_share_lines")
    before = sorted(os.listdir(os.path.join(out, "accesses")))
    p = memtap("export", "--format", "parquet", "-o", out, traces["blockops"], check_rc=False)
    check(p.returncode != 0 and "another run" in p.stderr, "another run is refused: %s" % p.stderr)
    check_eq(sorted(os.listdir(os.path.join(out, "accesses"))), before, "nothing of it written")
    # a parent and its child, one run: side by side
    parent = os.path.join(TMP, "pq_fork.mtr")
    p = memtap("run", "-q", "--engine", "fault", "-o", parent, "--", prog("forker"))
    child = [l.split()[-1] for l in p.stderr.splitlines() if l.startswith("memtap: also wrote")]
    out = os.path.join(TMP, "pq_fork")
    shutil.rmtree(out, ignore_errors=True)
    for path in [parent] + child:
        memtap("export", "--format", "parquet", "-o", out, path)
    check_eq(parquet_rows("select count(distinct pid) from %s", os.path.join(out, "accesses")),
             [("2",)], "two processes of one run side by side")
    # every table's rows carry the run's number, the same in both processes
    run = re.search(r"^run: (\d+)$", memtap("info", parent).stdout, re.M).group(1)
    for table in ("accesses", "blocks", "modules", "threads"):
        check_eq(parquet_rows("select distinct run from %s", os.path.join(out, table)),
                 [(run,)], "%s: the run column" % table)
    # a block's accesses after its free are named as released (a name's
    # key is the block's number and its state), in one row group with
    # those before
    path, _ = trace("after_free", out="pq_after_free.mtr")
    out = os.path.join(TMP, "pq_after_free")
    shutil.rmtree(out, ignore_errors=True)
    memtap("export", "--format", "parquet", "-o", out, path)
    names = [o for (o,) in parquet_rows("select object from %s where block is not null"
                                        " order by seq", os.path.join(out, "accesses"))]
    check(len(names) >= 3 and re.fullmatch(r"<malloc\d+@main\+\d+>", names[0]) and
          names[-1] == names[0].replace("<malloc", "<freed:"),
          "live, then freed: %r" % names)
    # a heap-only trace: no accesses, yet every table reads
    path, _ = trace("three_mallocs", out="pq_heap.mtr", heap_only=True)
    out = os.path.join(TMP, "pq_heap")
    shutil.rmtree(out, ignore_errors=True)
    memtap("export", "--format", "parquet", "-o", out, path)
    counts = [parquet_rows("select count(*) from %s", os.path.join(out, table))[0][0]
              for table in ("accesses", "blocks", "modules", "threads")]
    check(counts[0] == "0" and int(counts[1]) == 3 and int(counts[2]) > 0,
          "the empty accesses table reads as such: %s" % counts)


def test_export_parquet_split():
    """--split SIZE: a partition's rows in several files of about that size
    (a 400,000-access walk: more than one file at 4K, about a row group
    each) that DuckDB reads as one dataset with the same rows as the
    unsplit export; refused with other formats."""
    import shutil
    path = os.path.join(TMP, "pq_split.mtr")
    memtap("run", "-q", "-o", path, "--", prog("rewrite_workloads"), "walk", "64")
    dirs = {}
    for split in ([], ["--split", "4K"]):
        out = os.path.join(TMP, "pq_split" + ("_4k" if split else ""))
        shutil.rmtree(out, ignore_errors=True)
        memtap("export", "--format", "parquet", *split, "-o", out, path)
        dirs[bool(split)] = out
    pid = re.search(r"^pid: (\d+)$", memtap("info", path).stdout, re.M).group(1)
    part = os.path.join(dirs[True], "accesses", "pid=" + pid, "tid=" + pid)
    files = [f for f in os.listdir(part) if f.endswith(".parquet")]
    check(len(files) > 1, "the main thread's accesses in several files: %r" % files)
    query = ("select tid, kind, count(*), sum(address %% 1000003) from read_parquet("
             "'%s/accesses/**/*.parquet', hive_partitioning = true) group by tid, kind order by 1, 2")
    check_eq(duckdb_query(query % dirs[True]), duckdb_query(query % dirs[False]),
             "the split dataset reads as the whole")
    # the whole, in row groups of several encodings (sequence numbers
    # delta-packed, instructions in a dictionary, addresses plain)
    n = check_access_numbers(path, os.path.join(dirs[False], "accesses"), "unsplit")
    check(n > 300000, "a trace of several row groups: %d accesses" % n)
    # a second reader, Apache Arrow's Rust one (parquet-wasm): every table's
    # files, and a sample of the split ones, read as DuckDB reads them
    # (rows, and per column its type, NULLs and the sum of its numbers or
    # of its strings' bytes)
    def parquet_files(top):
        return sorted(os.path.join(d, f) for d, _, fs in os.walk(top) for f in fs
                      if f.endswith(".parquet"))
    files = parquet_files(dirs[False]) + parquet_files(dirs[True])[::50]
    arrow = json.loads(subprocess.run(["node", READ_PARQUET] + files, capture_output=True,
                                      text=True, check=True).stdout)
    types = {"Uint64": "UBIGINT", "Uint32": "UINTEGER", "Utf8": "VARCHAR"}
    for f in files:
        got = arrow[f]
        names = list(got["columns"])
        parts = ["count(*)"]
        for c in names:
            q = '"%s"' % c
            parts += ["count(*) - count(%s)" % q,
                      "coalesce(sum(strlen(%s)), 0)" % q if got["columns"][c]["type"] == "Utf8"
                      else "coalesce(sum(%s), 0)" % q]
        duck = duckdb_query("select %s from read_parquet('%s', hive_partitioning = false)"
                            % (", ".join(parts), f))[0]
        mine = [str(got["rows"])] + [str(v) for c in names
                                     for v in (got["columns"][c]["nulls"], got["columns"][c]["sum"])]
        check_eq(mine, list(duck), "%s: Arrow's reading and DuckDB's" % f)
        described = duckdb_query("describe select * from read_parquet('%s',"
                                 " hive_partitioning = false)" % f)
        check_eq([(c, types.get(got["columns"][c]["type"])) for c in names],
                 [tuple(r[:2]) for r in described], "%s: the columns' types" % f)
    for table in ("blocks", "modules", "threads"):
        q = "select count(*) from read_parquet('%s/" + table + "/**/*.parquet')"
        check_eq(duckdb_query(q % dirs[True]), duckdb_query(q % dirs[False]), table)
    p = memtap("export", "--split", "4K", path, check_rc=False)
    check(p.returncode == 2 and "--split: only --format parquet" in p.stderr, p.stderr)


def test_export_bad_input():
    """Bad options and files get a clear message and a non-zero exit."""
    path, _ = trace("blockops", out="x_bad.mtr")
    for args, want in ((["--format", "pin"], "expected lackey, dinero, sqlite or parquet"),
                       (["--line", "48"], "a power of two"),
                       (["--line", "8192"], "a power of two")):
        p = memtap("export", *args, path, check_rc=False)
        check(p.returncode != 0 and want in p.stderr, "%s: %s" % (args, p.stderr))
    junk = os.path.join(TMP, "junk.txt")
    open(junk, "w").write("not a trace\n")
    p = memtap("export", junk, check_rc=False)
    check(p.returncode != 0 and "not a memtap trace" in p.stderr, p.stderr)


if __name__ == "__main__":
    sys.exit(run_named(globals(), sys.argv[1]))
