/*
 * memtap/memtap.h - the two calls a program may add to its source to bound
 * the window memtap traces.  Without them the whole run is traced.
 *
 *     #include <memtap/memtap.h>
 *     MEMTAP_START();  ... the code of interest ...  MEMTAP_STOP();
 *
 * The functions are declared weak: a program that uses the macros runs
 * unchanged, and needs no extra library, when it is not run under memtap.
 */
#ifndef MEMTAP_MEMTAP_H
#define MEMTAP_MEMTAP_H

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the start of the traced window (provided by libmemtap.so). */
void memtap_start(void) __attribute__((weak));
/* Marks the end of the traced window (provided by libmemtap.so). */
void memtap_stop(void) __attribute__((weak));

#define MEMTAP_START() do { if (memtap_start) memtap_start(); } while (0)
#define MEMTAP_STOP() do { if (memtap_stop) memtap_stop(); } while (0)

#ifdef __cplusplus
}
#endif
#endif
