/*
 * report/parquet_encode.h - the encodings a Parquet file is made of
 * (parquet.c writes the file with them): a growing buffer of bytes,
 * Thrift's compact protocol (page headers, the footer), the RLE/bit-packing
 * hybrid (definition levels, dictionary indices) and DELTA_BINARY_PACKED
 * (numbers), as parquet-format's Encodings.md and parquet.thrift define
 * them.
 */
#ifndef MEMTAP_REPORT_PARQUET_ENCODE_H
#define MEMTAP_REPORT_PARQUET_ENCODE_H

#include <stddef.h>
#include <stdint.h>

/* A growing buffer of bytes; `bad` once out of memory. */
typedef struct pq_bytes {
    uint8_t *p;
    size_t n, cap;
    int bad;
} pq_bytes;

/* Room for `more` bytes at the end, counted in; NULL (and `bad`) when out
 * of memory. */
uint8_t *pq_room(pq_bytes *b, size_t more);
void pq_put_bytes(pq_bytes *b, const void *v, size_t n);
void pq_put_byte(pq_bytes *b, uint8_t v);
void pq_put_varint(pq_bytes *b, uint64_t v);

/* Thrift's compact protocol: a struct's fields by their id, nested
 * structs and lists of i32, strings and structs. */
enum { C_I32 = 5, C_I64 = 6, C_BINARY = 8, C_LIST = 9, C_STRUCT = 12 };
#define NEST_MAX 8

typedef struct pq_thrift {
    pq_bytes *b;
    int16_t last[NEST_MAX]; /* the last field id of each struct open */
    int depth;
} pq_thrift;
void pq_t_i32(pq_thrift *t, int16_t id, int32_t v);
void pq_t_i64(pq_thrift *t, int16_t id, int64_t v);
void pq_t_bytes(pq_thrift *t, int16_t id, const void *p, size_t n);
void pq_t_string(pq_thrift *t, int16_t id, const char *s);
/* A struct begins: as field id of the one open, or (id 0) as an element
 * of a list; pq_t_end ends it. */
void pq_t_begin(pq_thrift *t, int16_t id);
void pq_t_end(pq_thrift *t);
/* A list of n elements of type elem (C_*) as field id; then each element:
 * pq_t_list_i32, pq_t_list_string, or a struct (pq_t_begin(t, 0)). */
void pq_t_list(pq_thrift *t, int16_t id, int elem, size_t n);
void pq_t_list_i32(pq_thrift *t, int32_t v);
void pq_t_list_string(pq_thrift *t, const char *s);

/* The n values of v, `width` bits each (1 to 32), RLE/bit-packed. */
void pq_rle_hybrid(pq_bytes *b, const uint64_t *v, size_t n, unsigned width);
/* The n values of v, each `size` bytes (4: differences wrap at 32 bits,
 * as a reader of INT32 computes them), DELTA_BINARY_PACKED. */
void pq_delta_packed(pq_bytes *b, const uint64_t *v, size_t n, size_t size);

#endif
