/*
 * csv_rows.c - CSV rows of trace events (csv_rows.h).  Most rows are built
 * by hand in the line buffer; the code and line columns of the last
 * instructions are kept, since symbolizing them is most of a row's cost.
 */
#include "csv_rows.h"

#include "sys/hash.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_LEN LINE_NAME_MAX
#define CSV_CODES 256u           /* instructions' columns kept, by pc */
#define CSV_KEPT 160u            /* longer columns are not kept */

/* The code and line columns of an instruction (code_columns). */
typedef struct csv_code {
    uint64_t pc;
    int valid;
    char code[CSV_KEPT], line[CSV_KEPT];
} csv_code;

struct csv_rows {
    symbolizer *sym;
    namer *names;
    int symbolic;
    csv_code codes[CSV_CODES];   /* direct-mapped */
};

csv_rows *csv_rows_create(symbolizer *sym, namer *names, int symbolic)
{
    csv_rows *c = calloc(1, sizeof *c);
    if (c) {
        c->sym = sym;
        c->names = names;
        c->symbolic = symbolic;
    }
    return c;
}

void csv_rows_destroy(csv_rows *c)
{
    free(c);
}

void csv_rows_header(const csv_rows *c, FILE *out)
{
    fputs("seq,tid,kind,pc,addr,size,addr2,aux,count,flags", out);
    if (c->symbolic)
        fputs(",data,region,code,line", out);
    fputc('\n', out);
}

/* Whether a field needs no quotes: no comma, quote or newline. */
static int csv_plain(const char *s)
{
    return !strpbrk(s, ",\"\n");
}

void csv_field(FILE *o, const char *s)
{
    if (csv_plain(s)) {
        fputs(s, o);
        return;
    }
    fputc('"', o);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', o);
        fputc(*s, o);
    }
    fputc('"', o);
}

/* The code and line columns of the instruction at pc: kept ones, or made
 * in c and l (NAME_MAX_LEN bytes each, l empty when DWARF has no line). */
static void code_columns(csv_rows *rows, uint64_t pc, const char **code,
                         const char **src, char *c, char *l)
{
    csv_code *k = &rows->codes[fib_hash(pc, 8)];
    if (k->valid && k->pc == pc) {
        *code = k->code;
        *src = k->line;
        return;
    }
    symbolizer_code(rows->sym, pc, c, NAME_MAX_LEN);
    if (!symbolizer_line(rows->sym, pc, l, NAME_MAX_LEN))
        l[0] = '\0';
    *code = c;
    *src = l;
    size_t clen = strlen(c), llen = strlen(l);
    if (clen < CSV_KEPT && llen < CSV_KEPT) {
        memcpy(k->code, c, clen + 1);
        memcpy(k->line, l, llen + 1);
        k->pc = pc;
        k->valid = 1;
    }
}
_Static_assert(CSV_CODES == 1u << 8, "code_columns takes 8 bits");

void csv_row(csv_rows *rows, line_buf *lines, const memtap_record *x,
             uint32_t tid)
{
    char a[NAME_MAX_LEN], c[NAME_MAX_LEN], l[NAME_MAX_LEN];
    const char *cols[4] = { a, "", "", "" }; /* data, region, code, line */
    a[0] = '\0'; /* the buffers not cleared: 3 KB a line */
    int symbolic = rows->symbolic;
    if (symbolic) {
        if (x->addr && x->kind != MEMTAP_EV_MODULE_LOAD &&
            x->kind != MEMTAP_EV_MODULE_UNLOAD &&
            x->kind != MEMTAP_EV_THREAD_START)
            cols[1] = namer_name_data(rows->names, x->addr, a, sizeof a);
        if (x->pc)
            code_columns(rows, x->pc, &cols[2], &cols[3], c, l);
    }
    size_t names = 0, len[4];
    int plain = 1;
    for (int i = 0; symbolic && i < 4; i++) {
        names += len[i] = strlen(cols[i]);
        plain &= csv_plain(cols[i]);
    }
    if (plain && names + 256 <= LINE_MAX_LEN) {
        /* the usual: by hand, the fields' at most 200 bytes and the names
         * with no look at the room a line has */
        char *p = dec_at(line_start(lines), x->seq);
        *p++ = ',';
        p = dec_at(p, tid);
        p[0] = ',';
        p[1] = (char)x->kind;
        memcpy(p + 2, ",0x", 3);
        p = hex_at(p + 5, x->pc, 1);
        memcpy(p, ",0x", 3);
        p = hex_at(p + 3, x->addr, 1);
        *p++ = ',';
        p = dec_at(p, x->size);
        memcpy(p, ",0x", 3);
        p = hex_at(p + 3, x->addr2, 1);
        *p++ = ',';
        p = dec_at(p, x->aux);
        *p++ = ',';
        p = dec_at(p, x->count);
        *p++ = ',';
        p = dec_at(p, x->flags);
        for (int i = 0; symbolic && i < 4; i++) {
            *p++ = ',';
            p = copy_at(p, cols[i], len[i]);
        }
        *p++ = '\n';
        line_end(lines, p);
        return;
    }
    line_buf_flush(lines); /* a field to quote, or names too long */
    FILE *o = lines->out;
    fprintf(o, "%" PRIu64 ",%u,%c,0x%" PRIx64 ",0x%" PRIx64 ",%" PRIu64
               ",0x%" PRIx64 ",%" PRIu64 ",%u,%u",
            x->seq, tid, x->kind, x->pc, x->addr, x->size, x->addr2,
            x->aux, x->count, x->flags);
    for (int i = 0; symbolic && i < 4; i++) {
        fputc(',', o);
        csv_field(o, cols[i]);
    }
    fputc('\n', o);
}
