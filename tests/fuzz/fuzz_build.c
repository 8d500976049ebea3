// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_build.c - libFuzzer target for maglev_build() and maglev_prepare().
 *
 * The input chooses a table size (valid primes, small and odd sizes, raw
 * 32-bit values), a backend set (names from a small alphabet so that
 * duplicates and prefixes are common, or raw bytes; lengths 0..69), weights
 * and drain weights (0, small, 16-bit, raw 32-bit) and a lookup hash key
 * (hsiphash()).  Only
 * the API of maglev_table.h is called, and every result is checked against
 * docs/specification.md:
 *
 *   - a build of valid input (fz_must_build()) succeeds; a failed build sets
 *     a reason and leaves the table untouched;
 *   - the table equals the plain reference fill of tests/maglev_ref.c, with
 *     the draining rule applied on top (slot by slot, from a second
 *     reference fill without the draining backends);
 *   - every slot is owned when any weight is positive, none otherwise, and
 *     no backend of weight 0 owns a slot;
 *   - turns: 0 without weight, at least 1 with one, at most M per round,
 *     exactly weight / gcd when a round of those fits in M;
 *   - without draining, each backend owns between R * turns and
 *     (R + 1) * turns slots, R = floor(M / total turns);
 *   - the slot counts, nr_filled and the digest agree with the slots;
 *   - the same set in another order, sorted, gives the same table (order
 *     independence), churn against itself is 0, lookups stay in range;
 *   - a set out of name order is refused.
 *
 * A broken invariant aborts (libFuzzer reports it as a crash); ASan and
 * UBSan catch the rest.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maglev_table.h"
#include "maglev_ref.h"

#define FUZZ_NAME "fuzz_build"
#include "fuzz_assert.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

#define FZ_MAX_BACKENDS	48
/* Largest table size the fuzzer builds; larger valid sizes are folded. */
#define FZ_MAX_SIZE	70001

struct fz_in {
	const u8 *p;
	size_t n;
};

static u32 fz_byte(struct fz_in *in)
{
	u32 v = 0;

	if (in->n) {
		v = *in->p++;
		in->n--;
	}
	return v;
}

static u32 fz_u16(struct fz_in *in)
{
	return fz_byte(in) | fz_byte(in) << 8;
}

static u32 fz_u32(struct fz_in *in)
{
	return fz_u16(in) | fz_u16(in) << 16;
}

static u32 fz_next_prime(u32 n)
{
	while (!maglev_is_prime(n))
		n++;
	return n;
}

static u32 fz_size(struct fz_in *in)
{
	static const u32 primes[] = { 251, 257, 263, 509, 1021, 4093,
					   65537 };
	u32 mode = fz_byte(in) % 4, v;

	switch (mode) {
	case 0:
		return fz_next_prime(251 + fz_u16(in) % 4000);
	case 1:
		v = fz_u32(in);
		if (!maglev_check_size(v, NULL) && v > FZ_MAX_SIZE)
			v = fz_next_prime(251 + v % (FZ_MAX_SIZE - 300));
		return v;
	case 2:
		return primes[fz_byte(in) % ARRAY_SIZE(primes)];
	default:
		return fz_u16(in) % 300;
	}
}

static u32 fz_weight(struct fz_in *in)
{
	u32 mode = fz_byte(in);

	switch (mode % 8) {
	case 0:
	case 1:
		return 0;
	case 2:
	case 3:
	case 4:
		return 1 + mode / 8 % 10;
	case 5:
		return fz_u16(in);
	case 6:
		return 65535 + fz_byte(in) % 3;
	default:
		return fz_u32(in);
	}
}

static void fz_name(struct fz_in *in, struct maglev_backend *b)
{
	u32 mode = fz_byte(in), len, i;

	if (mode < 160) {
		/* "10.0.0.X:80"-like names from a small alphabet */
		len = snprintf(b->name, sizeof(b->name), "10.0.%u.%u:%u",
			       mode % 3, fz_byte(in) % 12, 80 + mode % 2);
	} else {
		len = fz_byte(in) % 70;
		for (i = 0; i < len && i < MAGLEV_NAME_MAX; i++)
			b->name[i] = (char)(mode < 224 ? 'a' + fz_byte(in) % 3 :
						       fz_byte(in));
	}
	b->name_len = len;
}

static bool fz_draining(const struct maglev_backend *b)
{
	return !b->weight && b->drain_weight;
}

static int fz_cmp(const struct maglev_backend *a,
		  const struct maglev_backend *b)
{
	u32 n = a->name_len < b->name_len ? a->name_len : b->name_len;
	int r = memcmp(a->name, b->name, n);

	if (r)
		return r;
	return (a->name_len > b->name_len) - (a->name_len < b->name_len);
}

/* Input that the specification says must build. */
static bool fz_must_build(const struct maglev_backend *b, u32 n,
			  u32 size)
{
	u32 i, j;

	if (maglev_check_size(size, NULL) || n > size)
		return false;
	for (i = 0; i < n; i++) {
		if (!b[i].name_len || b[i].name_len > MAGLEV_NAME_MAX)
			return false;
		if (b[i].weight > MAGLEV_WEIGHT_MAX ||
		    b[i].drain_weight > MAGLEV_WEIGHT_MAX)
			return false;
		for (j = 0; j < i; j++)
			if (!fz_cmp(&b[i], &b[j]))
				return false;
	}
	return true;
}

static u32 fz_gcd(u32 a, u32 b)
{
	while (b) {
		u32 t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* Turns of a prepared set (weights only, no draining), as "Turns" says. */
static void fz_check_turns(const struct maglev_backend *b, u32 n,
			   u32 size)
{
	u64 total = 0, raw = 0;
	u32 g = 0, i;

	for (i = 0; i < n; i++) {
		if (!b[i].weight) {
			fz_assert(!b[i].turns, "backend %u: weight 0, %u turns",
				  i, b[i].turns);
			continue;
		}
		fz_assert(b[i].turns >= 1, "backend %u: weight %u, no turns",
			  i, b[i].weight);
		total += b[i].turns;
		g = fz_gcd(g, b[i].weight);
	}
	fz_assert(total <= size, "%llu turns per round, M %u",
		  (unsigned long long)total, size);
	if (!g)
		return;
	for (i = 0; i < n; i++)
		raw += b[i].weight / g;
	if (raw > size)
		return;
	for (i = 0; i < n; i++)
		fz_assert(b[i].turns == b[i].weight / g,
			  "backend %u: weight %u gcd %u, %u turns", i,
			  b[i].weight, g, b[i].turns);
}

static struct maglev_table *fz_table(u32 size, u32 n)
{
	struct maglev_table *t = malloc(maglev_table_bytes(size, n));

	fz_assert(t, "out of memory");
	return t;
}

static u16 *fz_slots(u32 size)
{
	u16 *t = malloc(size * sizeof(u16));

	fz_assert(t, "out of memory");
	return t;
}

/* The bytes of @t a build wrote: the header and the packed words. */
static size_t fz_used_bytes(const struct maglev_table *t)
{
	u32 w = maglev_ref_width(t->nr_backends);

	if (!t->nr_filled)
		w = 0;
	/* The last slot's 4-byte load ends the slot bytes. */
	return offsetof(struct maglev_table, byte) +
	       (w ? ((size_t)t->size - 1) * w / 8 + 4 : 4);
}

/* Reference: the fill of the "Fill" and "Draining" sections. */
static u16 *fz_reference(const struct maglev_backend *b, u32 n, u32 size)
{
	u16 *t = fz_slots(size), *alt;
	struct maglev_backend *nd;
	bool drain = false;
	u32 i, s;
	int err;

	/* b is prepared (turns include drain weights): the primary fill */
	maglev_ref_fill(t, size, b, n);
	for (i = 0; i < n; i++)
		drain |= fz_draining(&b[i]);
	if (!drain)
		return t;

	/* the same set without the draining backends' turns */
	nd = calloc(n, sizeof(*nd));
	fz_assert(nd, "out of memory");
	memcpy(nd, b, n * sizeof(*nd));
	for (i = 0; i < n; i++)
		if (fz_draining(&nd[i]))
			nd[i].drain_weight = 0;
	err = maglev_prepare(nd, n, size, NULL);
	fz_assert(!err, "prepare without draining failed: %d", err);
	fz_check_turns(nd, n, size);
	alt = fz_slots(size);
	maglev_ref_fill(alt, size, nd, n);
	for (s = 0; s < size; s++)
		if (t[s] != MAGLEV_NONE && fz_draining(&b[t[s]]))
			t[s] = alt[s];
	free(alt);
	free(nd);
	return t;
}

static void fz_check_table(const struct maglev_table *t,
			   const struct maglev_backend *b, u32 n,
			   u32 size, const u16 *ref)
{
	u32 slots[FZ_MAX_BACKENDS] = { 0 };
	u32 i, s, filled = 0;
	bool positive = false, drain = false;
	u64 total = 0;

	fz_assert(t->size == size, "size %u, want %u", t->size, size);
	fz_assert(t->nr_backends == n, "nr_backends %u, want %u",
		  t->nr_backends, n);
	for (i = 0; i < n; i++) {
		positive |= b[i].weight > 0;
		drain |= fz_draining(&b[i]);
		total += b[i].turns;
		if (i)
			fz_assert(fz_cmp(&b[i - 1], &b[i]) < 0,
				  "backends %u, %u out of name order", i - 1, i);
	}
	fz_assert(t->width == (t->nr_filled ? maglev_ref_width(n) : 0),
		  "width %u for %u backends", t->width, n);
	for (s = 0; s < size; s++) {
		u32 o = maglev_ref_owner(t, s);

		fz_assert(o == ref[s],
			  "slot %u: owner %u, reference fill says %u", s, o,
			  ref[s]);
		fz_assert(maglev_table_get(t, s) == o,
			  "slot %u: maglev_table_get %u, packed %u", s,
			  maglev_table_get(t, s), o);
		if (o == MAGLEV_NONE)
			continue;
		fz_assert(o < n, "slot %u: owner %u of %u", s, o, n);
		fz_assert(b[o].weight, "slot %u: owner %u has weight 0", s, o);
		slots[o]++;
		filled++;
	}
	fz_assert(filled == (positive ? size : 0),
		  "%u of %u slots owned, positive weight %d", filled, size,
		  positive);
	fz_assert(t->nr_filled == filled, "nr_filled %u, %u owned",
		  t->nr_filled, filled);
	for (i = 0; i < n; i++) {
		fz_assert(b[i].slots == slots[i], "backend %u: slots %u, owns %u",
			  i, b[i].slots, slots[i]);
		if (drain || !total)
			continue;
		/* R full rounds, then part of one more */
		fz_assert(slots[i] >= size / total * b[i].turns &&
			  slots[i] <= (size / total + 1) * b[i].turns,
			  "backend %u: %u slots for %u of %llu turns, M %u", i,
			  slots[i], b[i].turns, (unsigned long long)total,
			  size);
	}
	/* The owners are the reference's: so is the digest over them. */
	fz_assert(t->digest == maglev_ref_digest(t, b, n), "digest");
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t len);

int LLVMFuzzerTestOneInput(const u8 *data, size_t len)
{
	struct maglev_backend in_b[FZ_MAX_BACKENDS], b[FZ_MAX_BACKENDS];
	struct maglev_backend b2[FZ_MAX_BACKENDS], nd[FZ_MAX_BACKENDS];
	struct fz_in in = { data, len };
	struct maglev_table *t, *t2;
	u16 *ref;
	const char *why = NULL;
	u32 size, n, i, rot;
	bool must, drain, sorted = true;
	hsiphash_key_t key;
	void *work;
	int err;

	size = fz_size(&in);
	n = fz_byte(&in) % (FZ_MAX_BACKENDS + 1);
	rot = fz_byte(&in);
	/* 64 bits of input make the hash key. */
	key.key[0] = (u64)fz_u32(&in) << 32 | fz_u32(&in);
	key.key[1] = key.key[0] * 0x9e3779b97f4a7c15ULL;
	memset(in_b, 0, sizeof(in_b));
	for (i = 0; i < n; i++) {
		fz_name(&in, &in_b[i]);
		in_b[i].weight = fz_weight(&in);
		in_b[i].drain_weight = in_b[i].weight ? 0 : fz_weight(&in);
		in_b[i].priv = &in_b[i];
	}
	must = fz_must_build(in_b, n, size);

	/* unsorted input is refused, with -EINVAL when that is all */
	for (i = 1; i < n; i++)
		sorted &= fz_cmp(&in_b[i - 1], &in_b[i]) < 0;
	memcpy(nd, in_b, sizeof(nd));
	err = maglev_prepare(nd, n, size, NULL);
	if (!sorted)
		fz_assert(must ? err == -EINVAL : err, "unsorted set: %d", err);

	/* prepare alone: validates like build, sets turns */
	sort(nd, n, sizeof(*nd), maglev_backend_cmp, NULL);
	err = maglev_prepare(nd, n, size, &why);
	fz_assert(!err || why, "prepare failed (%d) without a reason", err);
	if (must)
		fz_assert(!err, "prepare refused valid input: %s", why);
	/* only invalid sizes are this large: do not allocate them */
	if (size > FZ_MAX_SIZE)
		return 0;

	t = fz_table(size, n);
	memset(t, 0xa5, maglev_table_bytes(size, n));
	work = malloc(maglev_work_bytes(size, n));
	fz_assert(work, "out of memory");
	memcpy(b, in_b, sizeof(b));
	sort(b, n, sizeof(*b), maglev_backend_cmp, NULL);
	why = NULL;
	err = maglev_build(t, size, b, n, work, NULL, &why);
	if (err) {
		size_t k, bytes = maglev_table_bytes(size, n);
		u8 *p = (u8 *)t;

		fz_assert(!must, "build refused valid input: %s", why);
		fz_assert(why, "build failed (%d) without a reason", err);
		for (k = 0; k < bytes; k++)
			fz_assert(p[k] == 0xa5, "failed build wrote byte %zu", k);
		goto out;
	}
	/* the sort carries priv along */
	drain = false;
	for (i = 0; i < n; i++) {
		const struct maglev_backend *o = b[i].priv;

		fz_assert(o >= in_b && o < in_b + n && !fz_cmp(o, &b[i]),
			  "backend %u: priv lost", i);
		drain |= fz_draining(&b[i]);
	}
	if (!drain)
		fz_check_turns(b, n, size);
	ref = fz_reference(b, n, size);
	fz_check_table(t, b, n, size, ref);

	/* order independence: the same set rotated and reversed */
	for (i = 0; i < n; i++)
		b2[i] = in_b[(n - 1 - (i + rot) % n) % n];
	t2 = fz_table(size, n);
	sort(b2, n, sizeof(*b2), maglev_backend_cmp, NULL);
	err = maglev_build(t2, size, b2, n, work, NULL, NULL);
	fz_assert(!err, "the same set in another order failed: %d", err);
	fz_assert(fz_used_bytes(t) <= maglev_table_bytes(size, n),
		  "table overflows maglev_table_bytes()");
	fz_assert(!memcmp(t, t2, fz_used_bytes(t)),
		  "another order gave another table");
	fz_assert(!maglev_churn(t, b, n, t2, b2, n, work), "churn with itself");
	for (i = 0; i < 64; i++) {
		u32 h = hsiphash(&i, sizeof(i), &key);
		u32 o = maglev_lookup(t, h);

		fz_assert(t->nr_filled ? o < n : o == MAGLEV_NONE,
			  "lookup gave %u of %u", o, n);
	}
	free(t2);
	free(ref);
out:
	free(work);
	free(t);
	return 0;
}
