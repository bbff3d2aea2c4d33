#!/usr/bin/env python3
"""memtap run --engine static|auto: rewritten copies of the program and of
its libraries from memtap's cache, loaded through the audit module.

Usage: engine_tests.py TEST_NAME   (MEMTAP_BUILD names the build tree)
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import threading
import time

from memtap_tests import LIB, MEMTAP, TMP, check, check_eq, memtap, prog, run_bounded, run_named, show

CACHE = os.path.join(TMP, "cache")


def run(*args, engine="static", out="t.mtr", env=None, expect_rc=0, opts=()):
    """memtap run with a cache of the test's own."""
    e = {"MEMTAP_CACHE_DIR": CACHE}
    e.update(env or {})
    path = os.path.join(TMP, out)
    p = memtap("run", "--engine", engine, *opts, "-o", path, "--", *args, env=e, check_rc=False)
    if expect_rc is not None:
        check_eq(p.returncode, expect_rc,
                 "memtap run --engine %s %s: %s" % (engine, args[0], p.stderr))
    return path, p


def info_of(trace):
    return dict(l.split(": ", 1) for l in memtap("info", trace).stdout.splitlines() if ": " in l)


def rewrote(stderr):
    """The files a run rewrote into the cache, by path."""
    return re.findall(r"^memtap: (?:rewrote|the cached copy was damaged, changed since it was verified, or not this file's; rewrote) (\S+) for the "
                      r"static engine", stderr, re.M)


def libraries(binary):
    """The names of the shared libraries binary loads natively (ldd), the
    loader and the vDSO left out."""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    names = [l.split()[0] for l in out.splitlines() if "=>" in l]
    return [os.path.basename(n) for n in names if not n.startswith("linux-vdso")]


def test_engine_static_runs_programs():
    """Programs run from their rewritten copies behave as they do natively
    (output, exit status); the run names what the static engine traced,
    the program and libc included, and the trace is whole."""
    for name in ("three_mallocs", "blockops", "switcher_O2", "heat_counts", "threads"):
        native = subprocess.run([prog(name)], capture_output=True)
        trace, p = run(prog(name), expect_rc=native.returncode)
        check_eq(p.stdout.encode(), native.stdout, "%s: its output" % name)
        engines = re.search(r"^memtap: static engine: (.*)$", p.stderr, re.M)
        check(engines and name in engines.group(1).split(", ") and
              "libc.so.6" in engines.group(1).split(", "),
              "%s: the program and libc rewritten: %s" % (name, p.stderr))
        check("warning" not in p.stderr, "%s: no warning: %s" % (name, p.stderr))
        # memtap adds no library of its own to what the program loads (no
        # libgcc_s for a C program, whose rewritten code would log accesses
        # the program never makes)
        check_eq(sorted(engines.group(1).split(", ")), sorted([name] + libraries(prog(name))),
                 "%s: the program and the libraries it loads natively" % name)
        info = info_of(trace)
        check_eq((info["dropped"], info["corrupt_chunks"]), ("0", "0"), "%s: dropped, corrupt" % name)
        check(int(info["rewritten_modules"]) >= 2, "%s: rewritten modules hooked" % name)


def test_engine_static_fork_accesses():
    """Known accesses, fork included: parent and child each store and load
    the 1000 ints of their own heap block, all of them in their traces."""
    trace, p = run(prog("fork_work"))
    check_eq(p.stdout.strip(), "499500", "the program's result")
    children = [l.split("also wrote ")[1] for l in p.stderr.splitlines() if "also wrote" in l]
    check_eq(len(children), 1, "the child's trace")
    for path, who in ((trace, "parent"), (children[0], "child")):
        block = re.compile(r"^([LS])\$\d+:<malloc\d+@block_%s\+\d+>\+\d+, \[heap\], "
                           r"fill_and_sum\+\d+$" % who)
        kinds = [m.group(1) for m in map(block.match, show(path)) if m]
        check_eq((kinds.count("S"), kinds.count("L")), (1000, 1000),
                 "%s: stores and loads of its block" % who)


def test_engine_only():
    """--only chooses the memory whose accesses are kept: the parent of
    fork_work stores and loads its 1000-int block (heap), keeps its loop
    counters on the stack (-O0), and libc touches its own data (static)."""
    regions = {}
    for only in ("heap", "static", "stack", "heap,static,stack"):
        trace, p = run(prog("fork_work"), out="only.mtr", opts=("--only", only))
        lines = [l for l in show(trace) if re.match(r"^[LS]\$", l)]
        regions[only] = {r for l in lines for r in re.findall(r", \[([^]]+)\], ", l)}
        block = [l for l in lines if "@block_parent" in l and "fill_and_sum" in l]
        check_eq(len(block), 2000 if "heap" in only else 0, "--only %s: the block's accesses" % only)
    check_eq(regions["heap"], {"heap"}, "--only heap: heap only")
    check("heap" not in regions["static"] and "stack" not in regions["static"] and
          regions["static"], "--only static: modules' data only: %s" % regions["static"])
    check("stack" in regions["stack"] and "heap" not in regions["stack"],
          "--only stack: the stack, no heap: %s" % regions["stack"])
    check(regions["heap,static,stack"] >= regions["heap"] | regions["stack"],
          "all three: everything")
    _, p = run(prog("fork_work"), engine="fault", opts=("--only", "stack"), expect_rc=1)
    check("the fault engine records heap and static data" in p.stderr,
          "the fault engine has no stack: %s" % p.stderr)


def marked_lines():
    """regions.c's marked source lines: {"stack": 22, ...}."""
    src = os.path.join(os.path.dirname(__file__), "../programs/regions.c")
    marks = {}
    for n, l in enumerate(open(src), 1):
        m = re.search(r"/\* mark: (\S+) \*/", l)
        if m:
            marks[m.group(1)] = n
    return marks


def per_mark(trace):
    """Records per marked line of regions.c, from the report's counts per
    instruction."""
    rep = json.loads(memtap("report", "-q", "--json", "-", trace).stdout)
    by_line = {}
    for x in rep["instructions"]:
        by_line[x["line"]] = by_line.get(x["line"], 0) + x["accesses"]
    return {k: by_line.get("regions.c:%d" % n, 0) for k, n in marked_lines().items()}


def test_engine_bypass():
    """regions.c makes 100 stores to the stack, 50 loads of read-only data,
    30 stores to static data and 20 to the heap; each bypass rule leaves
    out exactly its share: by not instrumenting the operands (analyze
    counts them per rule) where the runtime filter would drop them
    anyway, so the default trace equals the fault engine's."""
    all_ = {"stack": 100, "read-only": 50, "static": 30, "heap": 20}
    cases = (
        (("--only", "heap,static,stack"), all_),
        ((), dict(all_, stack=0, **{"read-only": 0})),
        (("--only", "heap"), dict(all_, stack=0, static=0, **{"read-only": 0})),
        (("--only", "heap,static,stack", "--ignore-read-only"), dict(all_, **{"read-only": 0})),
        (("--only", "heap,static,stack", "--tested", "regions"), dict(all_, **{"read-only": 0})),
    )
    notes = {}
    for opts, want in cases:
        trace, p = run(prog("regions"), out="bypass.mtr", opts=opts)
        check_eq(per_mark(trace), want, "records per marked line with %s" % (opts,))
        m = re.search(r"note: .*: the bypass rules left (\d+) operands of the rewritten "
                      r"code uninstrumented \(([^)]*)\)", p.stderr)
        notes[opts] = dict((k, int(v)) for k, v in re.findall(r"([a-z -]+?) (\d+)(?:, |$)",
                                                               m.group(2))) if m else {}
    # the run says what the rules left out of the copies: with the stack
    # kept, nothing of it; by default at least regions' own stack operands
    own = json.loads(memtap("analyze", "--json", "--nonselective", "--only", "heap,static",
                            prog("regions")).stdout)["total"]["bypass"]
    check(notes[()].get("stack", 0) >= own["stack"] > 0 and
          notes[()].get("read-only", 0) >= own["read_only"] > 0,
          "the run's note: %r (regions alone: %r)" % (notes[()], own))
    check("stack" not in notes[("--only", "heap,static,stack")],
          "--only heap,static,stack: %r" % notes[("--only", "heap,static,stack")])
    check(notes[("--only", "heap,static,stack", "--tested", "regions")].get("tested loads", 0) >= 1,
          "--tested: %r" % notes[("--only", "heap,static,stack", "--tested", "regions")])
    fault, _ = run(prog("regions"), out="bypass_fault.mtr", engine="fault")
    check_eq(per_mark(fault), dict(all_, stack=0, **{"read-only": 0}),
             "the fault engine: heap and static data")
    # analyze: the operands each rule leaves out, by rule
    def bypass(*opts):
        out = json.loads(memtap("analyze", "--json", "--nonselective", *opts,
                                prog("regions")).stdout)
        return out["total"]["bypass"], out["total"]["selected"]
    none, selected = bypass()
    check_eq(none, {"stack": 0, "static": 0, "read_only": 0, "tested_loads": 0, "ignored": 0},
             "no rule")
    by, fewer = bypass("--only", "heap,static")
    check(by["stack"] >= 2 and by["read_only"] >= 1 and by["static"] == 0 and
          fewer == selected - sum(by.values()), "--only heap,static: %r" % by)
    by, _ = bypass("--only", "heap")
    check(by["static"] >= 1, "--only heap leaves out static data: %r" % by)
    by, _ = bypass("--tested")
    check(by["tested_loads"] >= 1 and by["stack"] == 0, "--tested: loads: %r" % by)
    text = memtap("analyze", "--only", "heap,static", prog("regions")).stdout
    check(re.search(r"^bypassed +\d+ \(stack \d+, read_only \d+\)$", text, re.M),
          "analyze says what it left out: %s" % text)
    _, p = run(prog("regions"), engine="fault", opts=("--tested", "regions"), expect_rc=1)
    check("not with --engine fault" in p.stderr, p.stderr)


def test_engine_ignore():
    """--ignore SYMBOL and --ignore A-B: the accesses inside are not
    recorded, by either engine, and the run says how many; analyze and
    instrument leave out the operands they can tell statically."""
    want = {"stack": 0, "read-only": 0, "static": 0, "heap": 20}
    for engine in ("static", "fault"):
        trace, p = run(prog("regions"), out="ignore.mtr", engine=engine,
                       opts=("--ignore", "counters"))
        check_eq(per_mark(trace), want, "--ignore counters (%s)" % engine)
        check(re.search(r"note: .*: 30 accesses inside the --ignore ranges", p.stderr),
              "the run says what it left out (%s): %s" % (engine, p.stderr))
    # an absolute range: where the program's data is, without address
    # randomization (setarch -R), from a first run
    def norandom(out, *opts):
        path = os.path.join(TMP, out)
        subprocess.run(["setarch", "x86_64", "-R", os.path.join(os.environ["MEMTAP_BUILD"], "bin", "memtap"),
                        "run", "-q", "--engine", "fault", *opts, "-o", path, "--", prog("regions")],
                       check=True, capture_output=True)
        return path
    info = memtap("info", norandom("ignore_where.mtr")).stdout
    base = int(re.search(r"^module \d+: 0x([0-9a-f]+) .*regions$", info, re.M).group(1), 16)
    syms = subprocess.run(["nm", prog("regions")], capture_output=True, text=True).stdout
    counters = base + int(re.search(r"^([0-9a-f]+) B counters$", syms, re.M).group(1), 16)
    got = per_mark(norandom("ignore_range.mtr", "--ignore", "%x-%x" % (counters, counters + 32)))
    check_eq(got, want, "--ignore of counters' addresses")
    out = json.loads(memtap("analyze", "--json", "--nonselective", "--ignore", "counters",
                            prog("regions")).stdout)
    check_eq(out["total"]["bypass"]["ignored"], 1, "analyze: the store into counters")
    for bad, why in (("no_such_symbol", "neither a range"), ("20-10", "empty range")):
        _, p = run(prog("regions"), out="ignore_bad.mtr", opts=("--ignore", bad), expect_rc=1)
        check(why in p.stderr, "--ignore %s: %s" % (bad, p.stderr))


def test_engine_exec_copy():
    """Programs a traced shell starts by exec run from their rewritten
    copies, made on the spot: each trace's program is rewritten, nothing
    is warned about, and regions' own accesses are there."""
    trace, p = run("/bin/sh", "-c", "%s; %s" % (prog("three_mallocs"), prog("regions")),
                   out="exec_copy.mtr")
    check("warning" not in p.stderr, "no module ran as it is: %s" % p.stderr)
    children = re.findall(r"^memtap: also wrote (\S+)$", p.stderr, re.M)
    check_eq(len(children), 2, "a trace per exec'd program: %s" % p.stderr)
    for child in children:
        info = memtap("info", child).stdout
        main = re.search(r"^module 0: \S+ \S+ (\S+)$", info, re.M).group(1)
        check(main.endswith(("three_mallocs", "regions")), "the exec'd program: %s" % main)
        check(int(info_of(child)["rewritten_modules"]) >= 2, "%s rewritten" % main)
        if main.endswith("regions"):
            check_eq(per_mark(child)["heap"], 20, "regions' own stores to its block")
    copies = memtap("cache", "ls", env={"MEMTAP_CACHE_DIR": CACHE}).stdout
    check("three_mallocs" in copies and "regions" in copies, "copies made on exec: %s" % copies)


def test_engine_exec_script():
    """A script a traced shell starts by exec runs as the kernel would run
    it (its interpreter gets INTERP, the line's one argument, the script's
    path, then the script's arguments), with the interpreter from its
    rewritten copy: the output is the native run's, nothing is warned
    about, and the interpreter's own stores are in its trace."""
    script = os.path.join(TMP, "args-script")
    with open(script, "w") as f:
        f.write("#!%s  first  second \nignored\n" % prog("show_args"))
    os.chmod(script, 0o755)
    cmd = ["/bin/sh", "-c", '"$0" "with space" last', script]
    native = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    check_eq(native.splitlines()[1:], ["argv[1] = first  second", "argv[2] = " + script,
                                      "argv[3] = with space", "argv[4] = last"],
             "the kernel's arguments (the oracle's own check)")
    trace, p = run(*cmd, out="exec_script.mtr")
    check_eq(p.stdout, native, "the script's output under memtap")
    check("warning" not in p.stderr, "nothing ran as it is: %s" % p.stderr)
    children = re.findall(r"^memtap: also wrote (\S+)$", p.stderr, re.M)
    check_eq(len(children), 1, "the interpreter's trace: %s" % p.stderr)
    info = info_of(children[0])
    check(int(info["rewritten_modules"]) >= 2, "the interpreter and libc rewritten: %s" % info)
    stores = [l for l in memtap("show", children[0]).stdout.splitlines()
              if re.match(r"^S\$\d+:<malloc\d+@main\+\d+>\+\d+, \[heap\], main\+\d+$", l)]
    check_eq(len(stores), 10, "the interpreter's stores to its block")


def test_engine_watch():
    """--watch records the named objects only, under both engines:
    report_walks' variables by name, the blocks of its allocation sites
    in main (records: 64 loads, gone: 1 store before its free; the loads
    after the free are no longer of a watched block); the fault engine
    protects only their pages (far fewer faults)."""
    def objects(trace):
        rep = json.loads(memtap("report", "-q", "--json", "-", trace).stdout)
        return sorted((o["name"].split("@")[0] if o["heap"] else o["name"], o["L"], o["S"])
                      for o in rep["objects"] if o["accesses"])
    cases = ((("--watch", "seq_arr"), [("seq_arr", 0, 256)]),
             (("--watch", "table", "--watch", "seq_arr"), [("seq_arr", 0, 256), ("table", 100, 0)]),
             (("--watch", "malloc@main"), [("malloc", 0, 1), ("malloc", 64, 0)]))
    for engine in ("static", "fault"):
        for opts, want in cases:
            trace, _ = run(prog("report_walks"), out="watch.mtr", engine=engine, opts=opts)
            check_eq(objects(trace), want, "%s under the %s engine" % (opts, engine))
    faults = lambda t: int(info_of(t)["faults"])
    every, _ = run(prog("report_walks"), out="watch_all.mtr", engine="fault")
    one, _ = run(prog("report_walks"), out="watch_one.mtr", engine="fault", opts=("--watch", "malloc@main"))
    check(faults(one) * 4 < faults(every), "faults: %d watched, %d all" % (faults(one), faults(every)))
    _, p = run(prog("report_walks"), out="watch_bad.mtr", opts=("--watch", "malloc@no_such_function"),
               expect_rc=1)
    check("no function no_such_function" in p.stderr, p.stderr)


def test_engine_string_compare():
    """cmps and scas stop where the data says: both engines record the
    loads of each element compared, as string_compare.c derives them
    (repe cmpsb 38 iterations: 76 loads; repne scasb to index 100: 101;
    repne scasq downwards: 4; one cmpsw: 2)."""
    src = os.path.join(os.path.dirname(__file__), "../programs/string_compare.c")
    lines = {}
    for n, l in enumerate(open(src), 1):
        for insn in ("repe cmpsb", "repne scasb", "repne scasq", '"cmpsw"'):
            if insn in l:
                lines[insn] = "string_compare.c:%d" % n
    want = {"repe cmpsb": 76, "repne scasb": 101, "repne scasq": 4, '"cmpsw"': 2}
    for engine in ("static", "fault"):
        trace, _ = run(prog("string_compare"), out="strcmp.mtr", engine=engine)
        rep = json.loads(memtap("report", "-q", "--json", "-", trace).stdout)
        got = {k: sum(x["L"] for x in rep["instructions"] if x["line"] == line)
               for k, line in lines.items()}
        check_eq(got, want, "loads per string instruction (%s)" % engine)


def test_engine_cache_built_once():
    """Two runs at once build each copy once, and both succeed; a later run
    rewrites nothing and says nothing about rewriting."""
    results = []

    def one(i):
        results.append(run(prog("three_mallocs"), out="c%d.mtr" % i)[1])
    threads = [threading.Thread(target=one, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    built = rewrote(results[0].stderr) + rewrote(results[1].stderr)
    check(len(built) >= 2, "the program and its libraries were rewritten: %s" % built)
    check_eq(sorted(set(built)), sorted(built), "each file rewritten once")
    _, p = run(prog("three_mallocs"))
    check_eq(rewrote(p.stderr), [], "a cache hit rewrites nothing")
    ls = memtap("cache", "ls", env={"MEMTAP_CACHE_DIR": CACHE}).stdout
    check_eq(len([l for l in ls.splitlines() if l.endswith("<- " + os.path.realpath(prog("three_mallocs")))]),
             1, "one copy of the program: %s" % ls)


def test_engine_library_listing():
    """The loader's list of the program's libraries is kept beside its copy
    and used by the next run made in the same context (its loader, its
    ldconfig cache, LD_LIBRARY_PATH); a listing made elsewhere, or naming
    a library that is gone, is made again."""
    exe = os.path.join(TMP, "listed")
    shutil.copy(prog("three_mallocs"), exe)
    run(exe)
    listing = [os.path.join(CACHE, f) for f in os.listdir(CACHE) if f.endswith("-listed.libs")]
    check_eq(len(listing), 1, "one listing beside the copy")
    text = open(listing[0]).read()
    check("libc.so.6 => /" in text, "the listing names libc: %r" % text)
    check("listed.libs" not in memtap("cache", "ls", env={"MEMTAP_CACHE_DIR": CACHE}).stdout,
          "cache ls lists copies, not listings")
    # a library the listing names (here one the program does not need) is
    # rewritten before the program starts: the run took the listing
    extra = "/lib/x86_64-linux-gnu/libz.so.1"
    gone = os.path.join(TMP, "gone.so")
    with open(listing[0], "a") as f:
        f.write("\tlibz.so.1 => %s (0)\n" % extra)
    _, p = run(exe)
    check(extra in rewrote(p.stderr), "the kept listing is used: %s" % p.stderr)
    with open(listing[0], "a") as f:
        f.write("\tgone.so => %s (0)\n" % gone)
    run(exe)
    check("gone.so" not in open(listing[0]).read(), "a listing naming a missing file is made again")
    with open(listing[0], "a") as f:
        f.write("\tlibz.so.1 => %s (0)\n" % extra)
    run(exe, env={"LD_LIBRARY_PATH": TMP})
    text = open(listing[0]).read()
    check("LD_LIBRARY_PATH %s\n" % TMP in text and "libz" not in text,
          "another LD_LIBRARY_PATH: listed again: %r" % text)


def test_engine_openssl():
    """OpenSSL's libcrypto, whose hand-written assembly keeps its lookup
    tables in .text, is rewritten (the tables left as they are: the gap
    scan had decoded an AES table as code it could not encode, so the
    library ran untraced) and computes what it computes natively."""
    code = ("import hashlib; d = bytes(range(256)) * 4000; "
            "print(hashlib.sha256(d).hexdigest(), hashlib.sha512(d).hexdigest(), "
            "hashlib.sha1(d).hexdigest(), hashlib.md5(d).hexdigest())")
    python = "/usr/bin/python3"
    want = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    _, p = run(python, "-c", code, engine="auto", out="openssl.mtr")
    check_eq(p.stdout, want.stdout, "the digests under memtap run")
    engines = re.search(r"^memtap: static engine: (.*)$", p.stderr, re.M)
    check(engines and "libcrypto.so.3" in engines.group(1).split(", ") and
          "warning" not in p.stderr, "libcrypto rewritten and traced: %s" % p.stderr)


def changed_in_place(path, anchor, past):
    """Flips the byte `past` bytes after anchor in the file at path, in
    place (same inode and size), and puts its times back."""
    st = os.stat(path)
    data = bytearray(open(path, "rb").read())
    at = data.find(anchor)
    check(at >= 0, "%s in %s" % (anchor, path))
    data[at + past] ^= 0xff
    with open(path, "r+b") as f:
        f.write(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_engine_cache_changed_and_damaged():
    """A changed program gets a new copy; a damaged copy is rebuilt with a
    message; `cache clear` empties the cache."""
    exe = os.path.join(TMP, "three_mallocs")
    shutil.copy(prog("three_mallocs"), exe)
    run(exe)
    with open(exe, "ab") as f:
        f.write(b"\0")  # a new size: a new identity
    _, p = run(exe)
    check_eq(rewrote(p.stderr), [exe], "the changed program is rewritten")
    copies = [l.split()[1] for l in memtap("cache", "ls", env={"MEMTAP_CACHE_DIR": CACHE}).stdout.splitlines()
              if l.endswith("<- " + exe)]
    check_eq(len(copies), 2, "a copy of each version")
    for c in copies:
        with open(c, "r+b") as f:
            f.truncate(4096)
    _, p = run(exe)
    check("the cached copy was damaged, changed since it was verified, or not this file's; rewrote %s" % exe in p.stderr, "damaged copy rebuilt: %s" % p.stderr)
    # one byte of the copy's segment changed in place, its size and times
    # put back: the seal (the copy's change time) tells
    copy = [c for c in copies if os.path.getsize(c) > 4096][0]  # the one rebuilt
    changed_in_place(copy, b"MTREWR01", 200)
    _, p = run(exe)
    check("the cached copy was damaged, changed since it was verified, or not this file's; rewrote %s" % exe in p.stderr,
          "a copy changed in place is rebuilt: %s" % p.stderr)
    out = memtap("cache", "clear", env={"MEMTAP_CACHE_DIR": CACHE}).stdout
    check(re.match(r"removed \d+ files", out), "cache clear: %s" % out)
    check_eq(memtap("cache", "ls", env={"MEMTAP_CACHE_DIR": CACHE}).stdout, "", "empty after clear")


def cache_entries(cache):
    """The cache's entries by original base name: {name: (bytes on disk,
    when it was used last: its lock file's time)}."""
    entries = {}
    for f in os.listdir(cache):
        m = re.match(r"[0-9a-f]{16}-(.+?)(\.src|\.lock|\.seal|\.libs|\.refused)?$", f)
        if not m:
            continue
        st = os.stat(os.path.join(cache, f))
        size, used = entries.get(m.group(1), (0, 0))
        used = st.st_mtime if m.group(2) == ".lock" else used
        entries[m.group(1)] = (size + st.st_blocks * 512, used)
    return entries


def test_engine_cache_trimmed():
    """Each use of a copy marks it used (memtap run's and `cache add`'s
    copies, and a library dlopen loads, through the loader's audit module);
    `cache trim SIZE` removes the copies used longest ago until the cache
    takes SIZE, and making a copy trims the cache to $MEMTAP_CACHE_MAX
    (it grew without bound: 59 GB here after a month of builds), never a
    copy used within the hour."""
    cache = os.path.join(TMP, "trimmed")
    env = {"MEMTAP_CACHE_DIR": cache}
    trace = os.path.join(TMP, "trimmed.mtr")
    dl = ["run", "--engine", "static", "-o", trace, "--", prog("dlopen_raw_read"),
          os.path.join(LIB, "libraw_read_lib.so")]
    memtap("cache", "add", prog("lk_structs"), prog("mmsg"), env=env)
    memtap(*dl, env=env)
    old = time.time() - 2 * 86400
    for f in os.listdir(cache):  # used two days ago, lk_structs three
        if f.endswith(".lock"):
            t = old - (86400 if "-lk_structs" in f else 0)
            os.utime(os.path.join(cache, f), (t, t))
    p = memtap(*dl, env=env)  # the copies it uses are used now
    check("rewrote" not in p.stderr, "the copies found again: %s" % p.stderr)
    used = {n: u > time.time() - 600 for n, (_, u) in cache_entries(cache).items()}
    check_eq(used, {"lk_structs": False, "mmsg": False, "dlopen_raw_read": True,
                    "libc.so.6": True, "libraw_read_lib.so": True},
             "used within the last ten minutes")
    entries = cache_entries(cache)
    size = sum(s for s, _ in entries.values()) - entries["lk_structs"][0]
    out = memtap("cache", "trim", str(size), env=env).stdout
    check_eq(sorted(cache_entries(cache)), ["dlopen_raw_read", "libc.so.6",
                                            "libraw_read_lib.so", "mmsg"],
             "trimmed to %d bytes: the copy used longest ago gone (%s)" % (size, out))
    check(out.startswith("removed 1 copies"), "what trim says: %s" % out)
    memtap("cache", "add", prog("three_mallocs"), env=dict(env, MEMTAP_CACHE_MAX="1K"))
    check_eq(sorted(cache_entries(cache)), ["dlopen_raw_read", "libc.so.6",
                                            "libraw_read_lib.so", "three_mallocs"],
             "a new copy trims the cache to MEMTAP_CACHE_MAX, but what was used within the hour")
    p = memtap("cache", "ls", env=dict(env, MEMTAP_CACHE_MAX="2G"))
    mib = sum(s for s, _ in cache_entries(cache).values()) >> 20
    check(re.search(r"^memtap: 4 copies in %s, (\d+) MiB \(it is trimmed to 2048 MiB\)$"
                    % re.escape(cache), p.stderr, re.M)
          and mib - 1 <= int(re.search(r", (\d+) MiB", p.stderr).group(1)) <= mib,
          "cache ls says what the copies take and the limit: %s" % p.stderr)
    p = memtap("cache", "ls", env=dict(env, MEMTAP_CACHE_MAX="ten"), check_rc=False)
    check(p.returncode == 1 and "MEMTAP_CACHE_MAX: expected a size" in p.stderr,
          "a bad limit is refused: %s" % p.stderr)


def test_engine_cache_same_size_and_mtime():
    """A program changed in place with its size and modification time put
    back (touch -r) gets a new copy: the key holds the change time (the
    stale copy ran, printing what the old program printed)."""
    exe = os.path.join(TMP, "sig_default")
    shutil.copy(prog("sig_default"), exe)
    _, p = run(exe, expect_rc=None)
    check(p.stdout.startswith("SIGINT was"), "the program runs: %r" % p.stdout)
    data = bytearray(open(exe, "rb").read())
    at = data.find(b"SIGINT was %s")
    check(at > 0, "the program's format string")
    data[at] = ord("X")
    st = os.stat(exe)
    with open(exe, "r+b") as f:  # in place: same inode, same size
        f.write(data)
    os.utime(exe, ns=(st.st_atime_ns, st.st_mtime_ns))
    check_eq((os.stat(exe).st_size, os.stat(exe).st_mtime_ns), (st.st_size, st.st_mtime_ns),
             "size and modification time put back")
    _, p = run(exe, expect_rc=None)
    check(p.stdout.startswith("XIGINT was"), "the changed program runs: %r" % p.stdout)
    check_eq(rewrote(p.stderr), [exe], "rewritten again")


def test_engine_no_home():
    """Without HOME (no cache directory) memtap run still runs the program,
    under the fault engine, saying why; --engine static refuses (it had
    refused under auto too)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("HOME", "XDG_CACHE_HOME", "MEMTAP_CACHE_DIR")}
    trace = os.path.join(TMP, "nohome.mtr")
    p = subprocess.run([prog("memtap"), "run", "-o", trace, "--", prog("three_mallocs")],
                       capture_output=True, text=True, env=env)
    native = subprocess.run([prog("three_mallocs")], capture_output=True, text=True)
    check_eq((p.returncode, p.stdout), (native.returncode, native.stdout), p.stderr)
    check("the fault engine traces the program" in p.stderr, "said: %s" % p.stderr)
    p = subprocess.run([prog("memtap"), "run", "--engine", "static", "-o", trace, "--",
                        prog("three_mallocs")], capture_output=True, text=True, env=env)
    check(p.returncode != 0 and re.search(r"^memtap: cache: ", p.stderr, re.M),
          "--engine static: %s" % p.stderr)


def test_engine_self_mprotect():
    """A program that makes its own text writable and back makes no new
    code: its run is whole (it was called a JIT's, exit 125)."""
    trace, p = run(prog("self_mprotect"))
    check_eq(p.stdout, "ok\n", "its output")
    check("executable mapping" not in p.stderr and "incomplete" not in p.stderr,
          "no warning: %s" % p.stderr)


def test_engine_library_before_libc():
    """nodeps_lib needs no other library, so the loader initializes it
    before the C library; its copy's start stub called memtap there, while
    environ was still NULL: memtap read no MEMTAP_* variable, stayed off
    for good, and no trace was written (clang-14, whose libicudata comes
    first, then died of the first int3 site libLLVM's initializers met).
    memtap now starts at the next stub: the trace is whole, and holds
    nodeps_ready's load of ready (the table is read-only: left out)."""
    native = subprocess.run([prog("nodeps_user")], capture_output=True, text=True)
    check_eq(native.stdout, "241\n", "the native output")
    trace, p = run(prog("nodeps_user"))
    check_eq(p.stdout, native.stdout, "its output")
    check("incomplete" not in p.stderr, "a whole trace: %s" % p.stderr)
    loads = [l for l in show(trace) if l.startswith("L$") and
             l.endswith(":ready, [libnodeps_lib.so], nodeps_ready+0")]
    check_eq(len(loads), 1, "nodeps_ready's load of ready")


def test_engine_many_libraries():
    """A program of 100 libraries and one more whose own syscall
    instruction reads into its static buffer: a rewritten module has
    several executable segments, and the system call filter held 128
    ranges, so the last modules' calls went untrapped (gdb's 59 libraries
    and cmake's 48 met it): here the last library's read was not recorded,
    nor the C library's exit_group (no end record).  Past 128 ranges the
    filter now takes the segments that may make system calls (a syscall
    instruction's bytes in them) and leaves out the rest (gdb's 4,776
    segments: 103): no warning, the read recorded, the trace whole."""
    d = os.path.join(TMP, "many")
    os.makedirs(d, exist_ok=True)
    n = 100
    for i in range(n):
        src = os.path.join(d, "l%d.c" % i)
        with open(src, "w") as f:
            f.write("int f%d(int x) { static volatile int v; v += x; return v + %d; }\n"
                    % (i, i))
        subprocess.run(["gcc", "-O1", "-shared", "-fPIC", "-o",
                        os.path.join(d, "libl%d.so" % i), src], check=True)
    with open(os.path.join(d, "last.c"), "w") as f:
        f.write("#include <sys/syscall.h>\n"
                "static char buf[64];\n"
                "long last_read(int fd)\n{\n    long r;\n"
                "    __asm__ volatile(\"syscall\" : \"=a\"(r) : \"0\"((long)SYS_read),"
                " \"D\"((long)fd), \"S\"(buf), \"d\"(64L) : \"rcx\", \"r11\", \"memory\");\n"
                "    return r > 0 ? buf[0] : -1;\n}\n")
    subprocess.run(["gcc", "-O1", "-shared", "-fPIC", "-o", os.path.join(d, "liblast.so"),
                    os.path.join(d, "last.c")], check=True)
    with open(os.path.join(d, "main.c"), "w") as f:
        f.write("#include <fcntl.h>\n#include <stdio.h>\n")
        f.write("".join("int f%d(int);\n" % i for i in range(n)))
        f.write("long last_read(int);\nint main(int argc, char **argv)\n{\n"
                "    (void)argc;\n    long s = 0;\n")
        f.write("".join("    s += f%d(%d);\n" % (i, i) for i in range(n)))
        f.write("    printf(\"%ld %ld\\n\", s, last_read(open(argv[0], O_RDONLY)));\n"
                "    return 0;\n}\n")
    exe = os.path.join(d, "main")
    subprocess.run(["gcc", "-O1", "-o", exe, os.path.join(d, "main.c"), "-L" + d] +
                   ["-ll%d" % i for i in range(n)] + ["-llast", "-Wl,-rpath," + d], check=True)
    native = subprocess.run([exe], capture_output=True, text=True)
    check_eq(native.stdout, "%d 127\n" % sum(2 * i for i in range(n)), "the native output")
    trace, p = run(exe)
    check_eq(p.stdout, native.stdout, "its output")
    check("system call filter" not in p.stderr and "incomplete" not in p.stderr,
          "no warning, a whole trace: %s" % p.stderr)
    reads = [l for l in show(trace) if l.startswith("W$") and ":buf+0,64, last_read+" in l]
    check_eq(len(reads), 1, "the last library's read")


def test_engine_origin_paths():
    """A program run from its copy in memtap's cache finds what it finds
    natively by its own path: its library through the run path
    $ORIGIN/../lib (the copy's $ORIGIN is the cache: java could not load
    libjli.so), that library's own through its $ORIGIN (libnio's libnet),
    itself through /proc/self/exe (java's launcher: "could not find
    libjava.so") and the library through dladdr (libjvm: "Failed setting
    boot class path").  The copy's output is the original's."""
    native = subprocess.run([prog("origin_user")], capture_output=True, text=True)
    check_eq(native.stdout, "value: 27\n/proc/self/exe: the program\ndladdr: the library\n",
             "the native output")
    trace, p = run(prog("origin_user"))
    check_eq(p.stdout, native.stdout, "its output")
    engines = re.search(r"^memtap: static engine: (.*)$", p.stderr, re.M)
    check(engines and {"origin_user", "liborigin_lib.so", "liborigin_dep.so"} <=
          set(engines.group(1).split(", ")), "all three run from their copies: %s" % p.stderr)


def test_engine_zero_padding():
    """A stripped library whose functions are padded with odd runs of zero
    bytes (libLLVM-14's are): the linear sweep that vouches for unwind
    entries read `00 00` as add %al,(%rax) and ran into the next function's
    first bytes, so the entries of `checked` and of the constructor `ctor`
    (named by .init_array alone) were dropped, and the walk of the gap fell
    through `checked`'s call to abort into the zeros and on into ctor from
    the middle of its push: the copy died of SIGSEGV (clang-14 of SIGTRAP
    in libLLVM's initializers).  And its 96 functions known by unwind
    entries alone, each followed by padding, took the room the analysis
    kept for gaps: tail_code, after them, went unanalysed and its store
    untraced.  The copy prints what the original prints, the constructor's
    add to counter (a load and a store of one instruction) comes before
    lib_counter's load of it, and tail_code's store to tail_mark (the word
    after counter) is there."""
    native = subprocess.run([prog("zero_pad_user")], capture_output=True, text=True)
    check_eq(native.stdout, "42\n", "the native output")
    trace, p = run(prog("zero_pad_user"))
    check_eq(p.stdout, native.stdout, "its output")
    lines = show(trace)
    # counter: what lib_counter loads
    read = [l for l in lines if l.startswith("L$") and ", lib_counter+" in l]
    check_eq(len(read), 1, "lib_counter's load")
    name = read[0].split(":", 1)[1].split(",")[0]
    section, offset = name.rsplit("+", 1)
    mark = "%s+%d" % (section, int(offset) + 4)
    tail = [l for l in lines if l.startswith("S$") and
            l.split(":", 1)[1].split(",")[0] == mark]
    check_eq(len(tail), 1, "tail_code's store to %s" % mark)
    counter = [l for l in lines if re.match(r"[LS]\$\d+:", l) and
               l.split(":", 1)[1].split(",")[0] == name]
    ctor = counter[:-1]
    check(counter[-1] == read[0] and len(ctor) == 2 and ctor[0].startswith("L$") and
          ctor[1].startswith("S$") and ctor[0].split(", ")[1:] == ctor[1].split(", ")[1:],
          "the constructor's load and store of counter, then lib_counter's: %s" % counter)


def test_engine_library_initializer():
    """A library's initializer runs before libmemtap.so's constructor (the
    loader initializes the program's libraries before the preloaded one):
    under the static engine the copy's start stub starts memtap first, so
    init_lib's constructor's 32 stores to init_table and its malloc(55) are
    in the trace (none were before), and init_sum's 32 loads after them;
    the copy's DT_INIT is the start stub, which the verifier follows."""
    trace, p = run(prog("init_user"))
    check_eq(p.stdout, "1488\n", "its output")
    lines = show(trace)
    stores = [l for l in lines if l.startswith("S$") and "init_table[" in l and "fill_table" in l]
    loads = [l for l in lines if l.startswith("L$") and "init_table[" in l and "init_sum" in l]
    check_eq(len(stores), 32, "the initializer's stores: %s" % stores[:4])
    check_eq(len(loads), 32, "init_sum's loads")
    heap = [l for l in lines if l.startswith("M$") and l.endswith(",55")]
    check_eq(len(heap), 1, "the initializer's malloc: %s" % heap)
    check(int(stores[-1].split(":")[0][2:]) < int(loads[0].split(":")[0][2:]),
          "the initializer's stores come first")
    lib = [l for l in libraries(prog("init_user")) if "init_lib" in l]
    check(lib, "init_user loads libinit_lib.so")
    lib_path = subprocess.run(["ldd", prog("init_user")], capture_output=True, text=True).stdout
    path = re.search(r"=> (\S*libinit_lib\.so)", lib_path).group(1)
    copy = os.path.join(TMP, "init_lib.copy")
    memtap("instrument", path, "-o", copy)
    v = memtap("instrument", "--verify", copy, path, check_rc=False)
    check(v.returncode == 0 and "DT_INIT runs memtap's start stub" in v.stdout,
          "the verifier follows the start stub: %s%s" % (v.stdout, v.stderr))
    # a DT_INIT that no longer goes through the stub to the original's
    init = int(re.search(r"\(INIT\)\s+0x([0-9a-f]+)",
                         subprocess.run(["readelf", "-d", copy], capture_output=True,
                                        text=True).stdout).group(1), 16)
    data = bytearray(open(copy, "rb").read())
    at = data.find(struct.pack("<qQ", 12, init))
    check(at > 0, "the copy's DT_INIT entry")
    struct.pack_into("<Q", data, at + 8, init + 1)
    bad = os.path.join(TMP, "init_lib.bad")
    open(bad, "wb").write(data)
    v = memtap("instrument", "--verify", bad, path, check_rc=False)
    check(v.returncode != 0 and "DT_INIT" in v.stderr, "a wrong DT_INIT found: %s" % v.stderr)


def test_engine_dlopen():
    """A library loaded by dlopen is rewritten when it is loaded (the audit
    module runs memtap cache add) and traced by the static engine."""
    plugin = os.path.join(os.path.dirname(prog("dlopener")), "..", "lib", "libplugin.so")
    if not os.path.exists(plugin):
        plugin = os.path.join(os.path.dirname(prog("dlopener")), "libplugin.so")
    trace, p = run(prog("dlopener"), os.path.realpath(plugin))
    engines = re.search(r"^memtap: static engine: (.*)$", p.stderr, re.M)
    check(engines and "libplugin.so" in engines.group(1).split(", "),
          "the plugin was rewritten and traced: %s" % p.stderr)
    heap = [l for l in show(trace) if l.startswith("M$")]
    check(any(l.endswith(",77") and "plugin_make" in l for l in heap), "the plugin's malloc: %s" % heap)
    # its copy changed in place since: the audit module has it made again
    copy = [l.split()[1] for l in memtap("cache", "ls", env={"MEMTAP_CACHE_DIR": CACHE}).stdout.splitlines()
            if l.endswith("libplugin.so")][0]
    was = open(copy, "rb").read()
    changed_in_place(copy, b"MTREWR01", 200)
    trace, p = run(prog("dlopener"), os.path.realpath(plugin))
    check_eq(open(copy, "rb").read(), was, "the plugin's copy made again")
    heap = [l for l in show(trace) if l.startswith("M$")]
    check(any(l.endswith(",77") and "plugin_make" in l for l in heap), "the plugin's malloc again: %s" % heap)


def test_engine_dlclose_reload():
    """A library unloaded and loaded again is traced each time: memtap's
    runtime forgets an unloaded library (it read its int3 sites after it
    was gone: nm -D, whose plugins come and go, died of SIGSEGV) and turns
    on a library loaded where one was (it took it for the one before, and
    the third round's accesses were lost).  Each round reads its heap int
    once, at peek."""
    lib = os.path.dirname(prog("dlopener"))
    libs = [os.path.realpath(os.path.join(d, "libpeek_%s.so" % c))
            for c in "ab" for d in (os.path.join(lib, "..", "lib"), lib)
            if os.path.exists(os.path.join(d, "libpeek_%s.so" % c))][:2]
    native = subprocess.run([prog("dlreload")] + libs, capture_output=True, text=True)
    check_eq(native.stdout, "11 22 33\n", "native output")
    for engine in ("static", "fault"):
        trace, p = run(prog("dlreload"), *libs, engine=engine)
        check_eq(p.stdout, native.stdout, "%s: the program's output" % engine)
        peeks = [l for l in show(trace) if l.startswith("L$") and l.endswith(", peek+0")]
        check_eq(len(peeks), 3, "%s: a heap load at peek a round: %s" % (engine, peeks))
        check(all("[heap]" in l for l in peeks), "%s: of the heap ints: %s" % (engine, peeks))


def test_engine_static_tls():
    """A library loaded at start-up with 48 KiB of initial-exec TLS runs
    under both engines: with memtap's audit module the loader sizes the
    static TLS block before it loads the libraries, which then take
    theirs from the surplus memtap asks for (rustc's driver library failed
    to load: "cannot allocate memory in static TLS block").  Each thread
    sums every 4096th byte of its TLS after filling it with seed + i:
    3 and 7 give 36 and 84."""
    native = subprocess.run([prog("big_tls")], capture_output=True, text=True)
    check_eq(native.stdout, "36 84\n", "native output")
    for engine in ("static", "fault"):
        trace, p = run(prog("big_tls"), engine=engine)
        check_eq(p.stdout, native.stdout, "%s: the program's output: %s" % (engine, p.stderr))
    # started by exec from a program that needs little (sh): big_tls itself,
    # and a script whose interpreter it is; it inherited the first
    # program's surplus and failed (rustc through rustup's proxy)
    script = os.path.join(TMP, "big_tls_script")
    with open(script, "w") as f:
        f.write("#!%s\n" % prog("big_tls"))
    os.chmod(script, 0o755)
    for engine in ("static", "fault"):
        for how, times in (("exec %s" % prog("big_tls"), 1),
                           ("%s; %s" % (prog("big_tls"), script), 2)):
            trace, p = run("/bin/sh", "-c", how, engine=engine)
            check_eq(p.stdout, native.stdout * times,
                     "%s: sh -c '%s': %s" % (engine, how, p.stderr))
    # the library preloaded by the user's own LD_PRELOAD (memtap's listing
    # of the start-up libraries left LD_PRELOAD out: echo did not start)
    here = os.path.dirname(prog("big_tls"))
    lib = [l for l in (os.path.join(here, "..", "lib", "libbig_tls_lib.so"),
                       os.path.join(here, "libbig_tls_lib.so")) if os.path.exists(l)][0]
    # (a sanitized memtap, which the preload reaches too, would refuse to
    # start with its runtime not first)
    asan = ":".join(o for o in (os.environ.get("ASAN_OPTIONS"), "verify_asan_link_order=0") if o)
    for engine in ("static", "fault"):
        trace, p = run("/bin/echo", "ok", engine=engine,
                       env={"LD_PRELOAD": os.path.realpath(lib), "ASAN_OPTIONS": asan})
        check_eq(p.stdout, "ok\n", "%s: echo with the library preloaded: %s" % (engine, p.stderr))
        # the same program exec'd again with the library preloaded: a need
        # kept from the first exec is not the second's
        how = '/bin/echo a; LD_PRELOAD="%s:$LD_PRELOAD" /bin/echo b' % os.path.realpath(lib)
        trace, p = run("/bin/sh", "-c", how, engine=engine)
        check_eq(p.stdout, "a\nb\n", "%s: echo again, preloading it: %s" % (engine, p.stderr))


def test_engine_program_names():
    """A program run from its rewritten copy has the name the kernel gives
    it natively (the last part of the path exec'd), not its copy's
    ("0015d4695d5580f", the first 15 bytes of "<16 hex>-<file>"), in
    /proc/self/comm, which ps, top and pkill show: cat run by memtap run,
    sh by its link's name (the copy is dash's), cat exec'd by it, and a
    script by its own name (its interpreter runs)."""
    script = os.path.join(TMP, "named_script.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\ncat /proc/$$/comm\n")
    os.chmod(script, 0o755)
    cases = (["/bin/cat", "/proc/self/comm"],
             ["/bin/sh", "-c", "cat /proc/$$/comm; %s; exec cat /proc/self/comm" % script])
    for argv in cases:
        native = subprocess.run(argv, capture_output=True, text=True)
        check(native.stdout.startswith(("cat", "sh")), "natively: %r" % native.stdout)
        for engine in ("static", "fault"):
            _, p = run(*argv, engine=engine, out="names.mtr")
            check_eq(p.stdout, native.stdout, "%s: %s" % (engine, " ".join(argv)))


def test_engine_second_allocator():
    """A program whose malloc is another library's (libarena_alloc, as
    jemalloc is when preloaded) keeps it under both engines: memtap's
    wrappers call the next malloc, not the C library's (they did, and a
    block the other allocator made without malloc, as jemalloc's C++
    operators do, went to glibc's free: "munmap_chunk(): invalid
    pointer").  Its four blocks are the arena's, and each is a heap event
    of the trace: malloc(100), calloc(10, 10), realloc(NULL, 300) and
    posix_memalign(64, 200), and their frees."""
    native = subprocess.run([prog("arena_user")], capture_output=True, text=True)
    check_eq(native.stdout, "4 of 4\nfreed\n", "native output")
    for engine in ("static", "fault"):
        trace, p = run(prog("arena_user"), engine=engine)
        check_eq(p.stdout, native.stdout, "%s: the program's output: %s" % (engine, p.stderr))
        lines = show(trace)
        made = sorted(l.rsplit(",", 1)[1] for l in lines
                      if l[0] in "MCR" and l[1] == "$" and "@main+" in l)
        check_eq(made, ["100", "100", "200", "300"], "%s: main's blocks" % engine)
        freed = [l for l in lines if l.startswith("F$") and "@main+" in l]
        check_eq(len(freed), 4, "%s: main's blocks freed: %s" % (engine, freed))


def test_engine_libc_loads():
    """Libraries the C library loads itself (iconv's conversion modules:
    not through dlopen, which libmemtap.so wraps) are in the trace's module
    table under both engines, and under the static engine their rewritten
    code is traced (it was silent: its stub never turned on).  Converting
    15 one-byte characters to UTF-16 reads each input byte once and stores
    each two-byte unit once (the fault engine, which sees every access,
    agrees)."""
    native = subprocess.run([prog("iconv_convert")], capture_output=True, text=True)
    check_eq(native.stdout, "30 bytes\n", "native output")
    for engine in ("static", "fault"):
        trace, p = run(prog("iconv_convert"), engine=engine, out="iconv_%s.mtr" % engine)
        check_eq(p.stdout, native.stdout, "%s: output" % engine)
        lines = show(trace, "--raw")
        loads = {}
        for l in show(trace):
            m = re.match(r"# \d+: load (\S+/gconv/(ISO8859-15|UTF-16)\.so) at 0x([0-9a-f]+)$", l)
            if m:
                loads[m.group(2)] = (int(m.group(3), 16),
                                     int(m.group(3), 16) + os.path.getsize(m.group(1)))
        check_eq(sorted(loads), ["ISO8859-15", "UTF-16"], "%s: the modules loaded" % engine)
        blocks = {}
        for l in lines:
            m = re.match(r"M#\d+:0x([0-9a-f]+),(64|256),", l)
            if m:
                blocks[int(m.group(2))] = int(m.group(1), 16)
        seen = {"ISO8859-15": [], "UTF-16": []}
        for l in lines:
            m = re.match(r"([LS])#\d+:0x([0-9a-f]+), \[heap\], 0x([0-9a-f]+)$", l)
            if not m:
                continue
            addr, pc = int(m.group(2), 16), int(m.group(3), 16)
            for name, (lo, hi) in loads.items():
                for size, start in blocks.items():
                    if lo <= pc < hi and start <= addr < start + size:
                        seen[name].append((m.group(1), size, addr - start))
        check_eq(sorted(seen["ISO8859-15"]), [("L", 64, i) for i in range(15)],
                 "%s: the input read by ISO8859-15.so" % engine)
        check_eq(sorted(seen["UTF-16"]), [("S", 256, 2 * i) for i in range(15)],
                 "%s: the output written by UTF-16.so" % engine)


def test_engine_generated_code():
    """Code a program generates at run time (a JIT: a mapping made
    executable at once, or written and then made executable by mprotect)
    is outside the static engine's reach: the run says so, names where the
    mapping was made, and is incomplete (it was called whole).  The fault
    engine traces that code: its load of the heap block is in its trace;
    the page the code runs from is traced no more (said in a note).
    (mmap is libmemtap's, which names its caller; mprotect is trapped in the
    C library's wrapper, which is named.)"""
    for how in ("rwx", "wx"):
        trace, p = run(prog("jit_code"), how, out="jit_%s.mtr" % how, expect_rc=125)
        m = re.match(r"code 0x([0-9a-f]+): 42$", p.stdout.strip())
        check(m, "%s: the program's output: %r" % (how, p.stdout))
        check(re.search(r"^memtap: warning: .*made 1 executable mapping\(s\) of its own .*"
                        r"the first from (jit_code|libc\.so\.6)\+0x[0-9a-f]+\)", p.stderr, re.M)
              and "(incomplete)" in p.stderr, "%s: the run says so: %s" % (how, p.stderr))
        trace, p = run(prog("jit_code"), how, engine="fault", out="jitf_%s.mtr" % how)
        m = re.match(r"code 0x([0-9a-f]+): 42$", p.stdout.strip())
        check(m and "warning" not in p.stderr, "%s: fault engine: %r %s" % (how, p.stdout, p.stderr))
        lines = show(trace, "--raw")
        block = [l for l in lines if re.match(r"M#\d+:0x[0-9a-f]+,4, ", l)]
        check(block, "%s: the heap block: %s" % (how, lines[-20:]))
        start = block[-1].split(":")[1].split(",")[0]
        check(any(re.match(r"L#\d+:%s, \[heap\], 0x%s$" % (start, m.group(1)), l) for l in lines),
              "%s: the generated code's load of the block" % how)
        # the code's own page stops being traced at its first instruction
        # (each would fault and be stepped: the JVM's interpreter ran for
        # minutes), and a note says so
        check("1 pages of traced memory held code the program ran" in p.stderr,
              "%s: the note on the code's page: %s" % (how, p.stderr))
        check("code_pages: 1\n" in memtap("info", trace).stdout, "%s: memtap info" % how)


def program_functions(binary):
    """The names of the functions a program defines (nm)."""
    out = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True).stdout
    return {l.split()[2] for l in out.splitlines() if len(l.split()) == 3 and l.split()[1] in "tT"}


def events_without_seq(trace):
    return [re.sub(r"^([A-Z])\$\d+:", r"\1:", l) for l in show(trace) if not l.startswith("#")]


def pc_function(line):
    m = re.search(r", ([A-Za-z_][\w.]*)\+\d+$", line)
    return m.group(1) if m else None


def test_engine_same_trace():
    """The static engine records what the fault engine records (MadT's
    semantics): for each program with a Lackey test, from main on, the
    same events, access by access and heap event by heap event, order and
    sequence numbers aside.  Known, stated differences:
      - the loader's own code (lazy binding's stores into the GOT) is never
        rewritten: accesses made by ld.so are left out on both sides;
      - kernel-side copies of system calls that the C library makes for
        itself (stdio's write) are seen only by the fault engine's seccomp
        filter: W/G events at a pc outside the program;
      - with the audit module the loader has one more namespace, whose lock
        it takes once more at exit: at most two more loads of
        __libc_single_threaded in pthread_mutex_lock/unlock.
    For the threads program, where allocation numbers follow the threads'
    interleaving, the accesses of each of the program's own instructions
    are counted instead.  stdio_reads: fread's block events and nothing of
    the C library's work inside it (the static engine had logged fread's
    internals: its wrapper did not turn the rewritten code's logging off)."""
    for name in ("lk_globals", "lk_heap", "lk_structs", "lk_strings", "lk_realloc", "lk_mmap",
                 "three_mallocs", "alloc_family", "blockops", "heat_counts", "edge_insns",
                 "string_compare", "stdio_reads", "lk_threads"):
        own = program_functions(prog(name))
        lists = {}
        for engine in ("fault", "static"):
            # under heavy load the fault engine may expose windows to other
            # threads, and (seen once in many runs) blockops' read of
            # /dev/zero came back short under it: a run is retried then
            for _ in range(3):
                trace, p = run(prog(name), engine=engine, out="%s-%s.mtr" % (name, engine),
                               opts=("--from-main",), expect_rc=None)
                if p.returncode == 0 and info_of(trace).get("exposed_windows", "0") == "0":
                    break
            check_eq(p.returncode, 0, "%s under the %s engine: %s" % (name, engine, p.stderr))
            lists[engine] = [l for l in events_without_seq(trace)
                             if not re.search(r"_dl_|ld-linux", l.split(", ")[-1])]
        if name == "lk_threads":
            def per_insn(lines):
                counts = {}
                for l in lines:
                    if l[0] in "LS" and pc_function(l) in own:
                        key = (l[0], l.split(", ")[-1])
                        counts[key] = counts.get(key, 0) + 1
                return counts
            check_eq(per_insn(lists["static"]), per_insn(lists["fault"]),
                     "%s: accesses of each of its instructions" % name)
            continue
        fault_only = list(lists["fault"])
        static_only = []
        for l in lists["static"]:
            if l in fault_only:
                fault_only.remove(l)
            else:
                static_only.append(l)
        fault_only = [l for l in fault_only if not (l[0] in "WG" and pc_function(l) not in own)]
        lock = [l for l in static_only if l.startswith("L:__libc_single_threaded, [libc.so.6], ") and
                re.search(r"pthread_mutex_(lock|unlock_usercnt)\+\d+$", l)]
        static_only = [l for l in static_only if l not in lock]
        check_eq((fault_only, static_only), ([], []), "%s: events only one engine recorded" % name)
        check(len(lock) <= 2, "%s: loader-lock loads: %s" % (name, lock))
        check(len(lists["static"]) > 20, "%s: events recorded (%d)" % (name, len(lists["static"])))


def test_engine_prewritten():
    """A copy memtap instrument wrote runs as it is under every engine (its
    own instrumentation logs, nothing is rewritten again), and rewriting a
    copy again is refused."""
    copy = os.path.join(TMP, "three_mallocs.mt")
    memtap("instrument", "-q", prog("three_mallocs"), "-o", copy, "--nonselective")
    p = memtap("instrument", "-q", copy, "-o", copy + "2", check_rc=False)
    check(p.returncode != 0 and "already rewritten by memtap" in p.stderr,
          "instrument refuses a copy: %s" % p.stderr)
    for engine in ("auto", "static"):
        trace, p = run(copy, engine=engine, out="pre-%s.mtr" % engine)
        check_eq(rewrote(p.stderr), [], "%s: nothing rewritten" % engine)
        check_eq(info_of(trace).get("rewritten_modules"), "1", "%s: the copy's runtime ran" % engine)


def test_engine_real_programs():
    """Programs of the distribution (an interpreter with GCC's cold parts
    and jump tables reached before their bounds, cksum, sort) under the
    default engine
    give their native output, and their traces hold accesses."""
    data = os.path.join(TMP, "data.txt")
    with open(data, "w") as f:
        f.write("".join("line %d of memtap's test data\n" % (i * 7919 % 1000) for i in range(3000)))
    for argv in (["python3", "-c", "print(sum(i * i for i in range(2000)))"],
                 ["cksum", data], ["sort", data]):
        exe = "/usr/bin/" + argv[0]  # the distribution's, not a wrapper on PATH
        if not os.path.exists(exe):
            exe = shutil.which(argv[0])
        native = subprocess.run([exe] + argv[1:], capture_output=True)
        trace, p = run(exe, *argv[1:], engine="auto", out=argv[0] + ".mtr")
        check_eq(p.stdout, native.stdout.decode(), "%s: its output" % argv[0])
        check("static engine: " in p.stderr and "warning" not in p.stderr,
              "%s: traced by the static engine, nothing left out: %s" % (argv[0], p.stderr))
        info = info_of(trace)
        check(int(info["events"]) > 1000 and info["dropped"] == "0",
              "%s: events recorded: %s" % (argv[0], info["events"]))


def without_sections(name):
    """A copy of a test program whose section header table is past its
    end (as tools that strip them leave it): it runs, but the rewriter
    finds no executable section and refuses it."""
    data = bytearray(open(prog(name), "rb").read())
    struct.pack_into("<Q", data, 40, len(data) + 4096)  # e_shoff
    path = os.path.join(TMP, name + "_nosections")
    open(path, "wb").write(data)
    os.chmod(path, 0o755)
    return path


def test_engine_fallback():
    """A program the rewriter refuses: --engine static says why and runs
    nothing; auto traces it with the fault engine and says so; a static
    executable is refused by both."""
    exe = without_sections("three_mallocs")
    _, p = run(exe, expect_rc=1)
    check("the static engine cannot run it" in p.stderr and "no executable section" in p.stderr,
          "--engine static refuses: %s" % p.stderr)
    trace, p = run(exe, engine="auto")
    check("not rewritten" in p.stderr and "the fault engine traces it" in p.stderr,
          "auto falls back: %s" % p.stderr)
    check("faults" in info_of(trace), "the fault engine traced it")
    check_eq(len([l for l in show(trace) if l.startswith("M$")]), 3, "its three mallocs")
    for engine in ("static", "fault", "auto"):
        _, p = run(prog("static_prog"), engine=engine, expect_rc=1)
        check("neither engine can trace it" in p.stderr, "%s: static executable: %s" % (engine, p.stderr))

def loads_stores(trace):
    """{(function, kind): records} of tested_parts' two functions, and the
    loads and stores whose instruction is in libc."""
    info = memtap("info", trace).stdout
    bases = sorted((int(b, 16), path) for b, path in
                   re.findall(r"^module \d+: 0x([0-9a-f]+) \S+ (\S+)$", info, re.M))
    libc = [(b, bases[i + 1][0] if i + 1 < len(bases) else 1 << 64)
            for i, (b, path) in enumerate(bases) if path.endswith("/libc.so.6")][0]
    counts, pcs = {}, {"L": set(), "S": set()}
    for line in memtap("show", "--format", "csv", trace).stdout.splitlines()[1:]:
        f = line.split(",")
        if f[2] not in ("L", "S"):
            continue
        func = f[12].split("+")[0]
        where = func if func in ("checked_sum", "fresh_sum") else \
            "libc" if libc[0] <= int(f[3], 16) < libc[1] else None
        if where:
            counts[(where, f[2])] = counts.get((where, f[2]), 0) + 1
        if where == "libc":
            pcs[f[2]].add(f[3])
    # a load at an instruction that also stores is a read-modify-write
    counts[("libc", "pure L")] = len(pcs["L"] - pcs["S"])
    return counts


def test_engine_tested_ranges():
    """--tested with a function, a range and a module: tested_parts.c's
    checked_sum makes 40 loads and 10 stores of a heap block, fresh_sum 30
    loads; the loads of the code named (and only those) are not recorded,
    its stores are; analyze and instrument take --tested=LIST."""
    def run_tested(*opts):
        trace, _ = run(prog("tested_parts"), out="tested.mtr", opts=opts)
        return loads_stores(trace)
    everything = run_tested()
    want = {("checked_sum", "L"): 40, ("checked_sum", "S"): 10, ("fresh_sum", "L"): 30}
    check_eq({k: everything.get(k, 0) for k in want}, want, "nothing tested")
    check(everything[("libc", "pure L")] > 0 and everything.get(("libc", "S"), 0) > 0,
          "libc loads and stores: %r" % everything)
    syms = subprocess.run(["nm", "-S", prog("tested_parts")], capture_output=True, text=True).stdout
    start, size = re.search(r"^([0-9a-f]+) ([0-9a-f]+) T checked_sum$", syms, re.M).groups()
    span = "%x-%x" % (int(start, 16), int(start, 16) + int(size, 16))
    for opts in (("--tested", "checked_sum"), ("--tested", span)):
        got = run_tested(*opts)
        check_eq({k: got.get(k, 0) for k in want}, {**want, ("checked_sum", "L"): 0},
                 "%s: its loads gone, its stores and the rest kept" % (opts,))
        check_eq(got[("libc", "pure L")], everything[("libc", "pure L")], "%s: libc untouched" % (opts,))
    got = run_tested("--tested", "libc,fresh_sum")
    check_eq({k: got.get(k, 0) for k in want}, {**want, ("fresh_sum", "L"): 0},
             "--tested libc,fresh_sum: fresh_sum's loads gone")
    check(got[("libc", "pure L")] == 0 and got.get(("libc", "S"), 0) > 0,
          "--tested libc: no libc loads (but those of read-modify-writes), "
          "its stores kept: %r" % got)
    # analyze: the load operands of the functions (one each, in the loop
    # body), and more in the whole file
    def tested_loads(*opts):
        out = json.loads(memtap("analyze", "--json", "--nonselective", *opts,
                                prog("tested_parts")).stdout)
        return out["total"]["bypass"]["tested_loads"]
    whole, checked, both = (tested_loads(*o) for o in
                             (("--tested",), ("--tested=checked_sum",), ("--tested=fresh_sum," + span,)))
    check(checked == 1 and both == 2 and whole > both,
          "analyze: whole %d, checked_sum %d, both %d" % (whole, checked, both))
    copy = os.path.join(TMP, "tested_copy")
    text = memtap("instrument", "--nonselective", "--tested=checked_sum", "-o", copy,
                  prog("tested_parts")).stdout
    check(re.search(r"^  bypassed +1 \(.*tested loads 1,", text, re.M), "instrument: %s" % text)
    _, p = run(prog("tested_parts"), out="tested_bad.mtr", opts=("--tested", "20-10"), expect_rc=1)
    check("empty range" in p.stderr, "--tested 20-10: %s" % p.stderr)
    p = memtap("analyze", "--tested=no_such_function", prog("tested_parts"), check_rc=False)
    check(p.returncode != 0 and "neither a range" in p.stderr, "analyze: %s" % p.stderr)


def test_engine_implicit():
    """--implicit with the stack kept: regions.c's main pushes two
    registers, makes three calls, pops two and returns, once each, so the
    trace holds exactly one 8-byte record at each of those instructions
    (stores for push and call, loads for pop and ret), at the slot rsp
    points to then; without --implicit none (the cache keeps the two kinds
    of copies apart), and the fault engine refuses the option."""
    dump = subprocess.run(["objdump", "-d", "--no-show-raw-insn", prog("regions")],
                          capture_output=True, text=True).stdout
    body = dump[dump.index("<main>:"):].split("\n\n")[0]
    ops = {int(a, 16): m for a, m in re.findall(r"^ +([0-9a-f]+):\s+(push|pop|call|ret)", body, re.M)}
    check_eq(sorted(ops.values()), ["call"] * 3 + ["pop"] * 2 + ["push"] * 2 + ["ret"],
             "main's stack operations")

    def stack_records(*opts):
        trace, _ = run(prog("regions"), out="implicit.mtr", opts=("--only", "heap,static,stack") + opts)
        info = memtap("info", trace).stdout
        base = int(re.search(r"^module \d+: 0x([0-9a-f]+) .*regions$", info, re.M).group(1), 16)
        got = {}
        for f in (l.split(",") for l in memtap("show", "--format", "csv", trace).stdout.splitlines()[1:]):
            if f[2] in ("L", "S") and int(f[3], 16) - base in ops:
                got.setdefault(int(f[3], 16) - base, []).append((f[2], f[5], f[11], int(f[4], 16)))
        return got
    got = stack_records("--implicit")
    kind = {"push": "S", "call": "S", "pop": "L", "ret": "L"}
    check_eq({pc: [r[:3] for r in got.get(pc, [])] for pc in ops},
             {pc: [(kind[m], "8", "[stack]")] for pc, m in ops.items()},
             "one record at each of main's pushes, calls, pops and its ret")
    at = {pc: recs[0][3] for pc, recs in got.items()}
    push = sorted(pc for pc in ops if ops[pc] == "push")
    pop = sorted(pc for pc in ops if ops[pc] == "pop")
    ret = [pc for pc in ops if ops[pc] == "ret"][0]
    # the second push 8 below the first, each pop where its push was (in
    # reverse order), ret's slot just above the first push's
    check(at[push[1]] == at[push[0]] - 8 and at[pop[0]] == at[push[1]] and
          at[pop[1]] == at[push[0]] and at[ret] == at[push[0]] + 8,
          "the slots: %s" % {ops[pc] + hex(pc): hex(a) for pc, a in at.items()})
    check_eq(stack_records(), {}, "without --implicit")
    _, p = run(prog("regions"), engine="fault", opts=("--implicit",), expect_rc=1)
    check("not with --engine fault" in p.stderr, p.stderr)


def test_engine_string_elements():
    """--string-elements: edge_insns' rep movsb (300 bytes from src to dst,
    globals) and rep stosb (100 bytes into pages) as each element's load
    and store, in the instruction's order, under both engines; without
    it, one Y and one W event."""
    def string_lines(engine, *opts):
        trace, _ = run(prog("edge_insns"), out="strings.mtr", engine=engine, opts=opts)
        return [l for l in show(trace) if re.search(r", main\+(101|169)$", l)]
    for engine in ("static", "fault"):
        lines = string_lines(engine, "--string-elements")
        want = [f for i in range(300) for f in ("L$:src[%d], [edge_insns], main+101" % i,
                                               "S$:dst[%d], [edge_insns], main+101" % i)] + \
               ["S$:pages[%d], [edge_insns], main+169" % i for i in range(100)]
        check_eq([re.sub(r"\$\d+:", "$:", l) for l in lines], want,
                 "%s: the elements in order" % engine)
        blocks = [re.sub(r"\$\d+:", "$:", l) for l in string_lines(engine)]
        check_eq(blocks, ["Y$:dst[0],src[0],300, main+101", "W$:pages[0],100, main+169"],
                 "%s: one block event each without the option" % engine)


def test_rep_movs_overlap():
    """rep movsq copying 8-byte elements 4 bytes forward over themselves
    (rep_overlap checks the buffer against the instruction's definition,
    worked out by hand, and exits 1 otherwise): each element read whole
    before it is written, under both engines (the fault engine copied
    byte by byte, rereading bytes it had just written: a wrong result and
    exit 0 from memtap), and recorded as one copy of 16 bytes."""
    for engine in ("fault", "static"):
        trace, _ = run(prog("rep_overlap"), out="rep_overlap.mtr", engine=engine)
        check(any(re.match(r"^Y\$\d+:buf\[4\],buf\[0\],16, main\+\d+$", l)
                  for l in show(trace)), "%s: one copy event" % engine)


def test_masked_stores():
    """vpmaskmovd and maskmovdqu store only the lanes their mask selects:
    masked_store checks, 64 times with different masks, that the other
    lanes of a global keep their bytes, and exits 1 otherwise.  Under the
    fault engine's every path (a completion took vpmaskmovd for a store of
    all 32 bytes and wrote its stack's bytes over the rest: a wrong result
    and exit 0 from memtap) and under the static engine; each store is
    recorded as one store to its global (maskmovdqu's (%rdi) is implicit
    in its encoding: the static engine left it unlogged, without a word)."""
    avx2 = " avx2" in open("/proc/cpuinfo").read()
    for engine, path in (("fault", None), ("fault", "step"), ("fault", "complete"),
                         ("fault", "hot"), ("static", None)):
        trace, _ = run(prog("masked_store"), out="masked_store.mtr", engine=engine,
                       env={"MEMTAP_FAULT_PATH": path} if path else None)
        # a masked store is one record at the array's start, at a site
        # that stores nothing else (a mask of no lanes may store nothing)
        sites = {}
        for l in show(trace):
            m = re.match(r"^S\$\d+:(lanes|bytes)\[(\d+)\], \[masked_store\], (\S+)$", l)
            if m:
                sites.setdefault(m.group(3), []).append(m.group(1) + m.group(2))
        for name, wanted in (("lanes0", avx2), ("bytes0", True)):
            masked = [len(v) for v in sites.values() if set(v) == {name}]
            check_eq([n >= 63 for n in masked], [True] if wanted else [],
                     "%s %s: the masked stores to %s" % (engine, path or "", name))


def test_futex_wake_arguments():
    """futex_args, while another thread runs: a FUTEX_WAKE on a word the
    kernel reads itself (on the stack) made with heap pointers in the
    arguments a wake does not have (what the registers held), and a timed
    FUTEX_WAIT_BITSET on a heap word whose timeout is in the heap too.
    Nothing is opened for either, so no window is exposed and the run is
    complete (the fault engine opened those pages for the calls, warned
    of an exposed window and exited 125 for a trace it had made
    incomplete itself: xz -T2 did so in about one run of 150)."""
    for engine in ("fault", "static"):
        trace, p = run(prog("futex_args"), out="futex_args.mtr", engine=engine)
        check("exposed" not in p.stderr and "windows" not in p.stderr,
              "%s: no window exposed: %s" % (engine, p.stderr))
        check_eq(info_of(trace).get("exposed_windows", "0"), "0", "%s: none counted" % engine)


def test_engine_go_program():
    """A Go program of the distribution (fzf: Go's runtime, goroutines on
    small stacks in heap memory, its own signal stacks, a raw exit_group)
    under the default engine gives its native output on every run, with
    all its code instrumented (Go's function table names the starts the
    sweep would take for data) and an end record (it panicked in regexp in
    half the runs, and its traces had no end); and `fzf --version` under
    the fault engine."""
    fzf = "/usr/bin/fzf"
    check(os.path.exists(fzf), "fzf is installed (scripts/deps.sh)")
    p = memtap("instrument", "-o", os.path.join(TMP, "fzf.copy"), fzf)
    check(re.search(r"^\s*not instrumented\s+0$", p.stdout + p.stderr, re.M),
          "every operand of fzf instrumented: %s" % (p.stdout + p.stderr))
    data = os.path.join(TMP, "numbers.txt")
    with open(data, "w") as f:
        f.write("".join("%d\n" % i for i in range(1, 20001)))
    with open(data) as f:
        native = subprocess.run([fzf, "-f", "99"], stdin=f, capture_output=True, text=True)
    check(native.returncode == 0 and native.stdout.count("\n") > 100, "fzf natively")
    for i in range(3):
        trace = os.path.join(TMP, "fzf%d.mtr" % i)
        with open(data) as f:
            p = run_bounded([MEMTAP, "run", "-o", trace, "--", fzf, "-f", "99"], 120,
                            stdin=f, text=True, env=dict(os.environ, MEMTAP_CACHE_DIR=CACHE))
        check_eq((p.returncode, p.stdout), (0, native.stdout), "run %d: %s" % (i, p.stderr))
        check("static engine: " in p.stderr and "warning" not in p.stderr,
              "run %d: traced by the static engine, whole: %s" % (i, p.stderr))
        info = info_of(trace)
        check_eq((info["end"], info["end_code"], info["dropped"]), ("exit", "0", "0"),
                 "run %d: the end record" % i)
        check(int(info["events"]) > 1000000, "run %d: events: %s" % (i, info["events"]))
    # the fault engine: goroutine stacks are traced memory, found by an
    # access through the stack pointer and no longer traced (every push
    # faulted; it never finished, and then died of the pages left closed)
    native = subprocess.run([fzf, "--version"], capture_output=True, text=True)
    trace = os.path.join(TMP, "fzf_fault.mtr")
    p = run_bounded([MEMTAP, "run", "--engine", "fault", "-o", trace, "--", fzf,
                     "--version"], 120, text=True)  # (no -q: its notes are checked)
    check_eq((p.returncode, p.stdout), (0, native.stdout), "fault engine: %s" % p.stderr)
    info = info_of(trace)
    check(info["end"] == "exit" and int(info["stack_pages"]) > 0,
          "fault engine: an end record, stack pages found: %s" % info)
    check(re.search(r"^memtap: note: .*: %s pages of traced memory were thread stacks"
                    % info["stack_pages"], p.stderr, re.M),
          "fault engine: the untraced stack pages said: %s" % p.stderr)


def test_engine_timer_signals():
    """A loop of 6,000,000 known accesses under a 50 µs timer whose handler
    has accesses of its own: the trace holds every one of both, exactly.
    Before, no run of 24 was exact (5,999,989 of 6,000,000 and under half
    the handler's): a signal between a log sequence's first load and its
    commit lost entries, the handler's accesses were dropped while memtap's
    own work was under way, and memtap's signal handling logged through the
    rewritten C library into the program's buffer (which, filling it in a
    flush, lost a whole buffer of the loop's on a loaded machine)."""
    trace, p = run(prog("timer_loop"), out="timer.mtr")
    ticks = int(re.match(r"ticks (\d+)\n$", p.stdout).group(1))
    check(ticks >= 50, "the timer interrupted the loop %d times" % ticks)
    rows = {}
    for line in memtap("report", trace).stdout.splitlines():
        m = re.match(r"\s*(\d+)\s+\S+%\s+(\d+)\s+(\d+)\s.*\s(cells|ticks) \[timer_loop\]$", line)
        if m:
            rows[m.group(4)] = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
    check_eq(rows.get("cells"), (6000000, 3000000, 3000000), "the loop's accesses")
    # ticks++ in each handler run, and the load printf makes
    check_eq(rows.get("ticks"), (2 * ticks + 1, ticks + 1, ticks), "the handler's accesses")
    check("rewritten_restarts" in info_of(trace), "memtap info tells the restarts")


def test_engine_copied_code():
    """Code a program copies to run elsewhere keeps its bytes (V8's
    embedded builtins, by their symbols): node crashed under the static
    engine, a copied builtin's patched jump landing in the middle of a
    trampoline.  The copy gives the right answer; the blob in place
    runs as it is (its load not instrumented, said by instrument)."""
    exe = prog("copied_code")
    native = subprocess.run([exe], capture_output=True, text=True)
    check_eq((native.returncode, native.stdout), (0, "in place 14850, copied 14850\n"),
             "natively (3 * (0 + ... + 99))")
    _, p = run(exe, out="copied.mtr", opts=("--keep-going",))
    check_eq(p.stdout, native.stdout, "under the static engine: %s" % p.stderr)
    check("executable mapping" in p.stderr, "the copy is said to be untraced: %s" % p.stderr)
    p = memtap("instrument", "-o", os.path.join(TMP, "copied.copy"), exe)
    check(re.search(r"left as it is: \d+ bytes the program copies to run elsewhere "
                    r"\(V8's embedded builtins\)", p.stdout + p.stderr),
          "instrument says so: %s" % (p.stdout + p.stderr))


def test_engine_cache_private():
    """The cache is trusted only when it is the user's alone and its copies
    are its originals': a cache directory others may write (or, as root,
    one another user owns) is refused with a message, the run going to the
    fault engine; in a private one, a symbolic link planted for a copy or
    its side file is never followed (a 0600 file it pointed at stays as it
    was), and another program's copy under a program's key is rebuilt
    (root under sudo -E followed links into files it overwrote, and ran a
    foreign copy silently)."""
    exe = prog("three_mallocs")
    native = subprocess.run([exe], capture_output=True, text=True)
    shared = os.path.join(TMP, "shared_cache")
    os.makedirs(shared)
    os.chmod(shared, 0o777)
    cases = [(shared, "is writable by others")]
    if os.geteuid() == 0:
        owned = os.path.join(TMP, "others_cache")
        os.makedirs(owned, 0o755)
        os.chown(owned, 65534, 65534)
        cases.append((owned, "is not owned by you"))
    for d, why in cases:
        env = {"MEMTAP_CACHE_DIR": d}
        _, p = run(exe, engine="auto", env=env, out="shared.mtr")
        check_eq(p.stdout, native.stdout, "%s: the run" % why)
        check(why in p.stderr and "the fault engine traces the program" in p.stderr,
              "%s: said: %s" % (why, p.stderr))
        _, p = run(exe, engine="static", env=env, out="shared.mtr", expect_rc=None)
        check(p.returncode != 0 and why in p.stderr, "%s: --engine static: %s" % (why, p.stderr))
        check_eq([n for n in os.listdir(d)], [], "%s: nothing written there" % why)

    private = os.path.join(TMP, "private_cache")
    env = {"MEMTAP_CACHE_DIR": private}
    _, p = run(exe, env=env, out="private.mtr")
    copy = [c for c in rewrote(p.stderr) if c.endswith("three_mallocs")]
    check(copy, "the program's copy: %s" % p.stderr)
    copy = os.path.join(private, [n for n in os.listdir(private)
                                  if n.endswith("-three_mallocs")][0])
    victim = os.path.join(TMP, "victim")
    with open(victim, "w") as f:
        f.write("secret\n")
    os.chmod(victim, 0o600)
    for path in (copy, copy + ".src"):
        os.unlink(path)
        os.symlink(victim, path)
    _, p = run(exe, env=env, out="private.mtr")
    check_eq(p.stdout, native.stdout, "planted links: the run")
    check_eq(open(victim).read(), "secret\n", "the file the links pointed at")
    check(not os.path.islink(copy) and not os.path.islink(copy + ".src"),
          "the links replaced by memtap's files")
    other = os.path.join(private, [n for n in os.listdir(private)
                                   if n.endswith("-libc.so.6")][0])
    shutil.copy(other, copy)
    _, p = run(exe, env=env, out="private.mtr")
    check_eq(p.stdout, native.stdout, "a foreign copy: the run")
    check("the cached copy was damaged, changed since it was verified, or not this file's; rewrote %s" % exe in p.stderr,
          "a foreign copy rebuilt: %s" % p.stderr)


def test_engine_interleaved_code():
    """A program whose code and data the decoder cannot tell apart
    (Debian's shellcheck, built by GHC: info tables next to code, 14 % of
    its instructions decode two ways) is refused with why by the
    rewriter, here under --engine static (its copy wrote a jump across a `jb`
    the program runs, and died of SIGTRAP); auto then runs it under the
    fault engine (not run here: half a minute)."""
    sc = "/usr/bin/shellcheck"
    check(os.path.exists(sc), "shellcheck is installed (scripts/deps.sh)")
    script = os.path.join(TMP, "sc.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\necho $1\n")
    _, p = run(sc, script, out="sc.mtr", expect_rc=None)
    check(p.returncode != 0 and re.search(r"the static engine cannot run it: its code and "
                                          r"data are interleaved", p.stderr),
          "--engine static refuses: %s" % p.stderr)


if __name__ == "__main__":
    sys.exit(run_named(globals(), sys.argv[1]))
