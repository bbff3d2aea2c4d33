/* The program's own signal handling under memtap:
 *  - a SIGSEGV handler for the program's own PROT_NONE page (it fixes the
 *    rights and the access goes on);
 *  - a SIGTRAP handler called by int3;
 *  - a SIGUSR1 handler that writes a global while main loops over heap;
 *  - signal() returning the previous handler.
 * Prints what happened; exits 0 when all went as without memtap. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static char *guarded;
static volatile int segv_seen, trap_seen, usr1_seen;
int from_handler;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    if ((char *)si->si_addr < guarded || (char *)si->si_addr >= guarded + 4096)
        _exit(10);
    segv_seen++;
    mprotect(guarded, 4096, PROT_READ | PROT_WRITE);
}

static void on_trap(int sig) { (void)sig; trap_seen++; }

static void on_usr1(int sig)
{
    (void)sig;
    from_handler += 7; /* a store to traced memory from a handler */
    usr1_seen++;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    if (sigaction(SIGSEGV, &sa, NULL) != 0)
        return 1;
    struct sigaction back;
    if (sigaction(SIGSEGV, NULL, &back) != 0 || back.sa_sigaction != on_segv)
        return 2;
    guarded = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (guarded == MAP_FAILED)
        return 3;
    guarded[100] = 42; /* faults for the program; its handler fixes it */
    if (signal(SIGTRAP, on_trap) == SIG_ERR)
        return 4;
    __asm__ volatile("int3");
    if (signal(SIGUSR1, on_usr1) == SIG_ERR)
        return 5;
    int *heap = malloc(4096 * sizeof *heap);
    for (int i = 0; i < 4096; i++) {
        heap[i] = i;
        if (i % 1024 == 0)
            raise(SIGUSR1);
    }
    printf("segv %d trap %d usr1 %d guarded %d handler %d heap %d\n",
           segv_seen, trap_seen, usr1_seen, guarded[100], from_handler,
           heap[4095]);
    free(heap);
    return !(segv_seen == 1 && trap_seen == 1 && usr1_seen == 4 &&
             guarded[100] == 42 && from_handler == 28);
}
