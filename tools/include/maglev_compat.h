/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace stand-ins for the kernel facilities maglev_table.c uses (the
 * kernel side of this header, in include/, includes the kernel's own), and
 * a few more the tools share.  Userspace builds put tools/include before
 * include on the include path, as tools/testing/vma/vma_internal.h stands
 * in for mm/vma_internal.h.
 */
#ifndef _MAGLEV_COMPAT_H
#define _MAGLEV_COMPAT_H

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

/* tests/resched_test.c defines its own, to measure the stretches between. */
#ifdef MAGLEV_RESCHED_TEST
void cond_resched(void);
#else
static inline void cond_resched(void)
{
}
#endif

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

/* <linux/unaligned.h>: little-endian loads and stores at any address. */
static inline u64 get_unaligned_le64(const void *p)
{
	u64 v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

static inline u32 get_unaligned_le32(const void *p)
{
	u32 v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static inline u16 get_unaligned_le16(const void *p)
{
	u16 v;

	memcpy(&v, p, sizeof(v));
	return le16toh(v);
}

static inline void put_unaligned_le32(u32 v, void *p)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

#endif /* _MAGLEV_COMPAT_H */
