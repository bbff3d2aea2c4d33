/*
 * guard_probe.c - asks the kernel to write into a page the program made
 * inaccessible (a guard page of a heap mapping), beside a second thread,
 * as chromium does to check that a guard page is in place: getrlimit
 * must fail with EFAULT and leave the page's bytes alone.  Prints what
 * the call returned and what the page holds afterwards.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

static atomic_int stop;

static void *spin(void *arg)
{
    volatile int *p = arg;
    while (!atomic_load(&stop))
        (*p)++;
    return NULL;
}

int main(void)
{
    long page = sysconf(_SC_PAGESIZE);
    char *m = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return 2;
    memset(m, 0x5a, 2 * page);
    pthread_t t;
    if (pthread_create(&t, NULL, spin, m) != 0)
        return 3;
    char *guard = m + page;
    if (mprotect(guard, page, PROT_NONE) != 0)
        return 4;
    int rc = getrlimit(RLIMIT_NPROC, (struct rlimit *)guard);
    int err = errno;
    atomic_store(&stop, 1);
    pthread_join(t, NULL);
    mprotect(guard, page, PROT_READ);
    printf("getrlimit: %d, %s; guard byte 0x%02x\n", rc, rc ? strerror(err) : "no error",
           (unsigned char)guard[0]);
    return 0;
}
