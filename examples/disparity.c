/*
 * disparity.c - memtap's bundled example, modelled on the disparity
 * benchmark of the MadT paper (Listing 1): findDisparity() over 10x13
 * images held in structures whose `data` field is at offset 8.
 *
 *   memtap run --text disparity.txt -- ./disparity
 */
#include <stdio.h>
#include <stdlib.h>

#define ROWS 10
#define COLS 13
#define LEVELS 4

typedef struct {
    int width;
    int height;
    float data[];
} F2D;

typedef struct {
    int width;
    int height;
    int data[];
} I2D;

#define subsref(a, i, j) a->data[(i) * a->width + (j)]

/* Global settings, named by memtap down to the field and element. */
struct settings {
    int levels;
    int shift[LEVELS];
} settings = { LEVELS, { 0, 1, 2, 3 } };

F2D *fMallocHandle(int rows, int cols)
{
    F2D *out = malloc(sizeof(F2D) + sizeof(float) * rows * cols);
    if (!out)
        exit(1);
    out->width = cols;
    out->height = rows;
    return out;
}

I2D *iMallocHandle(int rows, int cols)
{
    I2D *out = malloc(sizeof(I2D) + sizeof(int) * rows * cols);
    if (!out)
        exit(1);
    out->width = cols;
    out->height = rows;
    return out;
}

void findDisparity(F2D *retSAD, F2D *minSAD, I2D *retDisp, int level,
                   int nr, int nc)
{
    int i, j, a, b;
    for (i = 0; i < nr; i++) {
        for (j = 0; j < nc; j++) {
            a = subsref(retSAD, i, j);
            b = subsref(minSAD, i, j);
            if (a < b) {
                subsref(minSAD, i, j) = a;
                subsref(retDisp, i, j) = level;
            }
        }
    }
}

/* Sum of absolute differences between left and right shifted by `shift`. */
static void computeSAD(const F2D *left, const F2D *right, int shift,
                       F2D *out)
{
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++) {
            int k = j + shift < COLS ? j + shift : COLS - 1;
            float d = subsref(left, i, j) - subsref(right, i, k);
            subsref(out, i, j) = d < 0 ? -d : d;
        }
}

int main(void)
{
    F2D *left = fMallocHandle(ROWS, COLS);
    F2D *right = fMallocHandle(ROWS, COLS);
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++) {
            subsref(left, i, j) = (float)((i * 7 + j * 3) % 17);
            subsref(right, i, j) = (float)((i * 7 + j * 3 + 2) % 17);
        }
    F2D *minSAD = fMallocHandle(ROWS, COLS);
    I2D *retDisp = iMallocHandle(ROWS, COLS);
    for (int i = 0; i < ROWS * COLS; i++) {
        minSAD->data[i] = 1e9f;
        retDisp->data[i] = -1;
    }
    for (int level = 0; level < settings.levels; level++) {
        F2D *retSAD = fMallocHandle(ROWS, COLS);
        computeSAD(left, right, settings.shift[level], retSAD);
        findDisparity(retSAD, minSAD, retDisp, level, ROWS, COLS);
        free(retSAD);
    }
    long sum = 0;
    for (int i = 0; i < ROWS * COLS; i++)
        sum += retDisp->data[i];
    printf("disparity checksum: %ld\n", sum);
    free(left);
    free(right);
    free(minSAD);
    free(retDisp);
    return 0;
}
