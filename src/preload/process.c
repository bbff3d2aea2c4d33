/*
 * process.c - the life of the traced process as the tracer sees it: start
 * (constructor), end (destructor, _exit, fatal signals), fork (the child
 * writes its own file), exec (everything is flushed first), and dlopen /
 * dlclose (the module table follows).
 */
#define _GNU_SOURCE
#include "modules.h"
#include "tracer.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;

/* ---- ending: every path out of the process flushes first ---- */

static const int fatal_signals[] = {
    SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS, SIGTERM, SIGINT,
    SIGHUP, SIGQUIT, SIGPIPE, SIGALRM, SIGXCPU, SIGXFSZ, SIGUSR1, SIGUSR2,
};

static void on_fatal_signal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    tracer_finish("signal", sig);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, NULL);
    /* a fault re-executes its instruction on return; a sent signal is sent
     * again and delivered when this handler returns */
    if (si->si_code <= 0 || sig == SIGABRT)
        syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
}

static void install_fatal_handlers(void)
{
    static char altstack[64 * 1024];
    stack_t ss = { .ss_sp = altstack, .ss_size = sizeof altstack };
    sigaltstack(&ss, NULL);
    for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals;
         i++) {
        struct sigaction old, sa;
        if (sigaction(fatal_signals[i], NULL, &old) != 0 ||
            old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO))
            continue; /* the program's own disposition stays */
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_fatal_signal;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigfillset(&sa.sa_mask);
        sigaction(fatal_signals[i], &sa, NULL);
    }
}

MEMTAP_EXPORT void _exit(int status)
{
    tracer_finish("exit", status);
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}

MEMTAP_EXPORT void _Exit(int status) __attribute__((alias("_exit")));

/* ---- fork ---- */

static void after_fork_child(void)
{
    tracer_after_fork_child();
    modules_write_all();
}

MEMTAP_EXPORT pid_t fork(void)
{
    static pid_t (*real)(void);
    if (!real) {
        tracer_internal_enter();
        real = (pid_t(*)(void))dlsym(RTLD_NEXT, "fork");
        tracer_internal_leave();
    }
    pid_t pid = real ? real() : (pid_t)syscall(SYS_fork);
    if (pid > 0)
        tracer_emit(MEMTAP_EV_FORK, 0,
                    (uint64_t)(uintptr_t)__builtin_return_address(0), 0, 0,
                    0, (uint64_t)pid);
    return pid;
}

/* ---- exec: the new image writes its own file; flush ours first ---- */

static void before_exec(uint64_t site)
{
    tracer_emit(MEMTAP_EV_EXEC, 0, site, 0, 0, 0, 0);
    tracer_finish("exec", 0);
}

static void exec_failed(void)
{
    int saved = errno;
    tracer_exec_failed();
    tracer_emit(MEMTAP_EV_EXEC, MEMTAP_RF_FAILED, 0, 0, 0, 0, 0);
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

typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);

static int execvpe_at(const char *file, char *const argv[],
                      char *const envp[], uint64_t site)
{
    static execvpe_fn real;
    if (!real) {
        tracer_internal_enter();
        real = (execvpe_fn)dlsym(RTLD_NEXT, "execvpe");
        tracer_internal_leave();
    }
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    before_exec(site);
    int rc = real(file, argv, envp);
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

MEMTAP_EXPORT void *dlopen(const char *file, int mode)
{
    static void *(*real)(const char *, int);
    if (!real) {
        tracer_internal_enter();
        real = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
        tracer_internal_leave();
    }
    void *h = real(file, mode);
    if (h)
        modules_rescan();
    return h;
}

MEMTAP_EXPORT int dlclose(void *handle)
{
    static int (*real)(void *);
    if (!real) {
        tracer_internal_enter();
        real = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
        tracer_internal_leave();
    }
    int rc = real(handle);
    if (rc == 0)
        modules_rescan();
    return rc;
}

/* ---- start and end ---- */

__attribute__((constructor(101))) static void memtap_preload_init(void)
{
    tracer_internal_enter();
    tracer_init();
    if (tracer_enabled()) {
        modules_rescan();
        pthread_atfork(NULL, NULL, after_fork_child);
        install_fatal_handlers();
    }
    tracer_internal_leave();
}

__attribute__((destructor(101))) static void memtap_preload_fini(void)
{
    tracer_finish("exit", 0);
}
