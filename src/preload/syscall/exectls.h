/*
 * exectls.h - the static TLS surplus a program started by exec asks the
 * loader for.  `memtap run` sizes it for the program it starts
 * (glibc.rtld.optional_static_tls in GLIBC_TUNABLES: under memtap's audit
 * module the loader sizes the static TLS block before it loads the
 * program's libraries, which then take their initial-exec TLS from the
 * surplus); a program that one execs inherits that environment, and one
 * whose libraries need more failed to load them (rustc through rustup's
 * proxy: "cannot allocate memory in static TLS block").  The exec
 * emulation raises the tunable in its copy of the environment to what the
 * new program needs, found as memtap run finds it: the loader's listing
 * of the program's libraries and each one's PT_TLS.
 */
#ifndef MEMTAP_PRELOAD_EXECTLS_H
#define MEMTAP_PRELOAD_EXECTLS_H

#include <stddef.h>

/* Notes libmemtap.so's own static TLS, at start-up. */
void exectls_init(void);

/* Raises glibc.rtld.optional_static_tls in envp's GLIBC_TUNABLES (when
 * envp has one: memtap run sets it) to what program (a dynamically
 * linked ELF program, or a script whose interpreter is one) needs with
 * libmemtap.so, replacing that entry of envp by a new string in space
 * (cap bytes; *used says how many it took).  A setting as large or
 * larger is kept.  Async-signal-safe: raw system calls, no allocation;
 * the loader's listing runs in a child process. */
void exectls_raise(const char *program, char **envp, char *space, size_t cap,
                   size_t *used);

#endif
