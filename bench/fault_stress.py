#!/usr/bin/env python3
"""Many runs of a threaded program under the fault engine, several at a
time on a loaded machine, each run's output compared with the program's
native output: the count of runs that went wrong (wrong output, or an
exit the native run did not have), the rare races of the fault engine's
threads (a hot site patched while another thread decodes it, a page traced
while another thread's completion reads it) made visible.

    bench/fault_stress.py [--memtap PATH] [--parallel P] [--hog] [RUNS]
                                     (builds build/ first if needed)

The program is `xz -0 -T2 --block-size=8KiB` of 27 KB of text (four
blocks, two compressing threads).  --parallel P (default 3) runs P at a
time; --hog adds two busy loops that come and go (a test suite's load),
the condition under which the races showed (about one run in 200).
Failed runs keep their trace, output and messages in a directory printed
at the end.
"""
import os
import subprocess
import sys
import threading

from table4 import scratch_dir

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def hog(stop):
    """Two busy loops, on for 2-3 s and off for half a second, until stop."""
    while not stop.is_set():
        loops = [subprocess.Popen(["timeout", str(t), "sh", "-c", "while :; do :; done"])
                 for t in (3, 2)]
        for p in loops:
            p.wait()
        stop.wait(0.5)


def main():
    args, memtap, parallel, load = [], os.path.join(ROOT, "build", "bin", "memtap"), 3, False
    it = iter(sys.argv[1:])
    for a in it:
        if a == "--memtap":
            memtap = next(it)
        elif a == "--parallel":
            parallel = int(next(it))
        elif a == "--hog":
            load = True
        else:
            args.append(a)
    runs = int(args[0]) if args else 300
    if not os.path.exists(memtap):
        subprocess.run([os.path.join(ROOT, "scripts", "build.sh")], check=True)
    tmp = scratch_dir("memtap-stress-")
    data = os.path.join(tmp, "input")
    with open(data, "wb") as f:
        f.write(b"".join(b"line %d of the threaded xz test\n" % (i * 7919 % 5000)
                         for i in range(800)))
    argv = ["xz", "-0", "-T2", "--block-size=8KiB", "-c", data]
    native = subprocess.run(argv, capture_output=True, check=True).stdout
    lock = threading.Lock()
    state = {"next": 0, "failed": []}

    def worker():
        while True:
            with lock:
                n = state["next"]
                state["next"] += 1
            if n >= runs:
                return
            trace = os.path.join(tmp, "run%d.mtr" % n)
            p = subprocess.run([memtap, "run", "-q", "--engine", "fault", "-o", trace, "--"] + argv,
                               capture_output=True)
            if p.returncode != 0 or p.stdout != native:
                with open(os.path.join(tmp, "run%d.out" % n), "wb") as f:
                    f.write(p.stdout)
                with open(os.path.join(tmp, "run%d.err" % n), "wb") as f:
                    f.write(p.stderr)
                with lock:
                    state["failed"].append((n, p.returncode, p.stdout == native))
            else:
                os.unlink(trace)

    stop = threading.Event()
    hogger = threading.Thread(target=hog, args=(stop,)) if load else None
    if hogger:
        hogger.start()
    workers = [threading.Thread(target=worker) for _ in range(parallel)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    stop.set()
    if hogger:
        hogger.join()
    for n, rc, same in sorted(state["failed"]):
        print("run %d: exit %d, %s output" % (n, rc, "native" if same else "wrong"))
    print("%d of %d runs went wrong (%d at a time%s); kept in %s"
          % (len(state["failed"]), runs, parallel, ", with a hog" if load else "", tmp))
    return 1 if state["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
