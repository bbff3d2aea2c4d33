/*
 * dwarf_vars.c - the global and static variables of one DWARF (libdw),
 * sorted by address, and the names of data inside them down to the field
 * and element ("config.limits[3].hi", "+N" for bytes inside a scalar).
 * What naming needs of each type (array strides, member tables) is read
 * from libdw once and kept, so that naming is arithmetic.
 *
 * One file: the variables, the type shapes and the walks that name data
 * (a variable's bytes, a row or scalar around an address, a heap block's
 * members) all read the one table of shapes.
 */
#define _GNU_SOURCE
#include "dwarf_vars.h"
#include "sys/bisect.h"
#include "sys/hash.h"
#include "sys/vec.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIMS 8

/* What naming needs of a type, read once from its DIE. */
typedef enum { SHAPE_LEAF, SHAPE_ARRAY, SHAPE_RECORD } shape_kind;

typedef struct member {
    uint64_t off, size;  /* size 1 when the type has none */
    const char *name;    /* libdw's string, or NULL */
    Dwarf_Off type;
} member;

typedef struct type_shape {
    Dwarf_Off off;       /* the DIE it was read from (the key) */
    shape_kind kind;
    int ndims;                   /* ARRAY: dimensions, outermost first */
    uint64_t strides[MAX_DIMS];  /* ARRAY: bytes per index of each */
    int8_t shifts[MAX_DIMS];     /* ARRAY: log2 of a stride that is a
                                    power of two (a shift, not a division,
                                    per name), else -1 */
    Dwarf_Off elem;              /* ARRAY: the element type */
    member *members;             /* RECORD: in DIE order */
    size_t nmembers;
} type_shape;

typedef struct dwarf_var {
    uint64_t addr;
    uint64_t size;
    char *name;
    size_t name_len;
    Dwarf_Off type;  /* 0 when untyped */
} dwarf_var;

struct dwarf_vars {
    Dwarf *dwarf;
    dwarf_var *vars;
    size_t nvars, cap;
    type_shape **shapes; /* open addressing by DIE offset, half full */
    size_t nshapes, shape_cap;
    const dwarf_var *last; /* variable_at's last answer, up to last_end */
    uint64_t last_end;
};

static int var_location(Dwarf_Die *die, uint64_t *addr)
{
    Dwarf_Attribute attr;
    Dwarf_Op *ops;
    size_t nops;
    if (!dwarf_attr(die, DW_AT_location, &attr) ||
        dwarf_getlocation(&attr, &ops, &nops) != 0 || nops != 1 ||
        ops[0].atom != DW_OP_addr)
        return 0;
    *addr = ops[0].number;
    return 1;
}

static Dwarf_Off type_of(Dwarf_Die *die, Dwarf_Die *type)
{
    Dwarf_Attribute attr;
    if (!dwarf_attr_integrate(die, DW_AT_type, &attr) ||
        !dwarf_formref_die(&attr, type))
        return 0;
    return dwarf_dieoffset(type);
}

static void add_var(dwarf_vars *vs, Dwarf_Die *die)
{
    uint64_t addr;
    const char *name = dwarf_diename(die);
    if (!name || !var_location(die, &addr))
        return;
    Dwarf_Die type;
    Dwarf_Off toff = type_of(die, &type);
    Dwarf_Word size = 0;
    if (toff && dwarf_aggregate_size(&type, &size) != 0)
        size = 0;
    char *copy = strdup(name);
    dwarf_var *v = copy ? array_push((void **)&vs->vars, &vs->nvars,
                                     &vs->cap, sizeof *v)
                        : NULL;
    if (!v) {
        free(copy);
        return;
    }
    *v = (dwarf_var){ addr, size, copy, strlen(copy), toff };
}

static void walk_dies(dwarf_vars *vs, Dwarf_Die *parent, int depth)
{
    Dwarf_Die child;
    if (depth > 32 || dwarf_child(parent, &child) != 0)
        return;
    do {
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_variable)
            add_var(vs, &child);
        else if (tag == DW_TAG_subprogram || tag == DW_TAG_lexical_block ||
                 tag == DW_TAG_namespace)
            walk_dies(vs, &child, depth + 1);
    } while (dwarf_siblingof(&child, &child) == 0);
}

static int cmp_var(const void *a, const void *b)
{
    const dwarf_var *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

dwarf_vars *dwarf_vars_load(Dwarf *dwarf)
{
    dwarf_vars *vs = calloc(1, sizeof *vs);
    if (!vs)
        return NULL;
    vs->dwarf = dwarf;
    Dwarf_Off off = 0, next;
    size_t hsize;
    while (dwarf_nextcu(vs->dwarf, off, &next, &hsize, NULL, NULL, NULL) ==
           0) {
        Dwarf_Die cu;
        if (dwarf_offdie(vs->dwarf, off + hsize, &cu))
            walk_dies(vs, &cu, 0);
        off = next;
    }
    if (vs->nvars)
        qsort(vs->vars, vs->nvars, sizeof *vs->vars, cmp_var);
    return vs;
}

void dwarf_vars_destroy(dwarf_vars *vs)
{
    if (!vs)
        return;
    for (size_t i = 0; i < vs->nvars; i++)
        free(vs->vars[i].name);
    free(vs->vars);
    for (size_t i = 0; i < vs->shape_cap; i++)
        if (vs->shapes[i]) {
            free(vs->shapes[i]->members);
            free(vs->shapes[i]);
        }
    free(vs->shapes);
    free(vs);
}

static Dwarf_Die *strip_qualifiers(Dwarf_Die *type)
{
    for (int guard = 0; guard < 16; guard++) {
        int tag = dwarf_tag(type);
        if (tag != DW_TAG_typedef && tag != DW_TAG_const_type &&
            tag != DW_TAG_volatile_type && tag != DW_TAG_restrict_type &&
            tag != DW_TAG_atomic_type)
            return type;
        if (!type_of(type, type))
            return NULL;
    }
    return NULL;
}

static uint64_t die_size(Dwarf_Die *die)
{
    Dwarf_Word size;
    return dwarf_aggregate_size(die, &size) == 0 ? size : 0;
}

/* A struct/union's members: the shape kept of DW_TAG_member DIEs. */
static int read_members(type_shape *t, Dwarf_Die *type)
{
    Dwarf_Die m;
    size_t cap = 0;
    if (dwarf_child(type, &m) != 0)
        return 0;
    do {
        if (dwarf_tag(&m) != DW_TAG_member)
            continue;
        Dwarf_Attribute attr;
        Dwarf_Word moff = 0;
        if (dwarf_attr(&m, DW_AT_data_member_location, &attr) &&
            dwarf_formudata(&attr, &moff) != 0)
            continue;
        Dwarf_Die mt;
        Dwarf_Off toff = type_of(&m, &mt);
        if (!toff)
            continue;
        const char *name = dwarf_diename(&m);
        member *e = array_push((void **)&t->members, &t->nmembers, &cap,
                               sizeof *e);
        if (!e)
            return -1;
        uint64_t msize = die_size(&mt);
        *e = (member){ moff, msize ? msize : 1, name, toff };
    } while (dwarf_siblingof(&m, &m) == 0);
    return 0;
}

/* An array's element and the stride of each dimension (one dimension of
 * unknown count when it names none). */
static void read_array(type_shape *t, Dwarf_Die *type)
{
    Dwarf_Die elem;
    t->elem = type_of(type, &elem);
    uint64_t esize = t->elem ? die_size(&elem) : 0;
    if (!esize)
        return; /* a leaf: not stepped into */
    uint64_t counts[MAX_DIMS];
    int ndims = 0;
    Dwarf_Die sub;
    if (dwarf_child(type, &sub) == 0) {
        do {
            if (dwarf_tag(&sub) != DW_TAG_subrange_type || ndims == MAX_DIMS)
                continue;
            Dwarf_Attribute attr;
            Dwarf_Word v = 0;
            if (dwarf_attr(&sub, DW_AT_count, &attr) &&
                dwarf_formudata(&attr, &v) == 0)
                counts[ndims++] = v;
            else if (dwarf_attr(&sub, DW_AT_upper_bound, &attr) &&
                     dwarf_formudata(&attr, &v) == 0)
                counts[ndims++] = v + 1;
            else
                counts[ndims++] = 0; /* flexible or unknown */
        } while (dwarf_siblingof(&sub, &sub) == 0);
    }
    if (ndims == 0)
        counts[ndims++] = 0;
    for (int d = ndims; d-- > 0;)
        t->strides[d] = d + 1 < ndims
                            ? t->strides[d + 1] *
                                  (counts[d + 1] ? counts[d + 1] : 1)
                            : esize;
    for (int d = 0; d < ndims; d++)
        t->shifts[d] = (int8_t)((t->strides[d] & (t->strides[d] - 1))
                                    ? -1
                                    : __builtin_ctzll(t->strides[d]));
    t->ndims = ndims;
    t->kind = SHAPE_ARRAY;
}

/* The shape of the type DIE at off (typedefs and qualifiers peeled),
 * made on first use and kept in the table; NULL when out of memory. */
static const type_shape *shape_of(dwarf_vars *vs, Dwarf_Off off)
{
    if (vs->nshapes * 2 >= vs->shape_cap) {
        size_t cap = vs->shape_cap ? vs->shape_cap * 2 : 256;
        type_shape **t = calloc(cap, sizeof *t);
        if (!t)
            return NULL;
        for (size_t i = 0; i < vs->shape_cap; i++) {
            type_shape *e = vs->shapes[i];
            if (!e)
                continue;
            size_t k = fib_mix(e->off) & (cap - 1);
            while (t[k])
                k = (k + 1) & (cap - 1);
            t[k] = e;
        }
        free(vs->shapes);
        vs->shapes = t;
        vs->shape_cap = cap;
    }
    size_t k = fib_mix(off) & (vs->shape_cap - 1);
    for (; vs->shapes[k]; k = (k + 1) & (vs->shape_cap - 1))
        if (vs->shapes[k]->off == off)
            return vs->shapes[k];
    type_shape *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->off = off;
    Dwarf_Die die_mem, *die = &die_mem;
    if (dwarf_offdie(vs->dwarf, off, die) && (die = strip_qualifiers(die))) {
        int tag = dwarf_tag(die);
        if (tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
            tag == DW_TAG_class_type) {
            t->kind = SHAPE_RECORD;
            if (read_members(t, die) != 0) {
                free(t->members);
                free(t);
                return NULL;
            }
        } else if (tag == DW_TAG_array_type) {
            read_array(t, die);
        }
    }
    vs->shapes[k] = t;
    vs->nshapes++;
    return t;
}

/* The DWARF variable holding addr, or NULL; *end is where the variables
 * after it begin to answer (or its own end).  The last answer is kept:
 * accesses come in runs over one array. */
static const dwarf_var *variable_at(dwarf_vars *vs, uint64_t addr,
                                    uint64_t *end)
{
    const dwarf_var *c = vs->last;
    if (c && addr - c->addr < vs->last_end - c->addr) {
        *end = vs->last_end;
        return c;
    }
    size_t lo = BISECT_AFTER(vs->vars, vs->nvars, addr, addr);
    for (size_t i = lo, steps = 0; i-- > 0 && steps < 8; steps++) {
        c = &vs->vars[i];
        uint64_t size = c->size ? c->size : 1;
        if (addr - c->addr < size) {
            *end = c->addr + size;
            if (i + 1 < vs->nvars && vs->vars[i + 1].addr < *end)
                *end = vs->vars[i + 1].addr;
            vs->last = c;
            vs->last_end = *end;
            return c;
        }
    }
    return NULL;
}

int dwarf_vars_at(dwarf_vars *vs, uint64_t addr, const char **name,
                  uint64_t *start, uint64_t *end)
{
    const dwarf_var *v = variable_at(vs, addr, end);
    if (v) {
        *name = v->name;
        *start = v->addr;
    }
    return v != NULL;
}

/* Text appended up to cap - 1 characters (cut short there), always
 * terminated. */
typedef struct text {
    char *b;
    size_t n, cap;
} text;

static void add_mem(text *t, char lead, const char *s, size_t len)
{
    if (lead && t->n + 1 < t->cap)
        t->b[t->n++] = lead;
    size_t room = t->cap - 1 - t->n;
    if (len > room)
        len = room;
    memcpy(t->b + t->n, s, len);
    t->n += len;
    t->b[t->n] = '\0';
}

static void add_num(text *t, char lead, uint64_t v, char close)
{
    char d[24];
    size_t k = sizeof d;
    if (close)
        d[--k] = close;
    do
        d[--k] = (char)('0' + v % 10);
    while (v /= 10);
    add_mem(t, lead, d + k, sizeof d - k);
}

/* The index in dimension d of an array shaped s that byte off is in. */
static uint64_t index_at(const type_shape *s, int d, uint64_t off)
{
    return s->shifts[d] >= 0 ? off >> s->shifts[d] : off / s->strides[d];
}

/* The member of a record shaped s that holds byte off (a union's: the
 * first), or NULL (padding). */
static const member *member_at(const type_shape *s, uint64_t off)
{
    for (size_t i = 0; i < s->nmembers; i++)
        if (off >= s->members[i].off && off - s->members[i].off < s->members[i].size)
            return &s->members[i];
    return NULL;
}

/* Appends the path to byte `off` of a value of `type`: its elements and
 * members ("[3].hi"), then "+N" for bytes inside a scalar. */
static void name_inside(dwarf_vars *vs, Dwarf_Off type, uint64_t off, text *t)
{
    for (int depth = 0; type && depth < 32; depth++) {
        const type_shape *s = shape_of(vs, type);
        type = 0;
        if (s && s->kind == SHAPE_ARRAY) {
            for (int d = 0; d < s->ndims; d++) {
                uint64_t idx = index_at(s, d, off);
                add_num(t, '[', idx, ']');
                off -= idx * s->strides[d];
            }
            type = s->elem;
        } else if (s && s->kind == SHAPE_RECORD) {
            const member *m = member_at(s, off);
            if (!m)
                continue;
            if (m->name)
                add_mem(t, '.', m->name, strlen(m->name));
            off -= m->off;
            type = m->type;
        }
    }
    if (off)
        add_num(t, '+', off, 0);
}

int dwarf_vars_name(dwarf_vars *vs, uint64_t addr, char *buf, size_t cap)
{
    uint64_t end;
    const dwarf_var *v = variable_at(vs, addr, &end);
    if (!v || !cap)
        return v != NULL;
    text t = { buf, 0, cap };
    add_mem(&t, 0, v->name, v->name_len);
    name_inside(vs, v->type, addr - v->addr, &t);
    return 1;
}

int dwarf_vars_span(dwarf_vars *vs, uint64_t addr, char *buf, size_t cap,
                    var_span *out)
{
    uint64_t end;
    const dwarf_var *v = variable_at(vs, addr, &end);
    if (!v || !v->size || !cap)
        return -1;
    text t = { buf, 0, cap };
    add_mem(&t, 0, v->name, v->name_len);
    uint64_t base = v->addr, extent = v->size, off = addr - v->addr;
    Dwarf_Off type = v->type;
    *out = (var_span){ VAR_SPAN_SCALAR, 0, 0, 0, 0 };
    /* name_inside's path, down to a scalar or a row of them */
    for (int depth = 0; type && depth < 32; depth++) {
        const type_shape *s = shape_of(vs, type);
        type = 0;
        if (s && s->kind == SHAPE_ARRAY) {
            const type_shape *e = shape_of(vs, s->elem);
            for (int d = 0; d < s->ndims; d++) {
                if (d == s->ndims - 1 && s->shifts[d] >= 0 &&
                    (!e || e->kind == SHAPE_LEAF)) {
                    add_mem(&t, '[', "", 0);
                    *out = (var_span){ VAR_SPAN_ROW, 0, 0, 0,
                                       (unsigned)s->shifts[d] };
                    goto found;
                }
                uint64_t idx = index_at(s, d, off);
                add_num(&t, '[', idx, ']');
                off -= idx * s->strides[d];
                base += idx * s->strides[d];
                extent = s->strides[d];
            }
            type = s->elem;
        } else if (s && s->kind == SHAPE_RECORD) {
            const member *m = member_at(s, off);
            if (!m) { /* padding */
                base = addr;
                extent = 1;
                out->kind = VAR_SPAN_OTHER;
                goto found;
            }
            for (const member *j = s->members; j < m; j++)
                if (j->off < m->off + m->size && m->off < j->off + j->size) {
                    out->kind = VAR_SPAN_OTHER; /* a union's: named first */
                    goto found;
                }
            if (m->name)
                add_mem(&t, '.', m->name, strlen(m->name));
            off -= m->off;
            base += m->off;
            extent = m->size;
            type = m->type;
        }
    }
    if (type) /* (as deep as name_inside goes) */
        out->kind = VAR_SPAN_OTHER;
found:
    if (t.n + 1 >= cap) /* cut */
        out->kind = VAR_SPAN_OTHER;
    out->from = out->lo = base;
    out->hi = base + extent < end ? base + extent : end;
    return 0;
}

/* ---- the type of a heap block, from its allocation site ---- */

/* The struct, union or class a variable of type `type` points to (a
 * pointer, or an array of them), typedefs and qualifiers peeled: its DIE
 * in *to; 0 when it points to something else. */
static int pointee_record(Dwarf_Die *type, Dwarf_Die *to)
{
    Dwarf_Die t = *type, *p = strip_qualifiers(&t);
    if (p && dwarf_tag(p) == DW_TAG_array_type && type_of(p, p))
        p = strip_qualifiers(p);
    if (!p || dwarf_tag(p) != DW_TAG_pointer_type || !type_of(p, to) ||
        !(p = strip_qualifiers(to)))
        return 0;
    *to = *p;
    int tag = dwarf_tag(to);
    return tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
           tag == DW_TAG_class_type;
}

/* The records a site's variables point to: the one of the block's size,
 * and the one whose size divides it (an array of them); `many` when two
 * different ones qualify the same way. */
typedef struct candidates {
    Dwarf_Off exact, divides;
    int many_exact, many_divides;
} candidates;

/* Counts the record `type` points to (a variable's, a parameter's, the
 * function's own return type) as a candidate for blocks of block_size. */
static void consider(candidates *c, Dwarf_Die *type, uint64_t block_size)
{
    Dwarf_Die rec;
    uint64_t size;
    if (!pointee_record(type, &rec) || !(size = die_size(&rec)) || block_size % size)
        return;
    Dwarf_Off off = dwarf_dieoffset(&rec);
    Dwarf_Off *slot = size == block_size ? &c->exact : &c->divides;
    int *many = size == block_size ? &c->many_exact : &c->many_divides;
    if (*slot && *slot != off)
        *many = 1;
    *slot = off;
}

/* The variables and parameters directly in `scope` (and, for a function,
 * the type it returns: `return new T`), as candidates. */
static void scope_candidates(Dwarf_Die *scope, uint64_t block_size, candidates *c)
{
    Dwarf_Die v, type;
    if (dwarf_tag(scope) == DW_TAG_subprogram && type_of(scope, &type))
        consider(c, &type, block_size);
    if (dwarf_child(scope, &v) != 0)
        return;
    do {
        int tag = dwarf_tag(&v);
        if ((tag == DW_TAG_variable || tag == DW_TAG_formal_parameter) && type_of(&v, &type))
            consider(c, &type, block_size);
    } while (dwarf_siblingof(&v, &v) == 0);
}

int dwarf_vars_block_type(dwarf_vars *vs, uint64_t pc, uint64_t block_size,
                          uint64_t *type, char *name, size_t cap)
{
    Dwarf_Die cu, *scopes = NULL;
    if (!block_size || !dwarf_addrdie(vs->dwarf, pc, &cu))
        return 0;
    int n = dwarf_getscopes(&cu, pc, &scopes);
    candidates c = { 0, 0, 0, 0 };
    /* the call's own scopes out to its function: the variable the block's
     * pointer goes to is there (or a parameter, for an out-argument) */
    for (int i = 0; i < n; i++) {
        scope_candidates(&scopes[i], block_size, &c);
        if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram)
            break;
    }
    free(scopes);
    /* one record of the block's size; else one it holds an array of */
    Dwarf_Off found = 0;
    if (c.exact)
        found = c.many_exact ? 0 : c.exact;
    else if (!c.many_divides)
        found = c.divides;
    Dwarf_Die rec;
    if (!found || !dwarf_offdie(vs->dwarf, found, &rec))
        return 0;
    const char *tag = dwarf_tag(&rec) == DW_TAG_union_type   ? "union "
                      : dwarf_tag(&rec) == DW_TAG_class_type ? "class "
                                                             : "struct ";
    const char *rname = dwarf_diename(&rec);
    if (!rname)
        rname = "<anonymous>";
    text t = { name, 0, cap };
    if (cap) {
        add_mem(&t, 0, tag, strlen(tag));
        add_mem(&t, 0, rname, strlen(rname));
    }
    *type = found;
    return 1;
}

int dwarf_vars_member(dwarf_vars *vs, uint64_t type, uint64_t block_size,
                      uint64_t off, char *buf, size_t cap)
{
    Dwarf_Die rec;
    uint64_t size;
    if (!cap || !dwarf_offdie(vs->dwarf, type, &rec) || !(size = die_size(&rec)))
        return 0;
    text t = { buf, 0, cap };
    buf[0] = '\0';
    if (block_size > size) /* an array of them */
        add_num(&t, '[', off / size, ']');
    name_inside(vs, type, off % size, &t);
    if (t.n && t.b[0] == '.') /* "hot", not ".hot" */
        memmove(t.b, t.b + 1, t.n--);
    return 1;
}
