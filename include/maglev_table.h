/* SPDX-License-Identifier: GPL-2.0 */
/*
 * maglev_table.h - Maglev lookup table (Eisenbud et al., NSDI 2016).
 *
 * The algorithm lives in maglev_table.c and compiles unchanged into the
 * kernel module and into userspace programs (maglev-sim, the host tests, the
 * benchmark).  It never allocates: the caller supplies the table and a
 * scratch area sized by maglev_table_bytes() and maglev_work_bytes(), so the
 * kernel can build a new table off to the side and publish it with one
 * pointer swap.
 *
 * Specification (normative; another implementation following it produces
 * bit-identical tables and digests):
 *
 * h32(s) is 32-bit FNV-1a: h = 2166136261; for each byte c: h ^= c,
 * h *= 16777619 (mod 2^32).
 *
 * A backend is a name of 1..MAGLEV_NAME_MAX bytes and a weight 0..65535.
 * For table size M (a prime):
 *   offset = h32(name "|offset") % M
 *   skip   = h32(name "|skip") % (M - 1) + 1
 * and its preference sequence is offset + j * skip (mod M), j = 0, 1, ...
 *
 * Turns: the positive weights are divided by their gcd; the quotient is the
 * number of turns the backend takes per round.  If the turns of one round add
 * up to more than M (P positive backends), every quotient is divided by
 * s = ceil(T / (M - P)) and rounded down, with a minimum of 1, so a round
 * fits in M; when P == M every backend takes one turn.
 *
 * Fill: backends take their turns in plain byte order of their names
 * (memcmp, a shorter name first when it is a prefix), round after round; a
 * backend with t turns claims t slots in a row.  On each turn the backend
 * walks its preference sequence from where it stopped and claims the first
 * empty slot.  The fill stops when every slot is owned.  Backends with weight
 * 0 take no turns.
 *
 * Draining: a backend with weight 0 and a non-zero drain_weight keeps the
 * slots it would own with weight drain_weight, except that each of them is
 * handed to the owner of the same slot in the table built without the
 * draining backends.  So only keys that mapped to a draining backend move,
 * and restoring drain_weight gives back the previous table exactly.
 *
 * Digest (64 bits), with mix(x) = murmur3's fmix64:
 *   d = mix(0x6d61676c65760001 ^ M); d = mix(d ^ N);
 *   for each backend in name order: d = maglev_hash(name, name_len, d);
 *   for each group of four slots (the last one padded with 0xffff):
 *     d = mix(d ^ (s0 | s1 << 16 | s2 << 32 | s3 << 48))
 * where s is the owner's index in name order, 0xffff for none.
 *
 * Lookup: slot = ((hash >> 32) * M) >> 32 for a 64-bit key hash.
 */
#ifndef _MAGLEV_TABLE_H
#define _MAGLEV_TABLE_H

#include "maglev_compat.h"

#define MAGLEV_NAME_MAX		64
#define MAGLEV_SIZE_MIN		251
#define MAGLEV_SIZE_MAX		5000011
#define MAGLEV_SIZE_DEFAULT	65537
#define MAGLEV_WEIGHT_MAX	65535
/* Slot entries are 16-bit backend indices; 0xffff means "no backend". */
#define MAGLEV_MAX_BACKENDS	65535
#define MAGLEV_NONE		0xffffU

/**
 * struct maglev_backend - one backend (real server) of a table build
 * @name: backend name, not NUL-terminated; "A.B.C.D:port" or "[IPv6]:port"
 *	in the IPVS scheduler
 * @name_len: length of @name in bytes, 1..MAGLEV_NAME_MAX
 * @weight: 0..MAGLEV_WEIGHT_MAX; 0 means drained (no slots)
 * @drain_weight: with @weight 0, the weight whose slots the backend hands
 *	over to the others (see "Draining" above); 0 for none
 * @priv: caller's cookie, carried along when maglev_build() sorts backends
 * @offset: start of the preference sequence (output of maglev_build(),
 *	input of maglev_fill())
 * @skip: stride of the preference sequence, 1..M-1 (as @offset)
 * @turns: slots claimed per round (as @offset); 0 for no slots
 * @slots: number of slots the backend owns in the built table (output)
 */
struct maglev_backend {
	char name[MAGLEV_NAME_MAX];
	u32 name_len;
	u32 weight;
	u32 drain_weight;
	void *priv;
	u32 offset;
	u32 skip;
	u32 turns;
	u32 slots;
};

/**
 * struct maglev_table - a built lookup table
 * @size: number of slots M (a prime)
 * @nr_backends: number of backends the slot entries index (in name order)
 * @nr_filled: slots that have an owner: @size, or 0 for an empty table
 * @digest: 64-bit digest of M, the backend names and the slot owners
 * @slot: @size entries, each a backend index or %MAGLEV_NONE
 */
struct maglev_table {
	u32 size;
	u32 nr_backends;
	u32 nr_filled;
	u32 reserved;
	u64 digest;
	u16 slot[];
};

/**
 * struct maglev_stats - optional figures from a build
 * @probes: preference-sequence positions examined by the fill(s)
 * @fills: number of fills run (2 when a backend is draining)
 */
struct maglev_stats {
	u64 probes;
	u32 fills;
};

bool maglev_is_prime(u32 n);
int maglev_check_size(u32 size, const char **why);
size_t maglev_table_bytes(u32 size);
size_t maglev_work_bytes(u32 size, u32 nr_backends);

u32 maglev_h32(const void *data, size_t len);
u64 maglev_hash(const void *data, size_t len, u64 seed);

int maglev_prepare(struct maglev_backend *b, u32 n, u32 size,
		   const char **why);
void maglev_fill(struct maglev_table *t, u32 size,
		 const struct maglev_backend *b, u32 n, void *work,
		 struct maglev_stats *st);
int maglev_build(struct maglev_table *t, u32 size, struct maglev_backend *b,
		 u32 n, void *work, struct maglev_stats *st, const char **why);
u64 maglev_digest(const struct maglev_table *t,
		  const struct maglev_backend *b, u32 n);
u32 maglev_churn(const struct maglev_table *old,
		 const struct maglev_backend *ob, u32 on,
		 const struct maglev_table *new,
		 const struct maglev_backend *nb, u32 nn, void *work);

/**
 * maglev_slot_of() - slot a key hash falls in
 * @t: table
 * @hash: 64-bit key hash from maglev_hash()
 *
 * Return: ((@hash >> 32) * M) >> 32, a slot index below M.
 */
static inline u32 maglev_slot_of(const struct maglev_table *t, u64 hash)
{
	return (u32)(((hash >> 32) * (u64)t->size) >> 32);
}

/**
 * maglev_lookup() - backend index for a key hash
 * @t: table
 * @hash: 64-bit key hash from maglev_hash()
 *
 * One multiply and one table load.
 *
 * Return: the owner's index in name order, or %MAGLEV_NONE if the table is
 * empty.
 */
static inline u32 maglev_lookup(const struct maglev_table *t, u64 hash)
{
	return t->slot[maglev_slot_of(t, hash)];
}

#endif /* _MAGLEV_TABLE_H */
