"""heaptrack_stacks.py - heaptrack's figures per call stack (Debian's
heaptrack 1.4: allocations, bytes at the heap's peak, leaked bytes,
temporary allocations), read from what heaptrack_print prints with every
stack kept apart: what memtap's tests (tests/integration/stacks_tests.py)
and benches (bench/stacks_agree.py) compare memtap's stacks with.
"""
import os
import re
import subprocess

SECTIONS = {
    "MOST CALLS TO ALLOCATION FUNCTIONS":
        (re.compile(r"^(\d+) calls to allocation functions with (\S+) peak"), "allocs", "at_peak"),
    "MEMORY LEAKS": (re.compile(r"^(\S+) leaked over (\d+) calls"), "leaked", None),
    "MOST TEMPORARY ALLOCATIONS": (re.compile(r"^(\d+) temporary allocations of (\d+)"),
                                   "temporary", None),
}


def record(argv, tmp, stdin=None):
    """Runs argv under heaptrack; the path of its data file in tmp."""
    for f in os.listdir(tmp):
        if f.startswith("heaptrack."):
            os.unlink(os.path.join(tmp, f))
    p = subprocess.run(["heaptrack", "-o", os.path.join(tmp, "heaptrack")] + list(argv),
                       capture_output=True, text=True, stdin=stdin)
    files = [f for f in os.listdir(tmp) if f.startswith("heaptrack.")]
    if p.returncode != 0 or len(files) != 1:
        raise RuntimeError("heaptrack %s: exit %d, files %r: %s"
                           % (argv, p.returncode, files, p.stderr[-500:]))
    return os.path.join(tmp, files[0])


def stacks(data):
    """{frames: figures} of a heaptrack data file, frames a tuple of
    (function, "file.c:LINE" or None) from the innermost out, figures
    {"allocs": n, "at_peak": "2.40K", "leaked": "2.00K", "temporary": n}
    (leaked and temporary only where heaptrack lists them: not 0B, not
    0); stacks whose frames print alike (two calls on one line) add
    their counts up."""
    out = subprocess.run(["heaptrack_print", "-f", data, "-m", "0", "-a", "1", "-p", "1",
                          "-l", "1", "-T", "1", "-n", "1000000", "-s", "1000000"],
                         capture_output=True, text=True, check=True).stdout
    found, section, entry = {}, None, None

    def close():
        if entry:  # two calls on one line print alike: their counts add up
            figures = found.setdefault(tuple(entry["frames"]), {})
            for k, v in entry["values"].items():
                figures[k] = figures.get(k, 0) + v if isinstance(v, int) else v

    for line in out.splitlines():
        if line.strip() and line.isupper():
            close()
            entry, section = None, SECTIONS.get(line)
            continue
        m = section[0].match(line) if section else None
        if m:
            close()
            values = {section[1]: int(m.group(1)) if m.group(1).isdigit() else m.group(1)}
            if section[2]:
                values[section[2]] = m.group(2)
            entry = {"frames": [], "values": values}
        elif entry and re.match(r"^  \S", line):
            entry["frames"].append((line.strip(), None))
        elif entry and line.startswith("    at ") and entry["frames"]:
            where = os.path.basename(line[len("    at "):])
            entry["frames"][-1] = (entry["frames"][-1][0], None if where.endswith(":0") else where)
    close()
    return found


def byte_text(n):
    """A byte count as heaptrack_print writes it: 64B, 1000B, 2.40K, 1.05M
    (divided by 1000 while over 1000)."""
    unit = "B"
    for bigger in ("K", "M", "G"):
        if n <= 1000:
            break
        n /= 1000.0
        unit = bigger
    return "%dB" % n if unit == "B" else "%.2f%s" % (n, unit)
