/*
 * ring_read.c - reads 123 bytes of /dev/zero into a heap block through
 * io_uring when the kernel offers it (a read request on the submission
 * ring, its completion's result), and with read(2) when io_uring_setup
 * fails, as programs built on io_uring fall back; prints which way and
 * how many bytes, and exits 0 when all 123 came.
 */
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* One read through a ring of one entry; its result, or -1 without
 * io_uring. */
static long ring_read(int fd, void *buf, unsigned len)
{
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    int ring = (int)syscall(SYS_io_uring_setup, 1, &p);
    if (ring < 0)
        return -1;
    size_t sq_len = p.sq_off.array + p.sq_entries * sizeof(uint32_t);
    size_t cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    char *sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED, ring,
                    IORING_OFF_SQ_RING);
    char *cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED, ring,
                    IORING_OFF_CQ_RING);
    struct io_uring_sqe *sqe =
        mmap(NULL, sizeof *sqe, PROT_READ | PROT_WRITE, MAP_SHARED, ring,
             IORING_OFF_SQES);
    if (sq == MAP_FAILED || cq == MAP_FAILED || sqe == MAP_FAILED)
        return -1;
    memset(sqe, 0, sizeof *sqe);
    sqe->opcode = IORING_OP_READ;
    sqe->fd = fd;
    sqe->addr = (uint64_t)(uintptr_t)buf;
    sqe->len = len;
    uint32_t *tail = (uint32_t *)(sq + p.sq_off.tail);
    uint32_t sq_mask = *(uint32_t *)(sq + p.sq_off.ring_mask);
    ((uint32_t *)(sq + p.sq_off.array))[*tail & sq_mask] = 0;
    __atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
    if (syscall(SYS_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS,
                NULL, 0) < 0)
        return -1;
    uint32_t head = *(uint32_t *)(cq + p.cq_off.head);
    uint32_t mask = *(uint32_t *)(cq + p.cq_off.ring_mask);
    struct io_uring_cqe *cqe =
        (struct io_uring_cqe *)(cq + p.cq_off.cqes) + (head & mask);
    return cqe->res;
}

int main(void)
{
    char *heap = malloc(4096);
    int fd = open("/dev/zero", O_RDONLY);
    if (!heap || fd < 0)
        return 1;
    heap[0] = 1;
    long got = ring_read(fd, heap, 123);
    const char *how = "io_uring";
    if (got == -1) {
        how = "read";
        got = read(fd, heap, 123);
    }
    printf("%s: %ld\n", how, got);
    free(heap);
    return got == 123 ? 0 : 2;
}
