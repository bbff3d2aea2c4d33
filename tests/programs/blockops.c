/* Block operations on heap and global buffers, with lengths known in
 * advance: each must appear as one Y, W or G event of that length. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char gsrc[256] = "memtap copies this string";
char gdst[512];

int main(void)
{
    char *heap = malloc(1000);
    if (!heap)
        return 1;
    memset(heap, 'x', 1000);                 /* W 1000 */
    memcpy(gdst, heap, 300);                 /* Y 300 */
    memmove(heap + 10, heap, 500);           /* Y 500 */
    strcpy(gdst, gsrc);                      /* Y 26 (25 + NUL) */
    strcat(gdst, "!");                       /* Y 2 at gdst+25 */
    strncpy(heap, gsrc, 40);                 /* Y 40 */
    int fd = open("/dev/zero", O_RDONLY);
    if (fd < 0 || read(fd, heap, 123) != 123) /* W 123 */
        return 2;
    close(fd);
    fd = open("/dev/null", O_WRONLY);
    if (fd < 0 || write(fd, gsrc, 77) != 77)  /* G 77 */
        return 3;
    close(fd);
    FILE *f = fopen("/dev/null", "w");
    if (!f || fwrite(heap, 1, 64, f) != 64)  /* G 64 */
        return 4;
    fclose(f);
    free(heap);
    return 0;
}
