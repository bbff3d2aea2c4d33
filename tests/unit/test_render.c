/*
 * test_render.c - MadT, Lackey and CSV lines for events that point at this
 * test's own functions, globals and heap blocks: the expected names are
 * what the test itself pointed at, so they are known independently.
 */
#define _GNU_SOURCE
#include "check.h"
#include "report/render.h"
#include "trace/writer.h"

#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

struct slot {
    int a;
    int b;
};

struct conf {
    long count;
    struct slot slots[4];
} gconf = { 1, { { 0, 0 } } };

static short counter_static = 3;

__attribute__((noinline)) void *make_thing(void) { return malloc(40); }
int main(void);

static memtap_module self_module;
static memtap_segment self_segs[16];
static char self_path[4096];

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    if (self_module.path)
        return 0;
    self_module.base = info->dlpi_addr;
    for (int i = 0; i < info->dlpi_phnum && self_module.nsegs < 16; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD)
            self_segs[self_module.nsegs++] =
                (memtap_segment){ ph->p_vaddr, ph->p_memsz, ph->p_flags, 0 };
    }
    self_module.segs = self_segs;
    self_module.path = self_path;
    return 0;
}

static memtap_record rec(uint64_t seq, uint8_t kind, uint64_t pc,
                         uint64_t addr, uint64_t size, uint64_t addr2,
                         uint64_t aux)
{
    memtap_record r;
    memset(&r, 0, sizeof r);
    r.seq = seq;
    r.kind = kind;
    r.pc = pc;
    r.addr = addr;
    r.size = size;
    r.addr2 = addr2;
    r.aux = aux;
    r.count = 1;
    return r;
}

#define U(p) ((uint64_t)(uintptr_t)(p))

/* Renders the trace at path and returns the text (caller frees). */
static char *render(const char *path, render_options opt)
{
    memtap_trace *t;
    if (memtap_trace_open(path, &t) != MEMTAP_OK)
        return NULL;
    symbolizer *sym;
    CHECK(symbolizer_create(t, stderr, &sym) == MEMTAP_OK);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    renderer *r = renderer_create(sym, &opt, out);
    renderer_begin(r);
    memtap_event ev;
    while (memtap_trace_next(t, &ev) > 0)
        renderer_event(r, &ev);
    renderer_destroy(r);
    fclose(out);
    symbolizer_destroy(sym);
    memtap_trace_close(t);
    return text;
}

static int has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; (p = strstr(p, line)); p++)
        if ((p == text || p[-1] == '\n') && p[n] == '\n')
            return 1;
    fprintf(stderr, "missing line: %s\n", line);
    return 0;
}

int main(void)
{
    ssize_t n = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    if (n <= 0)
        return 1;
    dl_iterate_phdr(find_self, NULL);
    const char *base = strrchr(self_path, '/') + 1;

    char path[] = "/tmp/memtap-render-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    close(fd);
    char *p = make_thing();
    trace_writer *w;
    CHECK(trace_writer_create(path, (uint32_t)getpid(), &w) == MEMTAP_OK);
    CHECK(trace_writer_module(w, &self_module) == MEMTAP_OK);
    memtap_record evs[] = {
        rec(1, 'M', U(make_thing) + 5, U(p), 40, 0, 13),
        rec(2, 'L', U(main) + 3, U(p) + 8, 8, 0, 0),
        rec(3, 'S', U(main) + 7, U(&gconf.slots[2].b), 4, 0, 0),
        rec(4, 'L', U(main) + 9, U(&counter_static), 2, 0, 0),
        rec(5, 'Y', U(main) + 11, U(p), 16, U(&gconf.slots[1]), 0),
        rec(6, 'F', U(main) + 13, U(p), 0, 0, 0),
        rec(7, 'L', U(main) + 15, U(p) + 8, 8, 0, 0),
        rec(8, 't', 0, 0, 0, 0, 0),
    };
    for (size_t i = 0; i < sizeof evs / sizeof *evs; i++)
        CHECK(trace_writer_event(w, 77, &evs[i]) == MEMTAP_OK);
    CHECK(trace_writer_close(w) == MEMTAP_OK);

    char expect[1024];
    char *text = render(path, (render_options){ RENDER_MADT,
                                                RENDER_SYMBOLIC, 0 });
    CHECK(text != NULL);
    if (text) {
        CHECK(has_line(text, "M$1:<malloc0013@make_thing+5>,40"));
        CHECK(has_line(text, "L$2:<malloc0013@make_thing+5>+8, [heap], "
                             "main+3"));
        snprintf(expect, sizeof expect,
                 "S$3:gconf.slots[2].b, [%s], main+7", base);
        CHECK(has_line(text, expect));
        snprintf(expect, sizeof expect,
                 "L$4:counter_static, [%s], main+9", base);
        CHECK(has_line(text, expect));
        CHECK(has_line(text, "Y$5:<malloc0013@make_thing+5>+0,"
                             "gconf.slots[1].a,16, main+11"));
        CHECK(has_line(text, "F$6:<freed:0013@make_thing+5>"));
        CHECK(has_line(text, "L$7:<freed:0013@make_thing+5>+8, [heap], "
                             "main+15"));
        CHECK(has_line(text, "# 8: thread 77 starts"));
    }
    free(text);

    text = render(path, (render_options){ RENDER_MADT, RENDER_RAW, 0 });
    if (text) {
        snprintf(expect, sizeof expect, "L#2:0x%llx, [heap], 0x%llx",
                 (unsigned long long)U(p) + 8,
                 (unsigned long long)U(main) + 3);
        CHECK(has_line(text, expect));
        snprintf(expect, sizeof expect, "M#1:0x%llx,40, 0x%llx",
                 (unsigned long long)U(p),
                 (unsigned long long)U(make_thing) + 5);
        CHECK(has_line(text, expect));
        CHECK(strchr(text, '$') == NULL);
    }
    free(text);

    text = render(path, (render_options){ RENDER_LACKEY, RENDER_RAW, 0 });
    if (text) {
        snprintf(expect, sizeof expect, " L %08llx,8",
                 (unsigned long long)U(p) + 8);
        CHECK(has_line(text, expect));
        snprintf(expect, sizeof expect, " S %08llx,4",
                 (unsigned long long)U(&gconf.slots[2].b));
        CHECK(has_line(text, expect));
        CHECK(strstr(text, "M") == NULL); /* Lackey has no heap events */
    }
    free(text);

    text = render(path, (render_options){ RENDER_CSV, RENDER_SYMBOLIC, 0 });
    if (text) {
        CHECK(strncmp(text, "seq,tid,kind,pc,addr,size,addr2,aux,count,"
                            "flags,data,region,code,line\n", 66) == 0);
        snprintf(expect, sizeof expect,
                 "3,77,S,0x%llx,0x%llx,4,0x0,0,1,0,gconf.slots[2].b,[%s],"
                 "main+7,",
                 (unsigned long long)U(main) + 7,
                 (unsigned long long)U(&gconf.slots[2].b), base);
        CHECK(strstr(text, expect) != NULL);
    }
    free(text);
    free(p);
    unlink(path);
    return CHECK_DONE();
}
