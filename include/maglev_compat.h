/* SPDX-License-Identifier: GPL-2.0 */
/*
 * maglev_compat.h - the few kernel facilities maglev_table.c needs, so that
 * the same file compiles unchanged in the kernel and in userspace (the model
 * is mm/vma_internal.h and tools/testing/vma/vma_internal.h).
 *
 * This is the only place that knows which side it is built for.
 */
#ifndef _MAGLEV_COMPAT_H
#define _MAGLEV_COMPAT_H

#ifdef __KERNEL__

#include <linux/types.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/string.h>
#include <linux/bug.h>
#include <linux/sort.h>

static inline void maglev_sort(void *base, size_t num, size_t size,
			       int (*cmp)(const void *, const void *))
{
	sort(base, num, size, cmp, NULL);
}

/* x mod m for a 64-bit x and a 32-bit m; plain % is not on every arch. */
static inline u32 maglev_mod64(u64 x, u32 m)
{
	u32 rem;

	div_u64_rem(x, m, &rem);
	return rem;
}

#else /* userspace */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;

#ifndef likely
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#endif

#ifndef WARN_ON_ONCE
#define WARN_ON_ONCE(cond)	unlikely(!!(cond))
#endif

#ifndef min
#define min(a, b)	((a) < (b) ? (a) : (b))
#define max(a, b)	((a) > (b) ? (a) : (b))
#endif

#ifndef DIV_ROUND_UP
#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#endif

#ifndef U32_MAX
#define U32_MAX		UINT32_MAX
#endif

static inline u32 maglev_mod64(u64 x, u32 m)
{
	return (u32)(x % m);
}

static inline void maglev_sort(void *base, size_t num, size_t size,
			       int (*cmp)(const void *, const void *))
{
	qsort(base, num, size, cmp);
}

#endif /* __KERNEL__ */

#endif /* _MAGLEV_COMPAT_H */
