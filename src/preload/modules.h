/*
 * modules.h - the module table of the traced process (program, shared
 * libraries, vdso): scanned at start, rescanned after dlopen/dlclose.
 */
#ifndef MEMTAP_PRELOAD_MODULES_H
#define MEMTAP_PRELOAD_MODULES_H

/* Scans the loaded modules; new ones get MODULE_LOAD events and a MODULES
 * chunk, vanished ones MODULE_UNLOAD events.  Not for signal handlers. */
void modules_rescan(void);

/* Writes every known module to the (new) output file, e.g. after fork. */
void modules_write_all(void);

#endif
