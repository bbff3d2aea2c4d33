#!/usr/bin/env python3
"""What a heap event's call stack costs: allocation-heavy programs run
natively, under `memtap run --heap-only` with call stacks (the default,
16 frames) and without (--stack-depth 0), and under heaptrack, side by
side in interleaved rounds; CPU time (user+sys of the whole run, every
process the tool starts included) and wall time, medians of RUNS rounds,
and each tool's excess over the native run of its round per allocation
(memtap also unwinds at each free; heaptrack does not).

    bench/alloc_stacks.py [RUNS]     (builds build/ first if needed)

Workloads: alloc_churn (one thread, 500,000 malloc/free pairs at one
stack: what the per-thread memory of stacks saves) and Debian's python3
on a JSON round trip (thousands of distinct stacks: what unwinding
costs).
"""
import json
import os
import statistics
import subprocess
import sys

from table4 import measured, scratch_dir

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
MEMTAP = os.path.join(BIN, "memtap")
PYTHON_JOB = ("import json, hashlib\n"
              "d = [{'k': i, 'v': str(i) * 3} for i in range(20000)]\n"
              "s = json.dumps(d)\n"
              "print(hashlib.sha256(s.encode()).hexdigest(), len(json.loads(s)))\n")


def allocations(trace):
    rep = json.loads(subprocess.run([MEMTAP, "report", "-q", "--json", "-", trace],
                                    capture_output=True, text=True, check=True).stdout)
    return rep["heap"]["allocs"], len(rep["stacks"]), os.path.getsize(trace)


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    if not os.path.exists(os.path.join(BIN, "alloc_churn")):
        subprocess.run([os.path.join(ROOT, "scripts", "build.sh")], check=True)
    tmp = scratch_dir("memtap-bench-")
    os.environ["MEMTAP_CACHE_DIR"] = os.path.join(tmp, "cache")
    job = os.path.join(tmp, "job.py")
    with open(job, "w") as f:
        f.write(PYTHON_JOB)
    workloads = {"alloc_churn": [os.path.join(BIN, "alloc_churn"), "500000", "1"],
                 "python3": ["/usr/bin/python3", job]}
    trace = os.path.join(tmp, "t.mtr")
    tools = {
        "memtap, stacks": lambda argv: [MEMTAP, "run", "-q", "--heap-only", "-o", trace, "--"] + argv,
        "memtap, none": lambda argv: [MEMTAP, "run", "-q", "--heap-only", "--stack-depth", "0",
                                      "-o", trace, "--"] + argv,
        "heaptrack": lambda argv: ["heaptrack", "-o", os.path.join(tmp, "ht")] + argv,
    }
    print("%-12s %-15s %9s %8s %8s %12s %12s" % ("workload", "tool", "allocs", "CPU s",
                                                 "wall s", "CPU us/alloc", "wall us/alloc"))
    for name, argv in workloads.items():
        subprocess.run(tools["memtap, stacks"](argv), check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        allocs, stacks, size = allocations(trace)
        t = {n: [] for n in ["native"] + list(tools)}
        for _ in range(runs):
            t["native"].append(measured(argv))
            for tool, cmd in tools.items():
                for f in os.listdir(tmp):
                    if f.startswith("ht."):
                        os.unlink(os.path.join(tmp, f))
                t[tool].append(measured(cmd(argv), subprocess.DEVNULL))
        nat = t.pop("native")
        print("%-12s %-15s %9d %8.3f %8.3f" % (name, "native", allocs,
                                              statistics.median(c for _, c, _ in nat),
                                              statistics.median(w for w, _, _ in nat)))
        for tool, v in t.items():
            # paired with the native run of the same round: drift cancels
            per = [((a[1] - b[1]) / allocs * 1e6, (a[0] - b[0]) / allocs * 1e6)
                   for a, b in zip(v, nat)]
            print("%-12s %-15s %9s %8.3f %8.3f %12.2f %12.2f" % (
                name, tool, "", statistics.median(c for _, c, _ in v),
                statistics.median(w for w, _, _ in v), statistics.median(c for c, _ in per),
                statistics.median(w for _, w in per)))
        print("%-12s %d distinct allocation stacks, trace with stacks %d bytes" % (name, stacks, size))


if __name__ == "__main__":
    main()
