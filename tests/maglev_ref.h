/* SPDX-License-Identifier: GPL-2.0 */
/*
 * maglev_ref.h - plain reference fills for the host tests and the benchmark.
 *
 * maglev_ref_fill() follows the "Fill" paragraph of maglev_table.h word for
 * word, with no tricks, so that the optimised maglev_fill() can be checked
 * bit-identical against it.  (The benchmark's ip_vs_mh baseline is a
 * faithful port of ip_vs_mh, tools/bench/mh_port.c.)
 *
 * Userspace only: it may allocate.
 */
#ifndef _MAGLEV_REF_H
#define _MAGLEV_REF_H

#include "maglev_table.h"

/**
 * maglev_ref_fill() - reference fill
 * @t: table with room for @size slots (maglev_table_bytes(@size))
 * @size: table size M, a prime
 * @b: backends in name order, with offset, skip and turns set (for example
 *	by maglev_prepare()); nothing else is read
 * @n: number of backends
 *
 * Round after round, each backend in array order takes its @turns turns in a
 * row; on each turn it walks (offset + next * skip) % M, next = 0, 1, ...,
 * from where it stopped, and claims the first empty slot.  The fill stops
 * as soon as every slot is owned.  If no backend has turns, every slot is
 * %MAGLEV_NONE.
 *
 * Sets @t->size, @t->nr_backends, @t->nr_filled and the slots; @t->digest
 * is set to 0 (use maglev_digest()).  Does not touch @b.
 */
void maglev_ref_fill(struct maglev_table *t, u32 size,
		     const struct maglev_backend *b, u32 n);

#endif /* _MAGLEV_REF_H */
