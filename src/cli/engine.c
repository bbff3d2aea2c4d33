/*
 * engine.c - chooses the engine of a run and prepares the static one.
 * The program (or a script's interpreter) and every library the loader
 * lists for it are rewritten into memtap's cache on first use (cache/),
 * the program runs from its copy, and libmemtap-audit.so, beside
 * libmemtap.so, makes the loader take every library from its copy,
 * dlopen included (rewriting on the spot what the cache lacks).  A file
 * the rewriter refuses runs as it is: with `auto`, a refused program is
 * traced by the fault engine instead; a refused library is named after
 * the run as not traced.
 */
#define _GNU_SOURCE
#include "engine.h"
#include "sys/env.h"

#include "cli.h"
#include "sys/run_config.h"
#include "elf/elf_file.h"
#include "rewrite/rewrite.h"
#include "rt/abi.h"
#include "symbols/elfimage.h"
#include "sys/own_modules.h"
#include "sys/shebang.h"
#include "sys/static_tls.h"

#include "memtap/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int engine_parse(const char *name)
{
    static const char *const names[] = { "fault", "static", "auto" };
    for (int i = 0; i < 3; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

int cli_engine_option(const char *arg, int *engine)
{
    *engine = engine_parse(arg);
    if (*engine < 0)
        return cli_bad_option("--engine", "'%s': expected auto, static or fault", arg);
    return 0;
}

/* For a script ("#!INTERP [ARG]"), the interpreter's path in interp and
 * the arguments the kernel would give it in plan->argv.  Returns 1 for a
 * script, 0 for anything else, -1 after an error. */
static int script_interpreter(const char *path, char **argv, char *interp,
                              size_t cap, engine_plan *plan)
{
    char line[512];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, line, sizeof line - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n < 2 || line[0] != '#' || line[1] != '!')
        return 0;
    line[n] = '\0';
    line[strcspn(line, "\n")] = '\0';
    char *name, *arg;
    shebang_split(line + 2, &name, &arg); /* no INTERP: not found below */
    const char *base = strrchr(name, '/');
    int via_env = base && strcmp(base + 1, "env") == 0 && arg &&
                  arg[0] != '-' && !strchr(arg, ' ');
    if (cli_find_program(via_env ? arg : name, interp, cap) != 0)
        return cli_error(path, "its interpreter %s: not found",
                         via_env ? arg : name), -1;
    size_t argc = 0;
    while (argv[argc])
        argc++;
    char **v = calloc(argc + 3, sizeof *v);
    if (!v)
        return cli_error(path, "out of memory"), -1;
    size_t k = 0;
    v[k++] = strdup(via_env ? arg : name);
    if (arg && !via_env)
        v[k++] = strdup(arg);
    v[k++] = strdup(path);
    for (size_t i = 1; i < argc; i++)
        v[k++] = strdup(argv[i]);
    for (size_t i = 0; i < k; i++)
        if (!v[i])
            return cli_error(path, "out of memory"), -1;
    plan->argv = plan->owned_argv = v;
    return 1;
}

typedef struct path_list {
    char **v;
    size_t n;
} path_list;

static void path_list_free(path_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

/* Appends the libraries of a loader listing ("name => /path (addr)"
 * lines, and "/path (addr)" for a preloaded one) to out; not the loader
 * interp itself, the vdso or a library "not found". */
static void read_listing(FILE *f, const char *interp, path_list *out)
{
    char line[PATH_MAX + 128];
    while (fgets(line, sizeof line, f)) {
        char *arrow = strstr(line, " => /");
        char *path = arrow ? arrow + 4 : line + strspn(line, " \t");
        char *end = strstr(path, " (");
        if (*path != '/' || !end)
            continue;
        *end = '\0';
        if (!arrow && strcmp(path, interp) == 0)
            continue;
        char **v = realloc(out->v, (out->n + 1) * sizeof *v);
        if (!v || !(v[out->n] = strdup(path))) {
            out->v = v ? v : out->v;
            break;
        }
        out->v = v;
        out->n++;
    }
}

/* The libraries LD_PRELOAD names but libmemtap.so, ':' between them, in
 * out (cap bytes; empty when none): the program's own preloads, which
 * the loader loads at start-up too (their TLS takes from the surplus). */
static void own_preloads(char *out, size_t cap)
{
    const char *list = getenv("LD_PRELOAD");
    size_t n = 0;
    out[0] = '\0';
    for (const char *e = list ? list : ""; *e;) {
        size_t len = strcspn(e, ": \t");
        int memtap = len >= 12 && strncmp(e + len - 12, "libmemtap.so", 12) == 0 &&
                     (len == 12 || e[len - 13] == '/');
        if (len && !memtap && n + len + 2 <= cap)
            n += (size_t)snprintf(out + n, cap - n, "%s%.*s", n ? ":" : "", (int)len, e);
        e += len + (e[len] != '\0');
    }
}

/* The shared libraries the loader finds for exe (`INTERP --list EXE`, the
 * loader's own answer: its search order, its cache), the program's own
 * preloaded libraries among them. */
static int list_libraries(const char *interp, const char *exe, path_list *out)
{
    int fds[2];
    char preloads[PATH_MAX];
    own_preloads(preloads, sizeof preloads);
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        if (*preloads)
            setenv("LD_PRELOAD", preloads, 1);
        else
            unsetenv("LD_PRELOAD");
        unsetenv("LD_AUDIT");
        int null = open("/dev/null", O_WRONLY);
        dup2(fds[1], STDOUT_FILENO);
        if (null >= 0)
            dup2(null, STDERR_FILENO);
        execl(interp, interp, "--list", exe, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    FILE *f = pid > 0 ? fdopen(fds[0], "r") : NULL;
    if (!f) {
        close(fds[0]);
        return -1;
    }
    read_listing(f, interp, out);
    fclose(f);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return 0;
}

/* What the loader's answer for exe depends on besides exe itself (whose
 * identity its copy's name holds): its path ($ORIGIN), the loader, the
 * loader's cache (ldconfig) and the environment it reads. */
static void listing_context(const char *interp, const char *exe, char *out,
                            size_t cap)
{
    struct stat a = { 0 }, c = { 0 };
    stat(interp, &a);
    stat("/etc/ld.so.cache", &c);
    char real[PATH_MAX], preloads[PATH_MAX];
    const char *lib_path = getenv("LD_LIBRARY_PATH");
    const char *tunables = getenv("GLIBC_TUNABLES");
    own_preloads(preloads, sizeof preloads);
    snprintf(out, cap,
             "memtap libraries 1\nexe %s\n"
             "interp %s %ju %ju %jd %jd.%09ld\ncache %ju %ju %jd %jd.%09ld\n"
             "LD_LIBRARY_PATH %s\nGLIBC_TUNABLES %s\nLD_PRELOAD %s\n--\n",
             realpath(exe, real) ? real : exe, interp, (uintmax_t)a.st_dev,
             (uintmax_t)a.st_ino, (intmax_t)a.st_size,
             (intmax_t)a.st_mtim.tv_sec, a.st_mtim.tv_nsec,
             (uintmax_t)c.st_dev, (uintmax_t)c.st_ino, (intmax_t)c.st_size,
             (intmax_t)c.st_mtim.tv_sec, c.st_mtim.tv_nsec,
             lib_path ? lib_path : "-", tunables ? tunables : "-",
             *preloads ? preloads : "-");
}

/* The libraries of a cached listing, when it was made in the same
 * context and each of them is still there; 0 when out has them. */
static int cached_listing(const char *file, const char *context,
                          path_list *out)
{
    FILE *f = fopen(file, "re");
    if (!f)
        return -1;
    size_t len = strlen(context);
    char *head = malloc(len + 1);
    int same = head && fread(head, 1, len, f) == len &&
               memcmp(head, context, len) == 0;
    free(head);
    if (same) /* (every line saved with an arrow) */
        read_listing(f, "", out);
    fclose(f);
    for (size_t i = 0; same && i < out->n; i++)
        same = access(out->v[i], F_OK) == 0;
    return same ? 0 : -1;
}

/* Keeps the listing beside the program's copy (written whole, then
 * renamed: a reader sees the old listing or the new one). */
static void save_listing(const char *file, const char *context,
                         const path_list *libs)
{
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", file, (int)getpid());
    FILE *f = fopen(tmp, "we");
    if (!f)
        return;
    fputs(context, f);
    for (size_t i = 0; i < libs->n; i++)
        fprintf(f, "\t%s => %s (0)\n", strrchr(libs->v[i], '/') + 1,
                libs->v[i]);
    if (fclose(f) != 0 || rename(tmp, file) != 0)
        unlink(tmp);
}

/* The libraries the loader finds for exe, whose copy is copy: the
 * listing kept beside the copy, else the loader's (about 0.7 ms: a
 * process).  A listing gone stale only makes the audit module rewrite on
 * the spot what the run did not rewrite first. */
static void libraries_of(const char *interp, const char *exe,
                         const char *copy, path_list *out)
{
    char context[6 * PATH_MAX], file[PATH_MAX + 8];
    listing_context(interp, exe, context, sizeof context);
    snprintf(file, sizeof file, "%s.libs", copy);
    if (cached_listing(file, context, out) == 0)
        return;
    path_list_free(out);
    *out = (path_list){ NULL, 0 };
    if (list_libraries(interp, exe, out) == 0)
        save_listing(file, context, out);
}

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The copy of path in copy; says what it did.  Returns the cache's
 * answer. */
static cache_result get_copy(engine_plan *p, const char *path, char *copy,
                             char *why, size_t whycap, int quiet)
{
    double t0 = seconds();
    cache_result r = cache_get(&p->cache, path, copy, PATH_MAX, why, whycap);
    if ((r == CACHE_BUILT || r == CACHE_REBUILT) && !quiet)
        fprintf(stderr, "memtap: %s %s for the static engine (%.1f s, "
                        "cached)\n",
                r == CACHE_REBUILT ? "the cached copy was damaged, changed since it was verified, or not this file's; rewrote"
                                   : "rewrote",
                path, seconds() - t0);
    return r;
}

void cli_prepend_env(const char *name, const char *value)
{
    const char *old = getenv(name);
    char *both = NULL;
    if (old && *old && asprintf(&both, "%s:%s", value, old) > 0) {
        setenv(name, both, 1);
        free(both);
    } else {
        setenv(name, value, 1);
    }
}

/* The static TLS an ELF file's PT_TLS takes, aligned; -1 when the file
 * cannot be read. */
static long tls_of(const char *path)
{
    elf_file f;
    long size = 0;
    if (elf_file_open(path, &f) != ELF_OK)
        return -1;
    for (size_t i = 0; i < f.nph; i++)
        if (f.ph[i].p_type == PT_TLS)
            size = (long)static_tls_of_segment(f.ph[i].p_memsz, f.ph[i].p_align);
    elf_file_close(&f);
    return size;
}

/* The libraries the loader finds for the ELF program exe at start-up;
 * none for a script or a static program. */
static void start_libraries(const char *exe, path_list *out)
{
    elf_file f;
    if (elf_file_open(exe, &f) != ELF_OK)
        return;
    char interp[sizeof f.interp];
    snprintf(interp, sizeof interp, "%s", f.interp);
    elf_file_close(&f);
    if (*interp)
        list_libraries(interp, exe, out);
}

/* The static TLS surplus a run needs (sys/static_tls.h): libmemtap.so's
 * and every start-up library's (rustc's driver library, 23 KiB of
 * initial-exec TLS, failed to load); 32 KiB for libmemtap.so when it
 * cannot be read. */
static size_t static_tls_need(const char *preload, const path_list *libs)
{
    long own = tls_of(preload);
    size_t need = STATIC_TLS_SLACK + (own < 0 ? 32768 : (size_t)own);
    for (size_t i = 0; i < libs->n; i++) {
        long t = tls_of(libs->v[i]);
        need += t > 0 ? (size_t)t : 0;
    }
    return need;
}

/* The environment libmemtap-audit.so reads (cache/audit.c): the module
 * itself under either engine (it tells libmemtap.so of every library the
 * loader opens, those the C library opens itself too), and with
 * with_cache (the static engine) where the copies are and how to make
 * them. */
static int set_audit_env(const engine_plan *p, const char *preload,
                         const path_list *libs, int with_cache)
{
    char audit[PATH_MAX], self[PATH_MAX];
    snprintf(audit, sizeof audit, "%s", preload);
    char *slash = strrchr(audit, '/');
    if (!slash || (size_t)(slash - audit) + 24 > sizeof audit)
        return cli_error(preload, "no directory");
    strcpy(slash + 1, "libmemtap-audit.so");
    if (access(audit, R_OK) != 0)
        return cli_error(audit, "not found beside libmemtap.so");
    cli_prepend_env("LD_AUDIT", audit);
    char tunable[64];
    snprintf(tunable, sizeof tunable, "glibc.rtld.optional_static_tls=%zu",
             static_tls_need(preload, libs));
    cli_prepend_env("GLIBC_TUNABLES", tunable);
    if (!with_cache)
        return 0;
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return cli_error("/proc/self/exe", "%s", strerror(errno));
    self[n] = '\0';
    run_config *run = cli_run_config();
    snprintf(run->cache, sizeof run->cache, "%s", p->cache.dir);
    snprintf(run->cache_salt, sizeof run->cache_salt, "%s", p->cache.salt);
    snprintf(run->command, sizeof run->command, "%s", self);
    cli_run_config_put(RUN_CONFIG_cache);
    cli_run_config_put(RUN_CONFIG_cache_salt);
    cli_run_config_put(RUN_CONFIG_command);
    return 0;
}

/* Whether the file at path can be run from a rewritten copy: a dynamic
 * ELF executable; the interpreter's path in interp. */
static int rewritable_program(const char *path, char *interp, size_t cap,
                              char *why, size_t whycap)
{
    elf_image *img;
    int rc = elf_image_open(path, &img);
    if (rc != ELF_OK)
        return snprintf(why, whycap, "%s", elf_strerror(rc)), 0;
    snprintf(interp, cap, "%s", elf_image_interp(img));
    elf_image_close(img);
    if (!*interp)
        return snprintf(why, whycap, "no program interpreter"), 0;
    return 1;
}

/* Static engine: copies of the program and its libraries.  Returns 0 when
 * it will run, 1 after an error, 2 when the program cannot be rewritten
 * (the reason printed as a note when auto falls back). */
static int prepare_static(engine_kind want, const char *path, char **argv,
                          const char *preload, const cache_rules *rules,
                          int quiet, engine_plan *p)
{
    char exe[PATH_MAX], interp[PATH_MAX], why[512], copy[PATH_MAX];
    int script = script_interpreter(path, argv, exe, sizeof exe, p);
    if (script < 0)
        return 1;
    if (!script)
        snprintf(exe, sizeof exe, "%s", path);
    struct mt_rewrite_header h;
    if (rewrite_read_header(exe, &h) == 0) {
        p->prewritten = 1; /* memtap instrument's copy: it runs as it is */
        return 2;
    }
    char err[512];
    if (cache_open(&p->cache, NULL, rules, err, sizeof err) != 0) {
        if (want == ENGINE_STATIC)
            return cli_error("cache", "%s", err);
        if (!quiet) /* no cache (no HOME, say): no copies, still a run */
            fprintf(stderr, "memtap: cache: %s: the fault engine traces "
                            "the program\n", err);
        return 2;
    }
    cache_result r = CACHE_REFUSED;
    if (rewritable_program(exe, interp, sizeof interp, why, sizeof why))
        r = get_copy(p, exe, copy, why, sizeof why, quiet);
    if (r == CACHE_ERROR)
        return cli_error("cache", "%s", why);
    if (r == CACHE_REFUSED) {
        if (want == ENGINE_STATIC)
            return cli_error(exe, "the static engine cannot run it: %s", why);
        if (!quiet)
            fprintf(stderr, "memtap: %s: not rewritten (%s): the fault "
                            "engine traces it\n", exe, why);
        return 2;
    }
    path_list libs = { NULL, 0 };
    libraries_of(interp, exe, copy, &libs);
    for (size_t i = 0; i < libs.n; i++) {
        const char *base = strrchr(libs.v[i], '/');
        char lib_copy[PATH_MAX];
        if (own_module(base ? base + 1 : libs.v[i]))
            continue;
        cache_result lr = get_copy(p, libs.v[i], lib_copy, why, sizeof why,
                                   quiet);
        if (lr == CACHE_ERROR) {
            path_list_free(&libs);
            return cli_error("cache", "%s", why);
        }
        if (lr == CACHE_REFUSED && !quiet)
            fprintf(stderr, "memtap: %s: not rewritten (%s): it runs as "
                    "it is, its accesses unrecorded\n", libs.v[i], why);
    }
    int rc = set_audit_env(p, preload, &libs, 1);
    path_list_free(&libs);
    if (rc)
        return 1;
    snprintf(p->exec_path, sizeof p->exec_path, "%s", copy);
    p->engine = ENGINE_STATIC;
    return 0;
}

/* A set-user-ID or set-group-ID program that would change who runs it
 * does not under memtap (its rewritten copy is no set-ID file, the loader
 * drops LD_PRELOAD from a set-ID run, the system call filter's
 * no_new_privs drops the change): its results may differ, which is said
 * whatever -q asks. */
static void warn_setid(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return;
    int uid = (st.st_mode & S_ISUID) && st.st_uid != geteuid();
    int gid = (st.st_mode & S_ISGID) && (st.st_mode & S_IXGRP) &&
              st.st_gid != getegid();
    if (uid || gid)
        fprintf(stderr, "memtap: warning: %s is set-%s-ID (%s %u): under "
                        "memtap it runs as you, without that change, and may "
                        "behave differently\n", path, uid ? "user" : "group",
                uid ? "owner" : "group", uid ? (unsigned)st.st_uid
                                             : (unsigned)st.st_gid);
}

/* The name the program would run under natively (the kernel's, the last
 * part of the path exec'd, 15 bytes at most): its rewritten copy's takes
 * it (ENV_COMM). */
static void name_program(const char *path)
{
    const char *base = strrchr(path, '/');
    char name[16];
    snprintf(name, sizeof name, "%s", base ? base + 1 : path);
    setenv(ENV_COMM, name, 1);
}

int engine_prepare(engine_kind want, const char *path, char **argv,
                   const char *preload, const cache_rules *rules, int quiet,
                   engine_plan *p)
{
    warn_setid(path);
    name_program(path);
    memset(p, 0, sizeof *p);
    p->engine = ENGINE_FAULT;
    p->argv = argv;
    snprintf(p->exec_path, sizeof p->exec_path, "%s", path);
    int rc = want == ENGINE_FAULT
                 ? 2
                 : prepare_static(want, path, argv, preload, rules, quiet, p);
    if (rc == 2) { /* the program runs as it is: the runtime of a copy
                      memtap instrument wrote, or the fault engine */
        engine_done(p);
        p->argv = argv;
        snprintf(p->exec_path, sizeof p->exec_path, "%s", path);
        path_list libs = { NULL, 0 };
        start_libraries(path, &libs);
        rc = set_audit_env(p, preload, &libs, 0);
        path_list_free(&libs);
    }
    return rc;
}

int engine_report(const engine_plan *p, const char *trace_path,
                  memtap_trace *t, int quiet)
{
    if (p->engine != ENGINE_STATIC)
        return 0;
    char *rewritten = NULL;
    size_t len = 0;
    FILE *names = open_memstream(&rewritten, &len);
    int missing = 0, copies = 0;
    for (size_t i = 0; i < memtap_trace_module_count(t); i++) {
        const memtap_module *m = memtap_trace_module_at(t, i);
        const char *base = strrchr(m->path, '/');
        base = base ? base + 1 : m->path;
        if ((m->flags & MEMTAP_MODF_VDSO) || m->path[0] != '/' ||
            own_module(base))
            continue;
        if (m->flags & MEMTAP_MODF_REWRITTEN) {
            if (names)
                fprintf(names, "%s%s", copies++ ? ", " : "", base);
            continue;
        }
        if (m->flags & MEMTAP_MODF_MAIN)
            fprintf(stderr, "memtap: warning: %s: %s ran as it is (started "
                            "by exec, and not rewritten: a script's "
                            "interpreter, or see `memtap cache ls`): its own "
                            "code's accesses are not in this trace (--engine "
                            "fault traces it)\n",
                    trace_path, m->path);
        else
            fprintf(stderr, "memtap: warning: %s: %s was not rewritten (see "
                            "`memtap cache ls`): its accesses are not in this "
                            "trace\n", trace_path, m->path);
        missing++;
    }
    if (names)
        fclose(names);
    if (!quiet && rewritten)
        fprintf(stderr, "memtap: static engine: %s\n", rewritten);
    free(rewritten);
    return missing;
}

void engine_done(engine_plan *p)
{
    if (p->owned_argv) {
        for (char **a = p->owned_argv; *a; a++)
            free(*a);
        free(p->owned_argv);
    }
    p->owned_argv = NULL;
}
