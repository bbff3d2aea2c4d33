/*
 * execcopy.h - under the static engine, a program started by exec runs
 * from its rewritten copy in memtap's cache, as the program `memtap run`
 * starts does.
 */
#ifndef MEMTAP_PRELOAD_EXECCOPY_H
#define MEMTAP_PRELOAD_EXECCOPY_H

#include <stddef.h>

/* Reads where the cache is (MEMTAP_CACHE, MEMTAP_CACHE_SALT,
 * MEMTAP_COMMAND, set by memtap run for the static engine) at start-up. */
void execcopy_init(void);

/* The file to exec for the program at path: its rewritten copy (made now
 * by `memtap cache add` when missing), written into out; or path itself
 * when there is no cache, the file is not a dynamically linked ELF
 * program, or it cannot be rewritten.  Async-signal-safe (raw system
 * calls, no allocation): the exec emulation calls it from its SIGSYS
 * handler. */
const char *execcopy_path(const char *path, char *out, size_t cap);

/* What the open file fd is: 0 not an x86-64 ELF file the kernel would
 * run or the loader load, 1 one without a PT_INTERP (a static program, a
 * library), 2 a dynamically linked program; with its PT_TLS's static TLS
 * (aligned) in *tls (left as it is without one) and its PT_INTERP in
 * interp (cap bytes; 0 when that does not fit) when they are asked for.
 * Async-signal-safe. */
int execcopy_elf(int fd, long *tls, char *interp, size_t cap);

/* Whether path is a statically linked x86-64 program: one LD_PRELOAD never
 * reaches, so no engine can trace it.  Async-signal-safe. */
int execcopy_static_program(const char *path);

/* The first line of the executable script at path after its "#!", in
 * line (cap bytes, at least 256; the newline cut): its length, or -1 when
 * path is no such script or the line is longer than the kernel reads.
 * Async-signal-safe. */
long execcopy_script_line(const char *path, char *line, size_t cap);

/* For a script ("#!INTERP [ARG]") the caller may run: the argument vector
 * the kernel would give its interpreter (INTERP, ARG if any, path, then
 * argv's arguments after argv[0]), built in space (cap bytes, 8-byte
 * aligned: the pointers, then INTERP and ARG), with INTERP in *interp and
 * the bytes used in *used.  NULL when there is no cache, path is not such
 * a script or it does not fit.  Async-signal-safe, as execcopy_path. */
char **execcopy_script(const char *path, char *const *argv, char *space,
                       size_t cap, char **interp, size_t *used);

#endif
