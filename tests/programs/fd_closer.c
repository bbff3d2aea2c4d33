/* Does to every descriptor what programs that clean up before exec or
 * daemonize do, allocating a block between steps (sizes 101..505):
 *   dup2 of its own file over 600..799, then a write through each copy;
 *   close() of 3..1023; close_range(3, ~0); closefrom(3);
 * with "raw" the dup2 and close_range are raw system calls.
 * argv[1]: the file whose copies are made (it must hold only 'x's). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void step(size_t size)
{
    free(malloc(size));
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int raw = argc > 2 && strcmp(argv[2], "raw") == 0;
    int f = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (f < 0 || f >= 600)
        return 3;
    step(101);
    for (int fd = 600; fd < 800; fd++) {
        int rc = raw ? (int)syscall(SYS_dup2, f, fd) : dup2(f, fd);
        if (rc == fd)
            (void)!write(fd, "x", 1);
    }
    step(202);
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
    step(303);
    if (raw)
        syscall(SYS_close_range, 3u, ~0u, 0);
    else
        close_range(3, ~0u, 0);
    step(404);
    closefrom(3);
    step(505);
    return 0;
}
