// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "maglev_table": the Maglev fill of maglev_table.c, run inside
 * the kernel it is built for.
 */
#include <kunit/resource.h>
#include <kunit/test.h>

#include <linux/array_size.h>
#include <linux/bitmap.h>
#include <linux/bitops.h>
#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/gfp.h>
#include <linux/limits.h>
#include <linux/math.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/sprintf.h>
#include <linux/string.h>
#include <linux/time64.h>
#include <linux/timekeeping.h>
#include <linux/types.h>

#include "maglev_table.h"

static void kvfree_action(void *p)
{
	kvfree(p);
}

static void *test_alloc(struct kunit *test, size_t n)
{
	void *p = kvzalloc(n, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, kvfree_action, p));
	return p;
}

struct build {
	struct maglev_backend *b;
	struct maglev_table *t;
	void *work;
	u16 *own;	/* the slots' owners, read from the packed words */
	u32 n;
	u32 size;
};

static struct build *build_alloc(struct kunit *test, u32 size, u32 n)
{
	struct build *bd = test_alloc(test, sizeof(*bd));

	bd->b = test_alloc(test, (n + 1) * sizeof(*bd->b));
	bd->t = test_alloc(test, maglev_table_bytes(size, n));
	bd->work = test_alloc(test, maglev_work_bytes(size, n + 8));
	bd->own = test_alloc(test, size * sizeof(u16));
	bd->n = n;
	bd->size = size;
	return bd;
}

/* The width of "Packed slots": the smallest W with 2^W >= n. */
static u32 test_width(u32 n)
{
	u32 w;

	if (n <= 1)
		return 0;
	for (w = 1; (1ULL << w) < n; w++)
		;
	return w;
}

/*
 * The owner of @slot as "Packed slots" of docs/specification.md lays it
 * out, read without maglev_table_get().
 */
static u32 test_owner(const struct maglev_table *t, u32 slot)
{
	u32 w = test_width(t->nr_backends), v = 0, k;
	u64 bit = (u64)slot * w;

	if (!t->nr_filled)
		return MAGLEV_NONE;
	/* Bit by bit: bit k of the string is bit k % 8 of byte k / 8. */
	for (k = 0; k < w; k++, bit++)
		v |= (u32)(t->byte[bit >> 3] >> (bit & 7) & 1) << k;
	return v;
}

/*
 * Read every owner into @bd->own; maglev_table_get() must agree with the
 * layout.  Return: the number of slots where it does not.
 */
static u32 build_unpack(struct build *bd)
{
	u32 bad = 0, s;

	for (s = 0; s < bd->size; s++) {
		bd->own[s] = test_owner(bd->t, s);
		bad += maglev_table_get(bd->t, s) != bd->own[s];
	}
	return bad;
}

static u64 test_mix(u64 x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* The digest of the specification, over the owners test_owner() reads. */
static u64 test_digest(const struct maglev_table *t,
		       const struct maglev_backend *b, u32 n)
{
	u64 d = test_mix(0x6d61676c65760001ULL ^ t->size);
	u32 i, s, j;

	d = test_mix(d ^ n);
	for (i = 0; i < n; i++)
		d = maglev_hash(b[i].name, b[i].name_len, d);
	for (s = 0; s < t->size; s += 4) {
		u64 g = 0;

		for (j = 0; j < 4; j++) {
			u64 o = s + j < t->size ? test_owner(t, s + j) : 0xffff;

			g |= o << (16 * j);
		}
		d = test_mix(d ^ g);
	}
	return d;
}

static void name_ip(struct maglev_backend *b, u32 i)
{
	b->name_len = scnprintf(b->name, sizeof(b->name), "10.%u.%u.%u:80",
				i >> 16 & 255, i >> 8 & 255, i & 255);
}

/* Sort the backends and build, as every caller does. */
static int build_run(struct build *bd)
{
	int err;

	sort(bd->b, bd->n, sizeof(*bd->b), maglev_backend_cmp, NULL);
	err = maglev_build(bd->t, bd->size, bd->b, bd->n, bd->work, NULL, NULL);

	if (!err && build_unpack(bd))
		return -EPROTO;	/* maglev_table_get() is not the layout */
	return err;
}

/* A small deterministic generator, so failures reproduce. */
static u32 lcg(u64 *state)
{
	*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
	return *state >> 33;
}

/* ------------------------------------------------------------------ */

struct example {
	const char *desc;
	char names[3];
	u32 offset[3];
	u32 skip[3];
	const char *want;
};

static const struct example examples[] = {
	{ "seed 000: x y z", "xyz", { 2, 5, 0 }, { 3, 2, 1 }, "zxxzyyx" },
	{ "seed 001: B0 B1 B2", "012", { 3, 0, 3 }, { 4, 2, 1 }, "1010220" },
	{ "seed 003: A B C", "ABC", { 3, 0, 5 }, { 2, 3, 1 }, "BCAAACB" },
};

static void example_desc(const struct example *e, char *desc)
{
	strscpy(desc, e->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(example, examples, example_desc);

static void maglev_worked_example_test(struct kunit *test)
{
	const struct example *e = test->param_value;
	struct build *bd = build_alloc(test, 7, 3);
	char got[8];
	u32 i;

	for (i = 0; i < 3; i++) {
		bd->b[i].name[0] = e->names[i];
		bd->b[i].name_len = 1;
		bd->b[i].offset = e->offset[i];
		bd->b[i].skip = e->skip[i];
		bd->b[i].turns = 1;
	}
	KUNIT_EXPECT_EQ(test, maglev_fill(bd->own, 7, bd->b, 3, bd->work, NULL),
			7U);
	for (i = 0; i < 7; i++)
		got[i] = bd->own[i] < 3 ? e->names[bd->own[i]] : '?';
	got[7] = '\0';
	KUNIT_EXPECT_STREQ(test, got, e->want);
}

/* ------------------------------------------------------------------ */

static const u32 perm_sizes[] = { 251, 4093, 65537 };

static void size_desc(const u32 *m, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "M = %u", *m);
}

KUNIT_ARRAY_PARAM(perm_size, perm_sizes, size_desc);

/*
 * Every preference sequence maglev_prepare() gives a backend (its offset
 * and skip) visits all M slots exactly once.
 */
static void maglev_sequence_permutation_test(struct kunit *test)
{
	u32 m = *(const u32 *)test->param_value, n = 40;
	unsigned long *seen = test_alloc(test, BITS_TO_LONGS(m) *
					 sizeof(long));
	struct maglev_backend *b = test_alloc(test, n * sizeof(*b));
	u32 i, j;

	for (i = 0; i < n; i++) {
		b[i].name_len = snprintf(b[i].name, sizeof(b[i].name),
					 "10.0.%u.%u:80", i / 200, i % 200);
		b[i].weight = 1;
	}
	sort(b, n, sizeof(*b), maglev_backend_cmp, NULL);
	KUNIT_ASSERT_EQ(test, maglev_prepare(b, n, m, NULL), 0);
	for (i = 0; i < n; i++) {
		u32 pos = b[i].offset;

		KUNIT_ASSERT_LT(test, pos, m);
		KUNIT_ASSERT_GE(test, b[i].skip, 1U);
		KUNIT_ASSERT_LT(test, b[i].skip, m);
		bitmap_zero(seen, m);
		for (j = 0; j < m; j++) {
			__set_bit(pos, seen);
			pos += b[i].skip;
			if (pos >= m)
				pos -= m;
		}
		KUNIT_EXPECT_EQ_MSG(test, bitmap_weight(seen, m), m,
				    "%.*s", (int)b[i].name_len, b[i].name);
	}
}

/* ------------------------------------------------------------------ */

static const u32 balance_ns[] = { 1, 2, 3, 7, 100, 1000 };

static void n_desc(const u32 *n, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "N = %u", *n);
}

KUNIT_ARRAY_PARAM(balance, balance_ns, n_desc);

/* Unweighted slot counts differ by at most one. */
static void maglev_balance_test(struct kunit *test)
{
	u32 n = *(const u32 *)test->param_value;
	struct build *bd = build_alloc(test, 65537, n);
	u32 lo = U32_MAX, hi = 0, sum = 0, i;

	for (i = 0; i < n; i++) {
		name_ip(&bd->b[i], i);
		bd->b[i].weight = 1;
	}
	KUNIT_ASSERT_EQ(test, build_run(bd), 0);
	for (i = 0; i < n; i++) {
		lo = min(lo, bd->b[i].slots);
		hi = max(hi, bd->b[i].slots);
		sum += bd->b[i].slots;
	}
	KUNIT_EXPECT_LE(test, hi - lo, 1U);
	KUNIT_EXPECT_EQ(test, sum, 65537U);
}

/* ------------------------------------------------------------------ */

/* Shuffled insertion orders give the same table. */
static void maglev_order_independence_test(struct kunit *test)
{
	struct build *bd = build_alloc(test, 65537, 64);
	u16 *first = test_alloc(test, 65537 * sizeof(u16));
	u64 state = 42, digest;
	u32 i, r;

	for (i = 0; i < bd->n; i++) {
		name_ip(&bd->b[i], i * 7919);
		bd->b[i].weight = 1 + i % 4;
	}
	KUNIT_ASSERT_EQ(test, build_run(bd), 0);
	digest = bd->t->digest;
	memcpy(first, bd->own, 65537 * sizeof(u16));
	for (r = 0; r < 4; r++) {
		for (i = bd->n; i > 1; i--) {
			/* swap() evaluates its arguments twice. */
			u32 j = lcg(&state) % i;

			swap(bd->b[i - 1], bd->b[j]);
		}
		KUNIT_ASSERT_EQ(test, build_run(bd), 0);
		KUNIT_EXPECT_EQ(test, bd->t->digest, digest);
		KUNIT_EXPECT_EQ(test, memcmp(first, bd->own,
					     65537 * sizeof(u16)), 0);
	}
}

/* ------------------------------------------------------------------ */

/* 5 -> 6 -> 5 backends at M = 65537 moves 16% to 18% of the slots. */
static void maglev_churn_test(struct kunit *test)
{
	struct build *a = build_alloc(test, 65537, 5);
	struct build *b = build_alloc(test, 65537, 6);
	struct build *c = build_alloc(test, 65537, 5);
	u32 lo = 65537 * 16 / 100, hi = 65537 * 18 / 100, up, down, i;

	for (i = 0; i < 6; i++) {
		b->b[i].name_len = scnprintf(b->b[i].name, MAGLEV_NAME_MAX,
					     "backend-%u", i);
		b->b[i].weight = 1;
		if (i < 5)
			a->b[i] = b->b[i];
	}
	c->b[0] = b->b[0];
	for (i = 1; i < 5; i++)
		c->b[i] = b->b[i + 1];
	KUNIT_ASSERT_EQ(test, build_run(a), 0);
	KUNIT_ASSERT_EQ(test, build_run(b), 0);
	KUNIT_ASSERT_EQ(test, build_run(c), 0);
	up = maglev_churn(a->t, a->b, 5, b->t, b->b, 6, b->work);
	down = maglev_churn(b->t, b->b, 6, c->t, c->b, 5, b->work);
	KUNIT_EXPECT_GE(test, up, lo);
	KUNIT_EXPECT_LE(test, up, hi);
	KUNIT_EXPECT_GE(test, down, lo);
	KUNIT_EXPECT_LE(test, down, hi);
	KUNIT_EXPECT_EQ(test, maglev_churn(b->t, b->b, 6, b->t, b->b, 6,
					   b->work), 0U);
}

/* ------------------------------------------------------------------ */

struct weights {
	const char *desc;
	u32 size;
	u32 w[6];
};

static const struct weights weight_cases[] = {
	{ "1:2:3:4:5:6", 2521, { 1, 2, 3, 4, 5, 6 } },
	{ "gcd 10", 65537, { 10, 20, 30, 40, 50, 60 } },
	{ "one heavy", 10007, { 1, 1, 1, 1, 1, 95 } },
	{ "with zeros", 4099, { 0, 7, 0, 13, 20, 0 } },
};

static void weights_desc(const struct weights *w, char *desc)
{
	strscpy(desc, w->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(weights, weight_cases, weights_desc);

/*
 * With M >= 100 x (turns per round) every backend's slot share is within
 * one percentage point of its weight share; weight 0 gets no slot.
 */
static void maglev_weight_share_test(struct kunit *test)
{
	const struct weights *wc = test->param_value;
	struct build *bd = build_alloc(test, wc->size, 6);
	u32 total = 0, i;

	for (i = 0; i < 6; i++) {
		name_ip(&bd->b[i], i);
		bd->b[i].weight = wc->w[i];
		total += wc->w[i];
	}
	KUNIT_ASSERT_EQ(test, build_run(bd), 0);
	for (i = 0; i < 6; i++) {
		/* In hundredths of a percent, to stay in integers. */
		s64 share = div_u64((u64)bd->b[i].slots * 10000, wc->size);
		s64 want = div_u64((u64)bd->b[i].weight * 10000, total);

		if (!bd->b[i].weight)
			KUNIT_EXPECT_EQ(test, bd->b[i].slots, 0U);
		KUNIT_EXPECT_LT_MSG(test, abs(share - want), 100LL,
				    "backend %u share %lld want %lld", i,
				    share, want);
	}
	KUNIT_EXPECT_EQ(test, bd->t->nr_filled, wc->size);
}

/* ------------------------------------------------------------------ */

/* More backends than slots is an error, and the table is left alone. */
static void maglev_too_many_backends_test(struct kunit *test)
{
	struct build *bd = build_alloc(test, 251, 252);
	const char *why = NULL;
	u64 digest;
	u32 i;

	for (i = 0; i < 252; i++) {
		name_ip(&bd->b[i], i);
		bd->b[i].weight = 1;
	}
	sort(bd->b, 252, sizeof(*bd->b), maglev_backend_cmp, NULL);
	KUNIT_ASSERT_EQ(test, maglev_build(bd->t, 251, bd->b, 251, bd->work,
					   NULL, &why), 0);
	digest = bd->t->digest;
	KUNIT_EXPECT_EQ(test, maglev_build(bd->t, 251, bd->b, 252, bd->work,
					   NULL, &why), -E2BIG);
	KUNIT_EXPECT_NOT_NULL(test, why);
	KUNIT_EXPECT_EQ(test, bd->t->digest, digest);
	KUNIT_EXPECT_EQ(test, test_digest(bd->t, bd->b, 251), digest);
}

/* No backends, or only weight 0: every lookup reports no backend. */
static void maglev_empty_test(struct kunit *test)
{
	struct build *bd = build_alloc(test, 251, 2);
	u64 state = 7;
	u32 i;

	bd->n = 0;
	KUNIT_ASSERT_EQ(test, build_run(bd), 0);
	KUNIT_EXPECT_EQ(test, bd->t->nr_filled, 0U);
	name_ip(&bd->b[0], 1);
	name_ip(&bd->b[1], 2);
	bd->n = 2;
	KUNIT_ASSERT_EQ(test, build_run(bd), 0);
	KUNIT_EXPECT_EQ(test, bd->t->nr_filled, 0U);
	for (i = 0; i < 100; i++)
		KUNIT_EXPECT_EQ(test, maglev_lookup(bd->t, lcg(&state) << 1 |
						    (i & 1)),
				MAGLEV_NONE);
}

/* ------------------------------------------------------------------ */

struct prime_case {
	u32 n;
	bool prime;
};

static const struct prime_case prime_cases[] = {
	{ 0, false }, { 1, false }, { 4, false }, { 65535, false },
	{ 65536, false }, { 2, true }, { 251, true }, { 65537, true },
	{ 5000011, true },
};

static void prime_desc(const struct prime_case *p, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%u", p->n);
}

KUNIT_ARRAY_PARAM(prime, prime_cases, prime_desc);

static void maglev_prime_test(struct kunit *test)
{
	const struct prime_case *p = test->param_value;

	KUNIT_EXPECT_EQ(test, maglev_is_prime(p->n), p->prime);
	if (p->n < MAGLEV_SIZE_MIN || !p->prime)
		KUNIT_EXPECT_EQ(test, maglev_check_size(p->n, NULL), -EINVAL);
	else
		KUNIT_EXPECT_EQ(test, maglev_check_size(p->n, NULL), 0);
}

/* ------------------------------------------------------------------ */

/* Draining moves only the drained backend's slots; restoring undoes it. */
static void maglev_drain_test(struct kunit *test)
{
	struct build *bd = build_alloc(test, 65537, 6);
	u16 *before = test_alloc(test, 65537 * sizeof(u16));
	u32 i, moved = 0, kept = 0;
	u64 digest;

	for (i = 0; i < 6; i++) {
		name_ip(&bd->b[i], i);
		bd->b[i].weight = 3;
	}
	KUNIT_ASSERT_EQ(test, build_run(bd), 0);
	digest = bd->t->digest;
	memcpy(before, bd->own, 65537 * sizeof(u16));
	bd->b[2].drain_weight = 3;
	bd->b[2].weight = 0;
	KUNIT_ASSERT_EQ(test, build_run(bd), 0);
	KUNIT_EXPECT_EQ(test, bd->b[2].slots, 0U);
	for (i = 0; i < 65537; i++) {
		if (before[i] == 2)
			moved += bd->own[i] != 2 &&
				 bd->own[i] != MAGLEV_NONE;
		else
			kept += bd->own[i] == before[i];
	}
	KUNIT_EXPECT_EQ(test, moved + kept, 65537U);
	bd->b[2].weight = 3;
	bd->b[2].drain_weight = 0;
	KUNIT_ASSERT_EQ(test, build_run(bd), 0);
	KUNIT_EXPECT_EQ(test, bd->t->digest, digest);
}

/* ------------------------------------------------------------------ */

/* The plain fill of seed 000, one modulo per probe. */
static void plain_fill(u16 *slot, u32 m, const struct maglev_backend *b,
		       u32 n, u32 *next)
{
	u32 filled = 0, i, k;

	memset(slot, 0xff, m * sizeof(u16));
	memset(next, 0, n * sizeof(u32));
	while (filled < m) {
		for (i = 0; i < n && filled < m; i++) {
			for (k = 0; k < b[i].turns && filled < m; k++) {
				u32 pos;

				do {
					/* no u64 % on 32-bit kernels */
					div_u64_rem((u64)b[i].offset +
						    (u64)next[i] * b[i].skip,
						    m, &pos);
					next[i]++;
				} while (slot[pos] != MAGLEV_NONE);
				slot[pos] = i;
				filled++;
			}
		}
	}
}

/* The optimised fill is bit-identical to the plain fill. */
static void maglev_fill_matches_plain_test(struct kunit *test)
{
	static const u32 sizes[] = { 7, 251, 4093, 65537 };
	u32 *next = test_alloc(test, 300 * sizeof(u32));
	u16 *ref = test_alloc(test, 65537 * sizeof(u16));
	u64 state = 2016;
	u32 r, i;

	for (r = 0; r < 24; r++) {
		u32 m = sizes[r % 4];
		u32 n = min(m, 1 + lcg(&state) % 300);
		struct build *bd = build_alloc(test, m, n);

		for (i = 0; i < n; i++) {
			bd->b[i].name_len = 1;
			bd->b[i].offset = lcg(&state) % m;
			bd->b[i].skip = 1 + lcg(&state) % (m - 1);
			bd->b[i].turns = 1 + lcg(&state) % 3;
		}
		maglev_fill(bd->own, m, bd->b, n, bd->work, NULL);
		plain_fill(ref, m, bd->b, n, next);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(ref, bd->own,
						 m * sizeof(u16)), 0,
				    "round %u M %u N %u", r, m, n);
	}
}

/* ------------------------------------------------------------------ */

struct big_weight {
	const char *desc;
	u32 w[2];
	u32 lo, hi;	/* slots of the second backend at M = 65537 */
};

static const struct big_weight big_weight_cases[] = {
	{ "70000:1", { 70000, 1 }, 1, 2 },
	{ "INT_MAX:1", { INT_MAX, 1 }, 1, 2 },
	{ "INT_MAX:INT_MAX", { INT_MAX, INT_MAX }, 32768, 32769 },
	{ "2^30:2^29", { 1U << 30, 1U << 29 }, 21845, 21846 },
	{ "65536:65535", { 65536, 65535 }, 32766, 32768 },
	{ "1000001:999999", { 1000001, 999999 }, 32766, 32768 },
	{ "1000000:3", { 1000000, 3 }, 1, 2 },
};

static void big_weight_desc(const struct big_weight *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(big_weight, big_weight_cases, big_weight_desc);

/*
 * Weights above 65535, up to INT_MAX, are scaled into the table: every
 * positive weight keeps a slot and the shares follow the ratio as closely
 * as 65537 slots allow.
 */
static void maglev_big_weight_test(struct kunit *test)
{
	const struct big_weight *c = test->param_value;
	struct build *bd = build_alloc(test, 65537, 2);
	u32 i;

	for (i = 0; i < 2; i++) {
		name_ip(&bd->b[i], i);
		bd->b[i].weight = c->w[i];
	}
	KUNIT_ASSERT_EQ(test, build_run(bd), 0);
	KUNIT_EXPECT_EQ(test, bd->b[0].slots + bd->b[1].slots, 65537U);
	KUNIT_EXPECT_GE(test, bd->b[1].slots, c->lo);
	KUNIT_EXPECT_LE(test, bd->b[1].slots, c->hi);
}

/* Above INT_MAX is not an IPVS weight: refused, the table is kept. */
static void maglev_weight_range_test(struct kunit *test)
{
	struct build *bd = build_alloc(test, 251, 2);
	const char *why = NULL;
	u64 digest;
	u32 i;

	for (i = 0; i < 2; i++) {
		name_ip(&bd->b[i], i);
		bd->b[i].weight = MAGLEV_WEIGHT_MAX;
	}
	bd->n = 2;
	KUNIT_ASSERT_EQ(test, build_run(bd), 0);
	digest = bd->t->digest;
	bd->b[1].weight = MAGLEV_WEIGHT_MAX + 1;
	KUNIT_EXPECT_EQ(test, maglev_build(bd->t, 251, bd->b, 2, bd->work,
					   NULL, &why), -EINVAL);
	KUNIT_EXPECT_NOT_NULL(test, why);
	bd->b[1].weight = 0;
	bd->b[1].drain_weight = MAGLEV_WEIGHT_MAX + 1;
	KUNIT_EXPECT_EQ(test, build_run(bd), -EINVAL);
	KUNIT_EXPECT_EQ(test, bd->t->digest, digest);
}

/* 65535 backends near INT_MAX: a 47-bit sum, one turn each. */
static void maglev_weight_sum_test(struct kunit *test)
{
	struct build *bd = build_alloc(test, 65537, 65535);
	u32 i;

	for (i = 0; i < bd->n; i++) {
		name_ip(&bd->b[i], i);
		bd->b[i].weight = INT_MAX - (i & 1);
	}
	KUNIT_ASSERT_EQ(test, build_run(bd), 0);
	for (i = 0; i < bd->n; i++) {
		KUNIT_EXPECT_EQ(test, bd->b[i].turns, 1U);
		KUNIT_EXPECT_GE(test, bd->b[i].slots, 1U);
		KUNIT_EXPECT_LE(test, bd->b[i].slots, 2U);
	}
	KUNIT_EXPECT_EQ(test, bd->t->nr_filled, 65537U);
}

/*
 * The default size is the paper's prime, and no number of backends (each
 * one a table that index can hold) changes it: a size that followed N
 * would move nearly every client at each of its steps.
 */
static void maglev_default_size_test(struct kunit *test)
{
	u32 n, changed = 0;

	KUNIT_EXPECT_EQ(test, MAGLEV_SIZE_DEFAULT, 65537);
	KUNIT_EXPECT_EQ(test, maglev_check_size(MAGLEV_SIZE_DEFAULT, NULL), 0);
	for (n = 0; n <= MAGLEV_MAX_BACKENDS; n++)
		changed += maglev_fit_size(MAGLEV_SIZE_DEFAULT, n) !=
			   MAGLEV_SIZE_DEFAULT;
	KUNIT_EXPECT_EQ(test, changed, 0U);
}

/* ------------------------------------------------------------------ */

struct fit_case {
	u32 size, n, want;
};

static const struct fit_case fit_cases[] = {
	{ 251, 0, 251 }, { 251, 251, 251 }, { 251, 252, 257 },
	{ 251, 1000, 1009 }, { 4093, 4094, 4099 }, { 251, 65535, 65537 },
	{ 65537, 65535, 65537 }, { 5000011, 65535, 5000011 },
};

static void fit_desc(const struct fit_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "M %u N %u", c->size, c->n);
}

KUNIT_ARRAY_PARAM(fit, fit_cases, fit_desc);

/* A size below the number of backends becomes the next prime >= N. */
static void maglev_fit_size_test(struct kunit *test)
{
	const struct fit_case *c = test->param_value;
	u32 m = maglev_fit_size(c->size, c->n);
	struct build *bd;
	u32 i;

	KUNIT_EXPECT_EQ(test, m, c->want);
	KUNIT_EXPECT_EQ(test, maglev_check_size(m, NULL), 0);
	if (c->n > 1000)
		return;
	/* and a table of that size builds, every backend with a slot */
	bd = build_alloc(test, m, c->n);
	for (i = 0; i < c->n; i++) {
		name_ip(&bd->b[i], i);
		bd->b[i].weight = 1 + i % 3;
	}
	KUNIT_ASSERT_EQ(test, build_run(bd), 0);
	for (i = 0; i < c->n; i++)
		KUNIT_EXPECT_GE(test, bd->b[i].slots, 1U);
}

/* ------------------------------------------------------------------ */

/* Removing the last backend changes every slot's owner to none: M. */
static void maglev_churn_empty_test(struct kunit *test)
{
	struct build *a = build_alloc(test, 4093, 4);
	struct build *e = build_alloc(test, 4093, 4);
	struct build *f = build_alloc(test, 251, 0);
	u32 i;

	for (i = 0; i < 4; i++) {
		name_ip(&a->b[i], i);
		a->b[i].weight = 1 + i;
		e->b[i] = a->b[i];
		e->b[i].weight = 0;
	}
	KUNIT_ASSERT_EQ(test, build_run(a), 0);
	KUNIT_ASSERT_EQ(test, build_run(e), 0);
	KUNIT_ASSERT_EQ(test, build_run(f), 0);
	/* to no backends, and to backends that all have weight 0 */
	KUNIT_EXPECT_EQ(test, maglev_churn(a->t, a->b, 4, e->t, e->b, 0,
					   a->work), 4093U);
	KUNIT_EXPECT_EQ(test, maglev_churn(a->t, a->b, 4, e->t, e->b, 4,
					   a->work), 4093U);
	KUNIT_EXPECT_EQ(test, maglev_churn(e->t, e->b, 4, a->t, a->b, 4,
					   a->work), 4093U);
	KUNIT_EXPECT_EQ(test, maglev_churn(e->t, e->b, 4, e->t, e->b, 0,
					   a->work), 0U);
	/* a size change to an empty table: every slot of the new size */
	KUNIT_EXPECT_EQ(test, maglev_churn(a->t, a->b, 4, f->t, f->b, 0,
					   a->work), 251U);
	KUNIT_EXPECT_EQ(test, maglev_churn(e->t, e->b, 4, f->t, f->b, 0,
					   a->work), 0U);
}

/* ------------------------------------------------------------------ */

struct name_case {
	const char *want;
	u8 addr[16];
	u32 len;
	u16 port;
};

#define V4(a, b, c, d)	{ a, b, c, d }
#define V6(...)		{ __VA_ARGS__ }

/* Expected strings are glibc inet_ntop()'s (ipvsadm -Ln) output. */
static const struct name_case name_cases[] = {
	{ "10.0.0.1:80", V4(10, 0, 0, 1), 4, 80 },
	{ "0.0.0.0:0", V4(0, 0, 0, 0), 4, 0 },
	{ "255.255.255.255:65535", V4(255, 255, 255, 255), 4, 65535 },
	{ "[::]:80", V6(0), 16, 80 },
	{ "[::1]:80", V6([15] = 1), 16, 80 },
	{ "[1::]:80", V6(0, 1), 16, 80 },
	{ "[::1.2.3.4]:80", V6([12] = 1, 2, 3, 4), 16, 80 },
	{ "[::0.1.0.0]:80", V6([13] = 1), 16, 80 },
	{ "[::2]:80", V6([15] = 2), 16, 80 },
	{ "[::ffff:10.0.0.2]:443", V6([10] = 0xff, 0xff, 10, 0, 0, 2), 16,
	  443 },
	{ "[::ffff:0.0.0.0]:80", V6([10] = 0xff, 0xff), 16, 80 },
	{ "[::fffe:102:304]:80", V6([10] = 0xff, 0xfe, 1, 2, 3, 4), 16, 80 },
	{ "[2001:db8::5efe:a00:1]:80",
	  V6(0x20, 0x01, 0x0d, 0xb8, [10] = 0x5e, 0xfe, 10, 0, 0, 1), 16, 80 },
	{ "[2001:db8::1:0:0:1]:80",
	  V6(0x20, 0x01, 0x0d, 0xb8, [9] = 1, [15] = 1), 16, 80 },
	{ "[2001:0:0:1::1]:80", V6(0x20, 0x01, [7] = 1, [15] = 1), 16, 80 },
	{ "[1:0:1:0:1:0:1:0]:80", V6(0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1),
	  16, 80 },
	{ "[2001:db8:0:1:1:1:1:1]:80",
	  V6(0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1), 16,
	  80 },
	{ "[fe80::200:5efe:c000:201]:1",
	  V6(0xfe, 0x80, [8] = 2, 0, 0x5e, 0xfe, 0xc0, 0, 2, 1), 16, 1 },
	{ "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535",
	  V6(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	     0xff, 0xff, 0xff, 0xff, 0xff), 16, 65535 },
};

static void name_desc(const struct name_case *c, char *desc)
{
	strscpy(desc, c->want, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(name, name_cases, name_desc);

/* maglev_format_name() writes what userspace's inet_ntop() writes. */
static void maglev_format_name_test(struct kunit *test)
{
	const struct name_case *c = test->param_value;
	char buf[MAGLEV_NAME_MAX + 1];
	int n;

	n = maglev_format_name(buf, sizeof(buf), c->addr, c->len, c->port);
	KUNIT_EXPECT_EQ(test, n, (int)strlen(c->want));
	KUNIT_EXPECT_STREQ(test, buf, c->want);
	KUNIT_EXPECT_LE(test, n, MAGLEV_ADDR_NAME_MAX);
	/* one byte short of room for the NUL: an empty string */
	KUNIT_EXPECT_EQ(test, maglev_format_name(buf, strlen(c->want),
						 c->addr, c->len, c->port),
			-ENOSPC);
	KUNIT_EXPECT_EQ(test, buf[0], '\0');
	/* an address of neither 4 nor 16 bytes */
	buf[0] = 'x';
	KUNIT_EXPECT_EQ(test, maglev_format_name(buf, sizeof(buf), c->addr,
						 8, c->port), -EINVAL);
	KUNIT_EXPECT_EQ(test, buf[0], '\0');
}

/* ------------------------------------------------------------------ */

struct width_case {
	u32 n;		/* backends */
	u32 width;	/* bits per slot */
	u32 size;
	bool drain;	/* the middle backend draining */
};

static const struct width_case width_cases[] = {
	{ 1, 0, 251, false }, { 2, 1, 251, false }, { 2, 1, 65537, true },
	{ 3, 2, 65537, false }, { 4, 2, 4093, true }, { 5, 3, 509, false },
	{ 8, 3, 65537, true }, { 9, 4, 65537, false }, { 16, 4, 2039, true },
	{ 17, 5, 2039, false }, { 33, 6, 65537, false }, { 100, 7, 16381, true },
	{ 129, 8, 65537, false }, { 256, 8, 65537, false },
	{ 257, 9, 65537, false }, { 1000, 10, 65537, true },
	{ 1025, 11, 65537, false }, { 2049, 12, 65537, false },
	{ 4097, 13, 65537, false }, { 8193, 14, 16411, false },
	{ 16385, 15, 65537, false }, { 32769, 16, 65537, false },
};

static void width_desc(const struct width_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "N %u: %u bits, M %u%s", c->n,
		 c->width, c->size, c->drain ? ", draining" : "");
}

KUNIT_ARRAY_PARAM(width, width_cases, width_desc);

/*
 * Every slot width against the plain fill: the packed owners are the
 * plain fill's (with the drain rule applied to two plain fills), the
 * table is as large as maglev_table_bytes() says, and lookups read slot
 * (hash * M) >> 32.
 */
static void maglev_width_test(struct kunit *test)
{
	const struct width_case *c = test->param_value;
	struct build *bd = build_alloc(test, c->size, c->n);
	u16 *ref = test_alloc(test, c->size * sizeof(u16));
	u16 *alt = test_alloc(test, c->size * sizeof(u16));
	u32 *next = test_alloc(test, c->n * sizeof(u32));
	u32 d = c->n / 2, bytes, i, s, bad = 0;
	u64 state = c->n;

	for (i = 0; i < c->n; i++) {
		name_ip(&bd->b[i], i * 31);
		bd->b[i].weight = 1 + i % 3;
	}
	if (c->drain) {
		bd->b[d].drain_weight = bd->b[d].weight;
		bd->b[d].weight = 0;
	}
	KUNIT_ASSERT_EQ(test, build_run(bd), 0);
	KUNIT_EXPECT_EQ(test, test_width(c->n), c->width);
	KUNIT_EXPECT_EQ(test, (u32)bd->t->width, c->width);
	KUNIT_EXPECT_EQ(test, bd->t->nr_filled, c->size);
	/* The last slot's 4-byte load ends the slot bytes. */
	bytes = c->width ? (c->size - 1) * c->width / 8 + 4 : 4;
	KUNIT_EXPECT_EQ(test, maglev_table_bytes(c->size, c->n),
			sizeof(struct maglev_table) + bytes);

	/* bd->b is prepared (sorted): primary turns include the drain weight */
	for (i = 0; i < c->n; i++)
		if (!bd->b[i].weight && bd->b[i].drain_weight)
			d = i;
	plain_fill(ref, c->size, bd->b, c->n, next);
	if (c->drain) {
		u32 keep = bd->b[d].turns;

		bd->b[d].turns = 0;
		plain_fill(alt, c->size, bd->b, c->n, next);
		bd->b[d].turns = keep;
		for (s = 0; s < c->size; s++)
			if (ref[s] == d)
				ref[s] = alt[s];
	}
	for (s = 0; s < c->size; s++)
		bad += bd->own[s] != ref[s];
	KUNIT_EXPECT_EQ_MSG(test, bad, 0U, "slots differing from the plain fill");

	for (i = 0, bad = 0; i < 4096; i++) {
		u32 h = lcg(&state) << 1 ^ lcg(&state);

		bad += maglev_lookup(bd->t, h) !=
		       ref[(u32)(((u64)h * c->size) >> 32)];
	}
	KUNIT_EXPECT_EQ_MSG(test, bad, 0U, "lookups reading the wrong slot");
	KUNIT_EXPECT_EQ(test, maglev_lookup(bd->t, 0), (u32)ref[0]);
	KUNIT_EXPECT_EQ(test, maglev_lookup(bd->t, U32_MAX),
			(u32)ref[c->size - 1]);
	/* The digest is over the owners: recomputed from the packed table. */
	KUNIT_EXPECT_EQ(test, test_digest(bd->t, bd->b, c->n), bd->t->digest);
}

/* An empty table of any width stores no slots and gives no backend. */
static void maglev_empty_width_test(struct kunit *test)
{
	static const u32 ns[] = { 1, 2, 3, 5, 17, 257 };
	u64 state = 5;
	u32 k, i;

	for (k = 0; k < ARRAY_SIZE(ns); k++) {
		struct build *bd = build_alloc(test, 509, ns[k]);

		for (i = 0; i < ns[k]; i++)
			name_ip(&bd->b[i], i);
		KUNIT_ASSERT_EQ(test, build_run(bd), 0);
		KUNIT_EXPECT_EQ(test, bd->t->nr_filled, 0U);
		KUNIT_EXPECT_EQ(test, (u32)bd->t->width, 0U);
		for (i = 0; i < 64; i++)
			KUNIT_EXPECT_EQ(test, maglev_lookup(bd->t, lcg(&state)),
					MAGLEV_NONE);
		KUNIT_EXPECT_EQ(test, maglev_table_get(bd->t, 508), MAGLEV_NONE);
	}
}

/* ------------------------------------------------------------------ */

static struct kunit_case maglev_table_test_cases[] = {
	KUNIT_CASE_PARAM(maglev_worked_example_test, example_gen_params),
	KUNIT_CASE_PARAM(maglev_sequence_permutation_test,
			 perm_size_gen_params),
	KUNIT_CASE_PARAM(maglev_balance_test, balance_gen_params),
	KUNIT_CASE(maglev_order_independence_test),
	KUNIT_CASE(maglev_churn_test),
	KUNIT_CASE_PARAM(maglev_weight_share_test, weights_gen_params),
	KUNIT_CASE(maglev_too_many_backends_test),
	KUNIT_CASE(maglev_empty_test),
	KUNIT_CASE_PARAM(maglev_prime_test, prime_gen_params),
	KUNIT_CASE(maglev_drain_test),
	KUNIT_CASE(maglev_fill_matches_plain_test),
	KUNIT_CASE_PARAM(maglev_big_weight_test, big_weight_gen_params),
	KUNIT_CASE(maglev_weight_range_test),
	KUNIT_CASE(maglev_weight_sum_test),
	KUNIT_CASE(maglev_default_size_test),
	KUNIT_CASE_PARAM(maglev_fit_size_test, fit_gen_params),
	KUNIT_CASE(maglev_churn_empty_test),
	KUNIT_CASE_PARAM(maglev_format_name_test, name_gen_params),
	KUNIT_CASE_PARAM(maglev_width_test, width_gen_params),
	KUNIT_CASE(maglev_empty_width_test),
	{}
};

static struct kunit_suite maglev_table_test_suite = {
	.name = "maglev_table",
	.test_cases = maglev_table_test_cases,
};

kunit_test_suites(&maglev_table_test_suite);
