/*
 * report/parquet.h - a Parquet file writer for the export's tables
 * (export_parquet.c): columns of unsigned 32- and 64-bit integers and of
 * UTF-8 strings, each required or optional.  Rows are kept in memory a
 * row group at a time; a full group is written out column by column, each
 * column chunk one page compressed with zstd (strings as a dictionary and
 * their indices run-length/bit-packed, integers plain), and the footer
 * (the file's metadata in Thrift's compact protocol) last, as the Parquet
 * format (parquet-format's parquet.thrift) defines them.
 */
#ifndef MEMTAP_REPORT_PARQUET_H
#define MEMTAP_REPORT_PARQUET_H

#include <stddef.h>
#include <stdint.h>

typedef enum pq_type { PQ_U32, PQ_U64, PQ_STRING } pq_type;

typedef struct pq_column {
    const char *name;
    pq_type type;
    int optional;        /* may be NULL */
} pq_column;

typedef struct pq_file pq_file;

/* What files written by one thread share: zstd's context and the scratch
 * a row group is encoded in (a file is open only while one of its row
 * groups is written: the files of any number of threads may be written
 * at once).  NULL when out of memory. */
typedef struct pq_shared pq_shared;
pq_shared *pq_shared_create(void);
void pq_shared_destroy(pq_shared *sh);

/* A new file at path (created, or emptied) of these columns (the
 * caller's, kept), written with sh a row group of at most group_rows
 * rows at a time; NULL with the reason in err. */
pq_file *pq_open(pq_shared *sh, const char *path, const pq_column *cols, size_t ncols,
                 uint32_t group_rows, char *err, size_t errcap);

/* Column c's value in the row being made: a number, a string of n bytes
 * (valid UTF-8), or none (an optional column's NULL).  Every column gets
 * one before pq_end_row.  pq_str returns 0, or -1 when out of memory. */
void pq_u64(pq_file *f, size_t c, uint64_t v);
int pq_str(pq_file *f, size_t c, const char *s, size_t n);
void pq_null(pq_file *f, size_t c);

/* A string column's value by a key of the caller's that stands for one
 * string (a function's by its instruction's address, say), so that a row
 * whose string was seen lately costs no look at its bytes: pq_keyed
 * makes the string last given with key column c's value and returns 1,
 * or returns 0 when it knows none (pq_str_key then); pq_str_key is
 * pq_str that also learns the key. */
int pq_keyed(pq_file *f, size_t c, uint64_t key);
int pq_str_key(pq_file *f, size_t c, uint64_t key, const char *s, size_t n);

/* Ends the row; a full row group is written out.  0, or -1 (pq_close
 * says why). */
int pq_end_row(pq_file *f);

/* The bytes of the row groups written out so far. */
uint64_t pq_size(const pq_file *f);

/* Writes the rows left and the footer and closes the file (f is freed);
 * 0, or -1 with the reason (the first failure's) in err. */
int pq_close(pq_file *f, char *err, size_t errcap);

#endif
