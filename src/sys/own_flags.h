/*
 * sys/own_flags.h - the flags memtap's own code runs with.  A signal
 * handler starts with the interrupted code's EFLAGS, the kernel clearing
 * only DF, RF and TF, and a trampoline's C code with the program's: a
 * program that set AC (alignment check; the JVM's processor probe does,
 * for a few instructions) would have each unaligned access of memtap's
 * raise SIGBUS.  AC comes back from the signal frame or the trampoline's
 * saved flags.  ID stays as it is: sigreturn restores only the flags a
 * program's instruction may change at any time (arithmetic, DF, TF, AC),
 * the others keep their value at the handler's end, and the JVM's probe
 * toggles ID to see whether cpuid exists.
 */
#ifndef MEMTAP_SYS_OWN_FLAGS_H
#define MEMTAP_SYS_OWN_FLAGS_H

#include <stdint.h>

#define OWN_FLAGS_AC 0x40000ull
#define OWN_FLAGS_ID 0x200000ull

/* For assembly entries whose caller saved the flags: AC and DF
 * cleared. */
#define OWN_FLAGS_CLEAR_ASM "  pushfq\n  andl $0xfffbfbff, (%rsp)\n  popfq\n"

/* The same for an entry that saved them at `saved` itself, popfq (dozens
 * of cycles) only where AC was set: for hot paths. */
#define OWN_FLAGS_ASM(saved)                                             \
    "  testl $0x40000, " saved "\n"                                      \
    "  jz 1f\n" OWN_FLAGS_CLEAR_ASM "1:\n"                              \
    "  cld\n"

/* For C handlers, first thing: AC cleared. */
static inline void own_flags(void)
{
    uint64_t f = __builtin_ia32_readeflags_u64();
    if (f & OWN_FLAGS_AC)
        __builtin_ia32_writeeflags_u64(f & ~OWN_FLAGS_AC);
}

#endif
