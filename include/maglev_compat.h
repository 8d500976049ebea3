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

#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/gcd.h>
#include <linux/limits.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/sched.h>
#include <linux/siphash.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/types.h>

#include <asm/byteorder.h>

#include <kunit/visibility.h>

/* The KUnit build counts the work between reschedule points. */
#ifdef MAGLEV_KUNIT
#define MAGLEV_RESCHED_TEST
#endif

#else /* userspace */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <linux/types.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;

#define U32_MAX		UINT32_MAX

#define le16_to_cpu(x)	le16toh(x)
#define le32_to_cpu(x)	le32toh(x)
#define le64_to_cpu(x)	le64toh(x)
#define cpu_to_le32(x)	htole32(x)
#define cpu_to_le64(x)	htole64(x)

#ifndef likely
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#endif

/* Userspace has no once-only state to keep: warn every time. */
#define WARN_ON_ONCE(cond) ({						\
	bool _c = !!(cond);						\
	if (unlikely(_c))						\
		fprintf(stderr, "WARNING: %s:%d\n", __FILE__, __LINE__);	\
	_c;								\
})

#define min(a, b) ({			\
	typeof(a) _a = (a);		\
	typeof(b) _b = (b);		\
	_a < _b ? _a : _b;		\
})

#define max(a, b) ({			\
	typeof(a) _a = (a);		\
	typeof(b) _b = (b);		\
	_a > _b ? _a : _b;		\
})

/* Every test sees the functions the kernel shows only to KUnit. */
#define VISIBLE_IF_KUNIT

static inline u64 div_u64_rem(u64 x, u32 m, u32 *rem)
{
	*rem = (u32)(x % m);
	return x / m;
}

static inline u64 div64_u64(u64 x, u64 m)
{
	return x / m;
}

static inline unsigned long gcd(unsigned long a, unsigned long b)
{
	while (b) {
		unsigned long t = a % b;

		a = b;
		b = t;
	}
	return a;
}

static inline u32 order_base_2(u32 n)
{
	return n > 1 ? 32 - __builtin_clz(n - 1) : 0;
}

static inline void sort(void *base, size_t num, size_t size,
			int (*cmp)(const void *, const void *), void *swap)
{
	(void)swap;
	qsort(base, num, size, cmp);
}

static inline void cond_resched(void)
{
}

/* lib/siphash.c's interface; tools/siphash.c implements it for userspace. */
typedef struct {
	u64 key[2];
} siphash_key_t;

u64 siphash(const void *data, size_t len, const siphash_key_t *key);

/*
 * The kernel's hsiphash_key_t is two unsigned longs; here two u64, of which
 * the 32-bit kernels' form (maglev_hsiphash_32 set) uses the low halves.
 */
typedef struct {
	u64 key[2];
} hsiphash_key_t;

extern bool maglev_hsiphash_32;

u32 hsiphash(const void *data, size_t len, const hsiphash_key_t *key);
u32 hsiphash_1u32(u32 a, const hsiphash_key_t *key);
u32 hsiphash_2u32(u32 a, u32 b, const hsiphash_key_t *key);
u32 hsiphash_4u32(u32 a, u32 b, u32 c, u32 d, const hsiphash_key_t *key);

#endif /* __KERNEL__ */

/*
 * The algorithm reports its work, @steps probes or slots at a time, and
 * each reschedule point; a test build (the KUnit suite, or a host test
 * built with -DMAGLEV_RESCHED_TEST) defines these to measure the stretches
 * between them.
 */
#ifdef MAGLEV_RESCHED_TEST
void maglev_test_steps(u32 steps);
void maglev_test_resched(void);
#else
static inline void maglev_test_steps(u32 steps)
{
	(void)steps;
}

static inline void maglev_test_resched(void)
{
}
#endif

/* Long fills (M up to 5000011) give the CPU up now and then. */
static inline void maglev_cond_resched(void)
{
	cond_resched();
	maglev_test_resched();
}

/* Little-endian loads from unaligned memory, one instruction on x86. */
static inline u64 maglev_le64(const u8 *p)
{
	__le64 v;

	memcpy(&v, p, sizeof(v));
	return le64_to_cpu(v);
}

static inline u32 maglev_le32(const u8 *p)
{
	__le32 v;

	memcpy(&v, p, sizeof(v));
	return le32_to_cpu(v);
}

static inline u16 maglev_le16(const u8 *p)
{
	__le16 v;

	memcpy(&v, p, sizeof(v));
	return le16_to_cpu(v);
}

static inline void maglev_put_le32(u8 *p, u32 v)
{
	__le32 le = cpu_to_le32(v);

	memcpy(p, &le, sizeof(le));
}

#endif /* _MAGLEV_COMPAT_H */
