/* SPDX-License-Identifier: GPL-2.0 */
/*
 * unit.h - the little harness the host unit tests share: named tests that
 * print "ok"/"not ok", checks that explain a failure on stderr, a
 * deterministic PRNG (xorshift64*, so failures reproduce) and the closing
 * "N passed, N failed" line.  Include it once, from the test's C file.
 * UNIT_RNG_SEED, defined before the include, picks the PRNG's seed.
 */
#ifndef _UNIT_H
#define _UNIT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "maglev_compat.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

#ifndef UNIT_RNG_SEED
#define UNIT_RNG_SEED	0x2545f4914f6cdd1dULL
#endif

static unsigned int passed, failed;
static const char *cur_test;
static bool cur_ok;
static u64 rng_state = UNIT_RNG_SEED;

/* Fail the current test (run()) with a message unless @cond holds. */
static inline __attribute__((format(printf, 2, 3)))
void check(bool cond, const char *fmt, ...)
{
	va_list ap;

	if (cond)
		return;
	cur_ok = false;
	fprintf(stderr, "  %s: ", cur_test);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Count a test's outcome and print its "ok"/"not ok" line. */
static inline void result(bool ok, const char *name)
{
	printf("%s - %s\n", ok ? "ok" : "not ok", name);
	if (ok)
		passed++;
	else
		failed++;
}

/* Run one named test made of check() calls. */
static inline void run(const char *name, void (*fn)(void))
{
	cur_test = name;
	cur_ok = true;
	fn();
	result(cur_ok, name);
}

static inline u64 rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

/* Print the closing line; the exit status of main(). */
static inline int unit_summary(void)
{
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}

#endif /* _UNIT_H */
