#!/usr/bin/env python3
"""The call graph of memtap's source files, from the object files of a
build: file A calls file B when A's object refers to a global symbol B's
object defines.  The C library's names are left out (libmemtap.so
interposes malloc, memcpy and the like: a call of malloc is the program's
business, not an edge to the wrapper).  Prints the cycles, each a set of
files that reach one another; a cycle whose files lie in more than one
folder (src/preload/fault and src/preload/syscall are two) is a fault.

    scripts/call_graph.py BUILD_DIR               exit 0, or 1 and the cycles
    scripts/call_graph.py --dot BUILD_DIR         the graph, for graphviz
    scripts/call_graph.py --self-test
"""
import collections
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBC = ["/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libm.so.6"]


def libc_names():
    names = set()
    for lib in LIBC:
        out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True,
                             text=True).stdout
        names.update(line.split()[-1].split("@")[0] for line in out.splitlines() if line)
    return names


def objects(build):
    """{source path relative to the source root: object path}; an object
    built into several targets counts once."""
    found = {}
    for dirpath, _, files in os.walk(build):
        m = re.search(r"/CMakeFiles/[^/]+\.dir(/.*)?$", dirpath)
        if not m:
            continue
        # the object's path repeats the source's, with ".." spelt "__"
        rel = os.path.relpath(dirpath, os.path.join(build))
        for name in files:
            if not name.endswith(".c.o"):
                continue
            src = source_of(rel, m.group(1) or "", name[:-2])
            # (a source moved or removed since leaves its object behind)
            if src and src.startswith("src/") and os.path.isfile(os.path.join(ROOT, src)):
                found.setdefault(src, os.path.join(dirpath, name))
    return found


def source_of(rel, inner, name):
    """src/x/y.c of the object rel/.../CMakeFiles/T.dir/inner/y.c.o."""
    head = rel.split("/CMakeFiles/")[0]  # the folder of the CMakeLists
    parts = head.split("/") + [p.replace("__", "..") for p in inner.split("/") if p]
    return os.path.normpath(os.path.join(*parts, name))


def symbols(obj):
    """(defined global names, undefined names) of an object file."""
    out = subprocess.run(["nm", obj], capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == "U":
            undefined.add(f[1])
        elif len(f) == 3 and f[1] in "TDBRVWGSi":
            defined.add(f[2])
    return defined, undefined


def graph(objs, leave_out):
    defs = collections.defaultdict(set)
    uses = {}
    for src, obj in objs.items():
        d, u = symbols(obj)
        for name in d:
            defs[name].add(src)
        uses[src] = u - leave_out
    edges = collections.defaultdict(set)
    for src, names in uses.items():
        for name in names:
            edges[src].update(defs.get(name, set()) - {src})
    return {src: edges[src] for src in objs}


def cycles(edges):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        work = [(v, iter(sorted(edges.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def faults(edges):
    for comp in cycles(edges):
        folders = sorted({os.path.dirname(f) for f in comp})
        if len(folders) > 1:
            yield "a cycle of %d files across %s: %s" % (len(comp), ", ".join(folders),
                                                          " ".join(comp))


def self_test():
    edges = {"src/a/x.c": {"src/a/y.c"}, "src/a/y.c": {"src/a/x.c"},
             "src/b/p.c": {"src/c/q.c"}, "src/c/q.c": {"src/d/r.c"},
             "src/d/r.c": {"src/b/p.c"}, "src/e/s.c": {"src/a/x.c"}}
    got = list(faults(edges))
    if len(got) != 1 or "src/b/p.c src/c/q.c src/d/r.c" not in got[0]:
        print("self-test: found %r, want the one cycle of b, c and d" % got)
        return 1
    if source_of("src/preload", "/__/sys", "rawsys.c") != "src/sys/rawsys.c":
        print("self-test: object paths are not mapped to their sources")
        return 1
    return 0


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    dot = argv[:1] == ["--dot"]
    args = argv[1:] if dot else argv
    if not args:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    objs = objects(args[0])
    if not objs:
        print("call_graph: %s: no object files of src/ (build first)" % args[0],
              file=sys.stderr)
        return 2
    edges = graph(objs, libc_names())
    if dot:
        print("digraph memtap {")
        for src in sorted(edges):
            for dst in sorted(edges[src]):
                print('  "%s" -> "%s";' % (src, dst))
        print("}")
        return 0
    found = list(faults(edges))
    for f in found:
        print(f)
    for comp in cycles(edges):
        if len({os.path.dirname(f) for f in comp}) == 1:
            print("note: a cycle inside %s: %d files" % (os.path.dirname(comp[0]), len(comp)))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
