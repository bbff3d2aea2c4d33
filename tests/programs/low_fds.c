/*
 * low_fds.c - makes every descriptor from 3 to 63 a copy of /dev/null,
 * as a process launcher does to put a child's files at the numbers it
 * expects (chromium's children, a shell's `exec 5>file`); prints how many
 * it made and the first it could not.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
    int null = open("/dev/null", O_RDONLY);
    if (null < 0)
        return 2;
    int made = 0, refused = -1, err = 0;
    for (int fd = 3; fd < 64; fd++) {
        if (fd == null || dup2(null, fd) == fd)
            made++;
        else if (refused < 0)
            refused = fd, err = errno;
    }
    printf("%d made", made);
    if (refused >= 0)
        printf(", %d refused: %s", refused, strerror(err));
    printf("\n");
    return refused >= 0;
}
