/*
 * mmsg.c - two datagrams sent with one sendmmsg from two heap blocks (5
 * and 7 bytes) over a socket pair and received with one recvmmsg into two
 * other heap blocks (64 bytes each), as a resolver sends its A and AAAA
 * queries; prints the lengths received and exits 0 when both came whole.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int main(void)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) != 0)
        return 1;
    char *out[2] = { malloc(5), malloc(7) };
    char *in[2] = { malloc(64), malloc(64) };
    if (!out[0] || !out[1] || !in[0] || !in[1])
        return 1;
    memcpy(out[0], "first", 5);
    memcpy(out[1], "second!", 7);
    struct iovec siov[2] = { { out[0], 5 }, { out[1], 7 } };
    struct iovec riov[2] = { { in[0], 64 }, { in[1], 64 } };
    struct mmsghdr send[2], recv[2];
    memset(send, 0, sizeof send);
    memset(recv, 0, sizeof recv);
    for (int i = 0; i < 2; i++) {
        send[i].msg_hdr.msg_iov = &siov[i];
        send[i].msg_hdr.msg_iovlen = 1;
        recv[i].msg_hdr.msg_iov = &riov[i];
        recv[i].msg_hdr.msg_iovlen = 1;
    }
    int sent = sendmmsg(sv[0], send, 2, 0);
    int got = recvmmsg(sv[1], recv, 2, 0, NULL);
    printf("sent %d, received %d: %u and %u bytes\n", sent, got,
           recv[0].msg_len, recv[1].msg_len);
    int whole = got == 2 && memcmp(in[0], "first", 5) == 0 &&
                memcmp(in[1], "second!", 7) == 0;
    for (int i = 0; i < 2; i++) {
        free(out[i]);
        free(in[i]);
    }
    return whole ? 0 : 2;
}
