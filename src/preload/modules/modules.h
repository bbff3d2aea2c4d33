/*
 * modules.h - the module table of the traced process (program, shared
 * libraries, vdso): scanned at start, rescanned after dlopen/dlclose.
 */
#ifndef MEMTAP_PRELOAD_MODULES_H
#define MEMTAP_PRELOAD_MODULES_H

#include <stddef.h>
#include <stdint.h>

/* Scans the loaded modules; new ones get MODULE_LOAD events and a MODULES
 * chunk, vanished ones MODULE_UNLOAD events.  Not for signal handlers. */
void modules_rescan(void);

/* The path of the program's original when it runs from a copy in
 * memtap's cache (the static engine), else "": set by the first
 * modules_rescan. */
const char *modules_exe_original(void);

/* Adds the data and bss of every traced module, and the brk heap, to the
 * fault engine's traced set. */
void modules_track_data(void);

/* The executable segments of the traced modules and the loader (not
 * memtap's own, not the vdso) found from the *from'th module on, as
 * [start, end) pairs sorted by start, those that touch as one, at most
 * max of them; returns how many there are (more than max: some were left
 * out) and sets *from to the modules seen.
 * With syscalls_only, only the segments that may make system calls
 * themselves: a syscall instruction's two bytes lie somewhere in them, or
 * they cannot be read. */
size_t modules_text_ranges(uint32_t *from, int syscalls_only,
                           uint64_t (*ranges)[2], size_t max);

/* Whether [start, end) lies on the pages of one executable segment of a
 * loaded module (the program's own code, not code made at run time).
 * Takes no lock: for the SIGSYS handler, which may interrupt a thread
 * that holds the module table's lock. */
int modules_own_text(uint64_t start, uint64_t end);

/* Writes every known module to the (new) output file, e.g. after fork. */
void modules_write_all(void);

#endif
