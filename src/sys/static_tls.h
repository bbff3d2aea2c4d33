/*
 * sys/static_tls.h - the static TLS surplus memtap asks the loader for
 * (glibc.rtld.optional_static_tls): under memtap's audit module the
 * loader sizes the static TLS block before it loads the program's
 * libraries, so libmemtap.so and every library loaded at start-up take
 * their initial-exec TLS from the surplus.  `memtap run` sizes it for the
 * program it starts (cli/engine.c), the exec emulation for a program
 * started by exec (preload/syscall/exectls.c).  No libc: both use it.
 */
#ifndef MEMTAP_SYS_STATIC_TLS_H
#define MEMTAP_SYS_STATIC_TLS_H

#include <stdint.h>

/* Beyond the libraries' blocks: the loader's own default surplus (512
 * bytes) and 1 KiB for its rounding.  Each thread's block is then as
 * large as natively plus libmemtap.so's, so a thread created with a
 * small stack (node's) still fits. */
#define STATIC_TLS_SLACK (512u + 1024u)

/* The static TLS a PT_TLS segment of memsz bytes aligned to align takes. */
static inline uint64_t static_tls_of_segment(uint64_t memsz, uint64_t align)
{
    if (!align)
        align = 1;
    return (memsz + align - 1) / align * align;
}

#endif
