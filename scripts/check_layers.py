#!/usr/bin/env python3
"""The shape of memtap's source, checked (ARCHITECTURE.md says why):

- a folder of src/ (src/preload's subfolders are folders of their own)
  includes another folder's headers, directly or through other headers,
  only where LAYERS allows it (and, where it names headers, only those);
- the call graph of the object files has no cycle across folders:
  scripts/call_graph.py, a test of its own;
- every source file opens with a comment saying what it owns;
- a file over LONG lines says at its top why it is one file ("One file:").

    scripts/check_layers.py [ROOT]      exit 0, or 1 with one line per fault
    scripts/check_layers.py --self-test the checker finds faults it is shown
"""
import os
import re
import sys
import tempfile

# folder -> the folders it may include from; a folder mapped to a list of
# headers may be included only for those.  "memtap" is include/memtap/.
# src/preload's subfolders are folders of their own ("preload/fault"),
# listed bottom to top: each sees only folders listed before it.
P = "preload/"
IN_PROCESS = {"sys", "x86", "rt", "shadow", "memtap", P + "core", P + "record",
              P + "signal", P + "memmap", P + "filter", P + "fault", P + "modules",
              P + "syscall", P + "interpose"}
LAYERS = {
    "sys": {},
    # (the rewriter's code generator, x86/emit.c, writes the stubs whose
    # layout rt/abi.h gives)
    "x86": {"sys": None, "rt": ["abi.h"], "memtap": ["trace.h"], "trace": ["format.h"]},
    "trace": {"sys": None, "memtap": None},
    "elf": {"sys": None},
    "symbols": {"sys": None, "memtap": None, "elf": None},
    "analysis": {"sys": None, "x86": None, "elf": None},
    # libmemtap.so, bottom to top
    P + "core": {"sys": None},
    P + "record": {"sys": None, "memtap": None, "trace": None, P + "core": None,
                   # the format of the entries rewritten code logs
                   "rt": ["abi.h"]},
    # (the recorder's interface speaks of records and entries: whoever
    # sees preload/record sees memtap/trace.h, trace/pack.h and the format
    # it packs to, trace/format.h)
    P + "signal": {"sys": None, "memtap": None, "trace": ["pack.h", "format.h"],
                   P + "core": None, P + "record": None},
    P + "memmap": {"sys": None, "memtap": None, "trace": ["pack.h", "format.h"],
                   P + "core": None, P + "record": None},
    P + "filter": {"sys": None, "memtap": None, "trace": ["pack.h", "format.h"],
                   P + "core": None, P + "record": None, P + "memmap": None},
    P + "fault": {"sys": None, "x86": None, "memtap": None, "trace": ["pack.h", "format.h"],
                  P + "core": None, P + "record": None, P + "signal": None,
                  P + "memmap": None},
    "rt": {"sys": None, "memtap": None, "trace": ["pack.h", "format.h"], P + "core": None,
           P + "record": None, P + "signal": None, P + "memmap": None,
           P + "fault": None},
    # (the module table names a copy in the cache by its original, which
    # the copy's side file in the cache says: cache/key.h reads it)
    P + "modules": {"sys": None, "memtap": None, "trace": None, "rt": None,
                    "cache": ["key.h"], P + "core": None, P + "record": None,
                    P + "memmap": None, P + "filter": None},
    P + "syscall": {"sys": None, "memtap": None, "trace": ["pack.h", "format.h"], "rt": None,
                    "cache": ["key.h"], P + "core": None, P + "record": None,
                    P + "signal": None, P + "memmap": None, P + "fault": None,
                    P + "modules": None},
    P + "interpose": {"sys": None, "memtap": None, "trace": None, "rt": None,
                      "shadow": None, P + "core": None, P + "record": None,
                      P + "signal": None, P + "memmap": None, P + "filter": None,
                      P + "fault": None, P + "modules": None, P + "syscall": None},
    "rewrite": {"sys": None, "memtap": None, "x86": None, "elf": None,
                "analysis": None,
                "rt": ["abi.h"],
                # the records of a site's entry, which the copy carries
                "trace": ["pack.h", "format.h"]},
    "cache": {"sys": None, "memtap": None, "rewrite": None, "rt": ["abi.h"],
              "trace": ["format.h"], "x86": ["insn.h"]},
    "shadow": {"sys": None, "memtap": None},
    "report": {"sys": None, "memtap": None, "trace": None, "symbols": None,
               "analysis": None, "x86": ["insn.h"]},
    "cli": {"sys": None, "memtap": None, "trace": None, "elf": None,
            "symbols": None,
            "analysis": None, "report": None, "rewrite": None,
            "cache": None, "rt": ["abi.h"], "x86": ["insn.h"]},
}
# Transitive reaches still tolerated: analysis/'s and rewrite/'s headers
# expose ELF types to their users, and the cache reaches analysis/ through
# rewrite/'s; a folder may reach these through another folder's header,
# never by its own include.  The list may only shrink.
LEAKS = {("cache", "analysis"), ("cache", "elf"), ("report", "elf")}
LONG = 600
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(rel):
    """The layer-table folder of a path under src/ (preload's subfolders
    are folders of their own), or of an include written "folder/..."."""
    parts = rel.split("/")
    if parts[0] == "preload" and len(parts) > 2:
        return "preload/" + parts[1]
    return parts[0]


def sources(root):
    src = os.path.join(root, "src")
    for dirpath, _, files in sorted(os.walk(src)):
        for name in sorted(files):
            if name.endswith((".c", ".h")):
                path = os.path.join(dirpath, name)
                yield folder_of(os.path.relpath(path, src)), path


def resolve(root, including, name):
    """The file an include names: beside the including file, under src/,
    or under include/ ("memtap/..."); None for a system header."""
    for base in (os.path.dirname(including), os.path.join(root, "src"),
                 os.path.join(root, "include")):
        path = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(path):
            return path
    return None


def reached(root, path, texts):
    """Every local header path includes, directly or through other headers:
    {header path: the chain of includes that reaches it}."""
    seen, todo = {}, [(path, [])]
    while todo:
        cur, chain = todo.pop()
        if cur not in texts:
            texts[cur] = open(cur, encoding="utf-8").read()
        for name in INCLUDE.findall(texts[cur]):
            hdr = resolve(root, cur, name)
            if hdr is None and "/" in name:  # not there: judged by its name
                seen.setdefault(os.path.join(root, "src", name), chain + [name])
            elif hdr and hdr not in seen and hdr != path:
                seen[hdr] = chain + [name]
                todo.append((hdr, chain + [name]))
    return seen


def folder_of_path(root, path):
    rel = os.path.relpath(path, root)
    if rel.startswith("include/memtap/"):
        return "memtap"
    return folder_of(os.path.relpath(path, os.path.join(root, "src")))


def faults(root):
    texts = {}
    for folder, path in sources(root):
        rel = os.path.relpath(path, root)
        allowed = LAYERS.get(folder)
        if allowed is None:
            yield "%s: src/%s is not in the layer table" % (rel, folder)
            continue
        for hdr, chain in sorted(reached(root, path, texts).items()):
            other = folder_of_path(root, hdr)
            how = " (through %s)" % " -> ".join(chain[:-1]) if len(chain) > 1 else ""
            name = os.path.basename(hdr)
            if other == folder or (len(chain) > 1 and (folder, other) in LEAKS):
                continue
            if other not in allowed:
                yield "%s: includes %s%s (%s may not see %s)" % (rel, chain[-1], how,
                                                                 folder, other)
            elif allowed[other] is not None and name not in allowed[other]:
                yield "%s: includes %s%s (of %s, only %s)" % (
                    rel, chain[-1], how, other, ", ".join(allowed[other]))
        text = texts.get(path) or open(path, encoding="utf-8").read()
        if not text.lstrip().startswith("/*"):
            yield "%s: does not open with a comment saying what it owns" % rel
        lines = text.count("\n")
        head = text[:text.find("*/") + 2]
        if lines > LONG and "One file:" not in head:
            yield "%s: %d lines, and its top does not say why it is one file" % (rel, lines)


def check_table():
    """The in-process folders include nothing of the offline side."""
    for folder in IN_PROCESS - {"memtap"}:
        for other in LAYERS[folder]:
            if other not in IN_PROCESS and other not in ("trace", "cache"):
                yield "LAYERS: in-process %s may not see offline %s" % (folder, other)


def self_test():
    """A tree with one fault of each kind, and one clean file."""
    files = {
        "src/report/wrong.c": '/* x */\n#include "preload/tracer.h"\n',
        "src/rewrite/private.c": '/* x */\n#include "rt/rewritten.h"\n',
        "src/trace/bare.c": "int x;\n",
        "src/sys/long.c": "/* x */\n" + "int y;\n" * (LONG + 1),
        "src/newfolder/a.c": "/* x */\n",
        "src/cli/fine.c": '/* x */\n#include "report/render.h"\n#include "rt/abi.h"\n',
        # allowed itself, but what it includes is not memmap's to see
        "src/preload/memmap/through.c": '/* x */\n#include "preload/record/r.h"\n',
        "src/preload/record/r.h": '/* x */\n#include "preload/interpose/i.h"\n',
        "src/preload/interpose/i.h": "/* x */\n",
    }
    with tempfile.TemporaryDirectory() as root:
        for name, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
            with open(os.path.join(root, name), "w") as f:
                f.write(text)
        found = sorted(faults(root))
    want = ["src/newfolder/a.c", "src/preload/memmap/through.c",
            "src/preload/record/r.h", "src/report/wrong.c", "src/rewrite/private.c",
            "src/sys/long.c", "src/trace/bare.c"]
    got = [f.split(":")[0] for f in found]
    if got != want:
        print("self-test: found %r, want faults in %r" % (found, want))
        return 1
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    found = list(check_table()) + list(faults(root))
    for f in found:
        print(f)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
