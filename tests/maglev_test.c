// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of maglev_table.c, built with -Werror and ASan + UBSan.
 * Prints "ok"/"not ok" per test and ends with "N passed, N failed".
 */
#include <arpa/inet.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "maglev_table.h"
#include "maglev_ref.h"

#include "unit.h"

static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p) {
		perror("malloc");
		exit(2);
	}
	return p;
}

struct set {
	struct maglev_backend *b;
	u32 n;
	u32 size;
	struct maglev_table *t;
	void *work;
	u16 *own;	/* the slots' owners, read from the packed table */
};

static void set_init(struct set *s, u32 size, u32 n)
{
	s->b = calloc(n ? n : 1, sizeof(*s->b));
	s->n = n;
	s->size = size;
	s->t = xmalloc(maglev_table_bytes(size, n));
	s->work = xmalloc(maglev_work_bytes(size, n + 8));
	s->own = xmalloc((size_t)size * sizeof(u16));
	if (!s->b)
		exit(2);
}

static void set_free(struct set *s)
{
	free(s->b);
	free(s->t);
	free(s->work);
	free(s->own);
}

/*
 * Read every owner of @s's table twice, with maglev_table_get() and with the
 * reference reading of the packed layout, and check that lookups agree.
 */
static void unpack(struct set *s)
{
	u32 i, w = maglev_ref_width(s->n);

	check(s->t->width == (s->t->nr_filled ? w : 0), "width %u for N %u",
	      s->t->width, s->n);
	for (i = 0; i < s->size; i++) {
		u32 o = maglev_ref_owner(s->t, i);

		s->own[i] = (u16)o;
		if (maglev_table_get(s->t, i) != o) {
			check(0, "slot %u: get %u, packed %u", i,
			      maglev_table_get(s->t, i), o);
			break;
		}
	}
}

static void name_ip(struct maglev_backend *b, u32 i)
{
	b->name_len = snprintf(b->name, sizeof(b->name), "10.%u.%u.%u:80",
			       i >> 16 & 255, i >> 8 & 255, i & 255);
}

/* Sort @s's backends and build its table, as every caller does. */
static int build(struct set *s)
{
	const char *why = NULL;
	int err;

	sort(s->b, s->n, sizeof(*s->b), maglev_backend_cmp, NULL);
	err = maglev_build(s->t, s->size, s->b, s->n, s->work, NULL, &why);

	if (!err)
		unpack(s);
	return err;
}

static void shuffle(struct maglev_backend *b, u32 n)
{
	u32 i;

	for (i = n; i > 1; i--) {
		u32 j = rnd() % i;
		struct maglev_backend tmp = b[i - 1];

		b[i - 1] = b[j];
		b[j] = tmp;
	}
}

/* The three worked M = 7 examples of the seed documents. */
static void worked_example(const char *names, const u32 *off,
			   const u32 *skip, const char *want)
{
	struct maglev_backend b[3] = { 0 };
	struct set s;
	char got[8];
	u32 i;

	set_init(&s, 7, 3);
	for (i = 0; i < 3; i++) {
		b[i].name[0] = names[i];
		b[i].name_len = 1;
		b[i].offset = off[i];
		b[i].skip = skip[i];
		b[i].turns = 1;
	}
	check(maglev_fill(s.own, 7, b, 3, s.work, NULL) == 7, "filled");
	for (i = 0; i < 7; i++)
		got[i] = s.own[i] < 3 ? names[s.own[i]] : '?';
	got[7] = 0;
	check(!strcmp(got, want), "got %s want %s", got, want);
	set_free(&s);
}

static void test_seed000_example(void)
{
	worked_example("xyz", (u32[]){ 2, 5, 0 }, (u32[]){ 3, 2, 1 },
		       "zxxzyyx");
}

static void test_seed001_example(void)
{
	/* B0, B1, B2 stand as 0, 1, 2. */
	worked_example("012", (u32[]){ 3, 0, 3 }, (u32[]){ 4, 2, 1 },
		       "1010220");
}

static void test_seed003_example(void)
{
	worked_example("ABC", (u32[]){ 3, 0, 5 }, (u32[]){ 2, 3, 1 },
		       "BCAAACB");
}

static void test_fnv1a(void)
{
	check(maglev_ref_h32("", 0) == 2166136261U, "empty");
	check(maglev_ref_h32("a", 1) == 0xe40c292cU, "a");
	/* Positions from the ring seed (004). */
	check(maglev_ref_h32("ember", 5) == 438014020U, "ember");
	check(maglev_ref_h32("iron", 4) == 1269809787U, "iron");
	check(maglev_ref_h32("ogre", 4) == 1758641738U, "ogre");
	check(maglev_ref_h32("hag", 3) == 3787390207U, "hag");
}

static void test_offset_skip_formula(void)
{
	struct maglev_backend b = { .name = "10.0.0.1:80", .name_len = 11,
				    .weight = 1 };
	char buf[80];
	u32 m = 65537;

	check(!maglev_prepare(&b, 1, m, NULL), "prepare");
	snprintf(buf, sizeof(buf), "%.*s|offset", 11, b.name);
	check(b.offset == maglev_ref_h32(buf, strlen(buf)) % m, "offset");
	snprintf(buf, sizeof(buf), "%.*s|skip", 11, b.name);
	check(b.skip == maglev_ref_h32(buf, strlen(buf)) % (m - 1) + 1, "skip");
}

static void test_primes(void)
{
	static const u32 bad[] = { 0, 1, 4, 9, 25, 65535, 65536, 5000012,
				   4294967295U };
	static const u32 good[] = { 2, 3, 5, 251, 4093, 65537, 655373,
				    5000011 };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		check(!maglev_is_prime(bad[i]), "%u is not prime", bad[i]);
	for (i = 0; i < ARRAY_SIZE(good); i++)
		check(maglev_is_prime(good[i]), "%u is prime", good[i]);
}

static void test_check_size(void)
{
	static const u32 bad[] = { 0, 7, 241, 250, 255, 65535, 65536, 5000012,
				   5000077 };
	static const u32 good[] = { 251, 257, 4093, 65537, 655373, 5000011 };
	const char *why;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		why = NULL;
		check(maglev_check_size(bad[i], &why) == -EINVAL && why,
		      "size %u accepted", bad[i]);
	}
	for (i = 0; i < ARRAY_SIZE(good); i++)
		check(!maglev_check_size(good[i], NULL), "size %u rejected",
		      good[i]);
}

/*
 * Every preference sequence maglev_prepare() gives a backend (its offset
 * and skip) visits each of the M slots exactly once.
 */
static void test_sequence_is_permutation(void)
{
	static const u32 sizes[] = { 251, 4093, 65537 };
	struct maglev_backend b[40];
	size_t k;
	u32 i, j;

	for (k = 0; k < 3; k++) {
		u32 m = sizes[k];
		u8 *seen = calloc(m, 1);

		for (i = 0; i < 40; i++) {
			memset(&b[i], 0, sizeof(b[i]));
			name_ip(&b[i], i * 7919);
			b[i].weight = 1;
		}
		sort(b, 40, sizeof(*b), maglev_backend_cmp, NULL);
		check(!maglev_prepare(b, 40, m, NULL), "prepare M %u", m);
		for (i = 0; i < 40; i++) {
			u32 pos = b[i].offset, visited = 0;

			check(b[i].skip >= 1 && b[i].skip < m && pos < m,
			      "M %u: offset %u skip %u", m, pos, b[i].skip);
			memset(seen, 0, m);
			for (j = 0; j < m; j++) {
				visited += !seen[pos % m];
				seen[pos % m] = 1;
				pos = (pos + b[i].skip) % m;
			}
			check(visited == m, "M %u %.*s: visits %u", m,
			      (int)b[i].name_len, b[i].name, visited);
		}
		free(seen);
	}
}

static void test_unweighted_balance(void)
{
	static const u32 ns[] = { 1, 2, 3, 7, 100, 1000 };
	size_t k;
	u32 i;

	for (k = 0; k < ARRAY_SIZE(ns); k++) {
		struct set s;
		u32 lo = ~0U, hi = 0, sum = 0;

		set_init(&s, 65537, ns[k]);
		for (i = 0; i < s.n; i++) {
			name_ip(&s.b[i], i);
			s.b[i].weight = 1;
		}
		check(!build(&s), "build N %u", s.n);
		for (i = 0; i < s.n; i++) {
			lo = s.b[i].slots < lo ? s.b[i].slots : lo;
			hi = s.b[i].slots > hi ? s.b[i].slots : hi;
			sum += s.b[i].slots;
		}
		check(hi - lo <= 1, "N %u: slots %u..%u", s.n, lo, hi);
		check(sum == 65537 && s.t->nr_filled == 65537, "sum %u", sum);
		set_free(&s);
	}
}

static void test_order_independence(void)
{
	struct set s;
	u16 *first;
	u64 digest;
	u32 i, r;

	set_init(&s, 65537, 50);
	for (i = 0; i < s.n; i++) {
		name_ip(&s.b[i], i * 7919);
		s.b[i].weight = 1 + i % 3;
	}
	check(!build(&s), "build");
	digest = s.t->digest;
	first = xmalloc(65537 * sizeof(u16));
	memcpy(first, s.own, 65537 * sizeof(u16));
	for (r = 0; r < 5; r++) {
		shuffle(s.b, s.n);
		check(!build(&s), "build");
		check(s.t->digest == digest, "digest differs after shuffle");
		check(!memcmp(first, s.own, 65537 * sizeof(u16)),
		      "table differs after shuffle");
	}
	free(first);
	set_free(&s);
}

/* Going from 5 to 6 backends and back moves about 1/6 of the slots. */
static void test_churn_5_6_5(void)
{
	struct set a, b, c;
	u32 churn_up, churn_down, same, i;
	void *work;

	set_init(&a, 65537, 5);
	set_init(&b, 65537, 6);
	set_init(&c, 65537, 5);
	for (i = 0; i < 6; i++) {
		char nm[16];

		snprintf(nm, sizeof(nm), "backend-%u", i);
		if (i < 5) {
			a.b[i].name_len = strlen(nm);
			memcpy(a.b[i].name, nm, a.b[i].name_len);
			a.b[i].weight = 1;
		}
		b.b[i].name_len = strlen(nm);
		memcpy(b.b[i].name, nm, b.b[i].name_len);
		b.b[i].weight = 1;
	}
	c.b[0] = a.b[0];
	for (i = 1; i < 5; i++)
		c.b[i] = b.b[i + 1];	/* drop backend-1 going back */
	check(!build(&a) && !build(&b) && !build(&c), "build");
	work = xmalloc(maglev_work_bytes(65537, 8));
	churn_up = maglev_churn(a.t, a.b, 5, b.t, b.b, 6, work);
	churn_down = maglev_churn(b.t, b.b, 6, c.t, c.b, 5, work);
	check(churn_up >= 65537 * 16 / 100 && churn_up <= 65537 * 18 / 100,
	      "5->6 churn %u", churn_up);
	check(churn_down >= 65537 * 16 / 100 && churn_down <= 65537 * 18 / 100,
	      "6->5 churn %u", churn_down);
	/* The new backend takes its share; a slot it took counts as churn. */
	check(churn_up >= b.b[5].slots, "churn below new share");
	same = maglev_churn(b.t, b.b, 6, b.t, b.b, 6, work);
	check(same == 0, "identical rebuild churn %u", same);
	check(maglev_churn(NULL, NULL, 0, a.t, a.b, 5, work) == 65537,
	      "first build churn");
	free(work);
	/* maglev_churn_bytes() of the old N is enough (ASan checks). */
	work = xmalloc(maglev_churn_bytes(5));
	check(maglev_churn(a.t, a.b, 5, b.t, b.b, 6, work) == churn_up,
	      "churn in maglev_churn_bytes(5) bytes");
	free(work);
	work = xmalloc(maglev_churn_bytes(6));
	check(maglev_churn(b.t, b.b, 6, c.t, c.b, 5, work) == churn_down,
	      "churn in maglev_churn_bytes(6) bytes");
	free(work);
	set_free(&a);
	set_free(&b);
	set_free(&c);
}

static void test_weight_shares(void)
{
	static const u32 w[] = { 1, 2, 3, 5, 10, 20, 59 };
	u32 n = 7, total = 100, i;
	struct set s;

	/* M >= 100 x turns per round: every share within 1 point. */
	set_init(&s, 10007, n);
	for (i = 0; i < n; i++) {
		name_ip(&s.b[i], i);
		s.b[i].weight = w[i] * 3;	/* gcd 3 is divided out */
	}
	check(!build(&s), "build");
	for (i = 0; i < n; i++) {
		double share = 100.0 * s.b[i].slots / s.size;
		double want = 100.0 * (s.b[i].weight / 3) / total;

		check(share - want < 1.0 && want - share < 1.0,
		      "%.*s share %.2f%% want %.2f%%", (int)s.b[i].name_len,
		      s.b[i].name, share, want);
		check(s.b[i].turns == s.b[i].weight / 3, "turns %u",
		      s.b[i].turns);
	}
	set_free(&s);
}

static void test_weight_zero(void)
{
	struct set s;
	u32 i, sum = 0;

	set_init(&s, 4093, 10);
	for (i = 0; i < s.n; i++) {
		name_ip(&s.b[i], i);
		s.b[i].weight = i % 3 ? 1 : 0;
	}
	check(!build(&s), "build");
	for (i = 0; i < s.n; i++) {
		bool zero = !strcmp(s.b[i].name, "10.0.0.0:80") ||
			    !strcmp(s.b[i].name, "10.0.0.3:80") ||
			    !strcmp(s.b[i].name, "10.0.0.6:80") ||
			    !strcmp(s.b[i].name, "10.0.0.9:80");

		check(zero == !s.b[i].weight, "weight order");
		if (!s.b[i].weight)
			check(!s.b[i].slots, "weight 0 got %u slots",
			      s.b[i].slots);
		sum += s.b[i].slots;
	}
	check(sum == 4093, "slots %u", sum);
	set_free(&s);
}

static void test_huge_weights(void)
{
	struct set s;
	u32 i, sum = 0;

	/* 65535 + 65534 + ... turns do not fit in 251 slots: scaled. */
	set_init(&s, 251, 40);
	for (i = 0; i < s.n; i++) {
		name_ip(&s.b[i], i);
		s.b[i].weight = i == 7 ? 1 : 65535 - i;
	}
	check(!build(&s), "build");
	for (i = 0; i < s.n; i++) {
		check(s.b[i].slots >= 1, "backend %u has no slot", i);
		sum += s.b[i].slots;
	}
	check(sum == 251 && s.t->nr_filled == 251, "sum %u", sum);
	set_free(&s);
}

static void test_empty(void)
{
	struct set s;
	u32 i;

	set_init(&s, 251, 0);
	check(!build(&s), "build");
	check(s.t->nr_filled == 0, "filled %u", s.t->nr_filled);
	for (i = 0; i < 1000; i++)
		check(maglev_lookup(s.t, rnd()) == MAGLEV_NONE, "not empty");
	set_free(&s);

	/* Backends that all have weight 0 give an empty table too. */
	set_init(&s, 251, 3);
	for (i = 0; i < 3; i++)
		name_ip(&s.b[i], i);
	check(!build(&s), "build");
	check(s.t->nr_filled == 0 && s.own[0] == MAGLEV_NONE &&
	      s.t->width == 0 && maglev_lookup(s.t, rnd()) == MAGLEV_NONE,
	      "not empty");
	set_free(&s);
}

static void test_errors_leave_table(void)
{
	struct set s;
	const char *why;
	u64 digest;
	u32 i;

	set_init(&s, 257, 300);
	s.n = 3;
	for (i = 0; i < 300; i++) {
		name_ip(&s.b[i], i);
		s.b[i].weight = 1;
	}
	check(!build(&s), "build");
	digest = s.t->digest;

	s.n = 300;		/* N > M */
	why = NULL;
	check(maglev_build(s.t, 257, s.b, 300, s.work, NULL, &why) == -E2BIG &&
	      why, "N > M");
	s.n = 3;
	s.b[1] = s.b[0];	/* duplicate */
	why = NULL;
	check(maglev_build(s.t, 257, s.b, 3, s.work, NULL, &why) == -EINVAL &&
	      why && strstr(why, "duplicate"), "duplicate");
	name_ip(&s.b[1], 2);
	name_ip(&s.b[2], 1);
	why = NULL;
	check(maglev_build(s.t, 257, s.b, 3, s.work, NULL, &why) == -EINVAL &&
	      why && strstr(why, "name order"), "out of name order");
	name_ip(&s.b[1], 1);
	name_ip(&s.b[2], 2);
	s.b[2].weight = (u32)INT_MAX + 1;
	check(maglev_build(s.t, 257, s.b, 3, s.work, NULL, &why) == -EINVAL,
	      "weight");
	s.b[2].weight = 1;
	s.b[2].name_len = 0;
	check(maglev_build(s.t, 257, s.b, 3, s.work, NULL, &why) == -EINVAL,
	      "empty name");
	s.b[2].name_len = 65;
	check(maglev_build(s.t, 257, s.b, 3, s.work, NULL, &why) == -EINVAL,
	      "long name");
	name_ip(&s.b[2], 2);
	check(maglev_build(s.t, 256, s.b, 3, s.work, NULL, &why) == -EINVAL,
	      "composite size");
	check(s.t->digest == digest && s.t->size == 257 &&
	      maglev_ref_digest(s.t, s.b, 3) == digest, "table changed on error");
	set_free(&s);

	/*
	 * One backend more than a table can index, in a table big enough
	 * that already serves three: refused with a reason, and the table
	 * built before is the one that still serves.
	 */
	set_init(&s, 65537, MAGLEV_MAX_BACKENDS + 1);
	for (i = 0; i < MAGLEV_MAX_BACKENDS + 1; i++) {
		name_ip(&s.b[i], i);
		s.b[i].weight = 1;
	}
	s.n = 3;
	check(!build(&s), "build of 3 backends at 65537");
	digest = s.t->digest;
	check(maglev_ref_digest(s.t, s.b, 3) == digest,
	      "the 3-backend table is the reference fill");
	why = NULL;
	check(maglev_build(s.t, 65537, s.b, MAGLEV_MAX_BACKENDS + 1, s.work,
			   NULL, &why) == -E2BIG &&
	      why && strstr(why, "too many backends"),
	      "%u backends refused with a reason", MAGLEV_MAX_BACKENDS + 1);
	check(s.t->digest == digest && s.t->size == 65537 &&
	      maglev_ref_digest(s.t, s.b, 3) == digest,
	      "more than %u backends: the old table serves, unchanged",
	      MAGLEV_MAX_BACKENDS);
	set_free(&s);
}

/* 10.0.0.1:81 and 10.0.0.2:80 collide in ip_vs_mh; never here. */
static void test_key_hash(void)
{
	const u8 k1[6] = { 10, 0, 0, 1, 0, 81 };
	const u8 k2[6] = { 10, 0, 0, 2, 0, 80 };
	u8 v6[18] = { 0x20, 0x01, 0x0d, 0xb8 };
	u64 h, seen[18 * 8];
	u32 i, bit;

	check(maglev_hash(k1, 6, 0) != maglev_hash(k2, 6, 0), "mh collision");
	check(maglev_hash(k1, 6, 0) != maglev_hash(k1, 6, 1), "seed ignored");
	check(maglev_hash(k1, 4, 0) != maglev_hash(k1, 6, 0), "length");
	check(maglev_hash(k1, 0, 0) != maglev_hash(k1, 0, 1), "empty key");
	/* Every single-bit change of an IPv6 address + port changes it. */
	h = maglev_hash(v6, 18, 0);
	for (i = 0; i < 18 * 8; i++) {
		u32 j;

		v6[i / 8] ^= 1 << (i % 8);
		seen[i] = maglev_hash(v6, 18, 0);
		v6[i / 8] ^= 1 << (i % 8);
		check(seen[i] != h, "bit %u ignored", i);
		for (j = 0; j < i; j++)
			check(seen[j] != seen[i], "bits %u %u collide", j, i);
	}
	/* Avalanche: a one-bit change flips about half of the 64 bits. */
	for (bit = 0, i = 0; i < 18 * 8; i++)
		bit += __builtin_popcountll(seen[i] ^ h);
	check(bit > 18 * 8 * 28 && bit < 18 * 8 * 36, "avalanche %u", bit);
}

static void test_lookup_spread(void)
{
	struct set s;
	const hsiphash_key_t zero = { { 0, 0 } };
	u32 cnt[10] = { 0 }, i, keys = 200000;

	set_init(&s, 65537, 10);
	for (i = 0; i < s.n; i++) {
		name_ip(&s.b[i], i);
		s.b[i].weight = 1;
	}
	check(!build(&s), "build");
	for (i = 0; i < keys; i++) {
		u8 key[6] = { 192, 168, i >> 16 & 255, i >> 8 & 255, i & 255,
			      (i * 7) & 255 };
		u32 o = maglev_lookup(s.t, hsiphash(key, 6, &zero));

		check(o < 10, "owner %u", o);
		if (o < 10)
			cnt[o]++;
	}
	/* 20000 expected each; 5 sigma is about 670. */
	for (i = 0; i < 10; i++)
		check(cnt[i] > 19000 && cnt[i] < 21000, "backend %u got %u", i,
		      cnt[i]);
	set_free(&s);
}

static void test_drain_restore(void)
{
	struct set s;
	u16 *before;
	u64 digest;
	u32 i, moved = 0, d, lo = ~0U, hi = 0;
	u32 gained[8] = { 0 };

	set_init(&s, 65537, 8);
	for (i = 0; i < s.n; i++) {
		name_ip(&s.b[i], i);
		s.b[i].weight = 2;
	}
	check(!build(&s), "build");
	digest = s.t->digest;
	before = xmalloc(65537 * sizeof(u16));
	memcpy(before, s.own, 65537 * sizeof(u16));

	d = 3;
	s.b[d].drain_weight = s.b[d].weight;
	s.b[d].weight = 0;
	check(!build(&s), "drain build");
	check(s.b[d].slots == 0, "drained backend kept %u slots",
	      s.b[d].slots);
	check(s.t->nr_filled == 65537, "filled %u", s.t->nr_filled);
	for (i = 0; i < 65537; i++) {
		if (before[i] == d) {
			moved++;
			check(s.own[i] != d && s.own[i] < 8, "slot %u",
			      i);
			if (s.own[i] < 8)
				gained[s.own[i]]++;
		} else {
			check(s.own[i] == before[i], "slot %u moved", i);
		}
	}
	for (i = 0; i < 8; i++) {
		if (i == d)
			continue;
		lo = gained[i] < lo ? gained[i] : lo;
		hi = gained[i] > hi ? gained[i] : hi;
	}
	/* About moved / 7 each; Maglev's second fill spreads them evenly. */
	check(lo > moved / 7 * 7 / 10 && hi < moved / 7 * 13 / 10,
	      "moved slots spread %u..%u of %u", lo, hi, moved);

	s.b[d].weight = s.b[d].drain_weight;
	s.b[d].drain_weight = 0;
	check(!build(&s), "restore build");
	check(s.t->digest == digest, "digest not restored");
	check(!memcmp(before, s.own, 65537 * sizeof(u16)),
	      "table not restored");
	free(before);
	set_free(&s);
}

static void test_digest(void)
{
	struct set a, b;
	u32 i;

	set_init(&a, 65537, 4);
	set_init(&b, 65543, 4);
	for (i = 0; i < 4; i++) {
		name_ip(&a.b[i], i);
		a.b[i].weight = 1;
		b.b[i] = a.b[i];
	}
	check(!build(&a) && !build(&b), "build");
	check(a.t->digest != b.t->digest, "size not in digest");
	check(a.t->digest == maglev_ref_digest(a.t, a.b, 4), "digest recompute");
	/* 2 bits a slot: flip slot 12345's low bit. */
	a.t->byte[12345 * 2 / 8] ^= 1U << (12345 * 2 % 8);
	check(maglev_ref_digest(a.t, a.b, 4) != a.t->digest, "slots not in digest");
	a.t->byte[12345 * 2 / 8] ^= 1U << (12345 * 2 % 8);
	a.b[2].name[0] = '9';
	check(maglev_ref_digest(a.t, a.b, 4) != a.t->digest, "names not in digest");
	set_free(&a);
	set_free(&b);
}

static u32 random_prime(void)
{
	for (;;) {
		u32 m = 251 + rnd() % 20000;

		if (maglev_is_prime(m))
			return m;
	}
}

/* The optimised fill is bit-identical to the plain one. */
static void test_fill_matches_reference(void)
{
	u32 round, i;

	for (round = 0; round < 400; round++) {
		u32 m = round < 8 ? (round & 1 ? 65537 : 7) : random_prime();
		u32 n = 1 + rnd() % (round % 4 == 0 ? 8 : 300);
		u16 *ref;
		struct set s;

		if (n > m)
			n = m;
		set_init(&s, m, n);
		ref = xmalloc(m * sizeof(u16));
		for (i = 0; i < n; i++) {
			s.b[i].name_len = 1;
			s.b[i].offset = rnd() % m;
			s.b[i].skip = 1 + rnd() % (m - 1);
			s.b[i].turns = round % 3 ? 1 + rnd() % 4 : 1;
			if (round % 5 == 0 && rnd() % 4 == 0)
				s.b[i].turns = 0;
		}
		check(maglev_fill(s.own, m, s.b, n, s.work, NULL) ==
		      maglev_ref_fill(ref, m, s.b, n) &&
		      !memcmp(s.own, ref, m * sizeof(u16)),
		      "round %u M %u N %u differs", round, m, n);
		free(ref);
		set_free(&s);
	}
}

/*
 * Every slot width (none for one backend, 1 to 16 bits, each at both ends
 * of its range of N): the packed table maglev_build() publishes, read back
 * through the reference reading of the packed layout (unpack()), holds the
 * owners of the reference fill for the offsets, skips and turns the build
 * chose; at the default 65537 and at 251 (or the prime the fit gives), with
 * unequal weights.
 */
static void test_packed_widths(void)
{
	static const u32 ns[] = { 1, 2, 3, 4, 5, 8, 9, 16, 17, 32, 33, 64, 65,
				  128, 129, 256, 257, 512, 513, 1024, 1025,
				  2048, 2049, 4096, 4097, 8193, 16385, 32769 };
	u32 k, round, i;

	for (k = 0; k < ARRAY_SIZE(ns); k++) {
		for (round = 0; round < 2; round++) {
			u32 n = ns[k];
			u32 m = maglev_fit_size(round ? MAGLEV_SIZE_DEFAULT :
						MAGLEV_SIZE_MIN, n);
			u32 filled;
			u16 *ref;
			struct set s;

			set_init(&s, m, n);
			for (i = 0; i < n; i++) {
				name_ip(&s.b[i], i * 7919 + k);
				s.b[i].weight = 1 + (i * 31 + round) % 4;
			}
			shuffle(s.b, n);
			check(build(&s) == 0, "N %u M %u: build", n, m);
			check(s.t->width == maglev_ref_width(n),
			      "N %u M %u: width %u, want %u", n, m, s.t->width,
			      maglev_ref_width(n));
			ref = xmalloc((size_t)m * sizeof(u16));
			filled = maglev_ref_fill(ref, m, s.b, n);
			check(filled == m && s.t->nr_filled == m &&
			      !memcmp(s.own, ref, (size_t)m * sizeof(u16)),
			      "N %u M %u width %u: packed owners differ from the reference fill",
			      n, m, s.t->width);
			free(ref);
			set_free(&s);
		}
	}
}

/* maglev_format_name() of @addr as glibc formats it for "ipvsadm -Ln". */
static void name_vs_glibc(const u8 *addr, u32 alen, u16 port, char *want,
			  size_t wlen)
{
	char txt[INET6_ADDRSTRLEN];

	if (!inet_ntop(alen == 4 ? AF_INET : AF_INET6, addr, txt, sizeof(txt))) {
		perror("inet_ntop");
		exit(2);
	}
	snprintf(want, wlen, alen == 4 ? "%s:%u" : "[%s]:%u", txt, port);
}

static bool name_matches(const u8 *addr, u32 alen, u16 port)
{
	char got[MAGLEV_NAME_MAX + 1], want[MAGLEV_NAME_MAX + 1];
	int n = maglev_format_name(got, sizeof(got), addr, alen, port);

	name_vs_glibc(addr, alen, port, want, sizeof(want));
	if (n == (int)strlen(want) && !strcmp(got, want) &&
	    n <= MAGLEV_ADDR_NAME_MAX)
		return true;
	check(false, "got '%s' (%d) want '%s'", n < 0 ? "" : got, n, want);
	return false;
}

/* Edge cases, each against inet_ntop and against the expected text. */
static void test_format_name_edges(void)
{
	static const struct {
		const char *in;
		u16 port;
		const char *want;
	} cases[] = {
		{ "0.0.0.0", 0, "0.0.0.0:0" },
		{ "255.255.255.255", 65535, "255.255.255.255:65535" },
		{ "10.0.0.1", 80, "10.0.0.1:80" },
		{ "::", 0, "[::]:0" },
		{ "::1", 80, "[::1]:80" },
		{ "1::", 80, "[1::]:80" },
		{ "::1.2.3.4", 80, "[::1.2.3.4]:80" },
		{ "::0.1.0.0", 80, "[::0.1.0.0]:80" },
		{ "::0.0.0.2", 80, "[::2]:80" },
		{ "::ffff:1.2.3.4", 80, "[::ffff:1.2.3.4]:80" },
		{ "::ffff:0.0.0.0", 80, "[::ffff:0.0.0.0]:80" },
		{ "::fffe:1.2.3.4", 80, "[::fffe:102:304]:80" },
		{ "::ffff:0:1.2.3.4", 80, "[::ffff:0:102:304]:80" },
		{ "0:0:0:0:0:1:0:0", 80, "[::1:0:0]:80" },
		{ "2001:db8::5efe:10.0.0.1", 443, "[2001:db8::5efe:a00:1]:443" },
		{ "fe80::200:5efe:c000:201", 1, "[fe80::200:5efe:c000:201]:1" },
		{ "2001:db8:0:0:1:0:0:1", 80, "[2001:db8::1:0:0:1]:80" },
		{ "2001:0:0:1:0:0:0:1", 80, "[2001:0:0:1::1]:80" },
		{ "2001:db8:0:1:1:1:1:1", 80, "[2001:db8:0:1:1:1:1:1]:80" },
		{ "1:0:1:0:1:0:1:0", 80, "[1:0:1:0:1:0:1:0]:80" },
		{ "2001:DB8:AAAA:0BCD::", 80, "[2001:db8:aaaa:bcd::]:80" },
		{ "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 65535,
		  "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535" },
		{ "::ffff:ffff:ffff:ffff:ffff:ffff", 80,
		  "[::ffff:ffff:ffff:ffff:ffff:ffff]:80" },
	};
	char got[MAGLEV_NAME_MAX + 1];
	u8 a[16];
	size_t i;
	int n;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		u32 alen = strchr(cases[i].in, ':') ? 16 : 4;

		if (inet_pton(alen == 4 ? AF_INET : AF_INET6, cases[i].in,
			      a) != 1) {
			check(false, "inet_pton %s", cases[i].in);
			continue;
		}
		name_matches(a, alen, cases[i].port);
		n = maglev_format_name(got, sizeof(got), a, alen,
				       cases[i].port);
		check(n > 0 && !strcmp(got, cases[i].want),
		      "%s: got '%s' want '%s'", cases[i].in, got,
		      cases[i].want);
	}
	/* Too small a buffer, a bad length. */
	inet_pton(AF_INET6, "2001:db8::1", a);
	check(maglev_format_name(got, 17, a, 16, 80) == 16, "exact fit");
	check(maglev_format_name(got, 16, a, 16, 80) == -ENOSPC && !got[0],
	      "one byte short");
	check(maglev_format_name(got, 0, a, 16, 80) == -ENOSPC, "len 0");
	check(maglev_format_name(got, sizeof(got), a, 5, 80) == -EINVAL &&
	      !got[0], "address length 5");
}

/* Random addresses, most groups zero or all ones, against inet_ntop. */
static void test_format_name_random(void)
{
	static const u16 special[] = { 0, 0, 0, 0, 0xffff, 1, 0x5efe, 0x200 };
	u32 round, bad = 0;
	u8 a[16];

	for (round = 0; round < 400000 && bad < 10; round++) {
		u32 j, alen = round % 8 ? 16 : 4;
		u64 r = rnd();

		for (j = 0; j < 8; j++) {
			u16 g;

			switch (r >> (4 * j) & 3) {
			case 0:
			case 1:
				g = 0;
				break;
			case 2:
				g = special[rnd() % ARRAY_SIZE(special)];
				break;
			default:
				g = rnd() >> (rnd() % 16 + 48);
				break;
			}
			a[2 * j] = g >> 8;
			a[2 * j + 1] = (u8)g;
		}
		/* Often the prefixes of the two dotted forms. */
		if (round % 5 == 1)
			memset(a, 0, 10 + 2 * (r >> 40 & 1));
		if (round % 10 == 3)
			a[10] = a[11] = 0xff;
		if (!name_matches(alen == 4 ? a + 12 : a, alen, (u16)(r >> 48)))
			bad++;
	}
}

/* The first size that fits N backends: M itself or a prime >= N. */
static void test_fit_size(void)
{
	static const struct {
		u32 size, n, want;
	} cases[] = {
		{ 251, 0, 251 }, { 251, 251, 251 }, { 251, 252, 257 },
		{ 65537, 65535, 65537 }, { 251, 65535, 65537 },
		{ 4093, 4094, 4099 }, { 5000011, 65535, 5000011 },
		{ 251, 65536, 251 }, { 257, 257, 257 }, { 251, 1000, 1009 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		u32 m = maglev_fit_size(cases[i].size, cases[i].n);

		check(m == cases[i].want, "fit(%u, %u) = %u want %u",
		      cases[i].size, cases[i].n, m, cases[i].want);
	}
	/* Up to 65535 backends: a valid size, the smallest prime >= N. */
	for (i = 0; i <= MAGLEV_MAX_BACKENDS; i += 97) {
		u32 m = maglev_fit_size(251, (u32)i), k;
		bool smallest = true;

		for (k = (u32)i; m > 251 && k < m; k++)
			if (maglev_is_prime(k))
				smallest = false;
		check(!maglev_check_size(m, NULL) && m >= i && smallest,
		      "fit(251, %zu) = %u", i, m);
	}
}

/* Weights up to INT_MAX: scaled, never refused, ratios kept. */
static void test_big_weights(void)
{
	struct set s, t;
	u32 i, heavy, light;
	u16 *first;

	/* 70000 : 1 at M = 65537: the light one keeps a slot or two. */
	set_init(&s, 65537, 2);
	name_ip(&s.b[0], 1);
	name_ip(&s.b[1], 2);
	s.b[0].weight = 70000;
	s.b[1].weight = 1;
	check(!build(&s), "70000:1 build");
	heavy = s.b[0].slots;
	light = s.b[1].slots;
	check(light >= 1 && light <= 2 && heavy + light == 65537,
	      "70000:1 gives %u:%u", heavy, light);

	/* INT_MAX next to 1, and INT_MAX everywhere. */
	s.b[0].weight = INT_MAX;
	check(!build(&s), "INT_MAX:1 build");
	check(s.b[1].slots >= 1 && s.b[1].slots <= 2,
	      "INT_MAX:1 light %u", s.b[1].slots);
	s.b[1].weight = INT_MAX;
	check(!build(&s), "INT_MAX:INT_MAX build");
	check(s.b[0].slots + s.b[1].slots == 65537 &&
	      (s.b[0].slots > s.b[1].slots ? s.b[0].slots - s.b[1].slots :
	       s.b[1].slots - s.b[0].slots) <= 1, "INT_MAX:INT_MAX %u:%u",
	      s.b[0].slots, s.b[1].slots);
	/* Nearly equal big weights: a round of nearly M, an even split. */
	s.b[0].weight = 65536;
	s.b[1].weight = 65535;
	check(!build(&s), "65536:65535 build");
	check(s.b[1].slots >= 32766 && s.b[1].slots <= 32768,
	      "65536:65535 gives %u:%u", s.b[0].slots, s.b[1].slots);
	s.b[0].weight = 1000001;
	s.b[1].weight = 999999;
	check(!build(&s), "1000001:999999 build");
	check(s.b[1].slots >= 32766 && s.b[1].slots <= 32768,
	      "1000001:999999 gives %u:%u", s.b[0].slots, s.b[1].slots);
	s.b[1].weight = (u32)INT_MAX + 1;
	check(build(&s) == -EINVAL, "INT_MAX + 1 accepted");
	s.b[1].weight = 1;
	s.b[1].drain_weight = (u32)INT_MAX + 1;
	check(build(&s) == -EINVAL, "drain weight INT_MAX + 1 accepted");
	set_free(&s);

	/* Weights times a large factor give the same table (gcd). */
	set_init(&s, 10007, 6);
	set_init(&t, 10007, 6);
	for (i = 0; i < 6; i++) {
		name_ip(&s.b[i], i);
		s.b[i].weight = 1 + i * 7;
		t.b[i] = s.b[i];
		t.b[i].weight = s.b[i].weight * 50000;
	}
	check(!build(&s) && !build(&t), "scaled build");
	check(!memcmp(s.own, t.own, 10007 * sizeof(u16)) &&
	      s.t->digest == t.t->digest, "x50000 changed the table");
	/* Shares follow big weights within one point at M = 10007. */
	for (i = 0; i < 6; i++) {
		t.b[i].weight = 100000 + i * 1000000;
	}
	check(!build(&t), "big share build");
	for (i = 0; i < 6; i++) {
		double share = 100.0 * t.b[i].slots / t.size;
		double want = 100.0 * t.b[i].weight / 15600000.0;

		check(share - want < 1.0 && want - share < 1.0,
		      "%.*s share %.2f%% want %.2f%%", (int)t.b[i].name_len,
		      t.b[i].name, share, want);
	}
	set_free(&s);
	set_free(&t);

	/* 65535 backends of weight ~2^31: a 47-bit sum, a 45-bit divisor. */
	set_init(&s, 65537, 65535);
	for (i = 0; i < s.n; i++) {
		name_ip(&s.b[i], i);
		s.b[i].weight = INT_MAX - (i & 1);
	}
	check(!build(&s), "65535 x INT_MAX build");
	first = xmalloc(65537 * sizeof(u16));
	memcpy(first, s.own, 65537 * sizeof(u16));
	for (i = 0; i < s.n; i++) {
		check(s.b[i].turns == 1 && s.b[i].slots >= 1 &&
		      s.b[i].slots <= 2, "backend %u turns %u slots %u", i,
		      s.b[i].turns, s.b[i].slots);
		s.b[i].weight = 1;
	}
	check(!build(&s) && !memcmp(first, s.own, 65537 * sizeof(u16)),
	      "65535 x INT_MAX differs from 65535 x 1");
	free(first);
	set_free(&s);
}

/* Removing the last backend changes every slot's owner to none. */
static void test_churn_to_empty(void)
{
	struct set a, e, z;
	void *work;
	u32 i;

	set_init(&a, 4093, 5);
	set_init(&e, 4093, 0);
	set_init(&z, 4093, 5);
	for (i = 0; i < 5; i++) {
		name_ip(&a.b[i], i);
		a.b[i].weight = 1 + i;
		z.b[i] = a.b[i];
		z.b[i].weight = 0;
	}
	check(!build(&a) && !build(&e) && !build(&z), "build");
	work = xmalloc(maglev_work_bytes(4093, 8));
	check(maglev_churn(a.t, a.b, 5, e.t, e.b, 0, work) == 4093,
	      "to no backends");
	check(maglev_churn(a.t, a.b, 5, z.t, z.b, 5, work) == 4093,
	      "to all weights 0");
	check(maglev_churn(e.t, e.b, 0, a.t, a.b, 5, work) == 4093,
	      "from empty");
	check(maglev_churn(e.t, e.b, 0, z.t, z.b, 5, work) == 0,
	      "empty to empty");
	check(maglev_churn(NULL, NULL, 0, e.t, e.b, 0, work) == 0,
	      "first build, empty");
	free(work);
	set_free(&e);
	/* A size change to an empty table: every slot of the new size. */
	set_init(&e, 251, 0);
	check(!build(&e), "build 251");
	work = xmalloc(maglev_work_bytes(4093, 8));
	check(maglev_churn(a.t, a.b, 5, e.t, e.b, 0, work) == 251,
	      "4093 -> empty 251");
	check(maglev_churn(z.t, z.b, 5, e.t, e.b, 0, work) == 0,
	      "empty 4093 -> empty 251");
	free(work);
	set_free(&a);
	set_free(&e);
	set_free(&z);
}

/*
 * Owners of a table of the backends 10.x.y.z:80 numbered @ids (@n of them,
 * weight 1) at the default size, as backend numbers (-1 for none), per slot
 * in @slot_owner and per client in @client_owner; returns the table size.
 * The size goes through maglev_fit_size() as the kernel's builds do, so a
 * default that followed N would show here.
 */
#define DISRUPT_CLIENTS	4000

static u32 disrupt_owners(const u32 *ids, u32 n, s32 *slot_owner,
			  s32 *client_owner)
{
	const hsiphash_key_t zero = { { 0, 0 } };
	u32 m = maglev_fit_size(MAGLEV_SIZE_DEFAULT, n), i;
	struct set s;

	set_init(&s, m, n);
	for (i = 0; i < n; i++) {
		name_ip(&s.b[i], ids[i]);
		s.b[i].weight = 1;
		s.b[i].priv = (void *)(uintptr_t)ids[i];
	}
	check(!build(&s), "N %u: build", n);
	for (i = 0; i < m; i++) {
		u32 o = maglev_table_get(s.t, i);

		slot_owner[i] = o < n ? (s32)(uintptr_t)s.b[o].priv : -1;
	}
	for (i = 0; i < DISRUPT_CLIENTS; i++) {
		u8 addr[4] = { 172, 16 + i / 65536, i / 256 % 256, i % 256 };
		u32 o = maglev_lookup(s.t, maglev_hash_ip4(addr, &zero));

		client_owner[i] = o < n ? (s32)(uintptr_t)s.b[o].priv : -1;
	}
	set_free(&s);
	return m;
}

/*
 * Of @nr owners before (@a) and after (@b): how many changed at all, and
 * how many changed between two backends that are in both sets (neither is
 * @gone, the backend removed, nor @new, the one added).
 */
static void disrupt_count(const s32 *a, const s32 *b, u32 nr, s32 gone,
			  s32 added, u32 *moved, u32 *between)
{
	u32 i;

	*moved = 0;
	*between = 0;
	for (i = 0; i < nr; i++) {
		if (a[i] == b[i])
			continue;
		(*moved)++;
		if (a[i] != gone && b[i] != added)
			(*between)++;
	}
}

/*
 * Minimal disruption at the defaults, for every N from 1 to 700: adding a
 * backend to N, or removing one of them, moves about 1/N of the clients,
 * and at most 2 % of them (of the slots, and of 4000 client addresses)
 * between backends that stay.  A table size that followed N would move
 * nearly all of them at each of its steps.
 */
static void test_disruption_at_default(void)
{
	s32 *base = xmalloc(65537 * sizeof(s32));
	s32 *next = xmalloc(65537 * sizeof(s32));
	s32 cbase[DISRUPT_CLIENTS], cnext[DISRUPT_CLIENTS], *tmp;
	u32 ids[701], n, i, m, mn, moved, between, worst = 0, worst_n = 0;

	for (i = 0; i < 701; i++)
		ids[i] = i * 7919 % 65536;
	m = disrupt_owners(ids, 1, base, cbase);
	for (n = 1; n <= 700; n++) {
		u32 gone = n / 2, rest[700];
		s32 *rm = xmalloc(65537 * sizeof(s32)), crm[DISRUPT_CLIENTS];

		/* Remove the middle one of the N. */
		for (i = 0; i < n; i++)
			rest[i - (i > gone)] = ids[i];
		mn = disrupt_owners(rest, n - 1, rm, crm);
		check(mn == m, "N %u -> %u: size %u -> %u", n, n - 1, m, mn);
		disrupt_count(base, rm, m, ids[gone], -2, &moved, &between);
		check(between * 50ULL <= m,
		      "remove 1 of %u: %u of %u slots moved between backends that stay",
		      n, between, m);
		/* At most 1/N + 2 %. */
		check(50ULL * n * moved <= 50ULL * m + (u64)n * m,
		      "remove 1 of %u: %u of %u slots moved", n, moved, m);
		if (between > worst) {
			worst = between;
			worst_n = n;
		}
		disrupt_count(cbase, crm, DISRUPT_CLIENTS, ids[gone], -2,
			      &moved, &between);
		check(between * 50 <= DISRUPT_CLIENTS,
		      "remove 1 of %u: %u of %u clients moved between backends that stay",
		      n, between, DISRUPT_CLIENTS);
		free(rm);

		/* Add one to the N. */
		mn = disrupt_owners(ids, n + 1, next, cnext);
		check(mn == m, "N %u -> %u: size %u -> %u", n, n + 1, m, mn);
		disrupt_count(base, next, m, -2, ids[n], &moved, &between);
		check(between * 50ULL <= m,
		      "add 1 to %u: %u of %u slots moved between backends that stay",
		      n, between, m);
		/* At most 1/(N + 1) + 2 %. */
		check(50ULL * (n + 1) * moved <= 50ULL * m + (n + 1ULL) * m,
		      "add 1 to %u: %u of %u slots moved", n, moved, m);
		if (between > worst) {
			worst = between;
			worst_n = n;
		}
		disrupt_count(cbase, cnext, DISRUPT_CLIENTS, -2, ids[n],
			      &moved, &between);
		check(between * 50 <= DISRUPT_CLIENTS,
		      "add 1 to %u: %u of %u clients moved between backends that stay",
		      n, between, DISRUPT_CLIENTS);

		tmp = base;
		base = next;
		next = tmp;
		memcpy(cbase, cnext, sizeof(cbase));
	}
	printf("# N 1..700 at %u slots: at most %u slots (%.2f %%) moved between backends that stay (N %u)\n",
	       m, worst, 100.0 * worst / m, worst_n);
	free(base);
	free(next);
}

int main(void)
{
	run("seed 000 worked example", test_seed000_example);
	run("seed 001 worked example", test_seed001_example);
	run("seed 003 worked example", test_seed003_example);
	run("FNV-1a known values", test_fnv1a);
	run("offset and skip formulas", test_offset_skip_formula);
	run("primality", test_primes);
	run("table size checks", test_check_size);
	run("preference sequences are permutations",
	    test_sequence_is_permutation);
	run("unweighted balance within one slot", test_unweighted_balance);
	run("insertion order independence", test_order_independence);
	run("churn 5 -> 6 -> 5 backends", test_churn_5_6_5);
	run("weight shares within one point", test_weight_shares);
	run("weight 0 gets no slots", test_weight_zero);
	run("huge weights still fill the table", test_huge_weights);
	run("empty table", test_empty);
	run("bad input leaves the table", test_errors_leave_table);
	run("key hash covers every byte", test_key_hash);
	run("lookups spread evenly", test_lookup_spread);
	run("drain and restore", test_drain_restore);
	run("digest", test_digest);
	run("fill matches reference on random cases",
	    test_fill_matches_reference);
	run("every slot width against the reference fill",
	    test_packed_widths);
	run("name formatter: edge cases", test_format_name_edges);
	run("name formatter: random addresses vs inet_ntop",
	    test_format_name_random);
	run("table size fit", test_fit_size);
	run("weights up to INT_MAX", test_big_weights);
	run("churn to an empty table is M", test_churn_to_empty);
	run("add or remove one of N = 1..700 at the default size",
	    test_disruption_at_default);
	return unit_summary();
}
