#!/usr/bin/env python3
"""memtap report: counts and patterns hand-computed from small programs
(report_walks.c, heat_counts.c, share_lines.c), per-instruction counts
equal to the trace's own records (`memtap show --raw --format csv`), and
the HTML page opened in headless Chromium: no console or page errors, no
network request, and charts that hold the report's numbers.

Usage: report_tests.py TEST_NAME   (MEMTAP_BUILD names the build tree)
"""
import json
import os
import re
import time
import shutil
import signal
import subprocess
import sys

from memtap_tests import MEMTAP, TMP, Failure, check, check_eq, memtap, prog, run_named, show, trace

PAGE_TEST = os.path.join(os.path.dirname(__file__), "../browser/report_page.mjs")


def traced(name, engine="fault", *args):
    path = os.path.join(TMP, "%s-%s.mtr" % (name, engine))
    memtap("run", "-q", "--engine", engine, "-o", path, "--", prog(name), *args)
    return path


def report_json(path, *opts):
    return json.loads(memtap("report", "-q", "--json", "-", *opts, path).stdout)


def objects(rep):
    return {o["name"]: o for o in rep["objects"]}


def site_object(rep, line):
    """The heap object whose allocation site is at source line `line` of
    report_walks.c (the allocation sites' own instructions name it)."""
    names = {x["object"] for x in rep["instructions"] if x["line"] == "report_walks.c:%d" % line}
    check_eq(len(names), 1, "one object accessed at line %d" % line)
    return objects(rep)[names.pop()]


def test_report_walks():
    """Every object of report_walks.c has the counts, pattern and heap
    facts its source says, under both engines."""
    for engine in ("fault", "static"):
        rep = report_json(traced("report_walks", engine))
        obj = objects(rep)
        seq = obj["seq_arr"]
        check_eq((seq["S"], seq["L"], seq["pattern"], seq["bytes_written"]),
                 (256, 0, "sequential", 1024), "seq_arr (%s)" % engine)
        table = obj["table"]
        check_eq((table["L"], table["S"], table["pattern"]), (100, 0, "random"),
                 "table (%s)" % engine)
        records = site_object(rep, 30)
        check_eq((records["L"], records["pattern"], records["stride"], records["allocs"],
                  records["alloc_bytes"], records["not_freed"]),
                 (64, "strided", 16, 1, 1024, 0), "records (%s)" % engine)
        gone = site_object(rep, 42)
        check_eq((gone["S"], gone["L"], gone["after_free"], gone["temporary"]),
                 (1, 3, 3, 1), "gone (%s)" % engine)
        check_eq(rep["after_free"], 3, "uses after free (%s)" % engine)
        uaf = [x for x in rep["instructions"] if x["after_free"]]
        check_eq([(x["line"], x["after_free"]) for x in uaf], [("report_walks.c:42", 3)],
                 "the instruction that reads after free (%s)" % engine)
        sites = [o for o in rep["objects"] if o["heap"]]
        churn = [o for o in sites if o["allocs"] == 10]
        check(len(churn) == 1 and churn[0]["temporary"] == 10 and churn[0]["alloc_bytes"] == 320,
              "ten temporary 32-byte blocks at one site (%s): %r" % (engine, churn))
        kept = [o for o in sites if o["alloc_bytes"] == 1000]
        check(len(kept) == 1 and kept[0]["not_freed"] == 1 and kept[0]["not_freed_bytes"] == 1000,
              "the kept block is not freed (%s): %r" % (engine, kept))
        heap = rep["heap"]
        check_eq(heap["allocs"], sum(o["allocs"] for o in sites if o["region"] == "[heap]"),
                 "allocations: the sites' sum (%s)" % engine)
        check(heap["temporary"] >= 11 and heap["not_freed_bytes"] >= 1000, "heap summary %r" % heap)
        check(rep["complete"], "a complete trace")
        line = rep["timeline"]
        check_eq((sum(line["events"]), [sum(line[k]) for k in "LSYWG"]),
                 (rep["events"], [rep["kinds"][k] for k in "LSYWG"]), "the timeline's sums")
        check_eq(max(line["live_bytes"]), heap["peak_bytes"], "the timeline's peak")


def test_report_time_axis():
    """The time line is in time, from the chunks' times: timed_phases.c
    stores N times, sleeps 300 ms, stores N times again.  Under both
    engines the trace says it took at least the pause (and no longer than
    the run), and some 40 of the 200 bins in a row (a fifth of the time,
    inside the pause) hold under 0.5 % of the events, where a fifth of
    the events would fall in event order (a thread that put nothing in
    its buffer for 20 ms closes its chunk then, and an empty chunk marks
    the pause's end: none fall there; before, up to a chunk's records,
    65,536, were spread over it: 2.2 % and 4.4 %); the cache model's timeline
    the same, its bins adding up to its totals.  The pages label the axis
    in milliseconds."""
    for engine, n in (("static", 300000), ("fault", 200000)):
        began = time.monotonic()
        path = traced("timed_phases", engine, str(n))
        took_us = (time.monotonic() - began) * 1e6
        us = int(re.search(r"^duration_us: (\d+)$", memtap("info", path).stdout, re.M).group(1))
        check(300000 <= us <= took_us, "%s: duration %d us, the run %d" % (engine, us, took_us))
        rep = report_json(path)
        line = rep["timeline"]
        check_eq(line["duration_us"], us, "%s: the timeline's duration" % engine)
        events = line["events"]
        check_eq(sum(events), rep["events"], "%s: the timeline's sum" % engine)
        quiet = min(sum(events[i:i + 40]) for i in range(len(events) - 40))
        check(quiet < rep["events"] / 200,
              "%s: the pause is quiet (%d of %d events): %r" % (engine, quiet, rep["events"],
                                                               events))
        # the cache model's timeline: the same pause, the totals in bins
        sim = json.loads(memtap("cachesim", "--json", path).stdout)
        line = sim["timeline"]
        check(line["bin_us"] >= 1024 and len(line["accesses"]) <= 256 and
              len(line["accesses"]) * line["bin_us"] >= us - line["bin_us"],
              "%s: bins of %d us cover the run: %r" % (engine, line["bin_us"], line))
        for key in ("accesses", "d1_misses", "ll_misses"):
            check_eq(sum(line[key]), sim[key], "%s: the timeline's %s" % (engine, key))
        bins = line["accesses"]
        k = len(bins) // 5
        quiet = min(sum(bins[i:i + k]) for i in range(len(bins) - k))
        check(quiet < sim["accesses"] / 200, "%s: the pause is quiet in the cache model's "
                                            "timeline: %r" % (engine, bins))
    html = os.path.join(TMP, "timed_phases.html")
    memtap("report", "-q", "--html", html, path)
    page = open_page(html)
    check_eq(page["errors"], [], "errors in the page")
    check_eq(page["charts"]["chart-accesses"]["x_names"], ["ms"], "the time axis' unit")
    memtap("cachesim", "--html", html, path)
    page = open_page(html)
    check_eq(page["errors"], [], "errors in the cache model's page")
    check_eq(page["charts"]["chart-timeline"]["x_names"], ["ms"], "its time axis' unit")


def csv_counts(path):
    """(pc, kind) -> records, from the trace's own CSV lines."""
    rows = [l.split(",") for l in show(path, "--raw", "--format", "csv")[1:]]
    counts = {}
    for r in rows:
        if r[2] in "LSYWG":
            key = (int(r[3], 16), r[2])
            counts[key] = counts.get(key, 0) + 1
    return counts


def test_report_equals_show():
    """Per instruction and kind, the report counts what `memtap show`
    prints; the object totals add up to the accesses (a copy twice)."""
    for name in ("report_walks", "blockops", "share_lines"):
        path = traced(name)
        rep = report_json(path)
        got = {}
        for x in rep["instructions"]:
            for k in "LSYWG":
                if x[k]:
                    got[(int(x["pc"], 16), k)] = x[k]
        check_eq(got, csv_counts(path), "%s: counts per instruction" % name)
        kinds = rep["kinds"]
        check_eq(sum(kinds.values()), rep["accesses"], "%s: kinds" % name)
        check_eq(sum(o["accesses"] for o in rep["objects"]), rep["accesses"] + kinds["Y"],
                 "%s: objects" % name)
        text = memtap("report", path).stdout
        check("%d accesses" % rep["accesses"] in text.splitlines()[0], "text header: " + text[:200])


def test_report_linked():
    """linked_walk's 1000 nodes (one block each) walked by pointer: the
    site's pattern is "block to block", under both engines."""
    for engine in ("fault", "static"):
        sites = [o for o in report_json(traced("linked_walk", engine))["objects"]
                 if o["heap"] and o["allocs"] == 1000]
        check(len(sites) == 1 and sites[0]["pattern"] == "block to block",
              "the nodes' site (%s): %r" % (engine, sites))


def test_report_fields():
    """fields.c's field map, counted by hand from its source under both
    engines: of its 32-byte records, `hot` (+0, 8 bytes) read 1000 times
    and written 100, `warm` (+8, 4) read 100, `cold` (+12, 4) written 100,
    and 16 bytes (`never`) never accessed; in text and JSON.  The fields
    are named by the source's struct record (DWARF), built -O0 and -O2;
    `hot` is the hot group, and `cold` is touched only before `warm`."""
    for engine, name in (("fault", "fields"), ("static", "fields"), ("static", "fields_O2")):
        path = traced(name, engine)
        rep = report_json(path)
        site = [o for o in rep["objects"] if o["heap"] and o["name"].startswith("malloc@main+")]
        check(len(site) == 1, "the records' site: %r" % [o["name"] for o in rep["objects"]])
        got = [(f["offset"], f["size"], f["loads"], f["stores"], f["threads"])
               for f in site[0]["fields"]]
        check_eq(got, [(0, 8, 1000, 100, 1), (8, 4, 100, 0, 1), (12, 4, 0, 100, 1)],
                 "the fields under the %s engine" % engine)
        check_eq((site[0]["block_size"], site[0]["untouched_bytes"]), (32, 16),
                 "the bytes never accessed")
        check_eq((site[0]["type"], [f["name"] for f in site[0]["fields"]],
                  site[0]["untouched_members"]),
                 ("struct record", ["hot", "warm", "cold"], "never"), "%s: the names" % name)
        # hot takes 1100 of the 1300 field accesses; cold is written while
        # the records are made, warm read after the hot loop
        hot, warm, cold = site[0]["fields"]
        check_eq([f["hot"] for f in (hot, warm, cold)], [True, False, False], "the groups")
        check(cold["last_bin"] < warm["first_bin"] and
              cold["last_bin"] <= hot["last_bin"] <= warm["first_bin"],
              "%s: when each field is touched: %r" % (name, site[0]["fields"]))
        text = memtap("report", "-q", path).stdout
        check(re.search(r"%s \(struct record\): blocks up to 32 bytes, 16 of them never accessed "
                        r"\(never\)\n.*group +when  field\n"
                        r" +\+0 +8 +1000 +100 +1 +hot +\d+-\d+%%  hot\n"
                        r" +\+8 +4 +100 +0 +1 +cold +\d+-\d+%%  warm\n"
                        r" +\+12 +4 +0 +100 +1 +cold +\d+-\d+%%  cold\n"
                        % re.escape(site[0]["name"]), text), "the text's field map:\n" + text)
    html = os.path.join(TMP, "fields.html")
    memtap("report", "-q", "--html", html, path)
    page = open_page(html)
    check_eq(page["errors"], [], "errors in the page")
    check(any(h.startswith("Fields of malloc@main+") and "(struct record)" in h and
              "32 bytes, 16 of them" in h and h.endswith("(never)")
              for h in page["headings"]), "the page's field map: %r" % page["headings"])
    # linked_walk's nodes use both their fields: no byte left untouched
    rep = report_json(traced("linked_walk"))
    nodes = [o for o in rep["objects"] if o["heap"] and o["name"].startswith("malloc@main+")]
    check(nodes and nodes[0]["fields"] and nodes[0]["untouched_bytes"] == 0,
          "linked_walk's nodes: both fields used: %r" % (nodes[:1],))
    check_eq((nodes[0]["type"], [f["name"] for f in nodes[0]["fields"]],
              nodes[0]["untouched_members"]), ("struct node", ["next", "value"], None),
             "linked_walk's nodes named")
    # C++: `return new Widget{id, 1.5}` holds the pointer in no variable:
    # the function's return type (Widget *) names the blocks
    rep = report_json(traced("cxx_alloc", "static"))
    made = [o for o in rep["objects"] if o["heap"] and o["name"].startswith("malloc@make_widget")]
    check(made and made[0]["type"] == "struct Widget" and
          [f["name"] for f in made[0]["fields"]] == ["id", "weight"],
          "make_widget's blocks: %r" % (made[:1],))


def test_report_threads():
    """share_lines: the pair two threads write (and main prints) and the
    word all read are shared; main's own word is not; the time line and
    the page show each thread's accesses."""
    rep = report_json(traced("share_lines"))
    obj = objects(rep)
    check(len(rep["threads"]) == 3, "three threads: %r" % rep["threads"])
    check_eq((obj["neighbours"]["threads"], obj["neighbours"]["writers"]), (3, 2), "neighbours")
    check(obj["together"]["threads"] >= 2, "together: %r" % obj["together"])
    check_eq(obj["only_main"]["threads"], 1, "only_main")
    text = memtap("report", os.path.join(TMP, "share_lines-fault.mtr")).stdout
    check("Objects several threads touch" in text and "neighbours" in text.split("several threads")[1],
          "the text lists the shared objects")
    # each thread's accesses over time add up to its accesses, and the
    # page draws them, a series a thread
    series = rep["timeline"]["threads"]
    check_eq([(t["tid"], sum(t["accesses"])) for t in series],
             [(t["tid"], t["accesses"]) for t in rep["threads"]], "accesses over time by thread")
    html = os.path.join(TMP, "share_lines.html")
    memtap("report", "-q", "--html", html, os.path.join(TMP, "share_lines-fault.mtr"))
    page = open_page(html)
    check_eq(page["errors"], [], "errors in the page")
    drawn = {s["name"]: sum(s["data"]) for s in page["charts"]["chart-threads"]["series"]}
    check_eq(drawn, {"thread %d" % t["tid"]: t["accesses"] for t in rep["threads"]},
             "the threads chart")


def test_report_threads_per_block():
    """heap_sharing: sharing is the truth per block, then per site: the
    block main made, that two threads write (a word each) and main reads,
    is shared (3 threads, 2 writers); the blocks the threads make at one
    site, each touched by its own thread, are not, though two threads use
    the site (site_threads); only the first site is listed as shared."""
    for engine in ("static", "fault"):
        path = os.path.join(TMP, "heap_sharing-%s.mtr" % engine)
        memtap("run", "-q", "--engine", engine, "-o", path, "--", prog("heap_sharing"))
        sites = {o["name"].split("+")[0]: o for o in report_json(path)["objects"] if o["heap"]}
        made = sites.get("malloc@main", {})
        own = sites.get("malloc@work", {})
        check_eq((made.get("threads"), made.get("writers"), made.get("shared_blocks")), (3, 2, 1),
                 "%s: main's block: %r" % (engine, made))
        check_eq((own.get("threads"), own.get("writers"), own.get("shared_blocks"),
                  own.get("site_threads")), (1, 1, 0, 2), "%s: the threads' own: %r" % (engine, own))
        text = memtap("report", path).stdout.split("Objects several threads touch", 1)[1]
        check(re.search(r"^\s+\d+\s+3\s+2\s+1  malloc@main\+", text, re.M) and
              "malloc@work" not in text, "%s: the shared site alone listed: %s" % (engine, text))


def open_page(html):
    p = subprocess.run(["node", PAGE_TEST, html], capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "the page test could not run: %s" % p.stderr[-2000:])
    return json.loads(p.stdout)


def heat_sum(chart):
    return sum(c[2] for c in chart["series"][0]["data"])


def test_report_html():
    """heat_counts in headless Chromium: no errors, no network; the
    accesses chart holds the counts per kind, the allocation chart the
    allocations, every heatmap its object's accesses, and the heap block's
    heatmap the hand-computed counts per offset (10 stores at 0, 20 loads
    at 64, 5 loads and 5 stores at 128)."""
    path = traced("heat_counts")
    html = os.path.join(TMP, "heat_counts.html")
    memtap("report", "-q", "--html", html, path)
    page = open_page(html)
    check_eq(page["errors"], [], "errors in the page")
    check(not page["incompleteShown"], "no incomplete-trace warning")
    d, charts = page["data"], page["charts"]
    check_eq(d, report_json(path), "the page's data is the report's JSON")
    by_name = {s["name"]: sum(s["data"]) for s in charts["chart-accesses"]["series"]}
    check_eq([by_name[n] for n in ("loads", "stores", "copies", "block stores", "block fetches")],
             [d["kinds"][k] for k in "LSYWG"], "accesses chart")
    alloc = {s["name"]: s["data"] for s in charts["chart-allocations"]["series"]}
    check_eq(sum(alloc["allocations"]), d["heap"]["allocs"] + d["heap"]["mappings"], "allocations")
    check_eq(max(alloc["bytes live"]), d["heap"]["peak_bytes"], "peak")
    check_eq(charts["chart-chunks"]["series"][0]["data"][::-1], [c["accesses"] for c in d["chunks"]],
             "the chunks chart, hottest on top")
    check(page["chartHeights"]["chart-chunks"] >= 22 * len(d["chunks"]),
          "a bar's height for every chunk's label: %r" % page["chartHeights"])
    check("{:,} events, {:,} accesses".format(d["events"], d["accesses"]) in page["meta"],
          "counts in the summary: %s" % page["meta"])
    check(d["heap"]["alloc_bytes"] >= 1000 and
          "({:,} bytes)".format(d["heap"]["alloc_bytes"]) in page["heapLine"] and
          "," in page["heapLine"], "counts grouped by thousands: %s" % page["heapLine"])
    # a selection is said; a heap nothing touched draws no heatmap
    sel = os.path.join(TMP, "heat_counts_sel.html")
    memtap("report", "-q", "--html", sel, "--seq", "0-10", path)
    page = open_page(sel)
    check_eq(page["errors"], [], "errors in the selection's page")
    check("counted: the accesses of events 0 to 10" in page["meta"], page["meta"])
    check("chart-heap" not in page["charts"], "no heatmap of an untouched heap")
    obj = objects(d)
    heap_accesses = sum(o["accesses"] for o in d["objects"] if o["heap"])
    check_eq(heat_sum(charts["chart-heap"]), heap_accesses, "the heap's heatmap")
    block = None
    named_static = False
    for i, m in enumerate(d["heatmaps"]):
        if m["object"] is None:
            continue
        chart = charts["chart-object-%d" % i]
        check_eq(heat_sum(chart), obj[m["object"]]["accesses"], "heatmap of " + m["object"])
        if not obj[m["object"]]["heap"]: # static data: rows by name
            check(all(len(r) == 3 and r[2] for r in m["rows"]) and
                  chart["y"][0] == [r[2] for r in m["rows"]],
                  "%s's rows named: %r" % (m["object"], chart["y"][0][:4]))
            named_static = True
        if obj[m["object"]]["heap"] and obj[m["object"]]["alloc_bytes"] == 256:
            block = (m, chart)
    check(block is not None, "the 256-byte block has a heatmap")
    check(named_static, "a static object's heatmap")
    m, chart = block
    per_offset = {}
    for col, row, n in chart["series"][0]["data"]:
        off = int(m["rows"][row][0], 16)
        per_offset[off] = per_offset.get(off, 0) + n
    check_eq(per_offset, {0: 10, 64: 20, 128: 10}, "accesses per offset of the block")


def test_report_chunks():
    """The hottest 64-byte chunks of heat_counts, as its source derives
    them (its 128-byte aligned block: 10 stores at +0, 20 loads at +64,
    5 loads and 5 stores at +128; hot_global, aligned: 7 stores), and as
    `memtap heat` counts the block's chunks in its own run."""
    rep = report_json(traced("heat_counts"))
    chunks = {c["name"]: c["accesses"] for c in rep["chunks"]}
    block = {n: a for n, a in chunks.items() if re.match(r"malloc@main\+\d+\+\d+$", n)}
    check_eq(sorted((int(n.rsplit("+", 1)[1]), a) for n, a in block.items()),
             [(0, 10), (64, 20), (128, 10)], "the block's chunks: %r" % chunks)
    check_eq([a for n, a in chunks.items() if n.startswith("hot_global")], [7],
             "hot_global's chunk (named by its first byte: hot_global[0])")
    check(all(rep["chunks"][i]["accesses"] >= rep["chunks"][i + 1]["accesses"]
              for i in range(len(rep["chunks"]) - 1)), "hottest first")
    out = os.path.join(TMP, "heat.json")
    # --top 40: what the C library does at exit (stdio's last flush, its
    # locks) is counted too, and outranks the block's colder chunks
    memtap("heat", "--json", "--top", "40", "--report", out, "-o", os.path.join(TMP, "heat.mtr"),
           "--", prog("heat_counts"))
    heat = json.load(open(out))
    heat_block = sorted(c["accesses"] for c in heat["hottest_chunks"] if "@main" in c["name"])
    check_eq(sorted(block.values()), heat_block, "memtap heat's counts of the block's chunks")
    text = memtap("report", os.path.join(TMP, "heat_counts-fault.mtr")).stdout
    check("Hottest 64-byte chunks" in text, "the text lists the chunks")
    # a chunk is named after the object most of its accesses went to, not
    # after what starts it: heat_neighbours' line starts with cold_flag
    # (1 store), and hot_counter beside it takes 2000 accesses
    rep = report_json(traced("heat_neighbours"))
    line = [c for c in rep["chunks"] if c["accesses"] >= 2000]
    check(line and line[0]["name"] == "hot_counter", "the hot line's name: %r" % rep["chunks"][:3])


def test_report_incomplete():
    """A trace cut short (its last chunk, with the end record, torn): the
    report warns in text, JSON and the page, and counts what was read."""
    path = traced("report_walks")
    data = open(path, "rb").read()
    cut = os.path.join(TMP, "cut.mtr")
    open(cut, "wb").write(data[:-8])
    p = memtap("report", cut, check_rc=False)
    check("warning" in p.stderr and "incomplete" in p.stdout, "text warns: %s" % p.stdout[:300])
    rep = report_json(cut)
    check(not rep["complete"] and rep["accesses"] > 0, "JSON says incomplete: %r" % rep["complete"])
    html = os.path.join(TMP, "cut.html")
    memtap("report", "-q", "--html", html, cut)
    page = open_page(html)
    check_eq(page["errors"], [], "errors in the page")
    check(page["incompleteShown"], "the page shows the warning")


def test_report_fork():
    """forker's child frees the block it inherited and allocates and frees
    its own: its report counts its own block only (the inherited one is
    its parent's allocation), and names accesses as show does."""
    path = os.path.join(TMP, "fork.mtr")
    p = memtap("run", "-q", "--engine", "fault", "-o", path, "--", prog("forker"))
    child = [l.split()[-1] for l in p.stderr.splitlines() if l.startswith("memtap: also wrote")]
    check_eq(len(child), 1, "one child trace: %s" % p.stderr)
    heap = report_json(child[0])["heap"]
    check_eq((heap["allocs"], heap["alloc_bytes"], heap["frees"], heap["not_freed"], heap["peak_bytes"]),
             (1, 222, 1, 0, 222), "the child's own block")


def test_report_json_utf8():
    """A program whose path has a byte that is no UTF-8 (a Latin-1 file
    name, say) beside a real non-ASCII character: report's and cachesim's
    JSON are still UTF-8 (the byte as U+FFFD, the character as it is), and
    so are the Parquet export's strings (DuckDB refused the module's row)."""
    where = os.path.join(os.fsencode(TMP), b"caf\xe9-\xc3\xbc")
    os.makedirs(where, exist_ok=True)
    binary = os.path.join(where, b"three_mallocs")
    shutil.copy(prog("three_mallocs"), binary)
    path = os.path.join(TMP, "utf8.mtr")
    subprocess.run([MEMTAP, "run", "-q", "-o", path, "--", binary], check=True,
                   capture_output=True)
    for cmd in (["report", "-q", "--json", "-"], ["cachesim", "--json"]):
        out = subprocess.run([MEMTAP] + cmd + [path], check=True, capture_output=True).stdout
        try:
            text = out.decode("utf-8")
        except UnicodeDecodeError as e:
            raise Failure("memtap %s: not UTF-8: %s" % (cmd[0], e))
        doc = json.loads(text)
        if cmd[0] == "report":
            check("/caf\ufffd-\u00fc/three_mallocs" in doc["program"],
                  "the program's path: %r" % doc["program"])
    from export_tests import duckdb_query
    out = os.path.join(TMP, "utf8_parquet")
    shutil.rmtree(out, ignore_errors=True)
    memtap("export", "-q", "--format", "parquet", "-o", out, path)
    paths = [r[0] for r in duckdb_query("select path from read_parquet('%s/modules/**/*.parquet')"
                                        % out)]
    check(any(p.endswith("/caf\ufffd-\u00fc/three_mallocs") for p in paths),
          "the module's path in Parquet: %r" % paths)


def test_report_bad_input():
    """Bad options and files: a clear message and a non-zero exit, and no
    page left behind."""
    path = traced("heat_counts")
    for args, want in ((["--top", "0"], "positive number"), (["--top", "x"], "positive number")):
        p = memtap("report", *args, path, check_rc=False)
        check(p.returncode != 0 and want in p.stderr, "%s: %s" % (args, p.stderr))
    junk = os.path.join(TMP, "junk.mtr")
    open(junk, "w").write("not a trace\n")
    p = memtap("report", junk, check_rc=False)
    check(p.returncode != 0 and "not a memtap trace" in p.stderr, p.stderr)
    p = memtap("report", "--html", "/nonexistent/dir/r.html", path, check_rc=False)
    check(p.returncode != 0 and "r.html" in p.stderr, p.stderr)


def cachesim_rows(path, *opts):
    """{object: (D1 misses, LL misses, compulsory, capacity, conflict,
    accesses, true sharing, false sharing, D1 write-backs, write-backs to
    memory)} of memtap cachesim's table."""
    out = memtap("cachesim", *opts, path).stdout
    return out, table_rows(out)


def table_rows(out):
    """cachesim_rows' rows of the report text out."""
    rows = {}
    for line in out.split("objects by D1 misses:", 1)[1].splitlines()[2:]:
        if not line.strip():  # the instructions' table follows
            break
        f = line.split()
        n = [int(x) for x in f[:10]]
        rows[f[10]] = tuple(n[:5] + [n[9]] + n[5:9])
    return rows


def test_report_cachesim():
    """The cache model's misses per object, and their causes, equal the
    hand count of cache_walk.c (its comment) under both engines: a 64 KiB
    array walked twice through a 32 KiB first level misses every line both
    times (compulsory, then capacity), the 1 MiB last level only the first
    time; a 16 KiB array only its compulsory misses; 9 lines of one 8-way
    set, ten times round, conflict misses."""
    want = {"big": (2048, 1024, 1024, 1024, 0, 2048),
            "small": (256, 256, 256, 0, 0, 512),
            "conflicting": (90, 9, 9, 0, 81, 90)}
    for engine in ("static", "fault"):
        path = os.path.join(TMP, "cw-%s.mtr" % engine)
        memtap("run", "-q", "--engine", engine, "-o", path, "--", prog("cache_walk"))
        out, rows = cachesim_rows(path, "--D1", "32K,8,64", "--LL", "1M,16,64")
        for name, counts in want.items():
            check_eq(rows.get(name, ())[:6], counts,
                     "%s under the %s engine: %s" % (name, engine, out))
        check("D1 32768 B, 8-way, 64-B lines, one per thread; LL 1048576 B, 16-way" in out,
              out)
        m = re.search(r"compulsory (\d+), capacity (\d+), conflict (\d+), coherence (\d+)",
                      out)
        check(m and sum(int(x) for x in m.groups()) ==
              int(re.search(r"D1 misses: (\d+)", out).group(1)),
              "the causes add up to the D1 misses: " + out)
        # per instruction: the loop's load of each array, on its own line
        src = open(os.path.join(os.path.dirname(__file__), "../programs/cache_walk.c")).read()
        insns = out.split("instructions by D1 misses:", 1)[1]
        for array, (d1, ll, _, _, _, n) in want.items():
            line = 1 + src[:src.index("sum += %s[" % array)].count("\n")
            check(re.search(r"^\s+%d\s+%d\s+%d\s+main\+\d+ cache_walk\.c:%d$" % (d1, ll, n, line),
                            insns, re.M), "%s's load at cache_walk.c:%d: %s" % (array, line, insns))
        # reuse distances: between two uses of a line of big, the other 1023
        # lines; of small, 255; of conflicting, the other 8
        reuse = out.split("reuse distances of these objects", 1)[1]
        for array, hist in (("big", "512-1023: 1024"), ("small", "128-255: 256"),
                            ("conflicting", "8-15: 81")):
            check(re.search(r"^  %s: %s$" % (array, hist), reuse, re.M),
                  "%s's reuse distances: %s" % (array, reuse))
        # --json holds the same numbers, every object
        doc = json.loads(memtap("cachesim", "--json", "--D1", "32K,8,64", "--LL", "1M,16,64",
                                path).stdout)
        objs = {o["name"]: o for o in doc["objects"]}
        check_eq(len(objs), len(doc["objects"]), "one entry per object")
        for name, (d1, ll, comp, cap, conf, n) in want.items():
            o = objs[name]
            check_eq((o["d1_misses"], o["ll_misses"], o["compulsory"], o["capacity"],
                      o["conflict"], o["accesses"]), (d1, ll, comp, cap, conf, n),
                     "%s in JSON" % name)
        check_eq(objs["big"]["reuse"], [[512, 1023, 1024]], "big's reuse in JSON")
        check_eq(sum(o["d1_misses"] for o in doc["objects"]), doc["d1_misses"],
                 "the objects' D1 misses add up")
        # a last level as small as the first: big's second pass misses there too
        _, rows = cachesim_rows(path, "--D1", "32K,8,64", "--LL", "32K,8,64")
        check_eq(rows["big"][:2], (2048, 2048), "LL as small as D1")


def without_order(report):
    """A cache model's report but for the line saying how its threads
    interleave."""
    return [l for l in report.splitlines() if not l.startswith("threads interleave")]


def online_report(*args, env=None):
    """memtap cachesim ARGS (a program after --): (the report it printed on
    stderr, the run)."""
    p = memtap("cachesim", *args, env=env)
    check("cache model:" in p.stderr, "a report on stderr: %s" % p.stderr[-2000:])
    return p.stderr[p.stderr.index("cache model:"):], p


def bench_text():
    """50 KB of text to compress: the start of an old README the benchmarks
    keep as it was (bench/input.txt)."""
    with open(os.path.join(os.path.dirname(__file__), "../../bench/input.txt"), "rb") as f:
        return f.read(50000)


def test_report_cachesim_online():
    """memtap cachesim -- PROGRAM: the model beside the program, following
    its trace as it is written.  cache_walk's hand count under both
    engines, its output its own (stdout) and the report on stderr; the
    report equal, byte for byte, to the one of the same trace read
    afterwards (-o keeps it: one thread, so the same order), for real
    programs too: gzip, and python3 whose zlib and _json modules come by
    dlopen while the model runs (their names come with them); a process
    the program starts has its report after the program's; without -o
    the traces are temporary files that are removed."""
    geometry = ("--D1", "32K,8,64", "--LL", "1M,16,64")
    want = {"big": (2048, 1024, 1024, 1024, 0, 2048),
            "small": (256, 256, 256, 0, 0, 512),
            "conflicting": (90, 9, 9, 0, 81, 90)}
    native = subprocess.run([prog("cache_walk")], capture_output=True, text=True).stdout
    for engine in ("static", "fault"):
        kept = os.path.join(TMP, "online-cw-%s.mtr" % engine)
        report, p = online_report(*geometry, "--engine", engine, "-o", kept, "--",
                                  prog("cache_walk"))
        check_eq(p.stdout, native, "cache_walk's own output")
        rows = table_rows(report)
        for name, counts in want.items():
            check_eq(rows.get(name, ())[:6], counts,
                     "%s under the %s engine, online: %s" % (name, engine, report))
        check_eq(without_order(report), without_order(memtap("cachesim", *geometry,
                                                             kept).stdout),
                 "online and afterwards, the %s engine" % engine)
    # a program that runs another: its report follows, named by process
    report, _ = online_report(*geometry, "--", "/bin/sh", "-c", prog("cache_walk") + "; true")
    m = re.search(r"^process (\d+) \(cache_walk\), of sh's run:$", report, re.M)
    check(m, "the other process's section: " + report)
    rows = table_rows(report[m.end():])
    check_eq({k: rows.get(k, ())[:6] for k in want}, want, "cache_walk's, under sh")
    temp = os.path.join(TMP, "online-tmpdir")
    os.makedirs(temp, exist_ok=True)
    report, p = online_report(*geometry, "--top", "2", "--", prog("cache_walk"),
                              env={"TMPDIR": temp})
    check_eq(os.listdir(temp), [], "the temporary trace is removed")
    check(re.search(r"^memtap: [\d,]+ events, ", p.stderr, re.M) and
          "memtap: trace " not in p.stderr, "the summary names no file: %s" % p.stderr)
    text = os.path.join(TMP, "online-text.txt")
    with open(text, "wb") as f:
        f.write(bench_text())
    py = "import zlib, json; zlib.compress(json.dumps(list(range(3000))).encode())"
    for name, argv in (("gzip", ["gzip", "-6", "-f", "-k", text]),
                       ("python3", ["/usr/bin/python3", "-c", py])):
        kept = os.path.join(TMP, "online-%s.mtr" % name)
        report, _ = online_report(*geometry, "--top", "40", "-o", kept, "--", *argv)
        # (a trace of two threads, python3's, say how they interleave:
        # online as their chunks were written, which this trace's sequence
        # numbers agree with; only the line that says how differs)
        check_eq(without_order(report),
                 without_order(memtap("cachesim", *geometry, "--top", "40", kept).stdout),
                 "%s online and afterwards" % name)
        if name == "python3":
            check("@deflateInit2_+" in report, "zlib's allocation sites are named "
                                                "(its module came by dlopen): " + report)
        else:  # (memtap's writer, compressing in a rewritten libzstd, was
               # once a thread of the trace in some runs)
            check("; threads: 1\n" in report, "gzip is one thread: " + report)
    # the program waits for the model when its trace gets ahead: at most
    # 1 MiB here (gzip's trace of 16 times that text is about 36 MiB,
    # written four times as fast as the model reads it, and long enough
    # for the model to begin while it is written: with four times the
    # text, about 0.15 s of gzip, a loaded machine once started the
    # model after the program had written it all); the same report
    # (and when a machine loaded by the other tests starts the model only
    # after gzip has written everything, again with four times the text)
    with open(text, "rb") as f:
        data = f.read()
    for copies in (16, 64):
        text4 = os.path.join(TMP, "online-text%d.txt" % copies)
        with open(text4, "wb") as f:
            f.write(data * copies)
        paced = os.path.join(TMP, "online-gzip-paced.mtr")
        report, _ = online_report(*geometry, "--top", "40", "-o", paced, "--", "gzip", "-6",
                                  "-f", "-k", text4, env={"MEMTAP_FOLLOW_AHEAD": "1"})
        check_eq(without_order(report),
                 without_order(memtap("cachesim", *geometry, "--top", "40", paced).stdout),
                 "paced, online and afterwards (%d copies)" % copies)
        waits = [re.search(r"^follow_waits: (\d+)$", memtap("info", t).stdout, re.M)
                 for t in (os.path.join(TMP, "online-gzip.mtr"), paced)]
        if waits[1]:
            break
    check(not waits[0] and waits[1] and int(waits[1].group(1)) > 0,
          "the paced run waited for the model, the other not: %s" % waits)


def test_report_cachesim_online_stopped():
    """A signal that ends memtap after the program has ended, while the
    model still reads its trace (MEMTAP_FOLLOW_AHEAD=0: the program never
    waits), stops the model: the report of what it read, a warning that
    says so, the temporary trace removed, and memtap ends by the signal."""
    text = os.path.join(TMP, "stopped-input.txt")
    data = bench_text()
    with open(text, "wb") as f:  # 80 M accesses: seconds of the model's
        f.write(data * 32)
    temp = os.path.join(TMP, "stopped-tmpdir")
    os.makedirs(temp, exist_ok=True)
    env = dict(os.environ, TMPDIR=temp, MEMTAP_FOLLOW_AHEAD="0")
    p = subprocess.Popen([MEMTAP, "cachesim", "--", "gzip", "-6", "-c", text],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    err = []
    for line in p.stderr:  # the summary: the program has ended
        err.append(line)
        if re.match(r"memtap: [\d,]+ events, ", line):
            p.send_signal(signal.SIGTERM)
            break
    err += p.stderr.readlines()
    p.wait()
    err = "".join(err)
    check_eq(p.returncode, -signal.SIGTERM, "memtap ends by the signal: " + err)
    check("cache model:" in err and "the model was stopped by signal 15" in err, err)
    m = re.search(r"^line accesses: (\d+)", err, re.M)
    events = int(re.search(r"memtap: ([\d,]+) events", err).group(1).replace(",", ""))
    check(m and 0 <= int(m.group(1)) < events, "the model read part of the run: " + err)
    check_eq(os.listdir(temp), [], "the temporary trace is removed")


def readme_excerpt(command):
    """The lines the README or the user guide shows after `    $ command`,
    up to the prose after them (blank lines inside kept, those at the end
    dropped)."""
    docs = "".join(open(os.path.join(os.path.dirname(__file__), "../..", name)).read()
                   for name in ("README.md", "doc/guide.md"))
    lines = []
    for line in docs.split("    $ " + command + "\n", 1)[1].splitlines():
        if line and not line.startswith("    "):
            break
        lines.append(line[4:])
    while lines and not lines[-1]:
        lines.pop()
    return lines


# the C library's data and code in the excerpts: its build is Debian's
# (a point release may move them), not memtap's
LIBC_LINES = ("libc.so.6", "genops.c", "__exit_funcs")


def in_order(excerpt, out, varying=(), ordered=True):
    """The lines of excerpt (after a `...`) that are not lines of out in
    the same order (or in any, not ordered); a line naming one of
    `varying` (counts that are the scheduler's) matches with its numbers
    left out; one about the C library (LIBC_LINES) is not asked for."""
    def shape(l):
        return re.sub(r"\s*\d+", " N", l) if any(v in l for v in varying) else l
    if "..." in excerpt:
        excerpt = excerpt[excerpt.index("...") + 1:]
    at, missing = 0, []
    got = [shape(l) for l in out]
    for l in excerpt:
        if any(c in l for c in LIBC_LINES):
            continue
        if shape(l) in got[at:]:
            at += got[at:].index(shape(l)) + 1 if ordered else 0
        else:
            missing.append(l)
    return missing


def test_report_readme_excerpts():
    """The README's and the guide's excerpts of memtap cachesim are what their commands
    print: cache_walk's whole (the default engine; its totals but for
    their numbers), cache_fields' table (the heap site's row but for its
    numbers), cache_sharing's rows of the two words (the flag's row and
    the totals hold how often the threads spin: those match but for
    their numbers); the rows of the C library's data and code are not
    asked for."""
    geometry = ["--D1", "32K,8,64", "--LL", "1M,16,64"]
    cw = os.path.join(TMP, "cw.mtr")
    memtap("run", "-q", "-o", cw, "--", prog("cache_walk"))
    out = memtap("cachesim", *geometry, "--top", "4", cw).stdout.splitlines()
    # (its totals count the C library's start-up too, which makes an
    # access more or less with the environment, 2970 in a shell, 2969
    # under ctest: they match but for their numbers)
    excerpt = readme_excerpt("memtap cachesim --D1 32K,8,64 --LL 1M,16,64 --top 4 cw.mtr")
    totals = ("line accesses:", "D1 misses:", "by cause:", "write-backs:")
    check_eq(in_order(excerpt, out, totals), [], "cache_walk's excerpt: %s" % "\n".join(out))
    cf = os.path.join(TMP, "cf.mtr")
    memtap("run", "-q", "-o", cf, "--", prog("cache_fields"))
    out = memtap("cachesim", "--fields", *geometry, "--top", "3", cf).stdout.splitlines()
    excerpt = readme_excerpt("memtap cachesim --fields --D1 32K,8,64 --LL 1M,16,64 --top 3 cf.mtr")
    # (how many of the nodes miss is where the allocator puts them)
    check_eq(in_order(excerpt, out, ("malloc@main",)), [],
             "cache_fields' excerpt: %s" % "\n".join(out))
    shr = os.path.join(TMP, "shr.mtr")
    memtap("run", "-q", "--engine", "fault", "-o", shr, "--", prog("cache_sharing"))
    out = memtap("cachesim", *geometry, "--top", "3", shr).stdout.splitlines()
    excerpt = readme_excerpt("memtap cachesim --D1 32K,8,64 --LL 1M,16,64 --top 3 shr.mtr")
    # (the rows in any order: how often the threads spin on `turn` sorts it)
    check_eq(in_order(excerpt, out, ("by cause", "turn"), ordered=False), [],
             "cache_sharing's excerpt: %s" % "\n".join(out))


def test_report_cachesim_writeback():
    """Write-back: cache_writeback.c's hand count (its comment) under both
    engines: each of its 4096 line writes leaves the first level dirty
    once; with a 64 KiB last level each goes on to memory, with a 1 MiB
    one none does; the array it only reads is never written back.  The
    totals count the same write-backs as the objects."""
    for engine in ("static", "fault"):
        path = os.path.join(TMP, "wb-%s.mtr" % engine)
        memtap("run", "-q", "--engine", engine, "-o", path, "--", prog("cache_writeback"))
        for ll, to_memory in (("64K,16,64", 4096), ("1M,16,64", 0)):
            out, rows = cachesim_rows(path, "--D1", "32K,8,64", "--LL", ll)
            check_eq(rows.get("written", ())[8:], (4096, to_memory),
                     "written's write-backs, LL %s, %s engine: %s" % (ll, engine, out))
            check_eq(rows.get("clean", ())[8:], (0, 0), "clean is never written back")
            check("write-back" in out.splitlines()[0], out)
            doc = json.loads(memtap("cachesim", "--json", "--D1", "32K,8,64", "--LL", ll,
                                    path).stdout)
            for key in ("d1_writebacks", "memory_writebacks"):
                check_eq(sum(o[key] for o in doc["objects"]), doc[key],
                         "the objects' %s add up" % key)
            m = re.search(r"^write-backs: (\d+) dirty lines out of D1, (\d+) to memory$",
                          out, re.M)
            check(m and (int(m.group(1)), int(m.group(2))) ==
                  (doc["d1_writebacks"], doc["memory_writebacks"]), out)


def test_report_cachesim_fields():
    """Fields: cache_fields.c's hand count (its comment) under both engines,
    in the text table and in JSON: recs[].key misses at each of its 2048
    accesses (1024 in LL), recs[].hits never; the heap nodes' misses are
    all at member `hits` (DWARF's struct node, from the site's pointer),
    none at `next`, 3072 accesses each; without --fields, none."""
    for engine in ("static", "fault"):
        path = os.path.join(TMP, "cf-%s.mtr" % engine)
        memtap("run", "-q", "--engine", engine, "-o", path, "--", prog("cache_fields"))
        geometry = ["--D1", "32K,8,64", "--LL", "1M,16,64"]
        doc = json.loads(memtap("cachesim", "--json", "--fields", *geometry, path).stdout)
        fields = {f["name"]: (f["accesses"], f["d1_misses"], f["ll_misses"])
                  for f in doc["fields"]}
        check_eq(len(fields), len(doc["fields"]), "one row per name")
        check_eq((fields.get("recs[].key"), fields.get("recs[].hits")),
                 ((2048, 2048, 1024), (2048, 0, 0)), "recs' fields (%s)" % engine)
        site = [o for o in doc["objects"] if re.match(r"malloc@main\+\d+$", o["name"])]
        check(len(site) == 1, "one site of nodes: %r" % [o["name"] for o in doc["objects"]])
        name = site[0]["name"]
        check_eq((fields.get(name + " hits"), fields.get(name + " next")),
                 ((3072, site[0]["d1_misses"], site[0]["ll_misses"]), (3072, 0, 0)),
                 "the nodes' misses, all at hits (%s)" % engine)
        out = memtap("cachesim", "--fields", *geometry, "--top", "3", path).stdout
        table = out.split("fields by D1 misses", 1)[1].split("\n\n", 1)[0]
        check(re.search(r"^\s+2048\s+1024\s+2048  recs\[\]\.key$", table, re.M), table)
        check("fields by" not in memtap("cachesim", *geometry, path).stdout, "fields asked for")


def test_report_cachesim_misses():
    """--misses: every first-level miss as a CSV line, as many as the
    model counts; cache_walk's by object, level and cause are its hand
    count (compulsory misses go on to the last level, capacity and
    conflict misses stop at it); cache_sharing's coherence misses name
    their kind of sharing."""
    import csv
    for prog_name, engine, want in (
            ("cache_walk", "static", {("big", "LL", "compulsory"): 1024,
                                      ("big", "D1", "capacity"): 1024,
                                      ("small", "LL", "compulsory"): 256,
                                      ("conflicting", "LL", "compulsory"): 9,
                                      ("conflicting", "D1", "conflict"): 81}),
            ("cache_sharing", "fault", {("neighbours", "D1", "false sharing"): 198,
                                        ("both", "D1", "true sharing"): 198})):
        path = os.path.join(TMP, "misses-%s.mtr" % prog_name)
        memtap("run", "-q", "--engine", engine, "-o", path, "--", prog(prog_name))
        out = os.path.join(TMP, "misses-%s.csv" % prog_name)
        text = memtap("cachesim", "--D1", "32K,8,64", "--LL", "1M,16,64", "--misses", out,
                      path).stdout
        with open(out, newline="") as f:
            rows = list(csv.DictReader(f))
        check_eq(len(rows), int(re.search(r"D1 misses: (\d+)", text).group(1)),
                 "%s: a line per D1 miss" % prog_name)
        got = {}
        for r in rows:
            key = (r["object"], r["level"], r["cause"])
            got[key] = got.get(key, 0) + 1
        check_eq({k: got.get(k, 0) for k in want}, want, "%s: misses by object, level, cause"
                 % prog_name)


def test_report_cachesim_cachegrind():
    """Against Valgrind's Cachegrind with the same geometry: the first- and
    last-level read misses of each source line of cache_walk.c that reads
    one array (cg_annotate's annotated source) equal the misses memtap's
    model counts on that array.  Lines, not main as a whole: main's locals
    live on the stack, whose place in a line moves with the environment's
    size, so the for-loops' own stack accesses miss once more in some runs
    (a local in a line of its own, evicted by the 64 KiB walk)."""
    geometry = ("32768,8,64", "1048576,16,64")
    out = os.path.join(TMP, "cg.out")
    subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=yes",
                    "--D1=" + geometry[0], "--LL=" + geometry[1],
                    "--cachegrind-out-file=" + out, prog("cache_walk")],
                   capture_output=True, check=True)
    ann = subprocess.run(["cg_annotate", "--show=D1mr,DLmr", out], capture_output=True,
                         text=True, check=True).stdout
    count = r"([\d,]+)(?: \([^)]*\))?\s+"
    theirs = {m.group(3): tuple(int(x.replace(",", "")) for x in m.group(1, 2))
              for m in re.finditer(r"^\s*" + count + count + r"sum \+= (\w+)\[", ann, re.M)}
    check(len(theirs) == 3, "cg_annotate annotates the three reading lines: " + ann[-1500:])
    path = os.path.join(TMP, "cw.mtr")
    memtap("run", "-q", "-o", path, "--", prog("cache_walk"))
    _, rows = cachesim_rows(path, "--D1", geometry[0], "--LL", geometry[1])
    for obj in ("big", "small", "conflicting"):
        check_eq(rows[obj][:2], theirs[obj],
                 "memtap's D1 and LL misses of %s against Cachegrind's line" % obj)


def test_report_cachesim_sharing():
    """Threads: a first level each, kept coherent.  cache_sharing.c's hand
    count (its comment) under the fault engine, whose sequence numbers
    order every access: of `neighbours` 3 compulsory and 198 false-
    sharing misses, of `both` 3 and 198 true-sharing ones, none of
    either a capacity or conflict miss; the turn flag's line moves between
    the threads too (coherence misses, counted but not by hand: how often
    a thread spins is the scheduler's).  Under the static engine the report
    says that its order is coarser."""
    path = os.path.join(TMP, "sharing-fault.mtr")
    memtap("run", "-q", "--engine", "fault", "-o", path, "--", prog("cache_sharing"))
    out, rows = cachesim_rows(path, "--D1", "32K,8,64", "--LL", "1M,16,64")
    for name, sharing in (("neighbours", (0, 198)), ("both", (198, 0))):
        r = rows.get(name, (0,) * 10)
        check_eq((r[0], r[2], r[3], r[4]) + r[6:8], (201, 3, 0, 0) + sharing,
                 "%s: D1 misses, compulsory, capacity, conflict, true and false "
                 "sharing: %s" % (name, out))
    # each of the 200 turns makes the other thread's next read miss: a
    # coherence miss, or a compulsory one when it is that thread's first
    # touch of the line (before or after the other's first write: the
    # scheduler's choice, as are the spins); never capacity nor conflict
    turn = rows.get("turn", (0,) * 10)
    check(turn[2] + turn[6] >= 199 and turn[3] == turn[4] == 0 and
          turn[0] == turn[2] + turn[6] + turn[7],
          "the flag's line moves with each turn: %s" % (turn,))
    check(re.search(r"threads: 3$", out, re.M), out)
    total = re.search(r"coherence (\d+) \(true sharing (\d+), false sharing (\d+)\)", out)
    check(total and int(total.group(1)) == int(total.group(2)) + int(total.group(3)) and
          int(total.group(3)) >= 198, out)
    doc = json.loads(memtap("cachesim", "--json", "--D1", "32K,8,64", "--LL", "1M,16,64",
                            path).stdout)
    obj = {o["name"]: o for o in doc["objects"]}
    check_eq((obj["both"]["true_sharing"], obj["neighbours"]["false_sharing"], doc["threads"]),
             (198, 198, 3), "the same in JSON")
    static = os.path.join(TMP, "sharing-static.mtr")
    memtap("run", "-q", "-o", static, "--", prog("cache_sharing"))
    out = memtap("cachesim", static).stdout
    check("for sharing misses, trace with --engine fault" in out, out)


def test_report_cachesim_html():
    """memtap cachesim --html: cache_walk's page in headless Chromium, no
    errors and no network; each object's bar is its misses by cause as the
    JSON counts them, labelled with its own name, and its miss ratio per
    level; the reuse curves hold the objects' reuse histograms."""
    path = traced("cache_walk")
    geometry = ["--D1", "32K,8,64", "--LL", "1M,16,64"]
    doc = json.loads(memtap("cachesim", "--json", *geometry, path).stdout)
    html = os.path.join(TMP, "cache_walk.html")
    memtap("cachesim", "--html", html, *geometry, path)
    page = open_page(html)
    check_eq(page["errors"], [], "errors in the page")
    check_eq(page["data"], doc, "the page's data is cachesim's JSON")
    misses = page["charts"]["chart-misses"]
    names = misses["y"][0][::-1]
    top = [o for o in doc["objects"] if o["d1_misses"]][:20]
    check_eq(names, [o["name"] for o in top], "a bar per object, the most on top")
    for k, cause in enumerate(("compulsory", "capacity", "conflict", "true_sharing",
                               "false_sharing")):
        check_eq(misses["series"][k]["data"][::-1], [o[cause] for o in top], cause)
    ratios = page["charts"]["chart-ratios"]
    check_eq(ratios["y"][0][::-1], [o["name"] for o in top], "a ratio bar per object")
    for k, key in enumerate(("d1_misses", "ll_misses")):
        check_eq(ratios["series"][k]["data"][::-1],
                 [round(1000 * o[key] / o["accesses"], 1) for o in top],
                 "%s per 1000 accesses" % key)
    by_name = {s["name"]: sum(s["data"]) for s in page["charts"]["chart-reuse"]["series"]}
    check_eq(by_name["big"], sum(r[2] for r in next(o for o in top if o["name"] == "big")["reuse"]),
             "big's reuse curve")


def test_report_cachesim_bad_input():
    """Geometries that are not caches, and a file that is not a trace, get
    a clear message and a non-zero exit; a trace cut short is said to be
    (it was read without a word)."""
    path, _ = trace("three_mallocs")
    for opt, value in (("--D1", "32K,8"), ("--D1", "32K,8,48"), ("--LL", "1000,16,64"),
                       ("--D1", "x,8,64")):
        p = memtap("cachesim", opt, value, path, check_rc=False)
        check(p.returncode == 2 and "memtap cachesim: " + opt in p.stderr,
              "%s %s: %d %s" % (opt, value, p.returncode, p.stderr))
    p = memtap("cachesim", "--D1", "32K,8,64", "--LL", "1M,16,128", path, check_rc=False)
    check(p.returncode != 0 and "lines differ" in p.stderr, p.stderr)
    # a trace cut short: what was read is simulated, and the cut said
    cut = os.path.join(TMP, "cachesim-cut.mtr")
    with open(path, "rb") as f:
        data = f.read()
    with open(cut, "wb") as f:
        f.write(data[:-8])
    p = memtap("cachesim", "--D1", "32K,8,64", "--LL", "1M,16,64", cut, check_rc=False)
    check("memtap: warning: " in p.stderr and "no end record" in p.stderr,
          "the cut trace is said: %s" % p.stderr)
    p = memtap("cachesim", "--misses", "/nonexistent/dir/misses.csv", path, check_rc=False)
    check(p.returncode != 0 and p.stderr.startswith("memtap: /nonexistent/dir/misses.csv"),
          "a miss stream that cannot be written: %s" % p.stderr)
    bogus = os.path.join(TMP, "not-a-trace")
    with open(bogus, "w") as f:
        f.write("hello\n")
    p = memtap("cachesim", bogus, check_rc=False)
    check(p.returncode != 0 and p.stderr.startswith("memtap: "), p.stderr)
    # with a program: its options only there, a program that is not one,
    # a bad engine, a selection by object; a program that crashes still
    # gets the report of what it did, and memtap ends as it did
    for args, rc, says in ((["-o", os.path.join(TMP, "x.mtr"), path], 2, "-- PROGRAM"),
                           (["--", "/nonexistent/program"], 127, "no such program"),
                           (["--engine", "bogus", "--", "true"], 2, "--engine"),
                           (["--object", "big", "--", "true"], 2, "--object"),
                           (["--html", os.path.join(TMP, "x.html"), "--report",
                             os.path.join(TMP, "x.txt"), "--", "true"], 2, "--report")):
        p = memtap("cachesim", *args, check_rc=False)
        check(p.returncode == rc and says in p.stderr,
              "%s: %d %s" % (args, p.returncode, p.stderr))
    p = memtap("cachesim", "--", prog("crasher"), check_rc=False)
    check(p.returncode == -11 and "cache model:" in p.stderr and
          "killed by signal 11" in p.stderr, "a crash: %d %s" % (p.returncode, p.stderr))
    said = [l for l in p.stderr.splitlines() if l.startswith("memtap: ")]
    check("the process ended by signal 11" in p.stderr and len(said) == len(set(said)),
          "what the trace lacks is said, once: %s" % p.stderr)


if __name__ == "__main__":
    if not shutil.which("node"):
        print("node is missing: run scripts/deps.sh")
        sys.exit(1)
    sys.exit(run_named(globals(), sys.argv[1]))
