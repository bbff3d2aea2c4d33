/*
 * lifecycle.c - the life of the traced process as the tracer sees it: start
 * (constructor: the engines and the hooks between the layers), end (the
 * destructor; exit_group, _exit and fatal signals are process_end.c's),
 * fork (the child writes its own file), exec (everything is flushed
 * first), and dlopen / dlclose (the module table follows).
 *
 * One file: each way into and out of the process changes the same few
 * pieces of state (started, the exit code, the engines' activity) in an
 * order that matters.
 */
#define _GNU_SOURCE
#include "preload/fault/complete.h"
#include "sys/rawsys.h"
#include "preload/fault/hot.h"
#include "preload/core/config.h"
#include "preload/fault/fault.h"
#include "preload/memmap/alias.h"
#include "preload/memmap/traced_set.h"
#include "preload/filter/watch.h"
#include "sys/env.h"
#include "sys/only.h"
#include "preload/syscall/execcopy.h"
#include "preload/syscall/exectls.h"
#include "preload/core/fmt.h"
#include "preload/filter/ignore.h"
#include "preload/modules/modules.h"
#include "preload/core/own_stack.h"
#include "preload/syscall/process_end.h"
#include "preload/core/own_text.h"
#include "rt/rewritten.h"
#include "shadow_host.h"
#include "preload/syscall/signals.h"
#include "preload/signal/sigtable.h"
#include "preload/syscall/syscall_filter.h"
#include "preload/syscall/syscalls.h"
#include "preload/record/tracer.h"
#include "preload/core/stop_world.h"
#include "preload/record/strings.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;

/* ---- fork ---- */

/* (Before a fork traced_before_fork makes the aliased pages private and
 * holds new ones off until alias_release: traced_set.h.) */
static void after_fork_child(void)
{
    alias_after_fork_child();
    traced_after_fork_child();
    complete_after_fork();
    hot_after_fork();
    world_after_fork();
    tracer_after_fork_child();
    modules_write_all();
}

/* The functions the wrappers forward to, resolved once at start-up (so
 * that no dlsym runs while the program's memory is protected). */
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
static struct {
    pid_t (*fork)(void);
    execvpe_fn execvpe;
    void *(*dlopen)(const char *, int);
    int (*dlclose)(void *);
    int (*pthread_create)(pthread_t *, const pthread_attr_t *,
                          void *(*)(void *), void *);
    void (*pthread_exit)(void *);
    void (*exit)(int);
    int (*prctl)(int, unsigned long, unsigned long, unsigned long, unsigned long);
} next;

static void resolve_next_symbols(void)
{
    next.fork = (pid_t(*)(void))dlsym(RTLD_NEXT, "fork");
    next.execvpe = (execvpe_fn)dlsym(RTLD_NEXT, "execvpe");
    next.dlopen = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
    next.dlclose = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
    next.pthread_create = (int (*)(pthread_t *, const pthread_attr_t *,
                                   void *(*)(void *), void *))
        dlsym(RTLD_NEXT, "pthread_create");
    next.pthread_exit = (void (*)(void *))dlsym(RTLD_NEXT, "pthread_exit");
    next.exit = (void (*)(int))dlsym(RTLD_NEXT, "exit");
    next.prctl = (int (*)(int, unsigned long, unsigned long, unsigned long,
                          unsigned long))dlsym(RTLD_NEXT, "prctl");
    heap_resolve_next();
    blockops_resolve();
}

MEMTAP_EXPORT pid_t fork(void)
{
    if (!next.fork)
        resolve_next_symbols();
    pid_t pid = next.fork ? next.fork() : (pid_t)syscall(SYS_fork);
    if (pid > 0)
        tracer_record(MEMTAP_EV_FORK, 0,
                    (uint64_t)(uintptr_t)__builtin_return_address(0), 0, 0,
                    0, (uint64_t)pid);
    return pid;
}

/* A process that makes itself a subreaper takes in the orphans among its
 * descendants: the writers started after it are their processes' children,
 * not orphans its waits would see (tracer.c).  (The C library's prctl makes
 * the call: its arguments may point into traced memory.) */
MEMTAP_EXPORT int prctl(int option, ...)
{
    va_list ap;
    va_start(ap, option);
    unsigned long a[4];
    for (int i = 0; i < 4; i++)
        a[i] = va_arg(ap, unsigned long);
    va_end(ap);
    if (!next.prctl)
        resolve_next_symbols();
    int rc = next.prctl ? next.prctl(option, a[0], a[1], a[2], a[3])
                        : (int)syscall(SYS_prctl, option, a[0], a[1], a[2], a[3]);
    if (rc == 0 && option == PR_SET_CHILD_SUBREAPER && a[0])
        tracer_note_subreaper();
    return rc;
}

/* ---- threads: their buffers are flushed when they end ---- */

typedef struct thread_start_arg {
    void *(*fn)(void *);
    void *arg;
} thread_start_arg;

static void *thread_start(void *p)
{
    thread_start_arg a = *(thread_start_arg *)p;
    raw_unmap(p, 4096);
    own_stack_install();
    world_thread_announced();
    world_thread_begin();
    void *ret = a.fn(a.arg);
    world_thread_end();
    tracer_thread_exit();
    own_stack_remove();
    return ret;
}

MEMTAP_EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr,
                                 void *(*fn)(void *), void *arg)
{
    if (!next.pthread_create)
        resolve_next_symbols();
    thread_start_arg *a = tracer_enabled() ? raw_map(4096) : NULL;
    if (!a)
        return next.pthread_create(t, attr, fn, arg);
    a->fn = fn;
    a->arg = arg;
    world_thread_created(1);
    int rc = next.pthread_create(t, attr, thread_start, a);
    if (rc != 0) {
        world_thread_created(-1);
        raw_unmap(a, 4096);
    }
    return rc;
}

MEMTAP_EXPORT void pthread_exit(void *ret)
{
    if (!next.pthread_exit)
        resolve_next_symbols();
    world_thread_end();
    tracer_thread_exit();
    own_stack_remove();
    next.pthread_exit(ret);
    __builtin_unreachable();
}

/* ---- exec: the new image writes its own file; flush ours first ---- */

static void before_exec(uint64_t site)
{
    tracer_record(MEMTAP_EV_EXEC, 0, site, 0, 0, 0, 0);
    tracer_finish("exec", 0);
}

static void exec_failed(void)
{
    int saved = errno;
    tracer_exec_failed();
    tracer_record(MEMTAP_EV_EXEC, MEMTAP_RF_FAILED, 0, 0, 0, 0, 0);
    errno = saved;
}

#define CALLER ((uint64_t)(uintptr_t)__builtin_return_address(0))

MEMTAP_EXPORT int execve(const char *path, char *const argv[],
                         char *const envp[])
{
    before_exec(CALLER);
    long rc = syscall(SYS_execve, path, argv, envp);
    exec_failed();
    return (int)rc;
}

MEMTAP_EXPORT int execv(const char *path, char *const argv[])
{
    before_exec(CALLER);
    long rc = syscall(SYS_execve, path, argv, environ);
    exec_failed();
    return (int)rc;
}

static int execvpe_at(const char *file, char *const argv[],
                      char *const envp[], uint64_t site)
{
    if (!next.execvpe)
        resolve_next_symbols();
    if (!next.execvpe) {
        errno = ENOSYS;
        return -1;
    }
    before_exec(site);
    int rc = next.execvpe(file, argv, envp);
    exec_failed();
    return rc;
}

MEMTAP_EXPORT int execvpe(const char *file, char *const argv[],
                          char *const envp[])
{
    return execvpe_at(file, argv, envp, CALLER);
}

MEMTAP_EXPORT int execvp(const char *file, char *const argv[])
{
    return execvpe_at(file, argv, environ, CALLER);
}

MEMTAP_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    before_exec(CALLER);
    long rc = syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
    exec_failed();
    return (int)rc;
}

/* Collects execl-style arguments (NULL-terminated) into argv; returns the
 * environment that follows them when want_env is set. */
#define EXECL_MAX_ARGS 4096
#define COLLECT_ARGS(argv, arg0, last_param, want_env, envp)                 \
    do {                                                                      \
        va_list ap;                                                           \
        va_start(ap, last_param);                                             \
        size_t n = 0;                                                         \
        argv[n++] = (char *)(arg0);                                           \
        while (argv[n - 1] && n < EXECL_MAX_ARGS)                             \
            argv[n++] = va_arg(ap, char *);                                   \
        argv[n - 1] = NULL;                                                   \
        if (want_env)                                                         \
            envp = va_arg(ap, char **);                                       \
        va_end(ap);                                                           \
    } while (0)

MEMTAP_EXPORT int execl(const char *path, const char *arg, ...)
{
    char *argv[EXECL_MAX_ARGS];
    char **envp = environ;
    COLLECT_ARGS(argv, arg, arg, 0, envp);
    before_exec(CALLER);
    long rc = syscall(SYS_execve, path, argv, envp);
    exec_failed();
    return (int)rc;
}

MEMTAP_EXPORT int execle(const char *path, const char *arg, ...)
{
    char *argv[EXECL_MAX_ARGS];
    char **envp = environ;
    COLLECT_ARGS(argv, arg, arg, 1, envp);
    before_exec(CALLER);
    long rc = syscall(SYS_execve, path, argv, envp);
    exec_failed();
    return (int)rc;
}

MEMTAP_EXPORT int execlp(const char *file, const char *arg, ...)
{
    char *argv[EXECL_MAX_ARGS];
    char **envp = environ;
    COLLECT_ARGS(argv, arg, arg, 0, envp);
    return execvpe_at(file, argv, envp, CALLER);
}

/* ---- dlopen / dlclose ---- */

static atomic_int started; /* from memtap_preload_init to its fini */

/* The loader's modules changed: they are looked at again (new ones go to
 * the trace and, rewritten, to the runtime; their own system calls get a
 * filter). */
MEMTAP_EXPORT void memtap_loader_changed(void)
{
    if (!atomic_load(&started))
        return;
    modules_rescan();
    syscall_filter_cover_new();
}

MEMTAP_EXPORT void *dlopen(const char *file, int mode)
{
    if (!next.dlopen)
        resolve_next_symbols();
    void *h = next.dlopen(file, mode);
    if (h)
        memtap_loader_changed();
    return h;
}

MEMTAP_EXPORT int dlclose(void *handle)
{
    if (!next.dlclose)
        resolve_next_symbols();
    int rc = next.dlclose(handle);
    if (rc == 0)
        memtap_loader_changed();
    return rc;
}

/* ---- start and end ---- */

/* A program run from its rewritten copy has the name of the copy's file in
 * memtap's cache ("<16 hex digits>-<file>", of which the kernel keeps 15
 * bytes): it takes the one the kernel gives it natively (ENV_COMM), which
 * ps, top, pkill and /proc/self/comm show.  (The module table knows the
 * copy's original, found before this.) */
static void name_as_native(void)
{
    if (*config()->comm && *modules_exe_original())
        raw_syscall6(SYS_prctl, PR_SET_NAME, (long)config()->comm, 0, 0, 0, 0);
}

/* ---- the traced window ---- */

typedef int (*main_fn)(int, char **, char **);
static main_fn program_main;
static int start_at_main;
/* The status the process exits with, for its end record: main's return
 * value or exit's argument (what the destructor cannot see). */
static int exit_code;

static int main_hook(int argc, char **argv, char **envp)
{
    if (start_at_main) {
        traced_set_active(1);
        rewritten_set_active(1);
    }
    exit_code = program_main(argc, argv, envp);
    return exit_code;
}

/* main() runs through main_hook: its return value is the exit status, and
 * with MEMTAP_WINDOW=main tracing starts right before it. */
MEMTAP_EXPORT int __libc_start_main(main_fn main, int argc, char **argv,
                                    void (*init)(void), void (*fini)(void),
                                    void (*rtld_fini)(void), void *stack_end)
{
    typedef int (*start_fn)(main_fn, int, char **, void (*)(void),
                            void (*)(void), void (*)(void), void *);
    start_fn real = (start_fn)dlsym(RTLD_NEXT, "__libc_start_main");
    start_at_main = (fault_enabled() || rewritten_modules() > 0) &&
                    config()->window == WINDOW_MAIN;
    program_main = main;
    return real(main_hook, argc, argv, init, fini, rtld_fini, stack_end);
}

MEMTAP_EXPORT void exit(int status)
{
    if (!next.exit)
        resolve_next_symbols();
    exit_code = status;
    next.exit(status);
    __builtin_unreachable();
}

/* The engines' counters for the closing note. */
static void process_end_stats(fmt_buf *b)
{
    shadow_host_end_stats(b);
    ignore_end_stats(b);
    watch_end_stats(b);
    rewritten_end_stats(b);
    syscalls_end_stats(b);
    if (!fault_enabled())
        return;
    fmt_str(b, "faults=");
    fmt_u64(b, fault_count());
    fmt_str(b, "\nfaults_completed=");
    fmt_u64(b, complete_count());
    fmt_str(b, "\nstack_pages=");
    fmt_u64(b, fault_stack_pages());
    fmt_str(b, "\ncode_pages=");
    fmt_u64(b, fault_code_pages());
    fmt_char(b, '\n');
    hot_end_stats(b);
    alias_end_stats(b);
    fmt_str(b, "exposed_windows=");
    fmt_u64(b, fault_exposed_windows());
    int64_t first = fault_first_exposed();
    if (first == FAULT_EXPOSED_STOP + 2) {
        fmt_str(b, "\nexposed_first=stop");
    } else if (first) {
        fmt_str(b, "\nexposed_first=syscall ");
        fmt_u64(b, (uint64_t)(first - 2));
    }
    fmt_str(b, "\nsyscalls_emulated=");
    fmt_u64(b, syscalls_emulated());
    fmt_str(b, "\nsyscalls_reopened=");
    fmt_u64(b, syscalls_reopened());
    fmt_str(b, "\nsignals_merged=");
    fmt_u64(b, signals_merged());
    fmt_char(b, '\n');
}

/* Pages the fault engine opened for memtap's own work close again. */
static void internal_done(void)
{
    if (!fault_in_memtap())
        fault_internal_release();
}

static const tracer_client process_client = {
    .end_stats = process_end_stats,
    .internal_done = internal_done,
};

/* MEMTAP_ONLY (sys/only.h); all when unset, empty or not such a list. */
static unsigned kept_memory(void)
{
    const char *only = config()->only;
    int keep = only ? only_parse(only) : -1;
    return keep < 0 ? ONLY_ALL : (unsigned)keep;
}

/* The seccomp filter: system calls of the traced modules are emulated, so
 * that the kernel's copies are recorded as block events, memtap's
 * descriptors stay open, execs are followed, and a posix_spawn child
 * keeps memtap's signal handlers. */
static void start_syscall_layer(int all)
{
    exectls_init();
    if (syscalls_init(all) != 0) {
        static const char msg[] =
            "memtap: warning: no seccomp filter: system calls that touch "
            "traced memory may fail with EFAULT, and their copies are not "
            "recorded\n";
        raw_say_lit(msg);
    }
}

/* The static engine: rewritten code logs its accesses; those to memory
 * MEMTAP_ONLY leaves out are dropped, by the traced set the fault engine
 * would protect (kept here without protecting anything). */
static void start_static_engine(int open)
{
    unsigned keep = kept_memory();
    if (keep != ONLY_ALL) {
        if (traced_init() == 0) {
            modules_track_data();
        } else {
            static const char msg[] =
                "memtap: warning: no page map: every access is recorded\n";
            raw_say_lit(msg);
            keep = ONLY_ALL;
        }
    }
    execcopy_init();
    /* also keeps SIGTRAP (int3 sites) deliverable in threads that start
     * with every signal blocked, and in posix_spawn children */
    start_syscall_layer(0);
    signals_wrap_existing();
    rewritten_start(keep, open);
}

/* Starts an engine when the run asks for accesses (MEMTAP_ACCESSES), with
 * the window MEMTAP_WINDOW names: "all" (from here), "main" (from
 * main()), or "marks" (from memtap_start()): the static engine when
 * rewritten code is loaded, else the fault engine. */
static void start_engines(void)
{
    if (!config()->accesses)
        return;
    int open = config()->window == WINDOW_ALL;
    if (rewritten_modules() > 0) {
        start_static_engine(open);
        return;
    }
    if (fault_init() != 0) {
        static const char msg[] =
            "memtap: the fault engine cannot start; recording heap events only\n";
        raw_say_lit(msg);
        return;
    }
    if (world_init() != 0) {
        static const char msg[] =
            "memtap: warning: threads cannot be stopped: accesses of threads "
            "to open pages are counted, not recorded\n";
        raw_say_lit(msg);
    }
    start_syscall_layer(1);
    signals_wrap_existing();
    modules_track_data();
    if (open)
        traced_set_active(1);
}

/* ---- start and end ---- */

/* Runs once: from the loader's call of this constructor, or earlier from
 * the start stub of the first rewritten library the loader initializes
 * (memtap_start_early), so that library initializers are recorded. */
__attribute__((constructor(101))) static void memtap_preload_init(void)
{
    static atomic_int begun;
    if (atomic_exchange(&begun, 1))
        return;
    tracer_add_client(&rewritten_client);
    tracer_add_client(&process_client);
    sigtable_set_bracket(1, &fault_handler_bracket);
    sigtable_set_bracket(0, &rewritten_handler_bracket);
    fault_set_trap_claim(rewritten_trap);
    tracer_internal_enter(); /* after the clients: they hear of it */
    tracer_init();
    if (tracer_enabled()) {
        shadow_host_init();
        if (shadow_host_active())
            tracer_add_client(&shadow_host_client);
        strings_init();
        ignore_init(); /* before the program's module is seen */
        watch_init();
        modules_rescan();
        pthread_atfork(traced_before_fork, alias_release, after_fork_child);
        process_end_install_fatal();
        resolve_next_symbols();
        name_as_native();
        start_engines();
        atomic_store(&started, 1);
    }
    tracer_internal_leave();
}

/* Called by a rewritten library's start stub, before its initializer
 * (rt/abi.h): memtap starts now if it has not.  Not before the C library
 * is initialized: a library that needs no other (libicudata's data) is
 * initialized before it, while environ is still NULL, and memtap started
 * there read no MEMTAP_* variable and stayed off for good (clang-14 died
 * of the first int3 site libLLVM's initializers met); a later stub, or
 * the constructor, starts it. */
MEMTAP_EXPORT void memtap_start_early(void)
{
    if (environ)
        memtap_preload_init();
}

/* With the filter, exit_group ends the trace (process_exit), after
 * stdio's last flush; without, this is the last memtap sees. */
__attribute__((destructor(101))) static void memtap_preload_fini(void)
{
    atomic_store(&started, 0); /* the loader's exit tells of changes too */
    if (!syscalls_enabled())
        process_end_trace(exit_code);
}
