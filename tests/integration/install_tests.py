#!/usr/bin/env python3
"""`cmake --install`: the installed memtap runs from anywhere (moved
prefix included), and users build a trace reader (pkg-config) and a
consumer library (CMake package) against the installed files.

Usage: install_tests.py TEST_NAME   (MEMTAP_BUILD names the build tree)
"""
import os
import re
import shutil
import subprocess
import sys

from memtap_tests import BUILD, TMP, check, check_eq, prog, run_named

READER = r"""
#include <memtap/trace.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    memtap_trace *t;
    if (argc != 2 || memtap_trace_open(argv[1], &t) != MEMTAP_OK)
        return 1;
    memtap_event ev;
    unsigned long n = 0, mallocs = 0;
    while (memtap_trace_next(t, &ev) > 0) {
        n++;
        mallocs += ev.rec.kind == MEMTAP_EV_MALLOC;
    }
    memtap_trace_close(t);
    printf("%lu %lu\n", n, mallocs);
    return 0;
}
"""

CONSUMER = r"""
#include <memtap/consumer.h>
static unsigned long seen;
void memtap_consume(const memtap_access *a, size_t n) { (void)a; seen += n; }
"""

PACKAGE = """
cmake_minimum_required(VERSION 3.18)
project(users C)
find_package(memtap 0.1 REQUIRED)
add_executable(reader reader.c)
target_link_libraries(reader PRIVATE memtap::trace)
add_library(consumer SHARED consumer.c)
target_link_libraries(consumer PRIVATE memtap::headers)
"""


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    check_eq(p.returncode, 0, "%s\n%s" % (" ".join(cmd), p.stderr))
    return p


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def test_install_relocatable():
    staged = os.path.join(TMP, "staged")
    run(["cmake", "--install", BUILD, "--prefix", staged])
    prefix = os.path.join(TMP, "moved")
    shutil.move(staged, prefix)  # relocatable: nothing points at `staged`
    for f in ("bin/memtap", "lib/memtap/libmemtap.so", "lib/libmemtap-trace.so",
              "include/memtap/trace.h", "include/memtap/consumer.h",
              "lib/pkgconfig/memtap.pc", "lib/cmake/memtap/memtapConfig.cmake",
              "share/man/man1/memtap.1", "share/man/man1/memtap-report.1",
              "share/bash-completion/completions/memtap"):
        check(os.path.exists(os.path.join(prefix, f)), "installed " + f)
    # memtap writes Parquet itself: DuckDB's library is the tests' alone
    check(not os.path.exists(os.path.join(prefix, "lib/memtap/libduckdb.so")),
          "DuckDB's library not installed")
    # no installed library exports the shadow memory: its header stays out
    check(not os.path.exists(os.path.join(prefix, "include/memtap/shadow.h")),
          "shadow.h not installed")
    # a manual page for every command the command's own table lists
    for c in run([os.path.join(prefix, "bin", "memtap"), "--commands"]).stdout.split():
        check(os.path.exists(os.path.join(prefix, "share/man/man1/memtap-%s.1" % c)),
              "memtap-%s(1)" % c)
    # a page per command, from its --help
    with open(os.path.join(prefix, "share/man/man1/memtap-run.1")) as f:
        page = f.read()
    check(page.startswith(".\\\"") or ".TH" in page, "a man page")
    check("keep\\-going" in page and ".TH MEMTAP-RUN" in page,
          "memtap-run(1) has run's options")
    # its NAME says what run does (the line of `memtap --help`), and it
    # ends with examples and the other pages
    name = page.split(".SH NAME", 1)[1].split(".SH", 1)[0]
    check("run a program under memtap" in name, "memtap-run(1)'s NAME: %r" % name)
    check(".SH EXAMPLES" in page and ".SH \"SEE ALSO\"" in page and ".BR memtap-show (1)" in page,
          "memtap-run(1)'s EXAMPLES and SEE ALSO")
    # completion: the commands, and a command's options from its --help
    comp = os.path.join(prefix, "share/bash-completion/completions/memtap")
    words = run(["bash", "-c", 'PATH="%s/bin:$PATH"; source "%s"; '
                 'COMP_WORDS=(memtap ru); COMP_CWORD=1; _memtap; echo "${COMPREPLY[@]}"; '
                 'COMP_WORDS=(memtap run --keep); COMP_CWORD=2; _memtap; echo "${COMPREPLY[@]}"; '
                 'COMP_WORDS=(memtap run --engine f); COMP_CWORD=3; _memtap; echo "${COMPREPLY[@]}"; '
                 'COMP_WORDS=(memtap export --format ""); COMP_CWORD=3; _memtap; echo "${COMPREPLY[@]}"; '
                 'COMP_WORDS=(memtap cache c); COMP_CWORD=2; _memtap; echo "${COMPREPLY[@]}"; '
                 'COMP_WORDS=(memtap run -- gzi); COMP_CWORD=3; _memtap; echo "${COMPREPLY[@]}"'
                 % (prefix, comp)]).stdout.splitlines()
    check_eq(words[:5], ["run", "--keep-going", "fault", "lackey dinero sqlite parquet", "clear"],
             "completion: commands, options, option values, cache's subcommands")
    check("gzip" in words[5].split(), "completion after --: a program: %r" % words[5])
    elsewhere = os.path.join(TMP, "elsewhere")
    os.mkdir(elsewhere)
    env = {k: v for k, v in os.environ.items() if k != "MEMTAP_PRELOAD"}
    run([os.path.join(prefix, "bin", "memtap"), "run", "-o", "t.mtr", "--",
         prog("three_mallocs")], cwd=elsewhere, env=env)
    info = run([os.path.join(prefix, "bin", "memtap"), "info", "t.mtr"], cwd=elsewhere).stdout
    check(re.search(r"^module \d+: .* %s$" % re.escape(
        os.path.join(prefix, "lib", "memtap", "libmemtap.so")), info, re.M),
          "the run used the installed libmemtap.so: %r" % info)
    events = int(re.search(r"^events: (\d+)$", info, re.M).group(1))
    # the page and the Parquet files need nothing outside the prefix (nor
    # DuckDB)
    run([os.path.join(prefix, "bin", "memtap"), "report", "-q", "--html", "t.html", "t.mtr"],
        cwd=elsewhere, env=env)
    check(os.path.getsize(os.path.join(elsewhere, "t.html")) > 100000, "a page with ECharts inlined")
    run([os.path.join(prefix, "bin", "memtap"), "export", "-q", "--format", "parquet", "-o", "pq",
         "t.mtr"], cwd=elsewhere, env=env)
    check(os.path.isdir(os.path.join(elsewhere, "pq", "accesses")), "Parquet files written")

    # a trace reader built with pkg-config
    write(os.path.join(elsewhere, "reader.c"), READER)
    flags = run(["pkg-config", "--cflags", "--libs", "memtap"],
                env=dict(env, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
                ).stdout.split()
    run(["cc", "-o", "reader", "reader.c"] + flags, cwd=elsewhere)
    out = run(["./reader", "t.mtr"], cwd=elsewhere,
              env=dict(env, LD_LIBRARY_PATH=os.path.join(prefix, "lib"))).stdout.split()
    # three_mallocs: three mallocs (alloc_a, alloc_b, alloc_c)
    check_eq([int(x) for x in out], [events, 3], "the reader reads the trace")

    # a reader and a consumer library built with the CMake package
    src = os.path.join(TMP, "users")
    os.mkdir(src)
    write(os.path.join(src, "CMakeLists.txt"), PACKAGE)
    write(os.path.join(src, "reader.c"), READER)
    write(os.path.join(src, "consumer.c"), CONSUMER)
    build = os.path.join(src, "build")
    run(["cmake", "-S", src, "-B", build, "-DCMAKE_PREFIX_PATH=" + prefix])
    run(["cmake", "--build", build])
    out = run([os.path.join(build, "reader"), os.path.join(elsewhere, "t.mtr")]).stdout.split()
    check_eq([int(x) for x in out], [events, 3], "the CMake-built reader reads the trace")
    check(os.path.exists(os.path.join(build, "libconsumer.so")), "the consumer builds")


if __name__ == "__main__":
    sys.exit(run_named(globals(), sys.argv[1]))
