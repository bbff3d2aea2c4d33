/* Waits for a signal the kernel sends (si_code SI_KERNEL), whose default
 * action ends it: with "pause", alarm(1)'s SIGALRM while it sleeps in
 * pause(); with "spin", the same while it computes; with "wait", a
 * terminal's ^C (SIGINT) while it sleeps (alarm(30) meanwhile, to end a
 * test that lost the ^C).  Natively it dies of the signal; it prints
 * "survived" and exits 3 when its wait ends otherwise. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "pause";
    alarm(strcmp(mode, "wait") == 0 ? 30 : 1);
    if (strcmp(mode, "spin") == 0) {
        volatile unsigned long x = 0;
        time_t until = time(NULL) + 30;
        while (time(NULL) < until)
            for (int i = 0; i < 1000000; i++)
                x += (unsigned long)i;
    } else {
        pause();
    }
    printf("survived\n");
    return 3;
}
