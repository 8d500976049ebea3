/* SPDX-License-Identifier: GPL-2.0 */
/*
 * maglev_ref.h - plain reference fills for the host tests and the benchmark.
 *
 * maglev_ref_fill() follows the "Fill" section of docs/specification.md
 * word for word, with no tricks, so that the optimised maglev_fill() can be checked
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
 * @slot: room for @size owners
 * @size: table size M, a prime
 * @b: backends in name order, with offset, skip and turns set (for example
 *	by maglev_prepare()); nothing else is read
 * @n: number of backends
 *
 * Round after round, each backend in array order takes its @turns turns in a
 * row; on each turn it walks (offset + next * skip) % M, next = 0, 1, ...,
 * from where it stopped, and claims the first empty slot.  The fill stops
 * as soon as every slot is owned.  If no backend has turns, every slot is
 * %MAGLEV_NONE.  Does not touch @b.
 *
 * Return: the number of owned slots, @size or 0.
 */
u32 maglev_ref_fill(u16 *slot, u32 size, const struct maglev_backend *b,
		    u32 n);

/* h32 of the specification (FNV-1a), for checking offsets and skips. */
u32 maglev_ref_h32(const void *data, size_t len);

/* The slot width of "Packed slots": smallest power of two W, 2^W >= n. */
u32 maglev_ref_width(u32 n);

/*
 * Owner of @slot read from @t's words as "Packed slots" of the
 * specification describes them (not with maglev_table_get()): %MAGLEV_NONE for an empty
 * table.
 */
u32 maglev_ref_owner(const struct maglev_table *t, u32 slot);

/*
 * The digest of docs/specification.md over @t's owners (maglev_ref_owner())
 * and the names of @b, the @n backends in name order.
 */
u64 maglev_ref_digest(const struct maglev_table *t,
		      const struct maglev_backend *b, u32 n);

#endif /* _MAGLEV_REF_H */
