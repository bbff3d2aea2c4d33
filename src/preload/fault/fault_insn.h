/*
 * fault_insn.h - inside the fault engine: what its files do with a
 * decoded instruction (x86/access.h), which the engine's users never see.
 */
#ifndef MEMTAP_PRELOAD_FAULT_INSN_H
#define MEMTAP_PRELOAD_FAULT_INSN_H

#include <stdint.h>
#include <ucontext.h>

#include "x86/access.h"

/* Completes one execution of insn (its bytes `bytes`, at uc's pc) while
 * the pages of its memory operand `mem` stay as they are: records it when
 * `record` is FAULT_RECORD (the operand is then traced), or
 * FAULT_RECORD_TRACED and tracing is on and the operand is traced; gives
 * uc the registers it leaves and moves the pc past it.  1 (recorded) or 2
 * (not); 0 when it cannot (uc untouched). */
enum { FAULT_RECORD_NONE, FAULT_RECORD, FAULT_RECORD_TRACED };
int fault_complete_access(ucontext_t *uc, const x86_access_insn *insn, int mem,
                          const uint8_t *bytes, int record);
/* rep movs / rep stos at uc's pc, performed and recorded here (uc moved
 * past it); 0 for any other instruction (uc untouched). */
int fault_emulate_rep_string(ucontext_t *uc, const x86_access_insn *insn);

#endif
