/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ring_hash.h - consistent-hash rings ("ketama"), for comparison with Maglev.
 *
 * The kernel scheduler is Maglev only; this code serves maglev-sim and the
 * comparison tool (tools/bench/compare.c).  Like maglev_table.c, tools/ring/ring_hash.c is
 * the algorithm only and never allocates: the caller owns the node and
 * point arrays.
 *
 * Specification (normative; from the source documents in seeds 002 and 004):
 *
 * ring64 (seed 002): the position of a text is FNV-1a 64 of its bytes
 * (h = 14695981039346656037; per byte: h ^= c, h *= 1099511628211 mod 2^64)
 * passed through the finalizer
 *   z = (z ^ (z >> 30)) * 13787848793156543929
 *   z = (z ^ (z >> 27)) * 10723151780598845931
 *   z = z ^ (z >> 31)
 * A server has V points (1..RING_POINTS_MAX) at the positions of the texts
 * "<name>#<i>", i = 0..V-1 in decimal.  Check values: "a" gives
 * 12638187200555641996 after FNV-1a 64 and 198367012849983736 after the
 * finalizer.
 *
 * ring32 (seed 004): the position of a text is FNV-1a 32 of its bytes
 * (h = 2166136261; per byte: h ^= c, h *= 16777619 mod 2^32); a server has
 * one point, at the position of its name.
 *
 * Both: points are ordered by position, and points at the same position by
 * server name (bytes, memcmp, a shorter name first when it is a prefix).  A
 * key belongs to the server of the first point, in that order, whose
 * position is at or above the key's position; if there is none, to the
 * server of the first point overall (the walk wraps).  Weights play no part.
 */
#ifndef _RING_HASH_H
#define _RING_HASH_H

#include "maglev_compat.h"

#define RING_NAME_MAX		64
#define RING_POINTS_MAX		1024
#define RING_NONE		U32_MAX

/**
 * enum ring_kind - which ring
 * @RING_64: seed 002, FNV-1a 64 plus finalizer, V points per server
 * @RING_32: seed 004, FNV-1a 32, one point per server
 */
enum ring_kind {
	RING_64,
	RING_32,
};

/**
 * struct ring_node - a server on a ring
 * @name: server name, not NUL-terminated
 * @name_len: length of @name, 1..RING_NAME_MAX
 */
struct ring_node {
	char name[RING_NAME_MAX];
	u32 name_len;
};

/**
 * struct ring_point - one point of a server
 * @pos: position on the ring (below 2^32 for %RING_32)
 * @node: index of the server in the caller's &struct ring_node array
 * @reserved: zero
 */
struct ring_point {
	u64 pos;
	u32 node;
	u32 reserved;
};

u64 ring_fnv1a64(const void *data, size_t len);
u64 ring_mix64(u64 z);
u32 ring_fnv1a32(const void *data, size_t len);
u64 ring_position(enum ring_kind kind, const void *data, size_t len);
int ring_name_cmp(const struct ring_node *a, const struct ring_node *b);
bool ring_point_before(const struct ring_point *a, const struct ring_point *b,
		       const struct ring_node *nodes);
void ring_node_points(enum ring_kind kind, const struct ring_node *node,
		      u32 v, u32 idx, struct ring_point *out);
u32 ring_merge(struct ring_point *p, u32 n, const struct ring_point *add,
	       u32 nr_add, const struct ring_node *nodes);
u32 ring_drop(struct ring_point *p, u32 n, u32 node);
u32 ring_locate(const struct ring_point *p, u32 n, u64 pos);

#endif /* _RING_HASH_H */
