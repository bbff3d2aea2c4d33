#!/usr/bin/env python3
"""Regression tests for defects found by trying memtap as a new user
would (issue 13): each test reproduces the situation of one defect.

Usage: hardening_tests.py TEST_NAME   (MEMTAP_BUILD names the build tree)
"""
import os
import re
import resource
import shutil
import signal
import stat
import subprocess
import sys
import time

from memtap_tests import (LIB, MEMTAP, TMP, Failure, check, check_eq, chunks, heap_lines, memtap,
                          prog, program_children, run_bounded, run_named, show)


def run(*args, out="t.mtr", **kw):
    return memtap("run", "-o", os.path.join(TMP, out), "--", *args, check_rc=False, **kw)


def other_traces(p):
    return [l.split("also wrote ")[1] for l in p.stderr.splitlines() if "also wrote " in l]


# ------------------------------------------------- 1: -o never destroys a path

def test_output_never_destroys():
    victim = os.path.join(TMP, "victim.txt")
    with open(victim, "w") as f:
        f.write("precious\n")
    os.symlink(victim, os.path.join(TMP, "link.mtr"))
    fifo = os.path.join(TMP, "fifo.mtr")
    os.mkfifo(fifo)
    refused = ["link.mtr", "fifo.mtr", "victim.txt"]
    if os.geteuid() == 0:  # a device node of our own, never a real one
        os.mknod(os.path.join(TMP, "null.mtr"), stat.S_IFCHR | 0o666, os.makedev(1, 3))
        refused.append("null.mtr")
    marker = os.path.join(TMP, "ran")
    for name in refused + ["/proc/version", os.path.join(TMP, "no/such/dir.mtr")]:
        p = memtap("run", "-o", name if name.startswith("/") else os.path.join(TMP, name),
                   "--", "/bin/sh", "-c", "touch " + marker, check_rc=False)
        check(p.returncode != 0, "memtap run -o %s fails" % name)
        check(re.search(r"^memtap: .*%s: " % re.escape(name), p.stderr, re.M),
              "memtap run -o %s says why: %r" % (name, p.stderr))
        check(not os.path.exists(marker), "the program did not run for -o %s" % name)
    with open(victim) as f:
        check_eq(f.read(), "precious\n", "the symlink's target is untouched")
    check(os.path.islink(os.path.join(TMP, "link.mtr")), "the symlink is kept")
    check(stat.S_ISFIFO(os.stat(fifo).st_mode), "the FIFO is kept")
    if os.geteuid() == 0:
        check(stat.S_ISCHR(os.stat(os.path.join(TMP, "null.mtr")).st_mode), "the device is kept")
    # an older trace is kept as .old; the new one replaces nothing else
    p = run(prog("three_mallocs"), out="t.mtr")
    check_eq(p.returncode, 0, "first run")
    first = os.stat(os.path.join(TMP, "t.mtr")).st_ino
    p = run(prog("noalloc"), out="t.mtr")
    check_eq(p.returncode, 0, "second run")
    check("memtap: note: kept the older trace as" in p.stderr,
          "memtap says where the older trace went")
    check_eq(os.stat(os.path.join(TMP, "t.mtr.old")).st_ino, first, "older trace moved to .old")
    q = memtap("run", "-q", "-o", os.path.join(TMP, "q.mtr"), "--", prog("noalloc"))
    q = memtap("run", "-q", "-o", os.path.join(TMP, "q.mtr"), "--", prog("noalloc"))
    check("kept the older trace" not in q.stderr and
          os.path.exists(os.path.join(TMP, "q.mtr.old")), "-q keeps it, silently (a note)")
    check_eq(len(heap_lines(show(os.path.join(TMP, "t.mtr.old")))), 4,
             "the .old trace is the first run's (three_mallocs: 3 mallocs, 1 free)")


# ------------------------------------- 2: posix_spawn, system, popen children

def test_spawn_children():
    p = run(prog("spawner"))
    check_eq(p.returncode, 0, "spawner's exit status (0: every child ran and returned N)"
             + p.stderr)
    out = p.stdout.splitlines()
    for way, n in (("system", 11), ("popen", 12), ("spawn", 13), ("spawnp", 14)):
        check("%s: %d" % (way, n) in out, "%s child ran and exited with %d: %r" % (way, n, out))
    check("popen read: child 12 tag" in out, "popen's pipe carried the child's output")
    parent = show(os.path.join(TMP, "t.mtr"))
    stores = [l for l in parent if re.match(r"^S\$\d+:after_child, ", l)]
    check_eq(len(stores), 4, "the parent is still traced after each child (one store each)")
    found = {}
    for path in other_traces(p):
        for line in heap_lines(show(path)):
            m = re.match(r"^M\$:<malloc\d+@child\+\d+>,(10\d\d)$", line)
            if m:
                found[int(m.group(1)) - 1000] = path
    check_eq(sorted(found), [11, 12, 13, 14], "each child wrote its own trace")
    for path in found.values():
        info = memtap("info", path).stdout.splitlines()
        check("end: exit" in info, "the child's trace ends normally: %s" % path)


def test_run_counts_its_own_files():
    """A run's summary names the files its own processes wrote, by the run
    number each trace holds, not every OUTPUT.PID.mtr made since it began
    (a run just before, in the same second, had its children's counted);
    a file of the run removed before the end makes the run incomplete."""
    first = run("/bin/sh", "-c", "ls / >/dev/null", out="own.mtr")
    children = other_traces(first)
    check_eq((first.returncode, len(children)), (0, 1), "the first run: sh and ls " + first.stderr)
    later = time.time() + 5  # as if written during the next run
    os.utime(children[0], (later, later))
    second = run("/bin/true", out="own.mtr")
    check_eq(second.returncode, 0, "the second run " + second.stderr)
    check(not other_traces(second) and " in 2 files" not in second.stderr,
          "the second run claims no file of the first: %r" % second.stderr)
    gone = run("/bin/sh", "-c", "ls / >/dev/null; rm -f %s/gone.*.mtr" % TMP, out="gone.mtr")
    check_eq(gone.returncode, 125, "a removed file makes the run incomplete: " + gone.stderr)
    # sh, ls and rm each wrote one; ls's is removed by the program
    check("1 of the run's 3 trace files are gone" in gone.stderr and "(incomplete)" in gone.stderr,
          "says so: %r" % gone.stderr)


# ---------------------------- 3: handlers that leave by longjmp, siglongjmp, exit

def test_handler_exits():
    for how, sig in (("siglongjmp", 11), ("longjmp", 11), ("trap", 5)):
        p = run(prog("handler_exits"), how, out=how + ".mtr")
        check_eq((p.returncode, p.stdout), (0, "%s: back from signal %d\n" % (how, sig)),
                 "%s: the program runs as natively" % how)
        stores = [l for l in show(os.path.join(TMP, how + ".mtr"))
                  if re.match(r"^S\$\d+:after\[\d\], \[handler_exits\], main\+\d+$", l)]
        check_eq(len(stores), 5, "%s: main's five stores after the handler are traced" % how)
    # a fault inside memcpy (recorded as one block event, with the other
    # thread stopped) left by longjmp: nothing of that stays behind
    native = subprocess.run([prog("handler_exits"), "memcpy"], capture_output=True, text=True)
    try:
        p = run_bounded([MEMTAP, "run", "-o", os.path.join(TMP, "memcpy.mtr"), "--",
                         prog("handler_exits"), "memcpy"], 60, text=True)
    except subprocess.TimeoutExpired:
        raise Failure("memcpy: the other thread stays stopped after the longjmp")
    check_eq((p.returncode, p.stdout), (0, native.stdout),
             "memcpy: the program runs as natively (signals deliverable, the thread ran)")
    stores = [l for l in show(os.path.join(TMP, "memcpy.mtr"))
              if re.match(r"^S\$\d+:after\[\d\], ", l)]
    check_eq(len(stores), 5, "memcpy: main's stores after the handler are traced")
    p = run(prog("handler_exits"), "exit", out="exit.mtr")
    check_eq(p.returncode, 3, "the handler's exit status")
    lines = show(os.path.join(TMP, "exit.mtr"))
    check_eq(len([l for l in lines if re.match(r"^S\$\d+:at_exit_value, ", l)]), 1,
             "the atexit function's store, run from exit() in a handler, is traced")


# ------------------------------------------- 4: the trace descriptor is memtap's

def test_trace_fd_protected():
    for opts, mode in (([], ""), ([], "raw"), (["--heap-only"], "")):
        name = "fd%s%d.mtr" % (mode, len(opts))
        path, out = os.path.join(TMP, name), os.path.join(TMP, "out.txt")
        p = memtap("run", *opts, "-o", path, "--", prog("fd_closer"), out,
                   *([mode] if mode else []), check_rc=False)
        what = "fd_closer %s %s" % (" ".join(opts), mode)
        check_eq(p.returncode, 0, what + ": exit status")
        sizes = [l.split(",")[-1] for l in heap_lines(show(path)) if l[0] == "M"]
        check_eq(sizes, ["101", "202", "303", "404", "505"],
                 what + ": blocks before and after every dup2/close/close_range/closefrom")
        check("end: exit" in memtap("info", path).stdout.splitlines(), what + ": end record")
        with open(out, "rb") as f:
            data = f.read()
        # 200 copies asked for; memtap holds descriptors there: the trace
        # (700), the status page memtap run shares (701) and, with a writer
        # (two CPUs or more), the pidfd it learns of the process's end from
        held = 3 if len(os.sched_getaffinity(0)) > 1 else 2
        check_eq(data, b"x" * (200 - held), what + ": the program's file holds only its own bytes")


def test_low_fds_free():
    """memtap holds no descriptor a program may want at a number of its
    choosing: under either engine low_fds makes every descriptor from 3 to
    63 a copy of /dev/null with dup2, as process launchers do for a child
    (chromium's children exited 127 under the fault engine: the descriptor
    it reads the process's memory through was one of them, which memtap
    refuses to let a program replace)."""
    for engine in ("static", "fault"):
        path = os.path.join(TMP, "low_fds_%s.mtr" % engine)
        p = memtap("run", "--engine", engine, "-o", path, "--", prog("low_fds"),
                   check_rc=False)
        check_eq((p.returncode, p.stdout), (0, "61 made\n"), "low_fds, %s engine" % engine)


def test_one_thread_stays_one():
    """A program with one thread sees one under memtap, and no child it did
    not make: one_thread, after filling hundreds of 64-record buffers (so
    that memtap's writer runs), finds one entry and three links in
    /proc/self/task (chromium's zygote checks the links before it forks,
    and crashed when memtap's writer was a thread), then forks a child and
    waits twice: the child, then none (the writer, a process sharing the
    program's memory, is no child wait(2) sees).  Under either engine; the
    writer wrote chunks of it."""
    env = {"MEMTAP_BUFFER_RECORDS": "64"}
    for engine in ("static", "fault"):
        path = os.path.join(TMP, "one_thread_%s.mtr" % engine)
        p = memtap("run", "--engine", engine, "-o", path, "--", prog("one_thread"),
                   env=env, check_rc=False)
        check_eq((p.returncode, p.stdout),
                 (0, "threads 1, links 3\nwait: the child, then none\n"),
                 "one_thread, %s engine" % engine)
        check(int(memtap("info", path).stdout.split("writer_chunks: ")[1].split()[0]) > 0,
              "the writer wrote chunks of one_thread, %s engine" % engine)


def test_waits_end_on_signals():
    """A system call that blocks until a signal's handler runs comes back
    as natively under either engine: wait_signals' pselect6 with SIGCHLD
    let through by its mask (make -j's wait for its jobs: make hung under
    the fault engine, the call made again after the signal), a read of an
    empty pipe with SIGALRM's handler (hung under both: memtap's own read
    wrapper made the call memtap's, every handled signal blocked), the same
    with SA_RESTART (made again after the handler: the bytes it then
    gets), poll and nanosleep (-1 EINTR all the same), and a read into a
    heap block beside a waiting thread (the fault engine reads through a
    buffer of its own then: it hung too).  Each line as the program prints
    it natively, which the kernel's rules fix."""
    want = ("pselect: -1, Interrupted system call, handler ran: yes\n"
            "read: -1, Interrupted system call, handler ran: yes\n"
            "restart: 5, no error, handler ran: yes\n"
            "poll: -1, Interrupted system call, handler ran: yes\n"
            "nanosleep: -1, Interrupted system call, handler ran: yes, left below 10 s: yes\n"
            "heap read: 5, no error, handler ran: yes, got: heap!\n")
    native = subprocess.run([prog("wait_signals")], capture_output=True, text=True, timeout=60)
    check_eq((native.returncode, native.stdout), (0, want), "wait_signals natively")
    for engine in ("static", "fault"):
        path = os.path.join(TMP, "wait_signals_%s.mtr" % engine)
        try:
            p = subprocess.run([MEMTAP, "run", "-q", "--engine", engine, "-o", path, "--",
                                prog("wait_signals")], capture_output=True, text=True,
                               timeout=60)
        except subprocess.TimeoutExpired as e:
            raise Failure("wait_signals hung under the %s engine after: %r"
                          % (engine, e.stdout)) from e
        check_eq((p.returncode, p.stdout), (0, want), "wait_signals, %s engine" % engine)


def test_shared_mapping_stays_shared():
    """A shared mapping stays one object for every process that maps it:
    shared_counter's parent counts to 100,000 in a shared anonymous page
    (hot: the fault engine gives hot pages an alias of its own) and its
    child reads 100,000 there, under either engine.  Before, the alias
    replaced the parent's page and the child read 7 (chromium's children
    found their shared memory corrupt)."""
    want = "the child reads 100000\nthe parent counted 100000\n"
    for engine in ("static", "fault"):
        path = os.path.join(TMP, "shared_counter_%s.mtr" % engine)
        p = memtap("run", "-q", "--engine", engine, "-o", path, "--", prog("shared_counter"),
                   check_rc=False)
        check_eq((p.returncode, p.stdout), (0, want), "shared_counter, %s engine" % engine)


def test_guard_page_refused():
    """A system call into memory the program made inaccessible fails as
    natively: guard_probe's getrlimit into its own PROT_NONE guard page
    (beside a spinning thread) returns EFAULT and leaves the page's bytes,
    under either engine.  Before, the fault engine moved the call into its
    own buffer and wrote the result there through /proc/self/mem: 0, and
    the guard page changed (chromium's renderers checked their guard
    pages so and crashed); then, not moved, the call still opened the page
    and retried with every page open on the EFAULT: windows open beside
    the other thread, an incomplete run about every other time."""
    want = "getrlimit: -1, Bad address; guard byte 0x5a\n"
    for engine in ("static", "fault", "fault", "fault"):  # a complete run each time
        path = os.path.join(TMP, "guard_probe_%s.mtr" % engine)
        p = memtap("run", "-q", "--engine", engine, "-o", path, "--", prog("guard_probe"),
                   check_rc=False)
        check_eq((p.returncode, p.stdout), (0, want), "guard_probe, %s engine" % engine)


# ------------------------------- 5: a failed write is reported, never silent

def small_files(limit):
    def limit_size():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes fail with EFBIG
    return limit_size


def run_limited(*args, limit):
    return subprocess.run([MEMTAP, "run"] + list(args), capture_output=True, text=True,
                          preexec_fn=small_files(limit))


def test_write_failure_reported():
    path = os.path.join(TMP, "full.mtr")
    native = subprocess.run([prog("signals")], capture_output=True, text=True)
    for keep in ([], ["--keep-going"]):
        p = run_limited(*keep, "-o", path, "--", prog("signals"), limit=2 << 10)
        check(re.search(r"^memtap: warning: trace %s: [1-9]\d* events lost: File too large$"
                        % re.escape(path), p.stderr, re.M),
              "the lost events and the reason are reported: %r" % p.stderr)
        check(re.search(r"^memtap: trace %s: [\d,]+ events, .*\(incomplete\)$" % re.escape(path),
                        p.stderr, re.M), "the summary says the trace is incomplete")
        check_eq(p.stdout, native.stdout, "the program ran as natively")
        check_eq(p.returncode, native.returncode if keep else 125,
                 "exit status %s" % (keep or "without --keep-going"))
        if not keep:
            check(re.search(r"exited with status 0; the trace is incomplete", p.stderr),
                  "the program's own status is printed")
        os.rename(path, path + ".%d" % len(keep))


def test_missing_end_record_exit_status():
    """An exit memtap never sees (exit_group from code made at run time)
    leaves no end record: a warning, and 125 unless --keep-going.  A raw
    exit_group from the program's own code (as Go's runtime leaves) is
    trapped and ends the trace (it had left none)."""
    for opts in ([], ["--heap-only"], ["--keep-going"]):
        p = memtap("run", *opts, "-o", os.path.join(TMP, "raw%d.mtr" % len(opts)), "--",
                   prog("exit_status"), "7", "unseen", check_rc=False)
        check("no end record" in p.stderr, "%s: the missing end is a warning" % opts)
        check_eq(p.returncode, 7 if "--keep-going" in opts else 125, "%s: exit status" % opts)
    for engine in ("static", "fault"):
        trace = os.path.join(TMP, "raw-%s.mtr" % engine)
        p = memtap("run", "--engine", engine, "-o", trace, "--", prog("exit_status"), "7", "raw",
                   check_rc=False)
        check_eq((p.returncode, "warning" in p.stderr), (7, False),
                 "%s: a raw exit_group ends the trace: %s" % (engine, p.stderr))
        info = memtap("info", trace).stdout
        check("end: exit" in info and "end_code: 7" in info, "%s: the end record: %s"
              % (engine, info))
    p = memtap("run", "-o", os.path.join(TMP, "ok.mtr"), "--", prog("exit_status"), "7",
               check_rc=False)
    check_eq((p.returncode, "warning" in p.stderr), (7, False),
             "a complete trace passes the program's status through, no warning")


# ------------------------------------ 18: a signal death stays a signal death

def test_signal_death_reraised():
    for args, sig in ((["crasher"], signal.SIGSEGV), (["crasher", "abort"], signal.SIGABRT),
                      (["crasher", "kill", "10"], signal.SIGKILL)):
        p = memtap("run", "-o", os.path.join(TMP, "sig%d.mtr" % sig), "--", prog(args[0]),
                   *args[1:], check_rc=False)
        check_eq(p.returncode, -sig, "memtap run %s ends by signal %d" % (" ".join(args), sig))
        check("killed by signal %d" % sig in p.stderr, "and says so")


def test_writer_not_a_child():
    """A program that waits until it has no child left sees only its own
    children under both engines, memtap's writer running (64-record
    buffers, every one the writer's): wall_waiter waits with __WALL, as
    strace -f does (it waited for the writer, a child whose end sends no
    signal, forever: the writer ends when its program does), and, a
    subreaper, with plain waits (the orphans of its descendants come to
    it: a writer an orphan would be seen).  Each reaps its one child, and
    both processes' traces end as they did."""
    env = {"MEMTAP_WRITER": "all", "MEMTAP_BUFFER_RECORDS": "64"}
    for engine in ("static", "fault"):
        for mode in ([], ["reaper"]):
            path = os.path.join(TMP, "wall_%s%s.mtr" % (engine, "".join(mode)))
            try:
                p = subprocess.run([MEMTAP, "run", "--engine", engine, "-o", path, "--",
                                    prog("wall_waiter")] + mode, capture_output=True,
                                   text=True, timeout=60, env=dict(os.environ, **env))
            except subprocess.TimeoutExpired as e:
                raise Failure("wall_waiter %s hung under the %s engine" % (mode, engine)) from e
            what = "%s %s" % (engine, mode)
            check_eq((p.returncode, p.stdout), (0, "reaped 1\n"), "%s: %s" % (what, p.stderr))
            children = [l.split("also wrote ")[1] for l in p.stderr.splitlines()
                        if "also wrote" in l]
            check_eq(len(children), 1, "%s: the child's trace" % what)
            for trace in (path, children[0]):
                info = memtap("info", trace).stdout
                check("end: exit" in info.splitlines(), "%s: %s ends: %s" % (what, trace, info))
                check(int(info.split("writer_chunks: ")[1].split()[0]) > 0,
                      "%s: %s: its writer wrote chunks" % (what, trace))


def test_vfork_child_signals():
    """A vfork child's sigaction changes its own actions, not its parent's,
    under both engines: vfork_signals' child sets SIGINT and SIGUSR1 back
    to SIG_DFL before its exec (as CPython's subprocess child does for
    every handled signal), then the parent raises both and its handlers
    run.  memtap's table of the program's actions lies in the memory the
    child shares: the child's SIG_DFL went into it, and the parent died of
    its own SIGINT (python3's test_signal after any test that ran a
    subprocess)."""
    native = subprocess.run([prog("vfork_signals")], capture_output=True, text=True)
    check_eq((native.returncode, native.stdout), (0, "handled 2\n"), "natively")
    for engine in ("static", "fault"):
        p = memtap("run", "--engine", engine, "-o", os.path.join(TMP, "vfork_sig.mtr"), "--",
                   prog("vfork_signals"), check_rc=False)
        check_eq((p.returncode, p.stdout), (0, "handled 2\n"), "%s: %s" % (engine, p.stderr))


def test_kernel_signals_end_program():
    """A signal the kernel itself sends (si_code SI_KERNEL) whose default
    action ends the program ends it under both engines, as natively:
    alarm's SIGALRM while it sleeps in pause() and while it computes, and
    a terminal's ^C (SIGINT to the foreground group, memtap run and the
    program both).  memtap's handler, which writes the trace first, sent
    again only the signals a process had sent: these were lost, the
    program ran on (a ^C did not stop `memtap run -- PROGRAM`)."""
    native = subprocess.run([prog("kernel_signal"), "pause"], capture_output=True, text=True)
    check_eq(native.returncode, -signal.SIGALRM, "natively, alarm's SIGALRM ends it")
    for engine in ("static", "fault"):
        for mode in ("pause", "spin"):
            p = memtap("run", "--engine", engine, "-o", os.path.join(TMP, "ks.mtr"), "--",
                       prog("kernel_signal"), mode, check_rc=False)
            check_eq((p.returncode, p.stdout), (-signal.SIGALRM, ""),
                     "%s, %s: memtap run ends by SIGALRM, the program printing nothing: %s"
                     % (engine, mode, p.stderr))
            check("killed by signal %d" % signal.SIGALRM in p.stderr, "and says so")
        path = os.path.join(TMP, "ks_tty_%s.mtr" % engine)
        if os.path.exists(path):
            os.unlink(path)

        def paused():
            deadline = time.time() + 20
            while not os.path.exists(path) and time.time() < deadline:
                time.sleep(0.05)
            time.sleep(0.5)  # into its pause
        out, status = on_terminal([MEMTAP, "run", "-q", "--engine", engine, "-o", path, "--",
                                   prog("kernel_signal"), "wait"], keys=b"\x03", ready=paused)
        check(os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGINT,
              "%s: a terminal's ^C ends memtap run and the program: status %#x, %r"
              % (engine, status, out[-300:]))
        check("killed by signal %d" % signal.SIGINT in out, "%s: and it says so" % engine)


# ------------------------ 6: a stack overflow on any thread keeps the trace

def test_thread_stack_overflow():
    for opts in ([], ["--heap-only"]):
        path = os.path.join(TMP, "overflow%d.mtr" % len(opts))
        p = memtap("run", *opts, "-o", path, "--", prog("thread_overflow"), check_rc=False)
        check_eq(p.returncode, -signal.SIGSEGV, "%s: the program dies of SIGSEGV" % opts)
        sizes = [l.split(",")[-1] for l in heap_lines(show(path)) if l[0] == "M"]
        check_eq(sizes, ["50"] + [str(100 + i) for i in range(10)],
                 "%s: main's block and the thread's ten, buffered when it overflowed" % opts)
        info = memtap("info", path).stdout.splitlines()
        check("end: signal" in info and "end_code: 11" in info, "%s: end record" % opts)


# ------------------------------------------ 11: a chunk written twice


def test_duplicate_chunks_dropped():
    path = os.path.join(TMP, "dup.mtr")
    p = memtap("run", "-o", path, "--", prog("signals"), env={"MEMTAP_BUFFER_RECORDS": "256"})
    want = show(path)
    data = open(path, "rb").read()
    events = [(o, n) for o, n, t in chunks(data) if t in (1, 5)]  # plain, packed
    check(len(events) > 4, "several event chunks")
    o1, n1 = events[1]
    o3, n3 = events[3]
    # chunk 1 again right after itself, chunk 3 again at the end
    crafted = data[:o1 + n1] + data[o1:o1 + n1] + data[o1 + n1:] + data[o3:o3 + n3]
    with open(path, "wb") as f:
        f.write(crafted)
    r = memtap("show", path)
    check_eq(r.stdout.splitlines(), want, "every event once, in order")
    dup = re.search(r"warning: .*: (\d+) events were in the file twice", r.stderr)
    check(dup, "the duplicates are reported: %r" % r.stderr)
    counts = [int.from_bytes(data[o + 20:o + 24], "little") for o in (o1, o3)]
    check_eq(int(dup.group(1)), sum(counts), "as many as the two copied chunks hold")


# --------------------------------------------------- 10: crafted traces

def gen_trace(*args):
    path = os.path.join(TMP, "crafted.mtr")
    subprocess.run([prog("gen_trace"), path] + [str(a) for a in args], check=True)
    return path


def peak_rss_mib():
    """Largest resident size of any child this test has waited for."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024


def test_crafted_trace_paths():
    fifo = os.path.join(TMP, "fifo")
    os.mkfifo(fifo)
    path = gen_trace("paths", fifo)  # a module and the parent trace named so
    try:
        p = subprocess.run([MEMTAP, "show", path], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        raise Failure("memtap show blocked on a FIFO a trace names")
    check_eq(p.returncode, 0, "show reads the trace")
    check(re.search(r"warning: %s: not a regular file" % re.escape(fifo), p.stderr),
          "the module path is refused: %r" % p.stderr)
    check(re.search(r"warning: %s: parent trace unreadable" % re.escape(fifo), p.stderr),
          "the parent trace is refused")


def test_crafted_trace_modules():
    libc = "/lib/x86_64-linux-gnu/libc.so.6"
    path = gen_trace("modules", 200, libc)
    p = memtap("show", path)
    check_eq(len(p.stdout.splitlines()), 200, "one line per event")
    # each entry loading its own image of libc took 1.4 GB for 100 entries
    check(peak_rss_mib() < 500, "200 entries naming one file share its image (%d MiB)"
          % peak_rss_mib())


def test_crafted_trace_threads():
    path = gen_trace("threads", 500000)
    try:
        p = subprocess.run([MEMTAP, "show", path], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise Failure("500,000 threads: show is not linear in the number of threads")
    check_eq(len(p.stdout.splitlines()), 500000, "one line per thread's event")


def test_crafted_trace_bomb():
    path = gen_trace("bomb", 80)  # 80 threads x 64 MiB of records, 170 KB
    info = memtap("info", path).stdout
    check("events: %d" % (80 * ((64 << 20) // 56)) in info, "info counts the events")
    check(peak_rss_mib() < 500, "info decompresses nothing (%d MiB)" % peak_rss_mib())
    p = memtap("show", path, env={"MEMTAP_READER_MEMORY": "256"}, check_rc=False)
    check(p.returncode != 0 and "need more memory to merge than MEMTAP_READER_MEMORY" in p.stderr,
          "show refuses beyond its memory bound, saying so: %r" % p.stderr[-300:])
    check(peak_rss_mib() < 500, "show stays within its bound (%d MiB)" % peak_rss_mib())


def test_crafted_trace_metadata():
    """Metadata chunks are bounded like records: 40 info chunks of 64 MiB
    each (a 1 MB file) are refused past the reader's metadata budget
    (memtap info took 52 s and 2.7 GB); a module path longer than any of
    Linux's is refused (a 65,000-character one made every event cost its
    length); control characters in a module's name print as \\xNN, so
    they cannot forge lines of show and info nor reach the terminal."""
    path = gen_trace("infobomb", 40)
    try:
        p = subprocess.run([MEMTAP, "info", path], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise Failure("memtap info on 40 info chunks of 64 MiB did not end in 60 s")
    corrupt = int(re.search(r"^corrupt_chunks: (\d+)$", p.stdout, re.M).group(1))
    check(corrupt >= 36, "the chunks past the budget refused: %d" % corrupt)
    check(peak_rss_mib() < 700, "info within its budget (%d MiB)" % peak_rss_mib())

    path = gen_trace("modules", 1, "/" + "d" * 65000)
    info = memtap("info", path).stdout
    check("corrupt_chunks: 1" in info and "module 0" not in info,
          "a 65,000-character path refused: %s" % info[:300])

    forged = "/tmp/a\nmodule 9: 0x0 forged\x1b[31m"
    path = gen_trace("modules", 2, forged)
    shown = memtap("show", path).stdout
    check_eq(len(shown.splitlines()), 2, "one line per event")
    info = memtap("info", path).stdout
    check(not re.search(r"^module 9", info, re.M) and "\x1b" not in shown + info and
          "/tmp/a\\x0amodule 9: 0x0 forged\\x1b[31m" in info,
          "the name escaped: %r" % info[-200:])

# ------------------------------------------- 9: set-user-ID children

def test_setid_children():
    root = os.geteuid() == 0
    p = memtap("run", "-o", os.path.join(TMP, "nnp.mtr"), "--", "/bin/grep", "NoNewPrivs",
               "/proc/self/status")
    # as root the filter needs no no_new_privs, which would strip set-ID programs
    check_eq(p.stdout.split(), ["NoNewPrivs:", "0" if root else "1"], "no_new_privs")
    setid = os.path.join(TMP, "id")
    with open("/usr/bin/id", "rb") as src, open(setid, "wb") as dst:
        dst.write(src.read())
    os.chmod(setid, 0o4755)
    # under no_new_privs (set here for the whole run, as memtap itself must
    # without the capability) the set-ID exec is reported
    p = subprocess.run(["setpriv", "--no-new-privs", MEMTAP, "run", "-o",
                        os.path.join(TMP, "setid.mtr"), "--", "/bin/sh", "-c", setid + " -u"],
                       capture_output=True, text=True)
    # the set-ID program runs as it is, so its own code's accesses are not
    # in the static engine's trace: the run is incomplete, and says so
    check_eq(p.returncode, 125, "memtap run " + p.stderr)
    check(re.search(r"^memtap: warning: .*%s ran as it is" % re.escape(setid), p.stderr, re.M)
          and "(incomplete)" in p.stderr, "the missing module is reported: %r" % p.stderr)
    check(re.search(r"^memtap: warning: %s is set-user-ID or set-group-ID: .*no_new_privs"
                    % re.escape(setid), p.stderr, re.M),
          "the set-ID exec is reported: %r" % p.stderr)


def test_static_exec_reported():
    """A statically linked program a traced process execs (in place, and
    from a child) is one no engine can follow: under both engines memtap
    says so as it happens, the run is incomplete (exit 125), and
    --keep-going passes the program's status (it was silent, exit 0)."""
    static = prog("static_prog")
    for engine in ("static", "fault"):
        for script in ("exec " + static, static + "; echo done"):
            p = memtap("run", "--engine", engine, "-o", os.path.join(TMP, "st.mtr"), "--",
                       "/bin/sh", "-c", script, check_rc=False)
            what = "%s, sh -c '%s'" % (engine, script)
            check_eq(p.returncode, 125, "%s: %s" % (what, p.stderr))
            check(re.search(r"^memtap: warning: %s is statically linked: memtap cannot trace it"
                            % re.escape(static), p.stderr, re.M)
                  and re.search(r"1 exec\(s\) of statically linked programs", p.stderr)
                  and "(incomplete)" in p.stderr, "%s: reported: %s" % (what, p.stderr))
        p = memtap("run", "--engine", engine, "--keep-going", "-o", os.path.join(TMP, "st.mtr"),
                   "--", "/bin/sh", "-c", "exec " + static, check_rc=False)
        check_eq(p.returncode, 0, "%s --keep-going: %s" % (engine, p.stderr))


def test_small_program_altstack():
    """A program's alternate signal stack of 8 KiB in the heap (as Python's
    faulthandler makes one): memtap's handlers keep running on memtap's
    own, under both engines, so the heap around it stays as it was (the
    static engine's handlers ran on it and wrote 660 bytes below it, and
    Debian's python3 -m test died in its garbage collector)."""
    native = subprocess.run([prog("small_altstack")], capture_output=True, text=True)
    check_eq(native.returncode, 0, "natively: %s" % native.stdout)
    for engine in ("static", "fault"):
        p = memtap("run", "--engine", engine, "-q", "-o", os.path.join(TMP, "alt.mtr"), "--",
                   prog("small_altstack"), check_rc=False)
        check_eq((p.returncode, p.stdout), (0, native.stdout), "%s: %s" % (engine, p.stderr))


def test_fatal_handlers_stand_for_default():
    """memtap's handlers for fatal signals stand for SIG_DFL: a program that
    installs its SIGINT handler only over SIG_DFL (as CPython does: its
    KeyboardInterrupt, and test_generators, depend on it) finds SIG_DFL and
    its handler runs, under both engines; a SIGTERM set to SIG_DFL still
    ends the trace (memtap's handler stays)."""
    native = subprocess.run([prog("sig_default")], capture_output=True, text=True)
    check_eq((native.returncode, native.stdout), (-signal.SIGTERM,
             "SIGINT was SIG_DFL\nhandled: 1\n"), "natively")
    for engine in ("static", "fault"):
        trace = os.path.join(TMP, "sigdfl-%s.mtr" % engine)
        p = memtap("run", "--engine", engine, "-o", trace, "--", prog("sig_default"),
                   check_rc=False)
        check_eq((p.returncode, p.stdout), (native.returncode, native.stdout),
                 "%s: %s" % (engine, p.stderr))
        info = memtap("info", trace).stdout
        check("end: signal" in info and "end_code: 15" in info, "%s: the end: %s"
              % (engine, info))


def test_program_defines_memcmp():
    """A program that defines memcmp and strlen itself (as every
    AddressSanitizer program does), touching its heap in them, runs to the
    end under both engines: memtap's code in its handlers calls its own
    (the fault engine faulted into itself and spun with every signal
    blocked: timeout and Ctrl-C did nothing)."""
    native = subprocess.run([prog("own_memcmp")], capture_output=True, text=True)
    for engine in ("static", "fault"):
        p = run_bounded([MEMTAP, "run", "--engine", engine, "-q", "-o",
                         os.path.join(TMP, "memcmp.mtr"), "--", prog("own_memcmp")], 60,
                        text=True)
        check_eq((p.returncode, p.stdout), (0, native.stdout), "%s: %s" % (engine, p.stderr))


def test_small_fd_limit():
    """Under a soft descriptor limit of 64 (or 701) memtap run works under
    both engines: its status page goes just under the limit (it failed:
    "status page: Invalid argument")."""
    native = subprocess.run([prog("three_mallocs")], capture_output=True, text=True)
    for limit in (64, 701):
        def lower(limit=limit):
            hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
            resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
        for engine in ("static", "fault"):
            p = subprocess.run([MEMTAP, "run", "--engine", engine, "-o",
                                os.path.join(TMP, "fdl.mtr"), "--", prog("three_mallocs")],
                               capture_output=True, text=True, preexec_fn=lower)
            check_eq((p.returncode, p.stdout), (native.returncode, native.stdout),
                     "limit %d, %s: %s" % (limit, engine, p.stderr))
            check("warning" not in p.stderr, "limit %d, %s: whole: %s" % (limit, engine, p.stderr))


def test_syscalls_across_4g():
    """A system call made from code that lies across a 4 GiB boundary is
    trapped like any other: it reads into a traced heap block, and the
    trace has its copy (the filter had skipped such code, so the call
    failed with EFAULT and the run looked whole)."""
    native = subprocess.run([prog("across_4g")], capture_output=True, text=True)
    m = re.match(r"code 0x([0-9a-f]+) 0x([0-9a-f]+): 123$", native.stdout.strip())
    check(m and int(m.group(1), 16) < 0x400000000 <= int(m.group(2), 16),
          "the library's code lies across 0x400000000: %r" % native.stdout)
    p = memtap("run", "--engine", "fault", "-o", os.path.join(TMP, "a4g.mtr"), "--",
               prog("across_4g"), check_rc=False)
    check_eq((p.returncode, p.stdout), (0, native.stdout), "the read under memtap")
    lines = show(os.path.join(TMP, "a4g.mtr"), "--raw")
    block = [l for l in lines if l.startswith("M#") and l.split(",")[1].startswith("4096")]
    check(block, "the heap block: %s" % lines[:40])
    start = block[0].split(":")[1].split(",")[0]
    check(any(re.match(r"W#\d+:%s,123, 0x%s" % (start, m.group(2)[:6]), l) for l in lines),
          "the read's copy into the block, from the library's code")


def test_syscalls_of_dlopened_library():
    """A library loaded by dlopen that makes a system call itself (not
    through the C library) has it trapped like the modules of start-up:
    under the fault engine its read into a traced heap block succeeds (it
    failed with EFAULT, the run looking whole), and under both engines the
    trace has the kernel's copy into the block, from the library's code."""
    lib = os.path.join(LIB, "libraw_read_lib.so")
    for engine in ("fault", "static"):
        trace = os.path.join(TMP, "dlraw_%s.mtr" % engine)
        p = memtap("run", "--engine", engine, "-o", trace, "--", prog("dlopen_raw_read"), lib,
                   check_rc=False)
        m = re.match(r"raw_read 0x([0-9a-f]+): (-?\d+)$", p.stdout.strip())
        check(m, "%s: the program's output: %r %r" % (engine, p.stdout, p.stderr))
        check_eq((p.returncode, m.group(2)), (0, "123"),
                 "%s: the read under memtap; its stderr:\n%s" % (engine, p.stderr))
        lines = show(trace, "--raw")
        block = [l for l in lines if l.startswith("M#") and l.split(",")[1].startswith("4096")]
        check(block, "%s: the heap block: %s" % (engine, lines[:40]))
        start = block[0].split(":")[1].split(",")[0]
        copies = [l for l in lines if re.match(r"W#\d+:%s,123, 0x" % start, l)]
        check(len(copies) == 1 and 0 < int(copies[0].split("0x")[-1], 16) - int(m.group(1), 16) < 64,
              "%s: the read's copy into the block, from raw_read: %s" % (engine, copies))


def test_mmsg_copies_recorded():
    """sendmmsg and recvmmsg are read/write-like calls: the kernel's fetch
    of each datagram from its heap block and its store into the receiving
    block are block events, with each message's own length, under both
    engines (they were not in the table: nothing was recorded, and the
    fault engine's call met closed pages)."""
    for engine in ("fault", "static"):
        trace = os.path.join(TMP, "mmsg_%s.mtr" % engine)
        p = memtap("run", "--engine", engine, "-o", trace, "--", prog("mmsg"), check_rc=False)
        check_eq((p.returncode, p.stdout), (0, "sent 2, received 2: 5 and 7 bytes\n"),
                 "%s: %s" % (engine, p.stderr))
        check("warning" not in p.stderr, "%s: no warning: %s" % (engine, p.stderr))
        lines = show(trace, "--raw")
        blocks = [re.match(r"M#\d+:(0x[0-9a-f]+),(\d+),", l) for l in lines]
        blocks = [(m.group(1), int(m.group(2))) for m in blocks if m]
        sent = [a for a, n in blocks if n in (5, 7)]
        received = [a for a, n in blocks if n == 64]
        check(len(sent) == 2 and len(received) == 2, "%s: the blocks: %s" % (engine, blocks))
        copies = [re.match(r"([WG])#\d+:(0x[0-9a-f]+),(\d+),", l) for l in lines]
        copies = sorted((m.group(1), m.group(2), int(m.group(3))) for m in copies if m)
        want = sorted([("G", sent[0], 5), ("G", sent[1], 7),
                       ("W", received[0], 5), ("W", received[1], 7)])
        check_eq([c for c in copies if c[1] in sent + received], want,
                 "%s: the kernel's copies" % engine)


def test_altstack_in_heap():
    """A program's sigaltstack (in a heap block, as runtimes set one for
    stack overflows) works under both engines: the fault engine's handler
    runs on memtap's own alternate stack, where the real call fails with
    EPERM (the program exited 1, the run looking whole); it now keeps the
    program's stack per thread and answers as the kernel would (set, asked,
    on it inside an SA_ONSTACK handler, disabled)."""
    native = subprocess.run([prog("altstack")], capture_output=True, text=True)
    check_eq((native.returncode, native.stdout),
             (0, "handled 3, on the alternate stack 3, disabled 1\n"), "natively")
    for engine in ("fault", "static"):
        p = memtap("run", "--engine", engine, "-o", os.path.join(TMP, "alt_%s.mtr" % engine),
                   "--", prog("altstack"), check_rc=False)
        check_eq((p.returncode, p.stdout), (native.returncode, native.stdout),
                 "%s: %s" % (engine, p.stderr))


def test_async_io_refused():
    """io_uring (and kernel AIO) would have the kernel copy into the
    program's buffers outside any system call: under the fault engine a
    read into a traced heap block completed with EFAULT (the run looking
    whole), and under the static engine its copy was not recorded.  Their
    set-up now answers ENOSYS under both engines, the summary says so, and
    the program's fallback read is in the trace."""
    native = subprocess.run([prog("ring_read")], capture_output=True, text=True)
    check_eq(native.returncode, 0, "natively: %r" % native.stdout)
    for engine in ("fault", "static"):
        trace = os.path.join(TMP, "ring_%s.mtr" % engine)
        p = memtap("run", "--engine", engine, "-o", trace, "--", prog("ring_read"),
                   check_rc=False)
        check_eq((p.returncode, p.stdout), (0, "read: 123\n"), "%s: the read" % engine)
        check(re.search(r"^memtap: note: .*1 set-up\(s\) of io_uring or kernel AIO were "
                        r"answered ENOSYS", p.stderr, re.M), "%s: the note: %s" % (engine, p.stderr))
        lines = show(trace, "--raw")
        block = [l for l in lines if l.startswith("M#") and l.split(",")[1].startswith("4096")]
        check(block, "%s: the heap block" % engine)
        start = block[0].split(":")[1].split(",")[0]
        check(any(re.match(r"W#\d+:%s,123, " % start, l) for l in lines),
              "%s: the fallback read's copy into the block" % engine)


# ---------------------------------- 12: section headers that lie

def with_section_addr(binary, section, addr, out):
    """A copy of binary whose section header puts section at addr."""
    data = bytearray(open(binary, "rb").read())
    shoff = int.from_bytes(data[0x28:0x30], "little")
    shentsize = int.from_bytes(data[0x3a:0x3c], "little")
    shnum = int.from_bytes(data[0x3c:0x3e], "little")
    shstrndx = int.from_bytes(data[0x3e:0x40], "little")
    strtab = int.from_bytes(data[shoff + shstrndx * shentsize + 0x18:][:8], "little")
    for i in range(shnum):
        h = shoff + i * shentsize
        name_at = strtab + int.from_bytes(data[h:h + 4], "little")
        if data[name_at:data.index(0, name_at)].decode() == section:
            data[h + 0x10:h + 0x18] = addr.to_bytes(8, "little")
    with open(out, "wb") as f:
        f.write(data)
    os.chmod(out, 0o755)
    return out


def test_lying_section_headers():
    binary = prog("three_mallocs")
    native = subprocess.run([binary], capture_output=True)
    for addr in (0xfffffffffffffff0, 0x1000, 0x7fffffff0000):
        bad = with_section_addr(binary, ".plt", addr, os.path.join(TMP, "bad%x" % addr))
        check_eq(subprocess.run([bad], capture_output=True).returncode, native.returncode,
                 "the file itself runs")
        a = memtap("analyze", bad, check_rc=False)
        check_eq(a.returncode, 0, ".plt at %#x: analyze %s" % (addr, a.stderr))
        check(not re.search(r"^\s*7ff", a.stdout, re.M), "no block at the lying address")
        memtap("instrument", bad, "-o", bad + ".mt", "--nonselective")
        r = subprocess.run([bad + ".mt"], capture_output=True)
        check_eq((r.returncode, r.stdout), (native.returncode, native.stdout),
                 ".plt at %#x: the rewritten copy runs as the original" % addr)


# --------------------------------------------- 13: unwind entries that lie

def section_headers(data):
    """{name: (addr, offset, size)} of an ELF file's sections."""
    shoff = int.from_bytes(data[0x28:0x30], "little")
    shentsize = int.from_bytes(data[0x3a:0x3c], "little")
    shnum = int.from_bytes(data[0x3c:0x3e], "little")
    shstrndx = int.from_bytes(data[0x3e:0x40], "little")
    strtab = int.from_bytes(data[shoff + shstrndx * shentsize + 0x18:][:8], "little")
    out = {}
    for i in range(shnum):
        h = shoff + i * shentsize
        at = strtab + int.from_bytes(data[h:h + 4], "little")
        fields = [int.from_bytes(data[h + 0x10 + 8 * k:h + 0x18 + 8 * k], "little")
                  for k in range(3)]
        out[data[at:data.index(0, at)].decode()] = tuple(fields)
    return out


def shift_fdes_into_instructions(binary, out):
    """A copy of binary whose every FDE starts 1-3 bytes into its function
    (inside an instruction, by objdump's disassembly); returns how many."""
    data = bytearray(open(binary, "rb").read())
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", binary], capture_output=True,
                         text=True, check=True).stdout
    starts = {int(m.group(1), 16) for m in re.finditer(r"^\s+([0-9a-f]+):", dis, re.M)}
    addr, off, size = section_headers(data)[".eh_frame"]
    p, moved = off, 0
    while p < off + size:
        length = int.from_bytes(data[p:p + 4], "little")
        if length == 0:
            break
        if int.from_bytes(data[p + 4:p + 8], "little") != 0:  # an FDE (pc-relative sdata4)
            field = p + 8
            rel = int.from_bytes(data[field:field + 4], "little", signed=True)
            start = addr + (field - off) + rel
            d = next((d for d in (1, 2, 3) if start + d not in starts), 0)
            if d:
                data[field:field + 4] = (rel + d).to_bytes(4, "little", signed=True)
                moved += 1
        p += 4 + length
    with open(out, "wb") as f:
        f.write(data)
    os.chmod(out, 0o755)
    return moved


def test_lying_unwind_entries():
    bad = os.path.join(TMP, "ls")
    check(shift_fdes_into_instructions("/usr/bin/ls", bad) > 100, "FDEs moved")
    native = subprocess.run([bad, "-la", "/etc"], capture_output=True)
    check_eq(native.returncode, 0, "the damaged file itself runs")
    memtap("instrument", bad, "-o", bad + ".mt", "--nonselective")
    r = subprocess.run([bad + ".mt", "-la", "/etc"], capture_output=True)
    check_eq((r.returncode, r.stdout), (0, native.stdout),
             "no patch lands inside an instruction: the copy runs as the file")


# --------------------------------- 16: accuracy of differently named copies

def recovered(selective, full):
    out = memtap("accuracy", selective, "--full", full).stdout
    m = re.search(r"recovered +([\d.]+) of the accesses", out)
    check(m, "accuracy report: %r" % out)
    return float(m.group(1)), out


def test_accuracy_by_identity():
    copies = {}
    for name, opts in (("p.full", ["--nonselective"]), ("p.sel", ["--omega", "0.25"])):
        out = os.path.join(TMP, name)
        memtap("instrument", prog("three_mallocs_stripped"), "-o", out, *opts)
        copies[name] = run(out, out=name + ".mtr")
        check_eq(copies[name].returncode, 0, name + " runs")
    sel, full = os.path.join(TMP, "p.sel.mtr"), os.path.join(TMP, "p.full.mtr")
    ratio, out = recovered(sel, full)
    check("the runs differ" not in out, "the copies' objects match by identity: %r" % out)
    check(ratio > 0.5, "a stripped program's selective copy recovers most accesses (%.4f)" % ratio)
    # a 300 KiB frame: the stack below the start-up mapping is still [stack]
    deep = os.path.join(TMP, "deep.mt")
    memtap("instrument", prog("deep_stack"), "-o", deep, "--nonselective")
    for i in (1, 2):
        check_eq(run(deep, out="deep%d.mtr" % i).returncode, 0, "deep_stack runs")
    ratio, out = recovered(os.path.join(TMP, "deep1.mtr"), os.path.join(TMP, "deep2.mtr"))
    check_eq(ratio, 1.0, "two runs of one copy recover each other whatever the layout")
    p = memtap("accuracy", sel, "--full", os.path.join(TMP, "deep1.mtr"), check_rc=False)
    check(p.returncode == 1 and "copies of different programs" in p.stderr,
          "traces of different programs are refused: %r" % p.stderr)


# ------------------------------------- 14: instrument maps its input

def test_instrument_large_input():
    big = os.path.join(TMP, "big")
    with open(prog("three_mallocs"), "rb") as src, open(big, "wb") as dst:
        dst.write(src.read())
        dst.truncate(128 << 20)  # 128 MiB: a sparse tail after the ELF file
    os.chmod(big, 0o755)
    native = subprocess.run([big], capture_output=True)
    memtap("instrument", big, "-o", big + ".mt")
    check(peak_rss_mib() < 64, "instrument reads what it needs, not the whole file (%d MiB)"
          % peak_rss_mib())
    r = subprocess.run([big + ".mt"], capture_output=True)
    check_eq((r.returncode, r.stdout), (native.returncode, native.stdout), "the copy runs")
    check_eq(os.path.getsize(big + ".mt") >= 128 << 20, True, "the copy keeps the whole file")
    os.unlink(big + ".mt")


# ---------------------------------------------------- 7: signal storms

def test_signal_storm_progresses():
    path = os.path.join(TMP, "storm.mtr")
    try:
        # the fault engine's starvation case (its accesses cost a fault each)
        p = run_bounded([MEMTAP, "run", "--engine", "fault", "-o", path, "--",
                         prog("signal_storm"), "5000"], 120, text=True)
    except subprocess.TimeoutExpired:
        raise Failure("a 100 us timer whose handler touches globals starves the program")
    check_eq((p.returncode, p.stdout), (0, "stored 5000\n"), "the program finishes")
    stores = [l for l in show(path) if re.match(r"^S\$\d+:<malloc\d+@main\+\d+>\+\d+, \[heap\]", l)]
    check_eq(len(stores), 5000, "every heap store of main is traced")
    handler = [l for l in show(path) if re.match(r"^S\$\d+:ticks, \[signal_storm\], on_alarm\+", l)]
    check(len(handler) > 0, "the handler's accesses are traced too")


def test_signal_mask_kept():
    native = subprocess.run([prog("signal_mask")], capture_output=True, text=True)
    check_eq(native.stdout, "while blocked: 0 handler runs; SIGUSR1 blocked, SIGTERM open\n"
             "after: 1\n", "natively")
    p = run(prog("signal_mask"), out="mask.mtr")
    check_eq((p.returncode, p.stdout), (0, native.stdout),
             "sigprocmask blocks and reports as natively")


# ------------------------- issue 16: a status line on a terminal, not in pipes

def on_terminal(argv, keys=b"", ready=None):
    """Runs argv with a pseudo-terminal as stdout and stderr, typing keys
    on it once ready() returns; returns what it printed and its wait
    status."""
    import pty
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(argv[0], argv)
    if keys:
        ready()
        os.write(fd, keys)
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    return out.decode(errors="replace"), status


def test_progress_on_terminal():
    # a 1/4 walk of rewrite_workloads: 6.6 M traced loads, about two
    # seconds under the fault engine (hot sites on aliased pages), long
    # enough for a status line
    argv = [MEMTAP, "run", "--engine", "fault", "-o", os.path.join(TMP, "p.mtr"), "--",
            prog("rewrite_workloads"), "walk", "4"]
    out, status = on_terminal(argv)
    check_eq(status, 0, "memtap run on a terminal")
    check(re.search(r"\rmemtap: \d+ events, [\d.]+ \w+, \d+ events/s, \d+ s\x1b\[K", out),
          "a status line on the terminal: %r" % out[-400:])
    check(re.search(r"\r\x1b\[Kmemtap: trace .*p\.mtr: [\d,]+ events, .*, [\d.]+ s\r?\n"
                    r"memtap: next: memtap show .*p\.mtr \| less; memtap report .*p\.mtr", out),
          "cleared before the summary line")
    quiet, _ = on_terminal(argv[:2] + ["--quiet"] + argv[2:])
    check("events/s" not in quiet, "--quiet: no status line")
    piped = subprocess.run(argv, capture_output=True, text=True)
    check("events/s" not in piped.stderr and "memtap: trace" in piped.stderr and
          "memtap: next:" not in piped.stderr, "in a pipe: the summary only")


def test_walk_progress_on_terminal():
    """show and export of a long trace, their lines not on the terminal: a
    progress line there (percent, events, seconds), cleared at the end;
    none with --quiet."""
    # export writes Lackey lines about five times as fast as show writes
    # MadT lines: its trace is longer, so that it too runs past a second
    # (show reads 18 M events a second on a fast machine of 2026-11)
    traces = {}
    for events in (36000000, 128000000):
        traces[events] = os.path.join(TMP, "long%d.mtr" % events)
        subprocess.run([prog("gen_trace"), traces[events], str(events)], check=True,
                       stdout=subprocess.DEVNULL)
    for cmd, opts, events in (("show", [], 36000000), ("show", ["--quiet"], 36000000),
                              ("export", [], 128000000)):
        out, status = on_terminal([MEMTAP, cmd] + opts + ["-o", "/dev/null", traces[events]])
        check_eq(status, 0, "memtap %s %s on a terminal" % (cmd, opts))
        line = re.search(r"\rmemtap: %s: +\d+%% \(\d+ of %d events\), \d+ s\x1b\[K"
                         % (cmd, events), out)
        check(bool(line) != bool(opts), "%s %s: a progress line only without --quiet: %r"
              % (cmd, opts, out[-300:]))
        check(not line or out.endswith("\r\x1b[K"), "the progress line is cleared")


# ------------------------- 8: signals sent to memtap run reach the program

def test_sigterm_reaches_program():
    """A signal that ends the program reaches it while it waits in a system
    call, under both engines: under the fault engine the call runs inside
    memtap's SIGSYS handler, which blocked every signal until the call
    returned (a sleep, or a read of a pipe into a heap buffer: cat waiting
    for input, never)."""
    cases = [(sig, engine, cmd) for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
             for engine in ("auto", "fault") for cmd in (["/bin/sleep", "60"], ["/bin/cat"])]
    for sig, engine, cmd in cases:
        out = os.path.join(TMP, "wait%d_%s_%s.mtr" % (sig, engine, os.path.basename(cmd[0])))
        m = subprocess.Popen([MEMTAP, "run", "--engine", engine, "-o", out, "--"] + cmd,
                             stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 20
        while not os.path.exists(out) and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # into its wait
        kids = program_children(m.pid)
        what = "%s --engine %s, signal %d" % (cmd[0], engine, sig)
        check_eq(len(kids), 1, "memtap run started the program: " + what)
        m.send_signal(sig)
        try:
            rc = m.wait(timeout=20)
        except subprocess.TimeoutExpired:
            m.kill()
            os.kill(kids[0], signal.SIGKILL)
            raise Failure("memtap run did not end: " + what)
        check_eq(rc, -sig, "memtap run ends by the signal the program died of: " + what)
        check(not os.path.exists("/proc/%d" % kids[0]) or
              open("/proc/%d/stat" % kids[0]).read().split()[2] == "Z",
              "the program is gone")
        check("killed by signal %d" % sig in m.stderr.read(), "memtap reports the signal")


def test_program_ends_with_run():
    """memtap run stands for the program it started: killed with SIGKILL
    (a timeout's kill -9), it takes the program along under both engines,
    as the same kill would end the program run without memtap (it ran on,
    an orphan writing its trace)."""
    for engine in ("static", "fault"):
        out = os.path.join(TMP, "with_run_%s.mtr" % engine)
        if os.path.exists(out):
            os.unlink(out)
        m = subprocess.Popen([MEMTAP, "run", "-q", "--engine", engine, "-o", out, "--",
                              "/bin/sleep", "60"], stderr=subprocess.DEVNULL)
        deadline = time.time() + 20
        while not os.path.exists(out) and time.time() < deadline:
            time.sleep(0.05)
        kids = program_children(m.pid)
        check_eq(len(kids), 1, "%s: memtap run started the program" % engine)
        m.kill()
        m.wait()
        deadline = time.time() + 10
        while time.time() < deadline and os.path.exists("/proc/%d" % kids[0]) and \
                open("/proc/%d/stat" % kids[0]).read().split()[2] != "Z":
            time.sleep(0.05)
        gone = not os.path.exists("/proc/%d" % kids[0]) or \
            open("/proc/%d/stat" % kids[0]).read().split()[2] == "Z"
        if not gone:
            os.kill(kids[0], signal.SIGKILL)
        check(gone, "%s: the program ended with memtap run" % engine)


def test_left_behind_reported():
    """A program that leaves a process running behind it (a daemon, a job
    in the background): memtap run, whose orphans they become, says how
    many still run and that their traces are not complete (it said that
    trace files were gone, removed or renamed), exits 125 for the
    incomplete run, and does not wait for them, nor a quarter of a second
    past the program for their writers."""
    path = os.path.join(TMP, "left.mtr")
    start = time.time()
    p = memtap("run", "-o", path, "--", "/bin/sh", "-c",
               "seq 1 100000 | sort -n > /dev/null; "
               "(seq 1 100000 | sort -n > /dev/null; sleep 3) > /dev/null 2>&1 & echo started",
               check_rc=False)
    took = time.time() - start
    check_eq((p.returncode, p.stdout), (125, "started\n"), "memtap run: %s" % p.stderr)
    check("1 process(es) the program left behind still run: their traces are not complete"
          in p.stderr and "gone" not in p.stderr, "the summary says so: %s" % p.stderr)
    check(took < 2.5, "memtap run ended without the process left behind: %.1f s" % took)


def test_signals_blocked_for_good():
    """A program that blocks every signal and never ends: memtap run's
    SIGTERM (as timeout or Ctrl-C send it) stays pending, and after a
    grace of 3 s memtap ends it with SIGKILL, says so and keeps its trace
    (the run hung for ever, under the fault engine even where the block
    was memtap's own handler spinning).  What a thread logged since its
    last full buffer dies with it (SIGKILL)."""
    for engine in ("static", "fault"):
        out = os.path.join(TMP, "blocked_%s.mtr" % engine)
        m = subprocess.Popen([MEMTAP, "run", "--engine", engine, "-o", out, "--",
                              prog("blocks_all")], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            check_eq(m.stdout.readline(), "ready\n", "%s: the program started" % engine)
            sent = time.time()
            m.send_signal(signal.SIGTERM)
            _, err = m.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(m.pid, signal.SIGKILL)
            m.communicate()
            raise Failure("%s: memtap run did not end the program" % engine)
        took = time.time() - sent
        check(2.5 < took < 25, "%s: ended after the grace, took %.1f s" % (engine, took))
        check_eq(m.returncode, -signal.SIGKILL, "%s: the run ends as the program did: %s"
                 % (engine, err))
        check("left Terminated pending for 3 s with it blocked; ending it with SIGKILL" in err,
              "%s: said: %s" % (engine, err))
        check(re.search(r"^memtap: trace %s: [\d,]+ events" % re.escape(out), err, re.M),
              "%s: the trace reported: %s" % (engine, err))
        info = memtap("info", out).stdout
        check(re.search(r"^exe: .*blocks_all$", info, re.M) and "corrupt_chunks: 0" in info,
              "%s: the trace readable: %s" % (engine, info))


def test_threaded_xz():
    """xz compressing with two threads in 8 KiB blocks gives its native
    output under both engines (under the fault engine it livelocked: a
    memset over 129 traced pages, memtap's own work, filled the set of
    pages opened for it and then faulted on the next page for ever)."""
    data = os.path.join(TMP, "xz_input")
    with open(data, "wb") as f:
        f.write(b"".join(b"line %d of the threaded xz test\n" % (i * 7919 % 5000)
                         for i in range(800)))
    argv = ["xz", "-0", "-T2", "--block-size=8KiB", "-c", data]
    native = subprocess.run(argv, capture_output=True, check=True).stdout
    for engine in ("fault", "static"):
        try:
            p = run_bounded([MEMTAP, "run", "--engine", engine, "-o",
                             os.path.join(TMP, "xz_%s.mtr" % engine), "--"] + argv, 120)
        except subprocess.TimeoutExpired:
            raise Failure("%s: xz did not end in 120 s" % engine)
        check_eq((p.returncode, p.stdout == native), (0, True),
                 "%s: xz's output: %s" % (engine, p.stderr.decode(errors="replace")))


def test_setid_program_warned():
    """A set-user-ID program that would change who runs it (run by root
    here: owned by nobody, it runs as nobody natively) runs as the user
    under memtap, and memtap says so loudly, even with -q (it printed
    another result with exit 0 and no word); one owned by the user itself
    changes nothing and gets no warning."""
    setid = os.path.join(TMP, "id_setuid")
    shutil.copy("/usr/bin/id", setid)
    os.chmod(setid, 0o4755)
    p = memtap("run", "-q", "-o", os.path.join(TMP, "own_setid.mtr"), "--", setid, "-u")
    check("set-user-ID" not in p.stderr, "an own set-ID file: no warning: %s" % p.stderr)
    if os.geteuid() != 0:
        return  # only root can give the file to another user
    os.chown(setid, 65534, 65534)
    os.chmod(setid, 0o4755)
    native = subprocess.run([setid, "-u"], capture_output=True, text=True)
    check_eq(native.stdout, "65534\n", "natively it runs as its owner")
    p = memtap("run", "-q", "--keep-going", "-o", os.path.join(TMP, "setid_direct.mtr"),
               "--", setid, "-u", check_rc=False)
    check(re.search(r"^memtap: warning: %s is set-user-ID \(owner 65534\): under memtap it "
                    r"runs as you" % re.escape(setid), p.stderr, re.M),
          "the warning: %s" % p.stderr)


if __name__ == "__main__":
    sys.exit(run_named(globals(), sys.argv[1]))
