// The churn of ConnectionChurnTests (Tests/ThumbTestSupport/ConnectionChurn.swift)
// in C, to measure a release build: THREADS threads each connect to
// 127.0.0.1:PORT, send one request that closes the connection (HTTP/1.1 with
// Connection: close and HTTP/1.0, alternating), read the answer to end of
// stream and close, for SECONDS. Prints answered and failed exchanges and
// the rate. Usage: churn PORT THREADS SECONDS [TARGET]
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

enum { MAX_THREADS = 64 };
static int port;
static double seconds;
static char request11[1024], request10[1024];
static long answered[MAX_THREADS], failed[MAX_THREADS];

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void *run(void *arg) {
    long me = (long)arg;
    double end = now() + seconds;
    char buffer[4096];
    for (long i = 0; now() < end; i++) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct timeval timeout = {10, 0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
        struct sockaddr_in a = {0};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
        const char *request = (i + me) % 2 ? request10 : request11;
        size_t length = strlen(request);
        if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0 || send(fd, request, length, MSG_NOSIGNAL) != (ssize_t)length) {
            failed[me]++;
            close(fd);
            continue;
        }
        int ok = 0, first = 1;
        ssize_t n;
        while ((n = recv(fd, buffer, sizeof buffer, 0)) > 0) {
            if (first) ok = n >= 12 && memcmp(buffer, "HTTP/1.1 200", 12) == 0;
            first = 0;
        }
        if (n == 0 && ok) answered[me]++; else failed[me]++;
        close(fd);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: churn PORT THREADS SECONDS [TARGET]\n"); return 2; }
    port = atoi(argv[1]);
    int threads = atoi(argv[2]);
    seconds = atof(argv[3]);
    const char *target = argc > 4 ? argv[4] : "/healthz";
    if (threads < 1 || threads > MAX_THREADS) { fprintf(stderr, "THREADS: 1...%d\n", MAX_THREADS); return 2; }
    snprintf(request11, sizeof request11, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", target);
    snprintf(request10, sizeof request10, "GET %s HTTP/1.0\r\n\r\n", target);
    pthread_t t[MAX_THREADS];
    double start = now();
    for (long i = 0; i < threads; i++) pthread_create(&t[i], NULL, run, (void *)i);
    long a = 0, f = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        a += answered[i];
        f += failed[i];
    }
    double elapsed = now() - start;
    printf("%ld answered, %ld failed in %.1f s: %.0f/s\n", a, f, elapsed, a / elapsed);
    return 0;
}
