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

void maglev_ref_fill(struct maglev_table *t, u32 size,
		     const struct maglev_backend *b, u32 n)
{
	u32 filled = 0;
	u32 *next;
	u32 i, k, pos;

	t->size = size;
	t->nr_backends = n;
	t->nr_filled = 0;
	t->reserved = 0;
	t->digest = 0;
	for (pos = 0; pos < size; pos++)
		t->slot[pos] = MAGLEV_NONE;

	if (!ref_any_turns(b, n))
		return;

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
				} while (t->slot[pos] != MAGLEV_NONE);
				t->slot[pos] = (u16)i;
				filled++;
			}
		}
	}
	free(next);
	t->nr_filled = filled;
}
