// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of tools/ring/ring_hash.c and tools/ring/ring_set.c (seeds 002 and 004),
 * built with -Werror and ASan + UBSan.  Prints "ok"/"not ok" per test and
 * ends with "N passed, N failed".
 */
#include <stdio.h>
#include <stdlib.h>

#include "ring_hash.h"
#include "ring_set.h"

#define UNIT_RNG_SEED	0x9e3779b97f4a7c15ULL
#include "unit.h"

static void test_check_values(void)
{
	check(ring_fnv1a64("a", 1) == 12638187200555641996ULL,
	      "fnv1a64(a) = %llu", (unsigned long long)ring_fnv1a64("a", 1));
	check(ring_mix64(ring_fnv1a64("a", 1)) == 198367012849983736ULL,
	      "finalized a = %llu",
	      (unsigned long long)ring_mix64(ring_fnv1a64("a", 1)));
	check(ring_position(RING_64, "a", 1) == 198367012849983736ULL,
	      "ring64 position of a");
	check(ring_fnv1a32("", 0) == 2166136261U, "fnv1a32 of nothing");
	check(ring_fnv1a64("", 0) == 14695981039346656037ULL,
	      "fnv1a64 of nothing");
}

static void test_seed004_positions(void)
{
	static const struct { const char *s; u32 pos; } want[] = {
		{ "ember", 438014020 }, { "iron", 1269809787 },
		{ "onyx", 2591078921U }, { "opal", 3512059719U },
		{ "gob", 1109104011 }, { "ogre", 1758641738 },
		{ "hag", 3787390207U }, { "amber", 1876213440 },
		{ "imp", 2481405089U },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(want); i++) {
		u64 p = ring_position(RING_32, want[i].s, strlen(want[i].s));

		check(p == want[i].pos, "%s at %llu, expected %u", want[i].s,
		      (unsigned long long)p, want[i].pos);
	}
}

static struct ring_node mknode(const char *name)
{
	struct ring_node n = { .name_len = strlen(name) };

	memcpy(n.name, name, n.name_len);
	return n;
}

static void test_seed002_order(void)
{
	struct ring_node nodes[3] = { mknode("n1"), mknode("n2"),
				      mknode("n3") };
	struct ring_point p[3], one;
	u32 i, n = 0;

	for (i = 0; i < 3; i++) {
		ring_node_points(RING_64, &nodes[i], 1, i, &one);
		n = ring_merge(p, n, &one, 1, nodes);
	}
	check(n == 3 && p[0].node == 1 && p[1].node == 2 && p[2].node == 0,
	      "order %u %u %u, expected n2 n3 n1", p[0].node, p[1].node,
	      p[2].node);
	/* keys at and around the points, and past the top */
	check(p[ring_locate(p, n, p[0].pos)].node == 1, "at n2's point");
	check(p[ring_locate(p, n, p[0].pos + 1)].node == 2, "after n2's");
	check(p[ring_locate(p, n, p[2].pos + 1)].node == 1, "wrap to n2");
	check(p[ring_locate(p, n, 0)].node == 1, "position 0");
	check(ring_locate(p, 0, 5) == RING_NONE, "empty ring");
}

/* Points of "<name>#<i>" as the seed words it, built with snprintf. */
static void test_point_texts(void)
{
	struct ring_node node = mknode("10.0.0.1:80");
	struct ring_point p[RING_POINTS_MAX];
	u32 i, j, found = 0;
	char text[96];

	ring_node_points(RING_64, &node, RING_POINTS_MAX, 7, p);
	for (i = 1; i < RING_POINTS_MAX; i++)
		check(p[i - 1].pos <= p[i].pos, "points not sorted at %u", i);
	for (i = 0; i < RING_POINTS_MAX; i++) {
		int len = snprintf(text, sizeof(text), "10.0.0.1:80#%u", i);
		u64 want = ring_mix64(ring_fnv1a64(text, len));

		for (j = 0; j < RING_POINTS_MAX; j++)
			if (p[j].pos == want && p[j].node == 7)
				break;
		found += j < RING_POINTS_MAX;
	}
	check(found == RING_POINTS_MAX, "%u of %d point texts found", found,
	      RING_POINTS_MAX);
}

/* Equal positions: the lower name first, whatever order they came in. */
static void test_ties(void)
{
	struct ring_node nodes[4] = { mknode("bb"), mknode("b"),
				      mknode("ba"), mknode("a") };
	struct ring_point p[4], add;
	static const u32 order[2][4] = { { 0, 1, 2, 3 }, { 3, 2, 1, 0 } };
	u32 i, k, n;

	for (k = 0; k < 2; k++) {
		n = 0;
		for (i = 0; i < 4; i++) {
			add.pos = 1000;
			add.node = order[k][i];
			add.reserved = 0;
			n = ring_merge(p, n, &add, 1, nodes);
		}
		check(p[0].node == 3 && p[1].node == 1 && p[2].node == 2 &&
		      p[3].node == 0, "tie order %u %u %u %u", p[0].node,
		      p[1].node, p[2].node, p[3].node);
		check(p[ring_locate(p, n, 1000)].node == 3, "tie owner");
		check(p[ring_locate(p, n, 1001)].node == 3, "tie wrap");
		n = ring_drop(p, n, 3);
		check(n == 3 && p[ring_locate(p, n, 999)].node == 1,
		      "after dropping 'a', 'b' owns the tie");
	}
	/* a real FNV-1a 32 collision: 16cd and gwzx */
	check(ring_fnv1a32("16cd", 4) == ring_fnv1a32("gwzx", 4),
	      "16cd and gwzx collide");
}

/* Owner by scanning every point: the plain reading of the seeds. */
static u32 scan_owner(const struct ring_point *p, u32 n, u64 pos,
		      const struct ring_node *nodes)
{
	const struct ring_point *best = NULL, *low = NULL;
	u32 i;

	for (i = 0; i < n; i++) {
		if (!low || ring_point_before(&p[i], low, nodes))
			low = &p[i];
		if (p[i].pos >= pos &&
		    (!best || ring_point_before(&p[i], best, nodes)))
			best = &p[i];
	}
	if (!best)
		best = low;
	return best ? best->node : RING_NONE;
}

/* Index of a server in the pool, by name. */
static u32 pool_index(const struct ring_node *pool, u32 n,
		      const struct ring_node *nd)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (!ring_name_cmp(&pool[i], nd))
			return i;
	return RING_NONE;
}

/* ring_set against scanning, over random adds, removes and lookups. */
static void test_set_random(void)
{
	enum { POOL = 40, STEPS = 3000 };
	static const u32 vs[] = { 1, 3, 64 };
	struct ring_node pool[POOL];
	u32 i, step, k, bad = 0, lookups = 0;
	bool on[POOL];
	char name[32];

	for (i = 0; i < POOL; i++) {
		snprintf(name, sizeof(name), "10.0.%u.%u:80", i / 8, i);
		pool[i] = mknode(name);
	}
	for (k = 0; k < ARRAY_SIZE(vs) * 2; k++) {
		enum ring_kind kind = k % 2 ? RING_32 : RING_64;
		struct ring_set r;
		u32 nr_on = 0;

		ring_set_init(&r, kind, vs[k / 2]);
		memset(on, 0, sizeof(on));
		for (step = 0; step < STEPS; step++) {
			u32 x = rnd() % POOL, op = rnd() % 10, o, want;
			const struct ring_node *nd = &pool[x];
			u64 pos = rnd();
			int ret;

			if (op < 3) {
				ret = ring_set_add(&r, nd->name, nd->name_len,
						   1);
				bad += ret != (on[x] ? -EEXIST : 0);
				nr_on += !on[x];
				on[x] = true;
				continue;
			}
			if (op < 5) {
				ret = ring_set_remove(&r, nd->name,
						      nd->name_len);
				bad += ret != (on[x] ? 0 : -ENOENT);
				nr_on -= on[x];
				on[x] = false;
				continue;
			}
			if (kind == RING_32)
				pos >>= 32;
			o = ring_set_owner(&r, pos);
			want = scan_owner(r.pt, r.nr_pt, pos, r.node);
			lookups++;
			bad += o != want;
			if (o == RING_NONE) {
				bad += nr_on != 0;
			} else {
				i = pool_index(pool, POOL, &r.node[o]);
				bad += i == RING_NONE || !on[i];
			}
			bad += r.nr_pt != nr_on * r.v || r.nr_nodes != nr_on;
		}
		ring_set_free(&r);
	}
	check(!bad && lookups > 5000, "%u mismatches in %u lookups", bad,
	      lookups);
}

int main(void)
{
	run("seed 002 check values", test_check_values);
	run("seed 004 positions", test_seed004_positions);
	run("seed 002 n1 n2 n3 order", test_seed002_order);
	run("ring64 point texts <name>#<i>", test_point_texts);
	run("ties go to the lower name", test_ties);
	run("ring_set against a scan", test_set_random);
	return unit_summary();
}
