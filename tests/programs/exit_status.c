/* Exits with the status given as its argument: by returning from main;
 * with a second argument "exit", by calling exit(); with "raw", by the
 * exit_group system call itself (no exit handlers, so no end record in a
 * trace). */
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int code = argc > 1 ? atoi(argv[1]) : 0;
    if (argc > 2 && strcmp(argv[2], "raw") == 0)
        syscall(SYS_exit_group, code);
    if (argc > 2 && strcmp(argv[2], "exit") == 0)
        exit(code);
    return code;
}
