/*
 * execargs.c - copies of an exec's path, arguments and environment, read
 * out of traced memory from inside the SIGSYS handler (see execargs.h).
 */
#define _GNU_SOURCE
#include "execargs.h"
#include "sys/env.h"
#include "sys/page.h"
#include "execcopy.h"
#include "exectls.h"

#include "preload/fault/fault.h"
#include "preload/memmap/traced_set.h"
#include "preload/core/fmt.h"
#include "preload/memmap/pagemap.h"
#include "preload/core/own_text.h"
#include "preload/record/tracer.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>

/* The kernel takes at most 6 MiB of strings plus their pointers
 * (3/4 of _STK_LIM); the reservation is address space, not memory. */
#define SCRATCH_MAX (64ul << 20)
#define POINTERS_MAX (SCRATCH_MAX / 2 / sizeof(char *))

static __thread struct {
    void *base;
    size_t len;
} tls_left __attribute__((tls_model("initial-exec")));

typedef struct copier {
    char *base;
    size_t used;
    long pid;
} copier;

/* Copies len bytes at src.  Traced pages are read directly (a fault there
 * is memtap's own and opens the page for the handler); other memory is
 * read by the kernel, so that a bad pointer is EFAULT as for the real
 * call, not a crash. */
static int read_user(copier *c, void *dst, uintptr_t src, size_t len)
{
    char *d = dst;
    while (len > 0) {
        size_t seg = PAGE - (src & (PAGE - 1));
        if (seg > len)
            seg = len;
        if (src && traced_has(src, seg)) {
            const volatile char *s = (const volatile char *)src;
            for (size_t i = 0; i < seg; i++)
                d[i] = s[i];
        } else {
            struct iovec local = { d, seg }, remote = { (void *)src, seg };
            long n = raw_syscall6(SYS_process_vm_readv, c->pid, (long)&local,
                                  1, (long)&remote, 1, 0);
            if (n == -ENOSYS || n == -EPERM) { /* not allowed here */
                const volatile char *s = (const volatile char *)src;
                for (size_t i = 0; i < seg; i++)
                    d[i] = s[i];
            } else if (n != (long)seg) {
                return -EFAULT;
            }
        }
        d += seg;
        src += seg;
        len -= seg;
    }
    return 0;
}

/* Appends the string at src to the copy; its address in *out. */
static long copy_string(copier *c, uintptr_t src, char **out)
{
    char *start = c->base + c->used;
    for (;;) {
        size_t seg = PAGE - (src & (PAGE - 1));
        if (c->used + seg > SCRATCH_MAX)
            return -E2BIG;
        char *d = c->base + c->used;
        if (read_user(c, d, src, seg) != 0)
            return -EFAULT;
        for (size_t i = 0; i < seg; i++)
            if (d[i] == '\0') {
                c->used += i + 1;
                *out = start;
                return 0;
            }
        c->used += seg;
        src += seg;
    }
}

/* Counts the pointers of a NULL-terminated array (none for NULL). */
static long count_vector(copier *c, uintptr_t v)
{
    long n = 0;
    for (uintptr_t p = 1; v; n++) {
        if ((size_t)n >= POINTERS_MAX)
            return -E2BIG;
        if (read_user(c, &p, v + (uintptr_t)n * sizeof p, sizeof p) != 0)
            return -EFAULT;
        if (!p)
            break;
    }
    return n;
}

static long copy_vector(copier *c, uintptr_t v, long n, char **dst)
{
    for (long i = 0; i < n; i++) {
        uintptr_t p;
        if (read_user(c, &p, v + (uintptr_t)i * sizeof p, sizeof p) != 0)
            return -EFAULT;
        long rc = copy_string(c, p, &dst[i]);
        if (rc)
            return rc;
    }
    dst[n] = NULL;
    return 0;
}

/* Fills the copy: the two pointer arrays, then the strings. */
static long copy_all(copier *c, uintptr_t path, uintptr_t argv,
                     uintptr_t envp, char **path_out, char ***argv_out,
                     char ***envp_out)
{
    long argc = count_vector(c, argv), envc = count_vector(c, envp);
    if (argc < 0)
        return argc;
    if (envc < 0)
        return envc;
    char **args = (char **)c->base, **env = args + argc + 1;
    c->used = (size_t)(argc + envc + 2) * sizeof(char *);
    long rc = copy_string(c, path, path_out);
    if (!rc)
        rc = copy_vector(c, argv, argc, args);
    if (!rc)
        rc = copy_vector(c, envp, envc, env);
    *argv_out = args;
    *envp_out = env;
    return rc;
}

/* Under no_new_privs (set for the seccomp filter when memtap runs without
 * CAP_SYS_ADMIN) a set-user-ID or set-group-ID program runs without its
 * privileges: say so, it would otherwise fail or answer wrongly unseen. */
static void warn_if_setid(long nr, const long *a, const char *path)
{
    if (raw_syscall6(SYS_prctl, PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0, 0) != 1)
        return;
    struct stat st;
    long rc = nr == SYS_execveat
                  ? raw_syscall6(SYS_newfstatat, a[0], (long)path, (long)&st,
                                 a[4] & AT_EMPTY_PATH, 0, 0)
                  : raw_syscall6(SYS_newfstatat, AT_FDCWD, (long)path,
                                 (long)&st, 0, 0, 0);
    if (rc != 0 || !(st.st_mode & (S_ISUID | S_ISGID)))
        return;
    char msg[512];
    fmt_buf b = { msg, 0, sizeof msg };
    fmt_str(&b, "memtap: warning: ");
    fmt_str(&b, path);
    fmt_str(&b, " is set-user-ID or set-group-ID: under memtap's system call "
                "filter (no_new_privs) it runs without those privileges; run "
                "memtap as root to keep them\n");
    raw_say(msg, b.len);
}

/* A statically linked program about to replace this image: nothing of
 * memtap follows it (LD_PRELOAD never reaches it).  Said now, and counted
 * for memtap run, which marks the run incomplete. */
static void say_untraced(const char *path)
{
    char msg[512];
    fmt_buf b = { msg, 0, sizeof msg };
    fmt_str(&b, "memtap: warning: ");
    fmt_str(&b, path);
    fmt_str(&b, " is statically linked: memtap cannot trace it (LD_PRELOAD "
                "never reaches it), its accesses are missing\n");
    raw_say(msg, b.len);
    tracer_note_untraced_exec();
}

void execargs_reclaim(void)
{
    if (tls_left.base) {
        raw_syscall3(SYS_munmap, tls_left.base, tls_left.len, 0);
        tls_left.base = NULL;
    }
}

/* The new program's name (ENV_COMM, which memtap run put in the
 * environment): the last part of the path exec'd, as the kernel names a
 * program (a script's own, not its interpreter's), 15 bytes at most; the
 * entry is replaced in place (none: nothing to replace). */
static void name_in_env(copier *c, char **envp, const char *path)
{
    static const char key[] = ENV_COMM "=";
    size_t k = sizeof key - 1, i = 0;
    while (envp[i] && strncmp(envp[i], key, k) != 0)
        i++;
    if (!envp[i] || c->used + k + 16 > SCRATCH_MAX)
        return;
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    char *entry = c->base + c->used, *d = entry;
    for (const char *s = key; *s;)
        *d++ = *s++;
    for (size_t n = 0; n < 15 && base[n]; n++)
        *d++ = base[n];
    *d++ = '\0';
    c->used += (size_t)(d - entry);
    envp[i] = entry;
}

long execargs_run(long nr, const long *a, const sigset_t *program_mask)
{
    execargs_reclaim();
    long mem = raw_syscall6(SYS_mmap, 0, SCRATCH_MAX, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
                            0);
    if (mem < 0 && mem > -4096)
        return mem;
    copier c = { (char *)mem, 0, raw_syscall3(SYS_getpid, 0, 0, 0) };
    /* freed below, or by the parent's thread after a vfork-like child's
     * successful exec */
    tls_left.base = c.base;
    tls_left.len = SCRATCH_MAX;
    int at = nr == SYS_execveat; /* execveat(dirfd, path, argv, envp, flags) */
    char *path = NULL, **argv = NULL, **envp = NULL; /* set when rc is 0 */
    long rc = copy_all(&c, (uintptr_t)a[at], (uintptr_t)a[at + 1],
                       (uintptr_t)a[at + 2], &path, &argv, &envp);
    /* the static engine runs an exec'd program from its rewritten copy */
    int plain = !at || (a[0] == AT_FDCWD && !(a[4] & AT_EMPTY_PATH));
    if (rc == 0 && plain && c.used + PATH_MAX <= SCRATCH_MAX) {
        name_in_env(&c, envp, path);
        /* a script: its interpreter, with the arguments the kernel would
         * give it, from the interpreter's copy */
        char *interp;
        size_t used;
        char **script = execcopy_script(path, argv, c.base + c.used,
                                        SCRATCH_MAX - PATH_MAX - c.used,
                                        &interp, &used);
        if (script) {
            argv = script;
            path = interp;
            c.used += used;
        }
        /* the new program's libraries may need more static TLS than
         * this one's */
        size_t tls_used;
        exectls_raise(path, envp, c.base + c.used,
                      SCRATCH_MAX - PATH_MAX - c.used, &tls_used);
        c.used += tls_used;
        path = (char *)execcopy_path(path, c.base + c.used, PATH_MAX);
        c.used += PATH_MAX;
    }
    if (rc == 0) {
        warn_if_setid(nr, a, path);
        if (plain && execcopy_static_program(path))
            say_untraced(path);
        /* the new image gets a randomized layout (so that no text of it
         * lies where this image's filter traps) and the program's mask */
        long pers = raw_syscall3(SYS_personality, 0xffffffffl, 0, 0);
        if (pers >= 0 && (pers & ADDR_NO_RANDOMIZE))
            raw_syscall3(SYS_personality, pers & ~ADDR_NO_RANDOMIZE, 0, 0);
        raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)program_mask, 0,
                     8, 0, 0);
        /* a vfork-like child never comes back to leave the handler: leave
         * it now, so that the parent's thread is not left inside memtap */
        fault_handler_leave();
        if (at)
            rc = raw_syscall6(nr, a[0], (long)path, (long)argv, (long)envp,
                              a[4], 0);
        else
            rc = raw_syscall6(nr, (long)path, (long)argv, (long)envp, 0, 0,
                              0);
        fault_handler_enter();
    }
    execargs_reclaim();
    return rc;
}
