/*
 * sys/page.h - the page size memtap works in: x86-64 Linux's base page
 * (4 KiB), for page protection, page maps and page-granular reports.
 */
#ifndef MEMTAP_SYS_PAGE_H
#define MEMTAP_SYS_PAGE_H

#define PAGE_SHIFT 12
#define PAGE (1ull << PAGE_SHIFT)

#endif
