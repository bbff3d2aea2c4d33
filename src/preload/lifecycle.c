/*
 * lifecycle.c - the life of the traced process as the tracer sees it: start
 * (constructor), end (exit_group, destructor, _exit, fatal signals), fork (the child
 * writes its own file), exec (everything is flushed first), and dlopen /
 * dlclose (the module table follows).
 *
 * One file: each way into and out of the process changes the same few
 * pieces of state (started, the exit code, the engines' activity) in an
 * order that matters.
 */
#define _GNU_SOURCE
#include "complete.h"
#include "sys/rawsys.h"
#include "sys/sigbits.h"
#include "hot.h"
#include "config.h"
#include "defer.h"
#include "fault.h"
#include "watch.h"
#include "sys/env.h"
#include "sys/only.h"
#include "execcopy.h"
#include "fmt.h"
#include "ignore.h"
#include "modules.h"
#include "own_stack.h"
#include "own_text.h"
#include "rt/rewritten.h"
#include "shadow_host.h"
#include "signals.h"
#include "syscall_filter.h"
#include "syscalls.h"
#include "tracer.h"
#include "stop_world.h"
#include "strings.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;
extern int __sigaction(int, const struct sigaction *, struct sigaction *);

/* ---- ending: every path out of the process flushes first ---- */

static const int fatal_signals[] = {
    SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS, SIGTERM, SIGINT,
    SIGHUP, SIGQUIT, SIGPIPE, SIGALRM, SIGXCPU, SIGXFSZ, SIGUSR1, SIGUSR2,
};

void process_die_by_signal(int sig, const siginfo_t *si, const void *uc)
{
    int fault = sig == SIGSEGV || sig == SIGBUS || sig == SIGILL ||
                sig == SIGTRAP || sig == SIGFPE;
    if (fault && si->si_code > 0 && uc)
        tracer_note_fault_pc((uint64_t)((const ucontext_t *)uc)
                                 ->uc_mcontext.gregs[REG_RIP]);
    tracer_finish("signal", sig);
    /* the kernel's own call: the C library's would be trapped, and this
     * may run inside the SIGSYS handler (a waiting call let it through) */
    struct { void *handler; unsigned long flags; void *restorer;
             unsigned long mask; } dfl = { SIG_DFL, 0, NULL, 0 };
    raw_syscall6(SYS_rt_sigaction, sig, (long)&dfl, 0, 8, 0, 0);
    /* a fault re-executes its instruction on return; a sent signal is sent
     * again and delivered when this handler returns */
    if (si->si_code <= 0 || sig == SIGABRT || sig == SIGSYS ||
        sig == SIGTRAP)
        raw_syscall3(SYS_tgkill, raw_syscall3(SYS_getpid, 0, 0, 0),
                     raw_syscall3(SYS_gettid, 0, 0, 0), sig);
}

static void on_fatal_signal(int sig, siginfo_t *si, void *uc)
{
    if (defer_signal(sig, si, uc))
        return;
    fault_handler_enter();
    process_die_by_signal(sig, si, uc);
    fault_handler_leave();
}

static int fatal_installed;

int process_fatal_action(int sig, struct sigaction *sa)
{
    for (size_t i = 0; fatal_installed &&
                       i < sizeof fatal_signals / sizeof *fatal_signals; i++)
        if (fatal_signals[i] == sig) {
            memset(sa, 0, sizeof *sa);
            sa->sa_sigaction = on_fatal_signal;
            sa->sa_flags = SA_SIGINFO | SA_ONSTACK;
            /* flushing may touch traced memory: those faults must get in */
            sigbits_async(&sa->sa_mask);
            return 1;
        }
    return 0;
}

static void install_fatal_handlers(void)
{
    own_stack_install();
    fatal_installed = 1;
    for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals;
         i++) {
        struct sigaction old, sa;
        if (__sigaction(fatal_signals[i], NULL, &old) != 0 ||
            old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO))
            continue; /* the program's own disposition stays */
        if (process_fatal_action(fatal_signals[i], &sa))
            __sigaction(fatal_signals[i], &sa, NULL);
    }
}

static void end_trace(int status)
{
    if (tracer_owns_process()) { /* not a vfork child's, whose memory is
                                    its parent's */
        fault_set_active(0);
        rewritten_set_active(0);
    }
    tracer_finish("exit", status);
}

void process_exit(int status)
{
    end_trace(status);
    raw_syscall3(SYS_exit_group, status, 0, 0);
    __builtin_unreachable();
}

MEMTAP_EXPORT void _exit(int status) { process_exit(status); }

MEMTAP_EXPORT void _Exit(int status) __attribute__((alias("_exit")));

/* ---- fork ---- */

static void after_fork_child(void)
{
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
        fault_set_active(1);
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
    fmt_char(b, '\n');
    hot_end_stats(b);
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
    return keep < 0 ? RT_KEEP_ALL : (unsigned)keep;
}

/* The seccomp filter: system calls of the traced modules are emulated, so
 * that the kernel's copies are recorded as block events, memtap's
 * descriptors stay open, execs are followed, and a posix_spawn child
 * keeps memtap's signal handlers. */
static void start_syscall_layer(int all)
{
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
    if (keep != RT_KEEP_ALL) {
        if (fault_init_tracking() == 0) {
            modules_track_data();
        } else {
            static const char msg[] =
                "memtap: warning: no page map: every access is recorded\n";
            raw_say_lit(msg);
            keep = RT_KEEP_ALL;
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
        fault_set_active(1);
}

/* ---- start and end ---- */

__attribute__((constructor(101))) static void memtap_preload_init(void)
{
    tracer_add_client(&rewritten_client);
    tracer_add_client(&process_client);
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
        pthread_atfork(NULL, NULL, after_fork_child);
        install_fatal_handlers();
        resolve_next_symbols();
        start_engines();
        atomic_store(&started, 1);
    }
    tracer_internal_leave();
}

/* With the filter, exit_group ends the trace (process_exit), after
 * stdio's last flush; without, this is the last memtap sees. */
__attribute__((destructor(101))) static void memtap_preload_fini(void)
{
    atomic_store(&started, 0); /* the loader's exit tells of changes too */
    if (!syscalls_enabled())
        end_trace(exit_code);
}
