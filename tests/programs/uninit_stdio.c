/* What every program does with stdio: fprintf and fwrite of initialised
 * data to a file, fclose; then an fgets loop over the file (strlen and
 * memchr read whole vectors past the end of the data).  Nothing here reads
 * memory that was never written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "uninit_stdio.txt";
    FILE *f = fopen(path, "w");
    if (!f)
        return 1;
    char *line = malloc(100);
    memset(line, 'x', 99);
    line[99] = '\n';
    for (int i = 0; i < 30; i++) {
        fprintf(f, "line %d: ", i);
        fwrite(line, 1, 100, f);
    }
    fclose(f);
    f = fopen(path, "r");
    if (!f)
        return 1;
    char *buf = malloc(256);
    size_t total = 0;
    while (fgets(buf, 256, f))
        total += strlen(buf) + (memchr(buf, 'x', strlen(buf)) != NULL);
    fclose(f);
    printf("%zu\n", total);
    free(buf);
    free(line);
    return 0;
}
