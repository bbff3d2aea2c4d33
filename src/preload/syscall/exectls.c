/*
 * exectls.c - the static TLS surplus of a program started by exec
 * (exectls.h): the loader's listing of its libraries, read from a child
 * process, each library's PT_TLS summed (and kept for the next exec of the
 * same file), and GLIBC_TUNABLES of the copied environment rewritten when
 * that asks for less.
 */
#define _GNU_SOURCE
#include "exectls.h"
#include "execcopy.h"

#include "preload/core/fmt.h"
#include "sys/hash.h"
#include "sys/rawsys.h"
#include "sys/shebang.h"
#include "sys/static_tls.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define TUNABLES "GLIBC_TUNABLES="
#define SURPLUS "glibc.rtld.optional_static_tls="
#define LISTING_MAX (256u << 10) /* a listing's bytes read, at most */

/* libmemtap.so's own ELF header, where the linker put it */
extern const Elf64_Ehdr __ehdr_start __attribute__((visibility("hidden")));

static uint64_t own_tls;

/* Needs found, shared with this image's forked children, which exec (a
 * shell's loop starts the same programs again and again, and a listing
 * costs about a millisecond, a third of what an exec costs under memtap):
 * by the program file's identity, LD_LIBRARY_PATH and LD_PRELOAD.  A slot is written
 * while its sequence number is odd. */
#define KNOWN_SLOTS 64
typedef struct known {
    uint32_t seq;
    uint64_t key, need;
} known;
static known *known_needs; /* MAP_SHARED; NULL when the kernel refused */

/* The need known for key, or 0. */
static uint64_t known_get(uint64_t key)
{
    known *k = known_needs ? &known_needs[key % KNOWN_SLOTS] : NULL;
    if (!k)
        return 0;
    uint32_t seq = __atomic_load_n(&k->seq, __ATOMIC_ACQUIRE);
    uint64_t was = __atomic_load_n(&k->key, __ATOMIC_RELAXED);
    uint64_t need = __atomic_load_n(&k->need, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return !(seq & 1) && was == key &&
                   __atomic_load_n(&k->seq, __ATOMIC_RELAXED) == seq
               ? need
               : 0;
}

/* Notes need for key (unless another process is writing its slot). */
static void known_put(uint64_t key, uint64_t need)
{
    known *k = known_needs ? &known_needs[key % KNOWN_SLOTS] : NULL;
    uint32_t seq = k ? __atomic_load_n(&k->seq, __ATOMIC_RELAXED) : 1;
    if ((seq & 1) || !__atomic_compare_exchange_n(&k->seq, &seq, seq + 1, 0,
                                                  __ATOMIC_ACQUIRE,
                                                  __ATOMIC_RELAXED))
        return;
    __atomic_store_n(&k->key, key, __ATOMIC_RELAXED);
    __atomic_store_n(&k->need, need, __ATOMIC_RELAXED);
    __atomic_store_n(&k->seq, seq + 2, __ATOMIC_RELEASE);
}

void exectls_init(void)
{
    long m = raw_syscall6(SYS_mmap, 0, KNOWN_SLOTS * sizeof(known),
                          PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                          -1, 0);
    known_needs = RAW_FAILED(m) ? NULL : (known *)m;
    const Elf64_Ehdr *eh = &__ehdr_start;
    const Elf64_Phdr *ph =
        (const Elf64_Phdr *)(const void *)((const char *)eh + eh->e_phoff);
    for (unsigned i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_TLS)
            own_tls = static_tls_of_segment(ph[i].p_memsz, ph[i].p_align);
}

/* s past prefix when it starts with it, else NULL. */
static const char *after(const char *s, const char *prefix)
{
    while (*prefix)
        if (*s++ != *prefix++)
            return NULL;
    return s;
}

/* The static TLS of the ELF file at path (0 when it has none or cannot
 * be read). */
static uint64_t tls_of(const char *path)
{
    long fd = raw_syscall3(SYS_openat, AT_FDCWD, (long)path,
                           O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    long tls = 0;
    execcopy_elf((int)fd, &tls, NULL, 0);
    raw_syscall3(SYS_close, fd, 0, 0);
    return (uint64_t)tls;
}

/* Makes fd the child's descriptor to (clearing close-on-exec when it is
 * already there). */
static void child_fd(long fd, int to)
{
    if (fd == to)
        raw_syscall3(SYS_fcntl, to, F_SETFD, 0);
    else
        raw_syscall3(SYS_dup2, fd, to, 0);
}

/* Runs `interp --list program` with the environment env and reads what
 * it prints into buf (cap bytes, the last left for a terminating NUL):
 * how many bytes, or -1.  The child has no exit signal (the program's
 * SIGCHLD handler never sees it) and is waited for here. */
static long listing(const char *interp, const char *program, char **env,
                    char *buf, size_t cap)
{
    int fds[2];
    if (raw_syscall3(SYS_pipe2, fds, O_CLOEXEC, 0) != 0)
        return -1;
    char *argv[] = { (char *)interp, "--list", (char *)program, NULL };
    long pid = raw_syscall6(SYS_clone, 0, 0, 0, 0, 0, 0);
    if (pid == 0) {
        uint64_t none = 0; /* the handler's mask would outlive the exec */
        raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&none, 0, 8, 0, 0);
        child_fd(fds[1], 1);
        long null = raw_syscall3(SYS_openat, AT_FDCWD, "/dev/null", O_WRONLY);
        if (null >= 0)
            child_fd(null, 2);
        raw_syscall3(SYS_execve, interp, argv, env);
        raw_syscall3(SYS_exit_group, 127, 0, 0);
    }
    raw_syscall3(SYS_close, fds[1], 0, 0);
    long n = 0;
    while (pid > 0 && (size_t)n + 1 < cap) {
        long r = raw_syscall3(SYS_read, fds[0], buf + n, cap - 1 - (size_t)n);
        if (r > 0)
            n += r;
        else if (r != -EINTR)
            break;
    }
    raw_syscall3(SYS_close, fds[0], 0, 0);
    if (pid < 0)
        return -1;
    if ((size_t)n + 1 >= cap) /* too long to be a listing: no reader left */
        raw_syscall3(SYS_kill, pid, SIGKILL, 0);
    int status;
    while (raw_syscall6(SYS_wait4, pid, (long)&status, __WALL, 0, 0, 0) == -EINTR)
        ;
    return (size_t)n + 1 >= cap ? -1 : n;
}

/* The static TLS of the libraries a listing (buf[0..n), room for a NUL
 * after it) names: "\tNAME => PATH (0x...)" or "\tPATH (0x...)". */
static uint64_t listed_tls(char *buf, long n)
{
    uint64_t sum = 0;
    buf[n] = '\0';
    for (char *line = buf; *line;) {
        char *end = line;
        while (*end && *end != '\n')
            end++;
        char *next = *end ? end + 1 : end;
        *end = '\0';
        char *path = line;
        while (*path == '\t' || *path == ' ')
            path++;
        for (char *p = path; *p; p++)
            if (p[0] == '=' && p[1] == '>' && p[2] == ' ') {
                path = p + 3;
                break;
            }
        if (*path == '/') {
            char *stop = path;
            while (*stop && !(stop[0] == ' ' && stop[1] == '('))
                stop++;
            *stop = '\0';
            sum += tls_of(path);
        }
        line = next;
    }
    return sum;
}

/* Whether entry (of LD_PRELOAD's list, len bytes) names libmemtap.so. */
static int is_memtap(const char *entry, size_t len)
{
    static const char own[] = "/libmemtap.so";
    size_t n = sizeof own - 1;
    if (len < n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (entry[len - n + i] != own[i])
            return 0;
    return 1;
}

/* "LD_PRELOAD=" and the entries of value but libmemtap.so, in out (room
 * for as many bytes as value and the name); NULL when none are left. */
static char *preload_without_memtap(const char *value, char *out)
{
    fmt_buf b = { out, 0, sizeof "LD_PRELOAD=" + 1 };
    for (const char *v = value; *v; v++)
        b.cap++;
    fmt_str(&b, "LD_PRELOAD=");
    size_t bare = b.len;
    for (const char *e = value; *e;) { /* split at ':' or blanks, as the
                                          loader does */
        const char *end = e;
        while (*end && *end != ':' && *end != ' ' && *end != '\t')
            end++;
        if (end > e && !is_memtap(e, (size_t)(end - e))) {
            if (b.len > bare)
                fmt_char(&b, ':');
            while (e < end)
                fmt_char(&b, *e++);
        }
        e = *end ? end + 1 : end;
    }
    return b.len > bare ? out : NULL;
}

/* What a listing's answer depends on, as the known needs keep it: the
 * file's identity and the variables the loader reads for it. */
static uint64_t need_key(const struct stat *st, char *const *envp)
{
    uint64_t key = fnv1a64(FNV64_OFFSET, &st->st_dev, sizeof st->st_dev);
    key = fnv1a64(key, &st->st_ino, sizeof st->st_ino);
    key = fnv1a64(key, &st->st_mtim, sizeof st->st_mtim);
    key = fnv1a64(key, &st->st_size, sizeof st->st_size);
    for (size_t i = 0; envp[i]; i++)
        if (after(envp[i], "LD_LIBRARY_PATH=") || after(envp[i], "LD_PRELOAD="))
            key = fnv1a64_str(key, envp[i]);
    return key;
}

/* What program (or, for a script, its interpreter) needs of the static
 * TLS surplus with libmemtap.so, its listing run with envp but memtap's
 * own variables (the program's other preloaded libraries are listed);
 * 0 when that cannot be told.  space: cap bytes, 8-byte aligned, for the
 * child's environment and the listing. */
static uint64_t need_of(const char *program, char *const *envp, char *space,
                        size_t cap)
{
    char line[256], interp[PATH_MAX], *name, *arg;
    if (execcopy_script_line(program, line, sizeof line) >= 0 &&
        shebang_split(line, &name, &arg) == 0)
        program = name;
    long fd = raw_syscall3(SYS_openat, AT_FDCWD, (long)program,
                           O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st = { 0 };
    int kind = raw_syscall3(SYS_fstat, fd, &st, 0) == 0
                   ? execcopy_elf((int)fd, NULL, interp, sizeof interp)
                   : 0;
    raw_syscall3(SYS_close, fd, 0, 0);
    uint64_t key = need_key(&st, envp);
    size_t envc = 0;
    while (envp[envc])
        envc++;
    uint64_t need = kind == 2 ? known_get(key) : 0;
    if (need)
        return need;
    size_t pointers = (envc + 1) * sizeof(char *), preload = 0;
    for (size_t i = 0; i < envc; i++)
        if (after(envp[i], "LD_PRELOAD="))
            for (const char *c = envp[i]; *c; c++)
                preload++;
    pointers += (preload + 8) & ~(size_t)7; /* its copy, after them */
    if (kind != 2 || pointers + 4096 > cap)
        return 0;
    char **env = (char **)(void *)space;
    char *others = space + (envc + 1) * sizeof(char *);
    size_t k = 0;
    for (size_t i = 0; i < envc; i++) {
        const char *list = after(envp[i], "LD_PRELOAD=");
        if (list && (env[k] = preload_without_memtap(list, others)))
            k++;
        else if (!list && !after(envp[i], "LD_AUDIT="))
            env[k++] = envp[i];
    }
    env[k] = NULL;
    size_t room = cap - pointers < LISTING_MAX ? cap - pointers : LISTING_MAX;
    long n = listing(interp, program, env, space + pointers, room);
    if (n <= 0)
        return 0;
    need = STATIC_TLS_SLACK + own_tls + listed_tls(space + pointers, n);
    known_put(key, need);
    return need;
}

/* The surplus the tunables string value asks for; 0 when it does not. */
static uint64_t surplus_in(const char *value)
{
    for (const char *item = value; *item;) {
        const char *v = after(item, SURPLUS);
        if (v) {
            uint64_t n = 0;
            while (*v >= '0' && *v <= '9')
                n = n * 10 + (uint64_t)(*v++ - '0');
            return n;
        }
        while (*item && *item != ':')
            item++;
        if (*item)
            item++;
    }
    return 0;
}

void exectls_raise(const char *program, char **envp, char *space, size_t cap,
                   size_t *used)
{
    *used = 0;
    size_t t = 0;
    while (envp[t] && !after(envp[t], TUNABLES))
        t++;
    if (!envp[t])
        return;
    const char *value = after(envp[t], TUNABLES);
    size_t len = 0;
    while (value[len])
        len++;
    /* the new string first (it outlives this call), then the scratch */
    size_t lead = -(uintptr_t)space & 7;
    size_t room = (sizeof TUNABLES + sizeof SURPLUS + 24 + len + 7) & ~(size_t)7;
    if (cap < lead + room)
        return;
    space += lead;
    uint64_t need = need_of(program, envp, space + room, cap - lead - room);
    if (need <= surplus_in(value))
        return;
    fmt_buf b = { space, 0, room };
    fmt_str(&b, TUNABLES SURPLUS);
    fmt_u64(&b, need);
    for (const char *item = value; *item;) { /* the other tunables as were */
        const char *end = item;
        while (*end && *end != ':')
            end++;
        if (!after(item, SURPLUS)) {
            fmt_char(&b, ':');
            while (item < end)
                fmt_char(&b, *item++);
        }
        item = *end ? end + 1 : end;
    }
    if (b.len + 1 >= room) /* (cut: cannot be, room is the old value's
                              length and the new item's most) */
        return;
    envp[t] = space;
    *used = lead + room;
}
