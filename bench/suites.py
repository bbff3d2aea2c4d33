#!/usr/bin/env python3
"""Real programs' own tests under `memtap run` (the default engine), side by
side with the same runs natively: each suite must give the same output and
exit status (Python's regression tests: the same tests run, skipped and
passed).  The copies are made first, outside the times (a traced run of
each suite's first command).  Prints one line a suite: its result both ways, CPU seconds (user
+ sys of the whole run, memtap's threads included) and wall seconds both
ways, the events recorded and the trace's size.

    bench/suites.py [--only NAME,...] [--keep]

Suites: python (121 modules of Debian's libpython3.11-testsuite, run by
regrtest's worker processes; the rewritten code's accesses logged and
dropped, MEMTAP_REWRITE_DISCARD=1: their traces would fill the disk), sqlite
(bench/suites/corpus.sql: LIKE, GLOB, JSON, window functions, FTS5, CTEs),
gzip, bzip2, xz, zstd (compress and decompress 4 MiB of mixed text and
binary, the bytes compared with native), lua and perl (bench/suites/*),
jq (filters over a generated document).  Needs Debian's
libpython3.11-testsuite, sqlite3, lua5.4, perl, jq, gzip, bzip2, xz-utils
and zstd: `scripts/deps.sh --bench` installs them.
"""
import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMTAP = os.path.join(ROOT, "build", "bin", "memtap")
HERE = os.path.join(ROOT, "bench", "suites")

PY_TESTS = """test_abc test_array test_augassign test_base64 test_binascii test_binop
test_bisect test_bool test_bytes test_calendar test_call test_cmath test_codecs
test_collections test_colorsys test_compare test_complex test_contains test_contextlib
test_copy test_copyreg test_csv test_dataclasses test_defaultdict test_deque test_descr
test_dict test_dictviews test_difflib test_dis test_dynamic test_enum test_enumerate
test_exception_group test_exceptions test_fnmatch test_format test_fractions test_frozen
test_funcattrs test_functools test_generators test_genexps test_getopt test_global
test_grammar test_graphlib test_hash test_hashlib test_heapq test_hmac test_html test_int
test_int_literal test_isinstance test_iter test_itertools test_json test_keyword
test_keywordonlyarg test_list test_listcomps test_long test_math test_memoryview
test_operator test_opcodes test_ordered_dict test_pow test_pprint test_print test_property
test_queue test_random test_range test_re test_repl test_richcmp test_scope test_secrets
test_set test_setcomps test_shlex test_slice test_sort test_statistics test_string
test_string_literals test_stringprep test_struct test_structseq test_sys test_textwrap
test_tokenize test_tuple test_typechecks test_types test_typing test_unary
test_unicode_identifiers test_univnewlines test_unpack test_userdict test_userlist
test_userstring test_uuid test_weakref test_weakset test_with test_zlib test_bz2
test_lzma test_gzip test_zipfile test_tarfile test_bufio test_pickle test_xml_etree
test_email test_argparse test_configparser""".split()


# Python's tests would write some 100 GB of traces: their accesses are
# logged and dropped (every access still goes through the log sequence and
# the runtime; the heap events, block events and the module table are
# written)
DISCARD = {"python": {"MEMTAP_REWRITE_DISCARD": "1"}}


def data_file(tmp):
    """4 MiB: this repository's text and a system library, repeated."""
    path = os.path.join(tmp, "input.bin")
    parts = []
    for base, _, names in os.walk(os.path.join(ROOT, "src")):
        for n in sorted(names):
            with open(os.path.join(base, n), "rb") as f:
                parts.append(f.read())
    with open("/lib/x86_64-linux-gnu/libc.so.6", "rb") as f:
        parts.append(f.read()[:1 << 20])
    blob = b"".join(parts)
    with open(path, "wb") as f:
        f.write((blob * (4 * (1 << 20) // len(blob) + 1))[:4 << 20])
    return path


def jq_input(tmp):
    path = os.path.join(tmp, "doc.json")
    rows = ['{"id": %d, "name": "item%d", "tags": ["t%d", "u%d"], "price": %d.%02d}'
            % (i, i, i % 7, i % 13, i % 997, i % 100) for i in range(20000)]
    with open(path, "w") as f:
        f.write("[" + ",\n".join(rows) + "]\n")
    return path


def suites(tmp):
    """name -> list of (argv, stdin file or None): run in order, all outputs
    concatenated."""
    inp = data_file(tmp)
    s = {"python": [(["/usr/bin/python3.11", "-m", "test", "-q", "-j0"] + PY_TESTS, None)],
         "sqlite": [(["sqlite3", ":memory:"], os.path.join(HERE, "corpus.sql"))],
         "lua": [(["lua5.4", os.path.join(HERE, "script.lua")], None)],
         "perl": [(["perl", os.path.join(HERE, "script.pl")], None)],
         "jq": [(["jq", "-c", f], jq_input(tmp)) for f in
                ("map(select(.price > 500)) | length",
                 "group_by(.tags[0]) | map({k: .[0].tags[0], n: length, s: (map(.price) | add)})",
                 "[.[] | .name | ascii_upcase | test(\"ITEM1.*7$\")] | map(select(.)) | length",
                 "sort_by(-.price, .id) | .[:5] | map(.id)")]}
    for tool, level in (("gzip", "-6"), ("bzip2", "-9"), ("xz", "-6"), ("zstd", "-19")):
        packed = os.path.join(tmp, "packed." + tool)
        s[tool] = [([tool, level, "-c"], inp), ([tool, "-d", "-c"], packed)]
    return s


def run(argv, stdin, traced, trace, env=None):
    """(stdout bytes, exit status, cpu seconds, wall seconds)."""
    cmd = [MEMTAP, "run", "-q", "-o", trace, "--"] + argv if traced else argv
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(stdin, "rb") if stdin else open(os.devnull, "rb") as f:
        p = subprocess.run(cmd, stdin=f, capture_output=True,
                           env=dict(os.environ, **(env or {})))
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return p.stdout, p.stderr, p.returncode, cpu, wall


def python_result(out):
    """What regrtest says ran, passed, failed and was skipped."""
    lines = out.decode(errors="replace").splitlines()
    keep = []
    for i, l in enumerate(lines):
        if re.match(r"^(Total tests|Total test files|Result|== Tests result)", l):
            keep.append(l)
        elif re.search(r"tests? failed", l):  # and which
            keep.append(l + (" " + lines[i + 1].strip() if i + 1 < len(lines) else ""))
        elif re.search(r"tests? skipped", l):
            keep.append(l)
    return "\n".join(keep)


def events(trace_dir):
    n, size = 0, 0
    for f in os.listdir(trace_dir):
        p = os.path.join(trace_dir, f)
        if f.endswith(".mtr"):
            size += os.path.getsize(p)
            info = subprocess.run([MEMTAP, "info", p], capture_output=True, text=True).stdout
            m = re.search(r"^events: (\d+)", info, re.M)
            n += int(m.group(1)) if m else 0
    return n, size


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="memtap-suites-")
    all_suites = suites(tmp)
    names = a.only.split(",") if a.only else list(all_suites)
    print("| suite | native | memtap run | same output | native CPU s (wall) | memtap CPU s "
          "(wall) | events | trace |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    failed = 0
    for name in names:
        # memtap's cache first: the copies are made once, outside the times
        argv, stdin = all_suites[name][0]
        warm = ["/usr/bin/python3.11", "-c", "import json, sqlite3, zlib, bz2, lzma, ssl"] \
            if name == "python" else argv
        run(warm, stdin, True, os.path.join(tmp, "warm.mtr"))
        res = {}
        for traced in (False, True):
            tdir = os.path.join(tmp, name + ("-traced" if traced else "-native"))
            os.makedirs(tdir, exist_ok=True)
            out, cpu, wall, rc = b"", 0.0, 0.0, 0
            for i, (argv, stdin) in enumerate(all_suites[name]):
                o, e, r, c, w = run(argv, stdin, traced, os.path.join(tdir, "t%d.mtr" % i),
                                    DISCARD.get(name))
                if not traced and i == 0 and name in ("gzip", "bzip2", "xz", "zstd"):
                    with open(os.path.join(tmp, "packed." + name), "wb") as f:
                        f.write(o)
                out += o
                rc = rc or r
                cpu += c
                wall += w
            res[traced] = (out, rc, cpu, wall, tdir)
        nat, mt = res[False], res[True]
        if name == "python":
            same = python_result(nat[0]) == python_result(mt[0]) and nat[1] == mt[1]
        else:
            same = nat[0] == mt[0] and nat[1] == mt[1]
        failed += not same
        n, size = events(mt[4])
        print("| %s | exit %d | exit %d | %s | %.2f (%.2f) | %.2f (%.2f) | %.1f M | %.1f MiB |"
              % (name, nat[1], mt[1], "yes" if same else "NO", nat[2], nat[3], mt[2], mt[3],
                 n / 1e6, size / 2**20))
        if name == "python":
            print("|  | " + python_result(mt[0]).replace("\n", "; ") + " |")
        sys.stdout.flush()
        if not a.keep:
            shutil.rmtree(mt[4], ignore_errors=True)
    if not a.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
