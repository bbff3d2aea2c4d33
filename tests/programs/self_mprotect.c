/* Makes the page of its own main writable and executable, then back (as
 * a program that patches or relocates its own code does): that is no new
 * code, and memtap must not call the run incomplete. */
#include <stdio.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
int main(void) {
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t p = (uintptr_t)&main & ~(uintptr_t)(pg - 1);
    if (mprotect((void *)p, pg, PROT_READ | PROT_WRITE | PROT_EXEC)) return 1;
    if (mprotect((void *)p, pg, PROT_READ | PROT_EXEC)) return 2;
    puts("ok");
    return 0;
}
