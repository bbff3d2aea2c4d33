/*
 * trace/info.h - one value of a trace's INFO notes (memtap_trace_info
 * points into the text, up to the value's newline) as a string of its
 * own; the program's file name.
 */
#ifndef MEMTAP_TRACE_INFO_H
#define MEMTAP_TRACE_INFO_H

#include <stddef.h>
#include <string.h>

#include "memtap/trace.h"

/* The value of key up to its newline into buf, or "" when absent. */
static inline void trace_info_copy(const memtap_trace *t, const char *key,
                                   char *buf, size_t cap)
{
    const char *v = memtap_trace_info(t, key);
    size_t n = v ? strcspn(v, "\n") : 0;
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, v ? v : "", n);
    buf[n] = '\0';
}

/* The file name of the trace's program (its main module), or NULL. */
static inline const char *trace_program_name(const memtap_trace *t)
{
    for (size_t i = 0; i < memtap_trace_module_count(t); i++) {
        const memtap_module *m = memtap_trace_module_at(t, i);
        if (m->flags & MEMTAP_MODF_MAIN) {
            const char *slash = strrchr(m->path, '/');
            return slash ? slash + 1 : m->path;
        }
    }
    return NULL;
}

#endif
