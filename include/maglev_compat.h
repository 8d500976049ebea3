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

#include <linux/bug.h>
#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/limits.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/sched.h>
#include <linux/siphash.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/types.h>

#include <asm/byteorder.h>

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

/* x / m for 64-bit x and m (no __udivdi3 on 32-bit arches). */
static inline u64 maglev_div64(u64 x, u64 m)
{
	return div64_u64(x, m);
}

#ifdef MAGLEV_KUNIT
/*
 * The KUnit build counts the work between reschedule points
 * (kunit/maglev_table_test.c defines these); see MAGLEV_RESCHED_TEST below.
 */
void maglev_test_steps(u32 steps);
void maglev_test_resched(void);
#define MAGLEV_RESCHED_TEST
#endif

/* Long fills (M up to 5000011) give the CPU up now and then. */
static inline void maglev_cond_resched(void)
{
	cond_resched();
#ifdef MAGLEV_RESCHED_TEST
	maglev_test_resched();
#endif
}

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

static inline u32 maglev_mod64(u64 x, u32 m)
{
	return (u32)(x % m);
}

static inline u64 maglev_div64(u64 x, u64 m)
{
	return x / m;
}

/*
 * A host test built with -DMAGLEV_RESCHED_TEST defines these to count the
 * work between reschedule points.
 */
#ifdef MAGLEV_RESCHED_TEST
void maglev_test_steps(u32 steps);
void maglev_test_resched(void);
#endif

static inline void maglev_cond_resched(void)
{
#ifdef MAGLEV_RESCHED_TEST
	maglev_test_resched();
#endif
}

static inline void maglev_sort(void *base, size_t num, size_t size,
			       int (*cmp)(const void *, const void *))
{
	qsort(base, num, size, cmp);
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
 * The algorithm reports its work here, @steps probes or slots at a time,
 * and calls maglev_cond_resched() at least every MAGLEV_RESCHED_STEPS of
 * them; only a test build (MAGLEV_RESCHED_TEST) looks.
 */
static inline void maglev_count_steps(u32 steps)
{
#ifdef MAGLEV_RESCHED_TEST
	maglev_test_steps(steps);
#else
	(void)steps;
#endif
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
