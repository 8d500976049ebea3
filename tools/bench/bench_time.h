/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench_time.h - the clock and the sort of the host benchmarks
 * (bench-host.c, build-vs-old.c).
 */
#ifndef BENCH_TIME_H
#define BENCH_TIME_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds on @clock (CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID). */
static inline uint64_t bench_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* qsort() comparison of two uint64_t. */
static inline int bench_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

#endif /* BENCH_TIME_H */
