/*
 * parquet_encode.c - the encodings of a Parquet file (parquet_encode.h).
 */
#include "report/parquet_encode.h"

#include <stdlib.h>
#include <string.h>

uint8_t *pq_room(pq_bytes *b, size_t more)
{
    if (b->n + more > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + more)
            cap *= 2;
        uint8_t *p = b->bad ? NULL : realloc(b->p, cap);
        if (!p) {
            b->bad = 1;
            return NULL;
        }
        b->p = p;
        b->cap = cap;
    }
    uint8_t *at = b->p + b->n;
    b->n += more;
    return at;
}

void pq_put_bytes(pq_bytes *b, const void *v, size_t n)
{
    uint8_t *at = pq_room(b, n);
    if (at && n)
        memcpy(at, v, n);
}

void pq_put_byte(pq_bytes *b, uint8_t v)
{
    pq_put_bytes(b, &v, 1);
}

static uint64_t pq_zigzag(int64_t v)
{
    return (uint64_t)v << 1 ^ (uint64_t)(v >> 63);
}

void pq_put_varint(pq_bytes *b, uint64_t v)
{
    uint8_t x[10];
    size_t n = 0;
    for (; v >= 0x80; v >>= 7)
        x[n++] = (uint8_t)(v | 0x80);
    x[n++] = (uint8_t)v;
    pq_put_bytes(b, x, n);
}

/* ---- Thrift's compact protocol: fields by their id's delta ---- */


static void pq_t_field(pq_thrift *t, int type, int16_t id)
{
    int16_t delta = (int16_t)(id - t->last[t->depth]);
    if (delta > 0 && delta <= 15) {
        pq_put_byte(t->b, (uint8_t)(delta << 4 | type));
    } else {
        pq_put_byte(t->b, (uint8_t)type);
        pq_put_varint(t->b, pq_zigzag(id));
    }
    t->last[t->depth] = id;
}

void pq_t_i32(pq_thrift *t, int16_t id, int32_t v)
{
    pq_t_field(t, C_I32, id);
    pq_put_varint(t->b, pq_zigzag(v));
}

void pq_t_i64(pq_thrift *t, int16_t id, int64_t v)
{
    pq_t_field(t, C_I64, id);
    pq_put_varint(t->b, pq_zigzag(v));
}

/* A binary value: its length, then its bytes. */
static void put_binary(pq_bytes *b, const void *p, size_t n)
{
    pq_put_varint(b, n);
    pq_put_bytes(b, p, n);
}

void pq_t_bytes(pq_thrift *t, int16_t id, const void *p, size_t n)
{
    pq_t_field(t, C_BINARY, id);
    put_binary(t->b, p, n);
}

void pq_t_string(pq_thrift *t, int16_t id, const char *s)
{
    pq_t_bytes(t, id, s, strlen(s));
}

/* A struct begins: as field id of the one open, or (id 0) as an element
 * of a list. */
void pq_t_begin(pq_thrift *t, int16_t id)
{
    if (id)
        pq_t_field(t, C_STRUCT, id);
    t->last[++t->depth] = 0;
}

void pq_t_end(pq_thrift *t)
{
    pq_put_byte(t->b, 0); /* stop */
    t->depth--;
}

void pq_t_list(pq_thrift *t, int16_t id, int elem, size_t n)
{
    pq_t_field(t, C_LIST, id);
    if (n < 15) {
        pq_put_byte(t->b, (uint8_t)(n << 4 | (size_t)elem));
    } else {
        pq_put_byte(t->b, (uint8_t)(0xf0 | elem));
        pq_put_varint(t->b, n);
    }
}

void pq_t_list_i32(pq_thrift *t, int32_t v)
{
    pq_put_varint(t->b, pq_zigzag(v));
}

void pq_t_list_string(pq_thrift *t, const char *s)
{
    put_binary(t->b, s, strlen(s));
}

/* n values (n % 8 == 0) of `width` bits (at most 64), LSB first. */
static void pq_pack_bits(pq_bytes *b, const uint64_t *v, size_t n, unsigned width)
{
    uint8_t *at = pq_room(b, n / 8 * width);
    if (!at || !width)
        return;
    unsigned __int128 acc = 0;
    unsigned bits = 0;
    for (size_t i = 0; i < n; i++) {
        acc |= (unsigned __int128)v[i] << bits;
        for (bits += width; bits >= 8; bits -= 8, acc >>= 8)
            *at++ = (uint8_t)acc;
    }
}

/* ---- the RLE/bit-packing hybrid (definition levels, dictionary
 * indices): runs of 8 or more equal values as one, the rest packed
 * `width` bits a value, eight values a group ---- */

static void pq_bit_packed(pq_bytes *b, const uint64_t *v, size_t n, unsigned width)
{
    if (!n)
        return;
    pq_put_varint(b, (n + 7) / 8 << 1 | 1);
    pq_pack_bits(b, v, n / 8 * 8, width);
    if (n % 8) { /* the last group, padded with zeros */
        uint64_t x[8] = { 0 };
        memcpy(x, v + n / 8 * 8, n % 8 * sizeof *x);
        pq_pack_bits(b, x, 8, width);
    }
}

void pq_rle_hybrid(pq_bytes *b, const uint64_t *v, size_t n, unsigned width)
{
    size_t i = 0, from = 0; /* v[from..i): values to pack */
    while (i < n) {
        size_t run = 1;
        while (i + run < n && v[i + run] == v[i])
            run++;
        if (run < 8) {
            i += run;
        } else if ((i - from) % 8) { /* fill the packed values' last group */
            i += 8 - (i - from) % 8;
        } else {
            pq_bit_packed(b, v + from, i - from, width);
            pq_put_varint(b, run << 1);
            pq_put_bytes(b, &v[i], (width + 7) / 8); /* (little-endian) */
            i += run;
            from = i;
        }
    }
    pq_bit_packed(b, v + from, i - from, width);
}

/* ---- DELTA_BINARY_PACKED (numbers too many for a dictionary): the
 * first value, then blocks of DELTA_BLOCK differences, each less the
 * block's least and packed a miniblock of DELTA_MINI at a time in the
 * fewest bits that miniblock needs ---- */

#define DELTA_BLOCK 128
#define DELTA_MINIS 4
#define DELTA_MINI (DELTA_BLOCK / DELTA_MINIS)

static unsigned pq_bits_of(uint64_t x)
{
    return x ? 64 - (unsigned)__builtin_clzll(x) : 0;
}

/* The n values of v, each `size` bytes (4: differences wrap at 32 bits,
 * as a reader of INT32 computes them). */
void pq_delta_packed(pq_bytes *b, const uint64_t *v, size_t n, size_t size)
{
    pq_put_varint(b, DELTA_BLOCK);
    pq_put_varint(b, DELTA_MINIS);
    pq_put_varint(b, n);
    int64_t first = n ? (size == 4 ? (int32_t)v[0] : (int64_t)v[0]) : 0;
    pq_put_varint(b, pq_zigzag(first));
    for (size_t at = 1; at < n; at += DELTA_BLOCK) {
        size_t k = n - at < DELTA_BLOCK ? n - at : DELTA_BLOCK;
        int64_t d[DELTA_BLOCK], least = INT64_MAX;
        for (size_t i = 0; i < k; i++) {
            uint64_t x = v[at + i] - v[at + i - 1];
            d[i] = size == 4 ? (int32_t)(uint32_t)x : (int64_t)x;
            least = d[i] < least ? d[i] : least;
        }
        pq_put_varint(b, pq_zigzag(least));
        uint64_t u[DELTA_BLOCK] = { 0 };
        uint8_t widths[DELTA_MINIS] = { 0 };
        for (size_t i = 0; i < k; i++) {
            u[i] = (uint64_t)d[i] - (uint64_t)least;
            if (size == 4)
                u[i] = (uint32_t)u[i];
            unsigned w = pq_bits_of(u[i]);
            widths[i / DELTA_MINI] = w > widths[i / DELTA_MINI] ? (uint8_t)w
                                                                : widths[i / DELTA_MINI];
        }
        pq_put_bytes(b, widths, DELTA_MINIS);
        for (size_t m = 0; m * DELTA_MINI < k; m++)
            pq_pack_bits(b, u + m * DELTA_MINI, DELTA_MINI, widths[m]);
    }
}

