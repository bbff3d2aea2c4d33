/*
 * strings.h - string operations (movs, stos, lods) as both engines record
 * them (see strings.c).
 */
#ifndef MEMTAP_PRELOAD_STRINGS_H
#define MEMTAP_PRELOAD_STRINGS_H

#include <stdint.h>

/* One execution of a string operation, from its registers before it
 * runs. */
typedef struct string_op {
    uint8_t kind;    /* its block event: MEMTAP_EV_COPY (movs),
                        MEMTAP_EV_BLOCK_STORE (stos), MEMTAP_EV_BLOCK_FETCH
                        (lods) */
    uint8_t size;    /* bytes per element */
    uint8_t down;    /* the direction flag: addresses go down */
    uint64_t pc;
    uint64_t dst, src; /* rdi and rsi */
    uint64_t n;      /* elements: rcx with a repeat prefix, else 1 */
} string_op;

/* Reads MEMTAP_STRING_ELEMENTS (memtap run --string-elements). */
void strings_init(void);
/* Whether each element is recorded (else one block event). */
int strings_per_element(void);
/* Records op: its block event when kept (NULL: always) says its first
 * destination or source byte is kept; with --string-elements each element's
 * load and store that kept says is kept (NULL: all), in the instruction's
 * order. */
void strings_record(const string_op *op, int (*kept)(uint64_t addr));

#endif
