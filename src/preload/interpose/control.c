/*
 * control.c - memtap_start() and memtap_stop(), the program's own marks of
 * the window it wants traced (see memtap/memtap.h).
 */
#include "memtap/memtap.h"

#include "preload/memmap/traced_set.h"
#include "rt/rewritten.h"
#include "preload/record/tracer.h"

#include <stdint.h>

#define CALLER ((uint64_t)(uintptr_t)__builtin_return_address(0))

MEMTAP_EXPORT void memtap_start(void)
{
    tracer_record(MEMTAP_EV_START, 0, CALLER, 0, 0, 0, 0);
    traced_set_active(1);
    rewritten_set_active(1);
}

MEMTAP_EXPORT void memtap_stop(void)
{
    traced_set_active(0);
    rewritten_set_active(0);
    tracer_record(MEMTAP_EV_STOP, 0, CALLER, 0, 0, 0, 0);
}
