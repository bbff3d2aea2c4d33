/*
 * page.c - the HTML pages of `memtap report --html` and `memtap cachesim
 * --html` (page.h).  The scripts and the style are built into the command
 * (.incbin of page/common.js, page/report.js, page/cachesim.js,
 * page/report.css and ECharts' echarts.min.js, paths from CMake).
 */
#define _GNU_SOURCE
#include "report/page.h"

#include <string.h>

#ifdef MEMTAP_ECHARTS_JS
#define ASSET(sym, path)                                                       \
    __asm__(".pushsection .rodata\n"                                           \
            ".global " #sym "\n.hidden " #sym "\n" #sym ":\n"                  \
            ".incbin \"" path "\"\n"                                           \
            ".global " #sym "_end\n.hidden " #sym "_end\n" #sym "_end:\n"      \
            ".byte 0\n.popsection\n");                                         \
    extern const char sym[], sym##_end[]

ASSET(page_echarts, MEMTAP_ECHARTS_JS);
ASSET(page_common, MEMTAP_PAGE_DIR "/common.js");
ASSET(page_script, MEMTAP_PAGE_DIR "/report.js");
ASSET(page_cachesim, MEMTAP_PAGE_DIR "/cachesim.js");
ASSET(page_style, MEMTAP_PAGE_DIR "/report.css");

/* An asset inside a <script> or <style> element: it must not close it. */
static int put_asset(FILE *o, const char *start, const char *end)
{
    size_t n = (size_t)(end - start);
    if (memmem(start, n, "</", 2) && (memmem(start, n, "</script", 8) ||
                                      memmem(start, n, "</style", 7)))
        return -1;
    return fwrite(start, 1, n, o) == n ? 0 : -1;
}

int page_write_data(FILE *o, page_kind kind,
                    void (*json)(void *arg, FILE *o), void *arg, char *err,
                    size_t errcap)
{
    const char *title = kind == PAGE_REPORT ? "memtap report" : "memtap cachesim";
    fprintf(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
               "<title>%s</title>\n<style>\n", title);
    int bad = put_asset(o, page_style, page_style_end);
    fprintf(o, "</style></head>\n<body>\n<h1 id=\"title\">%s</h1>\n"
               "<p class=\"meta\" id=\"meta\"></p>\n"
               "<p class=\"warning\" id=\"incomplete\" hidden>The trace may be "
               "incomplete (memtap warned when it was read): the counts below are "
               "a lower bound.</p>\n"
               "<pre class=\"errors\" id=\"errors\" hidden></pre>\n"
               "<main id=\"main\"></main>\n"
               "<script type=\"application/json\" id=\"memtap-data\">\n", title);
    json(arg, o);
    fputs("</script>\n<script>\n", o);
    bad |= put_asset(o, page_echarts, page_echarts_end);
    fputs("\n</script>\n<script>\n", o);
    bad |= put_asset(o, page_common, page_common_end);
    fputs("\n</script>\n<script>\n", o);
    bad |= kind == PAGE_REPORT ? put_asset(o, page_script, page_script_end)
                               : put_asset(o, page_cachesim, page_cachesim_end);
    fputs("\n</script>\n</body></html>\n", o);
    if (bad)
        snprintf(err, errcap, "a built-in script would end its element early");
    return bad ? -1 : 0;
}

int page_available(void) { return 1; }

typedef struct report_page {
    const profile *p;
    const profile_meta *m;
} report_page;

static void report_json(void *arg, FILE *o)
{
    const report_page *r = arg;
    profile_print_json(r->p, r->m, o);
}

int page_write(const profile *p, const profile_meta *m, FILE *o, char *err,
               size_t errcap)
{
    report_page r = { p, m };
    return page_write_data(o, PAGE_REPORT, report_json, &r, err, errcap);
}
#else
int page_available(void) { return 0; }

int page_write_data(FILE *o, page_kind kind,
                    void (*json)(void *arg, FILE *o), void *arg, char *err,
                    size_t errcap)
{
    (void)o, (void)kind, (void)json, (void)arg;
    snprintf(err, errcap, "this memtap was built without ECharts (run "
                          "scripts/deps.sh, then build again)");
    return -1;
}

int page_write(const profile *p, const profile_meta *m, FILE *o, char *err,
               size_t errcap)
{
    (void)p, (void)m;
    return page_write_data(o, PAGE_REPORT, NULL, NULL, err, errcap);
}
#endif
