/* C library string and memory functions on global buffers (the same
 * addresses natively and under Valgrind: the program is not PIE). */
#include <string.h>

char gsrc[4096];
char gdst[4096];
const char *volatile words = "selective memory tracing, named by source";

int main(void)
{
    memset(gsrc, 'a', 3000);
    gsrc[2999] = 0;
    memcpy(gdst, gsrc, 1500);
    memmove(gdst + 100, gdst, 900);
    strcpy(gdst + 2000, words);
    strcat(gdst + 2000, words);
    size_t n = strlen(gdst + 2000);
    memset(gdst + 3000, 0, 700);
    return n != 2 * strlen(words);
}
