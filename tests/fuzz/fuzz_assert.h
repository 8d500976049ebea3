/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fuzz_assert.h - the fuzz targets' assertion: on failure it names the
 * target (FUZZ_NAME), the place and the condition, prints the message and
 * aborts, which libFuzzer reports as a crash with the input that caused it.
 */
#ifndef _FUZZ_ASSERT_H
#define _FUZZ_ASSERT_H

#include <stdio.h>
#include <stdlib.h>

#define fz_assert(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, FUZZ_NAME ": %s:%d: %s: ",	\
				__FILE__, __LINE__, #cond);		\
			fprintf(stderr, __VA_ARGS__);			\
			fputc('\n', stderr);				\
			abort();					\
		}							\
	} while (0)

#endif /* _FUZZ_ASSERT_H */
