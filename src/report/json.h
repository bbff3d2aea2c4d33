/*
 * json.h - the pieces of JSON memtap's reports write: strings escaped per
 * RFC 8259 (and '<' as \u003c, so that the text can sit inside an HTML
 * <script> element), always valid UTF-8 (a byte of a path or name that
 * is not part of a UTF-8 character becomes U+FFFD), addresses as "0x..."
 * strings (JSON numbers lose bits past 2^53 in most readers).
 */
#ifndef MEMTAP_REPORT_JSON_H
#define MEMTAP_REPORT_JSON_H

#include <stdint.h>
#include <stdio.h>

void json_str(FILE *o, const char *s);
/* "key": "0x..." */
void json_addr(FILE *o, const char *key, uint64_t addr);
/* "key": "s", or "key": null when s is NULL */
void json_str_or_null(FILE *o, const char *key, const char *s);

#endif
