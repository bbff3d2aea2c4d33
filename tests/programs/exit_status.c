/* Exits with the status given as its argument: by returning from main;
 * with a second argument "exit", by calling exit(); with "raw", by the
 * exit_group system call itself (no exit handlers: memtap's filter traps
 * it and still ends the trace); with "unseen", by an exit_group made from
 * code written at run time, which no filter covers (so no end record in
 * a trace). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* mov $231, %eax; syscall (edi holds the status) */
static const unsigned char exit_code[] = { 0xb8, 0xe7, 0x00, 0x00, 0x00,
                                           0x0f, 0x05 };

int main(int argc, char **argv)
{
    int code = argc > 1 ? atoi(argv[1]) : 0;
    if (argc > 2 && strcmp(argv[2], "raw") == 0)
        syscall(SYS_exit_group, code);
    if (argc > 2 && strcmp(argv[2], "unseen") == 0) {
        unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return 99;
        memcpy(p, exit_code, sizeof exit_code);
        if (mprotect(p, 4096, PROT_READ | PROT_EXEC) != 0)
            return 98;
        ((void (*)(int))(void *)p)(code);
    }
    if (argc > 2 && strcmp(argv[2], "exit") == 0)
        exit(code);
    return code;
}
