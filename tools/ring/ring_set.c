// SPDX-License-Identifier: GPL-2.0
/*
 * ring_set.c - servers, name index and memory around tools/ring/ring_hash.c, for
 * maglev-sim and the comparison tool.  See tools/ring/ring_set.h.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "ring_set.h"

/**
 * ring_set_init() - an empty ring
 * @r: ring to initialise
 * @kind: which ring
 * @v: points per server for %RING_64, 1..%RING_POINTS_MAX
 */
void ring_set_init(struct ring_set *r, enum ring_kind kind, u32 v)
{
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->v = kind == RING_32 ? 1 : v;
	r->free = RING_NONE;
}

/**
 * ring_set_free() - free a ring's memory
 * @r: ring; empty afterwards
 */
void ring_set_free(struct ring_set *r)
{
	free(r->node);
	free(r->weight);
	free(r->next);
	free(r->bucket);
	free(r->pt);
	free(r->pend);
	ring_set_init(r, r->kind, r->v);
}

static u32 ring_set_bucket(const struct ring_set *r, const char *name,
			   u32 len)
{
	return ring_fnv1a32(name, len) & (r->nr_buckets - 1);
}

static bool ring_set_is(const struct ring_set *r, u32 i, const char *name,
			u32 len)
{
	return r->node[i].name_len == len && !memcmp(r->node[i].name, name, len);
}

/**
 * ring_set_find() - a server's slot
 * @r: ring
 * @name: server name
 * @len: length of @name
 *
 * Return: the slot index (the points' @node), or %RING_NONE.
 */
u32 ring_set_find(const struct ring_set *r, const char *name, u32 len)
{
	u32 i;

	if (!r->nr_buckets)
		return RING_NONE;
	for (i = r->bucket[ring_set_bucket(r, name, len)]; i != RING_NONE;
	     i = r->next[i])
		if (ring_set_is(r, i, name, len))
			return i;
	return RING_NONE;
}

static void ring_set_link(struct ring_set *r, u32 i)
{
	u32 b = ring_set_bucket(r, r->node[i].name, r->node[i].name_len);

	r->next[i] = r->bucket[b];
	r->bucket[b] = i;
}

/* Room for @more servers and @more * v points; the old state is kept. */
static int ring_set_reserve(struct ring_set *r, u32 more)
{
	u64 want_pt = (u64)r->nr_pt + r->nr_pend + (u64)more * r->v;
	u64 want = (u64)r->nr_nodes + more;

	if (want_pt > U32_MAX / 2 || want > U32_MAX / 4)
		return -ENOSPC;
	if (want_pt > r->cap_pt) {
		u32 cap = max((u32)want_pt, r->cap_pt * 2);
		struct ring_point *pt = realloc(r->pt, (size_t)cap * sizeof(*pt));

		if (!pt)
			return -ENOMEM;
		r->pt = pt;
		pt = realloc(r->pend, (size_t)cap * sizeof(*pt));
		if (!pt)
			return -ENOMEM;
		r->pend = pt;
		r->cap_pt = cap;
	}
	if (r->nr_slots + more > r->cap_slots) {
		u32 cap = max(r->nr_slots + more, r->cap_slots * 2);
		struct ring_node *node = realloc(r->node, cap * sizeof(*node));
		u32 *w, *next;

		if (!node)
			return -ENOMEM;
		r->node = node;
		w = realloc(r->weight, cap * sizeof(*w));
		if (!w)
			return -ENOMEM;
		r->weight = w;
		next = realloc(r->next, cap * sizeof(*next));
		if (!next)
			return -ENOMEM;
		r->next = next;
		r->cap_slots = cap;
	}
	if (want > r->nr_buckets / 2) {
		u32 nb = r->nr_buckets ? r->nr_buckets : 64, i, *b;

		while (want > nb / 2)
			nb *= 2;
		b = malloc(nb * sizeof(*b));
		if (!b)
			return -ENOMEM;
		memset(b, 0xff, nb * sizeof(*b));
		free(r->bucket);
		r->bucket = b;
		r->nr_buckets = nb;
		for (i = 0; i < r->nr_slots; i++)
			if (r->node[i].name_len)
				ring_set_link(r, i);
	}
	return 0;
}

/* A slot for a new server named @name (checked by the caller). */
static u32 ring_set_new_slot(struct ring_set *r, const char *name, u32 len,
			     u32 weight)
{
	u32 i;

	if (r->free != RING_NONE) {
		i = r->free;
		r->free = r->next[i];
	} else {
		i = r->nr_slots++;
	}
	memset(&r->node[i], 0, sizeof(r->node[i]));
	memcpy(r->node[i].name, name, len);
	r->node[i].name_len = len;
	r->weight[i] = weight;
	ring_set_link(r, i);
	r->nr_nodes++;
	return i;
}

static int ring_set_check_name(const struct ring_set *r, const char *name,
			       u32 len)
{
	if (!len || len > RING_NAME_MAX)
		return -EINVAL;
	if (ring_set_find(r, name, len) != RING_NONE)
		return -EEXIST;
	return 0;
}

static int ring_set_sort_cmp(const void *a, const void *b, void *nodes)
{
	if (ring_point_before(a, b, nodes))
		return -1;
	return ring_point_before(b, a, nodes);
}

/**
 * ring_set_settle() - merge the points of servers added since the last call
 * @r: ring
 *
 * Sorts the pending points once and merges them: O(points), however many
 * servers were added.  Lookups and removals call it.
 */
void ring_set_settle(struct ring_set *r)
{
	if (!r->nr_pend)
		return;
	qsort_r(r->pend, r->nr_pend, sizeof(*r->pend), ring_set_sort_cmp,
		r->node);
	r->nr_pt = ring_merge(r->pt, r->nr_pt, r->pend, r->nr_pend, r->node);
	r->nr_pend = 0;
}

/**
 * ring_set_add() - put a server on the ring
 * @r: ring
 * @name: server name, 1..%RING_NAME_MAX bytes
 * @len: length of @name
 * @weight: kept with the server; the ring ignores it
 *
 * Its points wait in @r->pend until ring_set_settle().
 *
 * Return: 0, -EINVAL for a bad name length, -EEXIST if the server is on the
 * ring, -ENOMEM or -ENOSPC; on error nothing changes.
 */
int ring_set_add(struct ring_set *r, const char *name, u32 len, u32 weight)
{
	u32 i;
	int ret;

	ret = ring_set_check_name(r, name, len);
	if (!ret)
		ret = ring_set_reserve(r, 1);
	if (ret)
		return ret;
	i = ring_set_new_slot(r, name, len, weight);
	ring_node_points(r->kind, &r->node[i], r->v, i,
			 r->pend + r->nr_pend);
	r->nr_pend += r->v;
	return 0;
}

/**
 * ring_set_add_many() - put many servers on an empty ring at once
 * @r: ring, empty
 * @nodes: the servers, all different
 * @weights: their weights, or NULL for all 1
 * @n: number of servers
 *
 * One sort instead of @n merges.
 *
 * Return: 0, -EINVAL, -EEXIST, -ENOMEM or -ENOSPC; on error the ring is
 * empty.
 */
int ring_set_add_many(struct ring_set *r, const struct ring_node *nodes,
		      const u32 *weights, u32 n)
{
	u32 k, i;
	int ret;

	if (r->nr_nodes)
		return -EINVAL;
	ret = ring_set_reserve(r, n);
	if (ret)
		return ret;
	for (k = 0; k < n; k++) {
		ret = ring_set_check_name(r, nodes[k].name, nodes[k].name_len);
		if (ret) {
			ring_set_free(r);
			return ret;
		}
		i = ring_set_new_slot(r, nodes[k].name, nodes[k].name_len,
				      weights ? weights[k] : 1);
		ring_node_points(r->kind, &r->node[i], r->v, i,
				 &r->pt[r->nr_pt]);
		r->nr_pt += r->v;
	}
	qsort_r(r->pt, r->nr_pt, sizeof(*r->pt), ring_set_sort_cmp, r->node);
	return 0;
}

/**
 * ring_set_remove() - take a server off the ring
 * @r: ring
 * @name: server name
 * @len: length of @name
 *
 * Return: 0, or -ENOENT (nothing changes) if it is not on the ring.
 */
int ring_set_remove(struct ring_set *r, const char *name, u32 len)
{
	u32 i = ring_set_find(r, name, len), *pp;

	if (i == RING_NONE)
		return -ENOENT;
	ring_set_settle(r);
	r->nr_pt = ring_drop(r->pt, r->nr_pt, i);
	pp = &r->bucket[ring_set_bucket(r, name, len)];
	while (*pp != i)
		pp = &r->next[*pp];
	*pp = r->next[i];
	r->node[i].name_len = 0;
	r->next[i] = r->free;
	r->free = i;
	r->nr_nodes--;
	return 0;
}

/**
 * ring_set_owner() - server slot owning a position
 * @r: ring
 * @pos: position
 *
 * Return: the owner's slot, or %RING_NONE for an empty ring.
 */
u32 ring_set_owner(struct ring_set *r, u64 pos)
{
	u32 i;

	ring_set_settle(r);
	i = ring_locate(r->pt, r->nr_pt, pos);

	return i == RING_NONE ? RING_NONE : r->pt[i].node;
}

/**
 * ring_set_lookup() - server slot owning a text key
 * @r: ring
 * @key: the key's bytes
 * @len: number of bytes
 *
 * Return: the owner's slot, or %RING_NONE for an empty ring.
 */
u32 ring_set_lookup(struct ring_set *r, const void *key, size_t len)
{
	return ring_set_owner(r, ring_position(r->kind, key, len));
}

/**
 * ring_set_bytes() - memory a lookup needs
 * @r: ring
 *
 * Return: bytes of the points and the server names (not the name index,
 * which only add and remove use).
 */
size_t ring_set_bytes(const struct ring_set *r)
{
	return (size_t)(r->nr_pt + r->nr_pend) * sizeof(*r->pt) +
	       (size_t)r->nr_nodes * sizeof(*r->node);
}
