/*
 * Single-thread memset and memcpy bandwidth over arrays of a given size, the
 * reference the benchmark tests compare the stride results with.
 *
 * usage: copy_bandwidth BYTES REPS
 * prints {"memset_GBps": ..., "memcpy_GBps": ...}: bytes set (copied) per
 * second from the fastest repetition, GB = 1e9 B.  Both arrays are written
 * once before timing, so no page faults are timed.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: copy_bandwidth BYTES REPS\n");
        return 2;
    }
    size_t bytes = strtoull(argv[1], NULL, 10);
    int reps = atoi(argv[2]);
    char *source = malloc(bytes), *target = malloc(bytes);
    if (!source || !target || reps < 1) {
        fprintf(stderr, "copy_bandwidth: cannot allocate 2 x %zu bytes\n", bytes);
        return 1;
    }
    memset(source, 1, bytes);
    memset(target, 2, bytes);
    double best_set = 1e30, best_copy = 1e30;
    for (int rep = 0; rep < reps; rep++) {
        double start = now_seconds();
        memset(source, rep + 3, bytes);
        double set_seconds = now_seconds() - start;
        start = now_seconds();
        memcpy(target, source, bytes);
        double copy_seconds = now_seconds() - start;
        best_set = set_seconds < best_set ? set_seconds : best_set;
        best_copy = copy_seconds < best_copy ? copy_seconds : best_copy;
    }
    /* Reading the arrays back keeps the stores observable. */
    if (target[bytes / 2] != (char)(reps + 2) || source[bytes - 1] != (char)(reps + 2)) {
        fprintf(stderr, "copy_bandwidth: the arrays do not hold what was written\n");
        return 1;
    }
    printf("{\"memset_GBps\": %.6f, \"memcpy_GBps\": %.6f}\n", (double)bytes / best_set / 1e9,
           (double)bytes / best_copy / 1e9);
    free(source);
    free(target);
    return 0;
}
