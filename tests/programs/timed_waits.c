/* Threads that block on words and buffers in the heap: 8 threads take
 * turns through a condition variable with a timed wait, a semaphore wait
 * times out, and a thread sends 1000 bytes through a socket pair into a
 * heap buffer the main thread receives into.  Prints "ok" when every
 * result is what it must be. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define THREADS 8

typedef struct turns {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int next;
} turns;

static turns *t;
static int sockets[2];

static void in_ms(struct timespec *ts, long ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_nsec += ms * 1000000;
    ts->tv_sec += ts->tv_nsec / 1000000000;
    ts->tv_nsec %= 1000000000;
}

static void *take_turn(void *arg)
{
    int id = (int)(long)arg;
    pthread_mutex_lock(&t->lock);
    while (t->next != id) {
        struct timespec ts;
        in_ms(&ts, 1000);
        pthread_cond_timedwait(&t->changed, &t->lock, &ts);
    }
    t->next++;
    pthread_cond_broadcast(&t->changed);
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

static void *sender(void *arg)
{
    char *out = malloc(1000);
    if (!out)
        return arg;
    for (int i = 0; i < 1000; i++)
        out[i] = (char)(i % 251);
    ssize_t n = send(sockets[0], out, 1000, 0);
    free(out);
    return n == 1000 ? NULL : arg;
}

int main(void)
{
    t = calloc(1, sizeof *t);
    sem_t *sem = malloc(sizeof *sem);
    char *in = malloc(1000);
    if (!t || !sem || !in || sem_init(sem, 0, 0) != 0 ||
        socketpair(AF_UNIX, SOCK_STREAM, 0, sockets) != 0)
        return 2;
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->changed, NULL);
    pthread_t th[THREADS], s;
    for (long i = THREADS - 1; i >= 0; i--)
        pthread_create(&th[i], NULL, take_turn, (void *)i);
    pthread_create(&s, NULL, sender, (void *)1);
    size_t got = 0;
    while (got < 1000) {
        ssize_t n = recv(sockets[1], in + got, 1000 - got, 0);
        if (n <= 0)
            return 3;
        got += (size_t)n;
    }
    int same = 1;
    for (int i = 0; i < 1000; i++)
        same &= in[i] == (char)(i % 251);
    struct timespec before, ts, after;
    clock_gettime(CLOCK_MONOTONIC, &before);
    in_ms(&ts, 30);
    int r = sem_timedwait(sem, &ts);
    int timed_out = r != 0 && errno == ETIMEDOUT;
    clock_gettime(CLOCK_MONOTONIC, &after);
    long waited = (after.tv_sec - before.tv_sec) * 1000 +
                  (after.tv_nsec - before.tv_nsec) / 1000000;
    void *sent;
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    pthread_join(s, &sent);
    int ok = same && timed_out && waited >= 25 && t->next == THREADS && !sent;
    printf("%s\n", ok ? "ok" : "wrong");
    if (!ok)
        fprintf(stderr, "same %d timed_out %d waited %ld next %d sent %p\n",
                same, timed_out, waited, t->next, sent);
    return !ok;
}
