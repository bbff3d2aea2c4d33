/*
 * dwarf_vars.c - the global and static variables of one DWARF (libdw),
 * sorted by address, and the names of data inside them down to the field
 * and element ("config.limits[3].hi", "+N" for bytes inside a scalar).
 */
#define _GNU_SOURCE
#include "dwarf_vars.h"
#include "sys/bisect.h"
#include "sys/vec.h"

#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct dwarf_var {
    uint64_t addr;
    uint64_t size;
    char *name;
    Dwarf_Off type;  /* 0 when untyped */
} dwarf_var;

struct dwarf_vars {
    Dwarf *dwarf;
    dwarf_var *vars;
    size_t nvars, cap;
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
    *v = (dwarf_var){ addr, size, copy, toff };
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

/* Steps into the member of a struct/union holding *off. */
static int into_member(Dwarf_Die *type, uint64_t *off, char *buf, size_t cap,
                       size_t *len)
{
    Dwarf_Die m;
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
        if (!type_of(&m, &mt))
            continue;
        uint64_t msize = die_size(&mt);
        if (*off < moff || *off - moff >= (msize ? msize : 1))
            continue;
        const char *name = dwarf_diename(&m);
        if (name && *len < cap)
            *len += (size_t)snprintf(buf + *len, cap - *len, ".%s", name);
        *off -= moff;
        *type = mt;
        return 1;
    } while (dwarf_siblingof(&m, &m) == 0);
    return 0;
}

/* Steps into the element of an array holding *off (every dimension). */
static int into_element(Dwarf_Die *type, uint64_t *off, char *buf, size_t cap,
                        size_t *len)
{
    Dwarf_Die elem;
    if (!type_of(type, &elem))
        return 0;
    uint64_t esize = die_size(&elem);
    if (!esize)
        return 0;
    uint64_t counts[8];
    int ndims = 0;
    Dwarf_Die sub;
    if (dwarf_child(type, &sub) == 0) {
        do {
            if (dwarf_tag(&sub) != DW_TAG_subrange_type || ndims == 8)
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
    for (int d = 0; d < ndims; d++) {
        uint64_t stride = esize;
        for (int k = d + 1; k < ndims; k++)
            stride *= counts[k] ? counts[k] : 1;
        uint64_t idx = *off / stride;
        if (*len < cap)
            *len += (size_t)snprintf(buf + *len, cap - *len, "[%llu]",
                                     (unsigned long long)idx);
        *off -= idx * stride;
    }
    *type = elem;
    return 1;
}

/* The DWARF variable holding addr, or NULL. */
static const dwarf_var *variable_at(const dwarf_vars *vs, uint64_t addr)
{
    size_t lo = BISECT_AFTER(vs->vars, vs->nvars, addr, addr);
    for (size_t i = lo, steps = 0; i-- > 0 && steps < 8; steps++) {
        const dwarf_var *c = &vs->vars[i];
        if (addr - c->addr < (c->size ? c->size : 1))
            return c;
    }
    return NULL;
}

int dwarf_vars_at(const dwarf_vars *vs, uint64_t addr, const char **name,
                  uint64_t *start)
{
    const dwarf_var *v = variable_at(vs, addr);
    if (v) {
        *name = v->name;
        *start = v->addr;
    }
    return v != NULL;
}

int dwarf_vars_name(const dwarf_vars *vs, uint64_t addr, char *buf,
                    size_t cap)
{
    const dwarf_var *v = variable_at(vs, addr);
    if (!v)
        return 0;
    uint64_t off = addr - v->addr;
    size_t len = (size_t)snprintf(buf, cap, "%s", v->name);
    Dwarf_Die type_mem, *type = &type_mem;
    if (v->type && dwarf_offdie(vs->dwarf, v->type, type)) {
        for (int depth = 0; depth < 32 && (type = strip_qualifiers(type));
             depth++) {
            int tag = dwarf_tag(type);
            int stepped = 0;
            if (tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
                tag == DW_TAG_class_type)
                stepped = into_member(type, &off, buf, cap, &len);
            else if (tag == DW_TAG_array_type)
                stepped = into_element(type, &off, buf, cap, &len);
            if (!stepped)
                break;
        }
    }
    if (off && len < cap)
        snprintf(buf + len, cap - len, "+%llu", (unsigned long long)off);
    return 1;
}
