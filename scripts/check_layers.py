#!/usr/bin/env python3
"""The shape of memtap's source, checked (ARCHITECTURE.md says why):

- a folder of src/ includes another folder's headers only where LAYERS
  allows it (and, where it names headers, only those);
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
IN_PROCESS = {"sys", "x86", "rt", "preload", "shadow", "memtap"}
LAYERS = {
    "sys": {},
    "x86": {"sys": None},
    "trace": {"sys": None, "memtap": None},
    "elf": {"sys": None},
    "symbols": {"sys": None, "memtap": None, "elf": None},
    "analysis": {"sys": None, "x86": None, "elf": None},
    "rt": {"sys": None, "memtap": None, "preload": None},
    "rewrite": {"sys": None, "x86": None, "elf": None, "analysis": None,
                "rt": ["abi.h"],
                # the records of a site's entry, which the copy carries
                "trace": ["pack.h"]},
    "cache": {"sys": None, "rewrite": None, "rt": ["abi.h"]},
    "shadow": {"sys": None, "memtap": None},
    "preload": {"sys": None, "x86": None, "memtap": None, "trace": None,
                "rt": None, "shadow": None, "cache": ["key.h"]},
    "report": {"sys": None, "memtap": None, "trace": None, "symbols": None,
               "analysis": None},
    "cli": {"sys": None, "memtap": None, "trace": None, "elf": None,
            "symbols": None,
            "analysis": None, "report": None, "rewrite": None,
            "cache": None, "rt": ["abi.h"]},
}
LONG = 600
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z0-9_]+)/([^"]+)"', re.M)


def sources(root):
    for folder in sorted(os.listdir(os.path.join(root, "src"))):
        path = os.path.join(root, "src", folder)
        if not os.path.isdir(path):
            continue
        for dirpath, _, files in os.walk(path):
            for name in sorted(files):
                if name.endswith((".c", ".h")):
                    yield folder, os.path.join(dirpath, name)


def faults(root):
    for folder, path in sources(root):
        rel = os.path.relpath(path, root)
        text = open(path, encoding="utf-8").read()
        allowed = LAYERS.get(folder)
        if allowed is None:
            yield "%s: src/%s is not in the layer table" % (rel, folder)
            continue
        for other, header in INCLUDE.findall(text):
            if other == folder:
                continue
            if other not in allowed:
                yield "%s: includes %s/%s (%s may not see %s)" % (rel, other, header,
                                                                  folder, other)
            elif allowed[other] is not None and header not in allowed[other]:
                yield "%s: includes %s/%s (of %s, only %s)" % (
                    rel, other, header, other, ", ".join(allowed[other]))
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
    }
    with tempfile.TemporaryDirectory() as root:
        for name, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
            with open(os.path.join(root, name), "w") as f:
                f.write(text)
        found = sorted(faults(root))
    want = ["src/newfolder/a.c", "src/report/wrong.c", "src/rewrite/private.c",
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
