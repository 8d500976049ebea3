/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ring_set.h - a consistent-hash ring with its servers, for userspace tools.
 *
 * Wraps tools/ring/ring_hash.c: keeps the servers (with a name index), their points in
 * ring order and the memory for both.  Adding servers queues their points,
 * merged at the next lookup or removal (one sort of the new points and one
 * O(points) merge), removing one drops its points (O(points)), a lookup is
 * one binary search (O(log points)).
 */
#ifndef _RING_SET_H
#define _RING_SET_H

#include "ring_hash.h"

/**
 * struct ring_set - a ring and its servers
 * @kind: which ring
 * @v: points per server (1 for %RING_32)
 * @node: server slots; a free slot has name_len 0
 * @weight: weight of each server slot (kept, never used by the ring)
 * @next: hash chain of each server slot
 * @nr_slots: slots in use or on the free list
 * @cap_slots: slots allocated
 * @free: first free slot, %RING_NONE for none (chained through @next)
 * @nr_nodes: servers on the ring
 * @bucket: name hash buckets, @nr_buckets of them (a power of two)
 * @nr_buckets: number of buckets
 * @pt: the points in ring order
 * @nr_pt: number of points in ring order
 * @pend: points of servers added since the last ring_set_settle()
 * @nr_pend: number of points in @pend
 * @cap_pt: points allocated in @pt and in @pend
 */
struct ring_set {
	enum ring_kind kind;
	u32 v;
	struct ring_node *node;
	u32 *weight;
	u32 *next;
	u32 nr_slots;
	u32 cap_slots;
	u32 free;
	u32 nr_nodes;
	u32 *bucket;
	u32 nr_buckets;
	struct ring_point *pt;
	u32 nr_pt;
	struct ring_point *pend;
	u32 nr_pend;
	u32 cap_pt;
};

void ring_set_init(struct ring_set *r, enum ring_kind kind, u32 v);
void ring_set_free(struct ring_set *r);
u32 ring_set_find(const struct ring_set *r, const char *name, u32 len);
int ring_set_add(struct ring_set *r, const char *name, u32 len, u32 weight);
int ring_set_add_many(struct ring_set *r, const struct ring_node *nodes,
		      const u32 *weights, u32 n);
int ring_set_remove(struct ring_set *r, const char *name, u32 len);
void ring_set_settle(struct ring_set *r);
u32 ring_set_owner(struct ring_set *r, u64 pos);
u32 ring_set_lookup(struct ring_set *r, const void *key, size_t len);
size_t ring_set_bytes(const struct ring_set *r);

#endif /* _RING_SET_H */
