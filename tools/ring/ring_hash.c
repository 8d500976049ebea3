// SPDX-License-Identifier: GPL-2.0
/*
 * Consistent-hash rings (seeds 002 and 004): hashes, points of a server,
 * merging and dropping points, and the lookup.
 *
 * The algorithm only, built for maglev-sim and the comparison tool.  Like
 * maglev_table.c it never allocates and uses only maglev_compat.h.  The
 * specification is in tools/ring/ring_hash.h.
 */
#include "ring_hash.h"

#define FNV64_BASIS	14695981039346656037ULL
#define FNV64_PRIME	1099511628211ULL
#define FNV32_BASIS	2166136261U
#define FNV32_PRIME	16777619U
#define MIX64_MUL1	13787848793156543929ULL
#define MIX64_MUL2	10723151780598845931ULL

/* "#" and up to four decimal digits after a name: RING_POINTS_MAX - 1 */
#define RING_TEXT_MAX	(RING_NAME_MAX + 1 + 4)

/**
 * ring_fnv1a64() - 64-bit FNV-1a
 * @data: bytes to hash
 * @len: number of bytes
 *
 * Return: the FNV-1a 64 hash of @data.
 */
u64 ring_fnv1a64(const void *data, size_t len)
{
	const u8 *p = data;
	u64 h = FNV64_BASIS;

	while (len--) {
		h ^= *p++;
		h *= FNV64_PRIME;
	}
	return h;
}

/**
 * ring_mix64() - the finalizer of seed 002
 * @z: value to mix
 *
 * Return: @z after the three xor-shift steps of the specification.
 */
u64 ring_mix64(u64 z)
{
	z = (z ^ (z >> 30)) * MIX64_MUL1;
	z = (z ^ (z >> 27)) * MIX64_MUL2;
	return z ^ (z >> 31);
}

/**
 * ring_fnv1a32() - 32-bit FNV-1a
 * @data: bytes to hash
 * @len: number of bytes
 *
 * Return: the FNV-1a 32 hash of @data.
 */
u32 ring_fnv1a32(const void *data, size_t len)
{
	const u8 *p = data;
	u32 h = FNV32_BASIS;

	while (len--) {
		h ^= *p++;
		h *= FNV32_PRIME;
	}
	return h;
}

/**
 * ring_position() - position of a text on a ring
 * @kind: which ring
 * @data: the text's bytes
 * @len: number of bytes
 *
 * Return: ring_mix64(ring_fnv1a64()) for %RING_64, ring_fnv1a32() for
 * %RING_32.
 */
u64 ring_position(enum ring_kind kind, const void *data, size_t len)
{
	if (kind == RING_32)
		return ring_fnv1a32(data, len);
	return ring_mix64(ring_fnv1a64(data, len));
}

/**
 * ring_name_cmp() - order of server names
 * @a: first server
 * @b: second server
 *
 * Return: <0, 0 or >0 as @a's name sorts before, equal to or after @b's:
 * memcmp order, a shorter name first when it is a prefix of the other.
 */
int ring_name_cmp(const struct ring_node *a, const struct ring_node *b)
{
	int r = memcmp(a->name, b->name, min(a->name_len, b->name_len));

	if (r)
		return r;
	return a->name_len < b->name_len ? -1 : a->name_len > b->name_len;
}

/**
 * ring_point_before() - ring order of two points
 * @a: first point
 * @b: second point
 * @nodes: the servers the points' @node fields index
 *
 * Return: true if @a comes before @b: a lower position, or the same
 * position and a lower server name.
 */
bool ring_point_before(const struct ring_point *a, const struct ring_point *b,
		       const struct ring_node *nodes)
{
	if (a->pos != b->pos)
		return a->pos < b->pos;
	if (a->node == b->node)
		return false;
	return ring_name_cmp(&nodes[a->node], &nodes[b->node]) < 0;
}

static int ring_pos_cmp(const void *a, const void *b)
{
	const struct ring_point *x = a, *y = b;

	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Decimal digits of @i at @buf; returns their number. */
static u32 ring_put_u32(char *buf, u32 i)
{
	char tmp[10];
	u32 n = 0, k;

	do {
		tmp[n++] = '0' + i % 10;
		i /= 10;
	} while (i);
	for (k = 0; k < n; k++)
		buf[k] = tmp[n - 1 - k];
	return n;
}

/**
 * ring_node_points() - the points of one server, in position order
 * @kind: which ring
 * @node: the server
 * @v: points per server for %RING_64, 1..%RING_POINTS_MAX; ignored (1) for
 *	%RING_32
 * @idx: value for the points' @node field
 * @out: room for @v points (one for %RING_32), filled sorted by position
 */
void ring_node_points(enum ring_kind kind, const struct ring_node *node,
		      u32 v, u32 idx, struct ring_point *out)
{
	u32 i, len = node->name_len;
	char text[RING_TEXT_MAX];

	if (WARN_ON_ONCE(len > RING_NAME_MAX))
		len = RING_NAME_MAX;
	if (kind == RING_32) {
		out->pos = ring_fnv1a32(node->name, len);
		out->node = idx;
		out->reserved = 0;
		return;
	}
	if (WARN_ON_ONCE(!v || v > RING_POINTS_MAX))
		v = v ? RING_POINTS_MAX : 1;
	memcpy(text, node->name, len);
	text[len] = '#';
	for (i = 0; i < v; i++) {
		u32 tl = len + 1 + ring_put_u32(text + len + 1, i);

		out[i].pos = ring_mix64(ring_fnv1a64(text, tl));
		out[i].node = idx;
		out[i].reserved = 0;
	}
	sort(out, v, sizeof(*out), ring_pos_cmp, NULL);
}

/**
 * ring_merge() - merge sorted points into a sorted ring
 * @p: the ring, @n points in ring order, with room for @nr_add more
 * @n: number of points in @p
 * @add: @nr_add points of servers not on the ring, in ring order
 * @nr_add: number of points in @add
 * @nodes: the servers the points index
 *
 * Merges in place from the top end: O(@n + @nr_add).
 *
 * Return: the new number of points, @n + @nr_add.
 */
u32 ring_merge(struct ring_point *p, u32 n, const struct ring_point *add,
	       u32 nr_add, const struct ring_node *nodes)
{
	u32 i = n, j = nr_add, k = n + nr_add;

	while (j) {
		if (i && ring_point_before(&add[j - 1], &p[i - 1], nodes))
			p[--k] = p[--i];
		else
			p[--k] = add[--j];
	}
	return n + nr_add;
}

/**
 * ring_drop() - remove a server's points
 * @p: the ring, @n points in ring order
 * @n: number of points
 * @node: the server whose points go
 *
 * Return: the new number of points; the rest keep their order.
 */
u32 ring_drop(struct ring_point *p, u32 n, u32 node)
{
	u32 i, k = 0;

	for (i = 0; i < n; i++)
		if (p[i].node != node)
			p[k++] = p[i];
	return k;
}

/**
 * ring_locate() - the point that owns a position
 * @p: the ring, @n points in ring order
 * @n: number of points
 * @pos: the key's position
 *
 * Binary search: O(log @n).
 *
 * Return: index of the first point at or above @pos, 0 if there is none
 * (the walk wraps), %RING_NONE if the ring is empty.
 */
u32 ring_locate(const struct ring_point *p, u32 n, u64 pos)
{
	u32 lo = 0, hi = n;

	if (!n)
		return RING_NONE;
	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (p[mid].pos < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == n ? 0 : lo;
}
