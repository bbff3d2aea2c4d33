/* Allocates, then execs itself with an argument; the new image allocates a
 * block of another size.  With "fail" it first tries a missing program. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "second") == 0) {
        void *q = malloc(4321);
        free(q);
        return 3;
    }
    void *p = malloc(1234);
    (void)p;
    if (argc > 1 && strcmp(argv[1], "fail") == 0)
        execl("/nonexistent/program", "x", (char *)NULL);
    execl("/proc/self/exe", argv[0], "second", (char *)NULL);
    return 1;
}
