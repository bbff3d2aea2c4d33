/*
 * execcopy.c - the rewritten copy an exec'd program runs from
 * (execcopy.h).  The copy's name is the one the loader audit module and
 * `memtap cache add` use (cache/key.h, from the file's identity and the
 * run's settings); a missing copy is made by running `memtap cache add`
 * and waiting for it.  A script runs as the kernel would run it, its
 * interpreter from its copy.  A file the rewriter refused (its .refused
 * note), a static or set-ID program, a copy itself: the program runs as
 * it is and `memtap run` warns.
 */
#include "execcopy.h"
#include "preload/core/config.h"
#include "sys/env.h"

#include "cache/key.h"
#include "sys/rawsys.h"
#include "sys/shebang.h"
#include "sys/static_tls.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static struct {
    int on;
    const char *dir, *salt, *command;  /* config()'s */
    /* "MEMTAP_BYPASS=..." and "MEMTAP_TESTED=..." for cache add */
    char bypass[sizeof ENV_BYPASS + 16];
    char tested[sizeof ENV_TESTED + ENV_TESTED_MAX];
} ec;

/* Copies a then b (either may be NULL) into out (cap bytes); 0, or -1
 * when they do not fit. */
static int put(char *out, size_t cap, const char *a, const char *b)
{
    size_t n = 0;
    const char *parts[2] = { a, b };
    for (int i = 0; i < 2; i++)
        for (const char *p = parts[i]; p && *p; p++) {
            if (n + 1 >= cap)
                return -1;
            out[n++] = *p;
        }
    out[n] = '\0';
    return 0;
}

void execcopy_init(void)
{
    const preload_config *c = config();
    if (!*c->cache || !*c->cache_salt || !*c->command)
        return;
    ec.dir = c->cache;
    ec.salt = c->cache_salt;
    ec.command = c->command;
    ec.on = put(ec.bypass, sizeof ec.bypass, ENV_BYPASS "=", c->bypass) == 0 &&
            put(ec.tested, sizeof ec.tested, ENV_TESTED "=", c->tested) == 0;
}

int execcopy_elf(int fd, long *tls, char *interp, size_t cap)
{
    Elf64_Ehdr eh;
    if (raw_syscall6(SYS_pread64, fd, (long)&eh, sizeof eh, 0, 0, 0) !=
            (long)sizeof eh ||
        eh.e_ident[EI_MAG0] != ELFMAG0 || eh.e_ident[EI_MAG1] != ELFMAG1 ||
        eh.e_ident[EI_MAG2] != ELFMAG2 || eh.e_ident[EI_MAG3] != ELFMAG3 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
        (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) ||
        eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 64)
        return 0;
    Elf64_Phdr ph[64];
    long want = (long)(eh.e_phnum * sizeof *ph);
    if (raw_syscall6(SYS_pread64, fd, (long)ph, want, (long)eh.e_phoff, 0,
                     0) != want)
        return 0;
    int kind = 1;
    for (int i = 0; i < eh.e_phnum; i++) {
        if (ph[i].p_type == PT_TLS && tls) {
            *tls = (long)static_tls_of_segment(ph[i].p_memsz, ph[i].p_align);
        } else if (ph[i].p_type == PT_INTERP) {
            kind = 2;
            if (interp && (ph[i].p_filesz >= cap ||
                           raw_syscall6(SYS_pread64, fd, (long)interp,
                                        (long)ph[i].p_filesz,
                                        (long)ph[i].p_offset, 0,
                                        0) != (long)ph[i].p_filesz))
                return 0;
            if (interp)
                interp[ph[i].p_filesz] = '\0';
        }
    }
    return kind;
}

/* Whether the open file is a dynamically linked ELF program: what the
 * static engine runs from a copy. */
static int dynamic_program(int fd)
{
    return execcopy_elf(fd, NULL, NULL, 0) == 2;
}

int execcopy_static_program(const char *path)
{
    long fd = raw_syscall6(SYS_openat, AT_FDCWD, (long)path,
                           O_RDONLY | O_CLOEXEC, 0, 0, 0);
    if (fd < 0)
        return 0;
    int kind = execcopy_elf((int)fd, NULL, NULL, 0);
    raw_syscall3(SYS_close, fd, 0, 0);
    return kind == 1;
}

static int exists(const char *path)
{
    return raw_syscall6(SYS_faccessat, AT_FDCWD, (long)path, F_OK, 0, 0, 0) == 0;
}

/* Runs `memtap cache add --dir DIR -q real` and waits for it.  A fork,
 * not a vfork: the child runs C code before its exec. */
static void add_to_cache(const char *real)
{
    char *argv[] = { (char *)ec.command, "cache", "add", "--dir",
                     (char *)ec.dir, "-q",
                     (char *)real, NULL };
    char *envp[] = { "PATH=/usr/bin:/bin", ec.bypass, ec.tested, NULL };
    long pid = raw_syscall6(SYS_clone, SIGCHLD, 0, 0, 0, 0, 0);
    if (pid == 0) {
        uint64_t none = 0; /* the handler's mask would outlive the exec */
        raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&none, 0, 8, 0, 0);
        raw_syscall3(SYS_execve, ec.command, argv, envp);
        raw_syscall3(SYS_exit_group, 127, 0, 0);
    }
    if (pid < 0)
        return;
    int status;
    while (raw_syscall6(SYS_wait4, pid, (long)&status, __WALL, 0, 0, 0) ==
           -EINTR)
        ;
}

const char *execcopy_path(const char *path, char *out, size_t cap)
{
    if (!ec.on)
        return path;
    long fd = raw_syscall3(SYS_openat, AT_FDCWD, (long)path,
                           O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return path;
    struct stat st;
    char link[32], digits[12], real[PATH_MAX], name[NAME_MAX + 1];
    int nd = (int)sizeof digits - 1;
    digits[nd] = '\0';
    for (long v = fd; nd == (int)sizeof digits - 1 || v; v /= 10)
        digits[--nd] = (char)('0' + v % 10);
    put(link, sizeof link, "/proc/self/fd/", digits + nd);
    long len = raw_syscall3(SYS_readlink, link, real, sizeof real - 1);
    /* a set-ID program runs as it is: a copy would lose its privileges */
    int ok = len > 0 && raw_syscall3(SYS_fstat, fd, &st, 0) == 0 &&
             S_ISREG(st.st_mode) && !(st.st_mode & (S_ISUID | S_ISGID)) &&
             dynamic_program((int)fd);
    raw_syscall3(SYS_close, fd, 0, 0);
    if (!ok)
        return path;
    real[len] = '\0';
    /* a copy of the cache itself runs as it is */
    size_t dl = 0;
    while (ec.dir[dl] && ec.dir[dl] == real[dl])
        dl++;
    if (!ec.dir[dl] && real[dl] == '/')
        return path;
    char dir[PATH_MAX + 1];
    if (cache_entry_name(real, &st, ec.salt, name, sizeof name) < 0 ||
        put(dir, sizeof dir, ec.dir, "/") != 0 ||
        put(out, cap, dir, name) != 0)
        return path;
    if (exists(out))
        return out;
    char refused[PATH_MAX + 16];
    if (put(refused, sizeof refused, out, ".refused") == 0 && exists(refused))
        return path;
    add_to_cache(real);
    return exists(out) ? out : path;
}

long execcopy_script_line(const char *path, char *line, size_t cap)
{
    if (cap < 256 ||
        raw_syscall6(SYS_faccessat, AT_FDCWD, (long)path, X_OK, 0, 0, 0) != 0)
        return -1;
    long fd = raw_syscall3(SYS_openat, AT_FDCWD, (long)path,
                           O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    /* what the kernel reads of a script's first line */
    long n = raw_syscall6(SYS_pread64, fd, (long)line, 255, 0, 0, 0);
    raw_syscall3(SYS_close, fd, 0, 0);
    if (n < 3 || line[0] != '#' || line[1] != '!')
        return -1;
    long len = 0;
    while (len + 2 < n && line[len + 2] != '\n') {
        line[len] = line[len + 2];
        len++;
    }
    if (len + 2 == n)
        return -1; /* the line is longer than the kernel reads */
    line[len] = '\0';
    return len;
}

char **execcopy_script(const char *path, char *const *argv, char *space,
                       size_t cap, char **interp, size_t *used)
{
    char line[256];
    long len = ec.on ? execcopy_script_line(path, line, sizeof line) : -1;
    char *name, *arg;
    if (len < 0 || shebang_split(line, &name, &arg) != 0)
        return NULL;
    size_t argc = 0;
    while (argv && argv[argc])
        argc++;
    size_t lead = (size_t)(-(uintptr_t)space & 7);
    size_t pointers = (argc + 3) * sizeof(char *);
    size_t strings = (size_t)len + 1;
    if (lead + pointers + strings > cap)
        return NULL;
    char **v = (char **)(void *)(space + lead);
    char *text = space + lead + pointers;
    size_t k = 0;
    for (size_t i = 0; i < strings; i++)
        text[i] = line[i];
    *interp = v[k++] = text + (name - line);
    if (arg)
        v[k++] = text + (arg - line);
    v[k++] = (char *)path;
    for (size_t i = 1; i < argc; i++)
        v[k++] = argv[i];
    v[k] = NULL;
    *used = lead + pointers + strings;
    return v;
}
