/*
 * bypass.c - the arguments of the bypass rules and filters the memtap
 * command takes: --only lists, --ignore and --watch ranges, symbols and
 * allocation sites.
 */
#include "cli.h"

#include "analysis/select.h"
#include "symbols/elfimage.h"
#include "sys/only.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int cli_parse_only(const char *s, unsigned *bypass)
{
    int keep = only_parse(s);
    if (keep < 0)
        return -1;
    *bypass = (keep & ONLY_STATIC ? 0 : BYPASS_STATIC) |
              (keep & ONLY_STACK ? 0 : BYPASS_STACK | BYPASS_READ_ONLY);
    return 0;
}

int cli_only_option(const char *arg)
{
    unsigned bypass;
    if (cli_parse_only(arg, &bypass))
        return cli_bad_option("--only", "'%s': expected a comma-separated list "
                                        "of heap, static and stack", arg);
    return 0;
}

/* A hexadecimal number ("0x" optional) ending at *end. */
static int parse_hex(const char *s, uint64_t *v, const char **end)
{
    char *e;
    errno = 0;
    *end = s;
    if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') ||
          (*s >= 'A' && *s <= 'F')))
        return -1;
    *v = strtoull(s, &e, 16);
    *end = e;
    return errno || e == s ? -1 : 0;
}

int cli_is_range(const char *arg)
{
    uint64_t lo, hi;
    const char *end;
    return parse_hex(arg, &lo, &end) == 0 && *end == '-' &&
           parse_hex(end + 1, &hi, &end) == 0 && *end == '\0';
}

/* The symbol called name in file into *out (its name not kept): 0, 1
 * when there is none, -1 after saying why the file cannot be read. */
static int symbol_of(const char *file, const char *name, elf_symbol *out)
{
    elf_image *img;
    int rc = elf_image_open(file, &img);
    if (rc != ELF_OK)
        return cli_error(file, "%s", elf_strerror(rc)), -1;
    const elf_symbol *sym = elf_image_symbol_named(img, name);
    if (sym)
        *out = *sym;
    elf_image_close(img);
    return sym ? 0 : 1;
}

int cli_parse_range(const char *opt, const char *arg, const char *file,
                    uint64_t *lo, uint64_t *hi)
{
    const char *end;
    if (cli_is_range(arg)) {
        parse_hex(arg, lo, &end);
        parse_hex(end + 1, hi, &end);
        return *hi > *lo ? 0 : cli_error(opt, "'%s': an empty range", arg);
    }
    elf_symbol sym;
    int rc = symbol_of(file, arg, &sym);
    if (rc)
        return rc < 0 ? 1 : cli_error(opt, "'%s': neither a range A-B nor a "
                                           "symbol of %s", arg, file);
    if (!sym.size)
        return cli_error(opt, "'%s': the symbol has no size", arg);
    *lo = sym.addr;
    *hi = sym.addr + sym.size;
    return 0;
}

int cli_function_range(const char *file, const char *name, uint64_t *lo,
                       uint64_t *hi)
{
    elf_symbol sym;
    int rc = symbol_of(file, name, &sym);
    if (rc)
        return rc;
    if (!sym.is_func || !sym.size)
        return 1;
    *lo = sym.addr;
    *hi = sym.addr + sym.size;
    return 0;
}

int cli_parse_site(const char *arg, const char *file, uint64_t *lo,
                   uint64_t *hi)
{
    const char *at = strchr(arg, '@');
    char func[512];
    const char *plus = strrchr(at + 1, '+');
    size_t len = plus ? (size_t)(plus - at - 1) : strlen(at + 1);
    uint64_t off = 0;
    char *end = NULL;
    if (plus) {
        errno = 0;
        off = strtoull(plus + 1, &end, 0);
    }
    if (!len || len >= sizeof func || (plus && (errno || *end)))
        return cli_bad_option("--watch", "'%s': expected KIND@FUNCTION[+OFFSET] "
                                    "(a call site, as memtap report names "
                                    "it)", arg);
    memcpy(func, at + 1, len);
    func[len] = '\0';
    elf_symbol sym;
    int rc = symbol_of(file, func, &sym);
    if (rc || !sym.is_func)
        return rc < 0 ? 1 : cli_error("--watch", "'%s': no function %s in %s",
                                      arg, func, file);
    if (plus) { /* one call site: its return address */
        *lo = sym.addr + off;
        *hi = *lo + 1;
    } else { /* every allocation the function makes */
        *lo = sym.addr;
        *hi = sym.addr + (sym.size ? sym.size : 1);
    }
    return 0;
}
