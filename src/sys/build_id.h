/*
 * sys/build_id.h - the GNU build-id of a loaded module, from its PT_NOTE
 * segments as dl_iterate_phdr shows them.  Shared by the preload library
 * (the module table) and the memtap command (the cache's salt);
 * header-only, no allocation.
 */
#ifndef MEMTAP_SYS_BUILD_ID_H
#define MEMTAP_SYS_BUILD_ID_H

#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

/* Copies the build-id (at most 32 bytes) to out; returns its length, or
 * 0 when the module has none. */
static inline size_t loaded_build_id(const struct dl_phdr_info *info,
                                     uint8_t out[32])
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
        const char *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(const void *)p;
            size_t name_sz = (nh->n_namesz + 3) & ~3u;
            size_t desc_sz = (nh->n_descsz + 3) & ~3u;
            const char *name = p + sizeof *nh;
            const uint8_t *desc = (const uint8_t *)name + name_sz;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
                memcmp(name, "GNU", 4) == 0 && nh->n_descsz <= 32 &&
                (const char *)desc + nh->n_descsz <= end) {
                memcpy(out, desc, nh->n_descsz);
                return nh->n_descsz;
            }
            p = (const char *)desc + desc_sz;
        }
    }
    return 0;
}

#endif
