// SPDX-License-Identifier: GPL-2.0
/*
 * maglev_ref.c - plain reference fills (see maglev_ref.h).
 *
 * Deliberately straightforward: one loop per sentence of the specification.
 * Do not optimise this file; its whole value is being obviously right.
 */
#include <stdio.h>
#include <stdlib.h>

#include "maglev_ref.h"

static u32 *ref_alloc_next(u32 n)
{
	u32 *next = calloc(n ? n : 1, sizeof(*next));

	if (!next) {
		fprintf(stderr, "maglev_ref: out of memory\n");
		abort();
	}
	return next;
}

static bool ref_any_turns(const struct maglev_backend *b, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (b[i].turns)
			return true;
	return false;
}

u32 maglev_ref_fill(u16 *slot, u32 size, const struct maglev_backend *b,
		    u32 n)
{
	u32 filled = 0;
	u32 *next;
	u32 i, k, pos;

	for (pos = 0; pos < size; pos++)
		slot[pos] = MAGLEV_NONE;

	if (!ref_any_turns(b, n))
		return 0;

	next = ref_alloc_next(n);
	while (filled < size) {
		for (i = 0; i < n && filled < size; i++) {
			for (k = 0; k < b[i].turns && filled < size; k++) {
				/* walk the preference sequence to an empty slot */
				do {
					pos = (u32)(((u64)b[i].offset +
						     (u64)next[i] * b[i].skip) %
						    size);
					next[i]++;
				} while (slot[pos] != MAGLEV_NONE);
				slot[pos] = (u16)i;
				filled++;
			}
		}
	}
	free(next);
	return filled;
}

u32 maglev_ref_h32(const void *data, size_t len)
{
	const unsigned char *p = data;
	u32 h = 2166136261U;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 16777619U;
	}
	return h;
}

u32 maglev_ref_width(u32 n)
{
	u32 w;

	if (n <= 1)
		return 0;
	for (w = 1; (1ULL << w) < n; w++)
		;
	return w;
}

u32 maglev_ref_owner(const struct maglev_table *t, u32 slot)
{
	u32 w = maglev_ref_width(t->nr_backends), v = 0, k;
	u64 bit = (u64)slot * w;

	if (!t->nr_filled)
		return MAGLEV_NONE;
	/* One bit at a time: bit k of the string is bit k % 8 of byte k / 8. */
	for (k = 0; k < w; k++, bit++)
		v |= (u32)(t->byte[bit / 8] >> (bit % 8) & 1) << k;
	return v;
}

static u64 ref_mix(u64 x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

u64 maglev_ref_digest(const struct maglev_table *t,
		      const struct maglev_backend *b, u32 n)
{
	u64 d = ref_mix(0x6d61676c65760001ULL ^ t->size);
	u32 i, s, j;

	d = ref_mix(d ^ n);
	for (i = 0; i < n; i++)
		d = maglev_hash(b[i].name, b[i].name_len, d);
	for (s = 0; s < t->size; s += 4) {
		u64 g = 0;

		for (j = 0; j < 4; j++) {
			u64 o = s + j < t->size ? maglev_ref_owner(t, s + j) :
				0xffff;

			g |= o << (16 * j);
		}
		d = ref_mix(d ^ g);
	}
	return d;
}
