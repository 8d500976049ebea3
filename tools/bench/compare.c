// SPDX-License-Identifier: GPL-2.0
/*
 * maglev-compare - Maglev or ring?  Balance, disruption, memory and lookup
 * time of Maglev tables (maglev_table.c, the kernel module's own code) and
 * of the seed 002 ring (tools/ring/ring_hash.c), measured side by side on the same
 * backends and keys.  "make compare" runs it and draws the charts.
 *
 *   maglev-compare [OUTDIR]
 *
 * Environment: COMPARE_NS (backend counts, default "2 3 5 8 10 20 50 100
 * 200 500 1000"), COMPARE_KEYS (keys, default 100000), COMPARE_RUNS (timed
 * passes per lookup figure, default 9).  Prints a table on stdout and
 * writes OUTDIR/compare.tsv (default build/compare) for gnuplot.
 *
 * Backends are named like IPVS dests, "10.0.x.y:80"; keys are client
 * addresses as text, "172.16.x.y:port", hashed by each algorithm's own key
 * hash (hsiphash() under the default all-zero key;
 * ring64's FNV-1a 64 + finalizer).
 *
 * balance      busiest backend's share over the ideal 1/N: over the slots
 *              for Maglev (exact), over the keys for a ring
 * arc          for a ring, the same from the exact arc lengths (no key
 *              sampling noise); for Maglev equal to balance
 * add_moved    share of keys whose backend changed when backend N+1 joins
 *              (ideal 1/(N+1), all to the new backend)
 * add_stay     share of keys moved between backends present before and
 *              after (ideal 0)
 * rm_moved     share of keys whose backend changed when backend N/2+1
 *              leaves (ideal 1/N, only its own keys)
 * rm_stay      share of keys moved between backends that stayed
 * mem          bytes a lookup needs: the table and backend array, or the
 *              points and server names
 * lookup_ns    one lookup of a hashed key, keys in random order: median of
 *              COMPARE_RUNS passes over all keys, the algorithms' passes
 *              interleaved so that a busy machine slows them alike, each
 *              after an untimed warm-up pass
 * build_us     building the table or ring from scratch
 *
 * Times are the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so that other
 * work on a shared machine does not count; cache effects of that work
 * still do.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "maglev_table.h"
#include "ring_set.h"

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))
#define MAX_RUNS	31

struct algo {
	const char *name;
	bool ring;
	u32 param;		/* M for Maglev, V for a ring */
};

static const struct algo algos[] = {
	{ "maglev-251",		false,	251 },
	{ "maglev-4093",	false,	4093 },
	{ "maglev-65537",	false,	65537 },
	{ "ring64-1",		true,	1 },
	{ "ring64-128",		true,	128 },
	{ "ring64-1024",	true,	1024 },
};

/* A built instance of one algorithm: owners are backend numbers. */
struct inst {
	const struct algo *a;
	u32 n;
	/* Maglev */
	struct maglev_table *t;
	struct maglev_backend *b;
	/* ring */
	struct ring_set r;
};

static u64 sink;
static u32 nr_keys;
static char (*key_text)[32];
static u32 *key_mh;
static u64 *key_rh;
static u32 *order;

static u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p) {
		fprintf(stderr, "compare: out of memory\n");
		exit(2);
	}
	return p;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* Backend number i (0-based) is 10.0.(i / 250).(i % 250 + 1):80. */
static u32 backend_name(u32 i, char *buf)
{
	return (u32)sprintf(buf, "10.0.%u.%u:80", i / 250, i % 250 + 1);
}

/*
 * Build @a over backends 0..n-1 except @skip, plus @extra (U32_MAX for
 * none).  Returns 0, or -1 if Maglev cannot (more backends than slots).
 */
static int inst_build(struct inst *in, const struct algo *a, u32 n, u32 skip,
		      u32 extra, u64 *build_ns)
{
	u32 i, k = 0, size, total = n + (extra != U32_MAX);
	u64 t0;

	memset(in, 0, sizeof(*in));
	in->a = a;
	if (a->ring) {
		struct ring_node *nodes = xcalloc(total, sizeof(*nodes));
		u32 *ids = xcalloc(total, sizeof(*ids));

		for (i = 0; i < n || (i == n && extra != U32_MAX); i++) {
			u32 id = i < n ? i : extra;

			if (id == skip)
				continue;
			nodes[k].name_len = backend_name(id, nodes[k].name);
			ids[k++] = id;
		}
		ring_set_init(&in->r, RING_64, a->param);
		t0 = now_ns();
		if (ring_set_add_many(&in->r, nodes, ids, k)) {
			fprintf(stderr, "compare: ring build failed\n");
			exit(2);
		}
		if (build_ns)
			*build_ns = now_ns() - t0;
		in->n = k;
		free(nodes);
		free(ids);
		return 0;
	}
	in->b = xcalloc(total, sizeof(*in->b));
	for (i = 0; i < n || (i == n && extra != U32_MAX); i++) {
		u32 id = i < n ? i : extra;

		if (id == skip)
			continue;
		in->b[k].name_len = backend_name(id, in->b[k].name);
		in->b[k].weight = 1;
		in->b[k].priv = (void *)(uintptr_t)id;
		k++;
	}
	in->n = k;
	size = a->param;
	if (k > size) {
		free(in->b);
		in->b = NULL;
		return -1;
	}
	{
		void *work = xcalloc(1, maglev_work_bytes(size, k));
		const char *why = NULL;

		in->t = xcalloc(1, maglev_table_bytes(size, k));
		t0 = now_ns();
		sort(in->b, k, sizeof(*in->b), maglev_backend_cmp, NULL);
		if (maglev_build(in->t, size, in->b, k, work, NULL, &why)) {
			fprintf(stderr, "compare: %s\n", why ? why : "build");
			exit(2);
		}
		if (build_ns)
			*build_ns = now_ns() - t0;
		free(work);
	}
	return 0;
}

static void inst_free(struct inst *in)
{
	if (in->a->ring)
		ring_set_free(&in->r);
	free(in->t);
	free(in->b);
}

/* Backend number owning key @k. */
static u32 inst_owner(struct inst *in, u32 k)
{
	if (in->a->ring) {
		u32 s = ring_set_owner(&in->r, key_rh[k]);

		/* ring_set_add_many() stored the backend number as weight */
		return in->r.weight[s];
	}
	return (u32)(uintptr_t)in->b[maglev_lookup(in->t, key_mh[k])].priv;
}

static size_t inst_bytes(const struct inst *in)
{
	if (in->a->ring)
		return ring_set_bytes(&in->r);
	return maglev_table_bytes(in->t->size, in->n) + in->n * sizeof(*in->b);
}

/* Busiest backend's share over 1/N: slots (Maglev) or keys (ring). */
static double balance_keys(struct inst *in, u32 *own, u32 id_max)
{
	u32 *cnt = xcalloc(id_max, sizeof(*cnt)), i, top = 0;

	for (i = 0; i < nr_keys; i++)
		if (++cnt[own[i]] > top)
			top = cnt[own[i]];
	free(cnt);
	return (double)top * in->n / nr_keys;
}

static double balance_exact(struct inst *in, u32 id_max)
{
	double *share = xcalloc(id_max, sizeof(*share)), top = 0;
	u32 i;

	if (!in->a->ring) {
		for (i = 0; i < in->n; i++)
			if (in->b[i].slots > top)
				top = in->b[i].slots;
		free(share);
		return top * in->n / in->t->size;
	}
	for (i = 0; i < in->r.nr_pt; i++) {
		const struct ring_point *p = &in->r.pt[i];
		u64 prev = in->r.pt[i ? i - 1 : in->r.nr_pt - 1].pos;
		double arc = in->r.nr_pt == 1 ? 18446744073709551616.0 :
			     (double)(p->pos - prev);
		u32 id = in->r.weight[p->node];

		share[id] += arc / 18446744073709551616.0;
		if (share[id] > top)
			top = share[id];
	}
	free(share);
	return top * in->n;
}

/* One timed pass over all keys, in random order. */
static void lookup_pass(struct inst *in, u64 *ns)
{
	u64 t0, acc = 0;
	u32 i;

	t0 = now_ns();
	if (in->a->ring) {
		for (i = 0; i < nr_keys; i++)
			acc += ring_locate(in->r.pt, in->r.nr_pt,
					   key_rh[order[i]]);
	} else {
		for (i = 0; i < nr_keys; i++)
			acc += maglev_lookup(in->t, key_mh[order[i]]);
	}
	*ns = now_ns() - t0;
	sink += acc;
}

/* Shares of keys moved, and moved between backends in both @a and @b. */
static void moved(const u32 *a, const u32 *b, u32 gone, u32 fresh,
		  double *all, double *stay)
{
	u32 i, m = 0, s = 0;

	for (i = 0; i < nr_keys; i++) {
		if (a[i] == b[i])
			continue;
		m++;
		if (a[i] != gone && b[i] != fresh)
			s++;
	}
	*all = 100.0 * m / nr_keys;
	*stay = 100.0 * s / nr_keys;
}

struct result {
	bool ok;
	double bal, arc, am, as, rm, rs, lookup_ns;
	size_t mem;
	u64 build_ns;
	u64 t[MAX_RUNS];
};

/*
 * Disruption on a ring, by the ring's own incremental add and remove (the
 * same result as building from scratch, in O(points)): backend @n joins,
 * leaves, then backend @n / 2 leaves and comes back.
 */
static void measure_ring_changes(struct inst *in, u32 n, struct result *x,
				 const u32 *own0, u32 *own1)
{
	char name[RING_NAME_MAX];
	u32 k, len, gone = n / 2;

	len = backend_name(n, name);
	if (ring_set_add(&in->r, name, len, n))
		goto fail;
	for (k = 0; k < nr_keys; k++)
		own1[k] = inst_owner(in, k);
	moved(own0, own1, U32_MAX, n, &x->am, &x->as);
	ring_set_remove(&in->r, name, len);

	len = backend_name(gone, name);
	ring_set_remove(&in->r, name, len);
	for (k = 0; k < nr_keys; k++)
		own1[k] = inst_owner(in, k);
	moved(own0, own1, gone, U32_MAX, &x->rm, &x->rs);
	if (ring_set_add(&in->r, name, len, gone))
		goto fail;
	ring_set_settle(&in->r);
	return;
fail:
	fprintf(stderr, "compare: ring add failed\n");
	exit(2);
}

/*
 * Build @a over @n backends into @in (kept for the lookup passes) and
 * measure balance, memory and disruption.  @own0, @own1: room for the
 * owners of all keys.
 */
static void measure(struct inst *in, const struct algo *a, u32 n,
		    struct result *x, u32 *own0, u32 *own1)
{
	u32 k, gone = n / 2;
	struct inst tmp;

	if (inst_build(in, a, n, U32_MAX, U32_MAX, &x->build_ns))
		return;
	x->ok = true;
	for (k = 0; k < nr_keys; k++)
		own0[k] = inst_owner(in, k);
	x->bal = a->ring ? balance_keys(in, own0, n + 1) :
		 balance_exact(in, n + 1);
	x->arc = balance_exact(in, n + 1);
	x->mem = inst_bytes(in);

	if (a->ring) {
		measure_ring_changes(in, n, x, own0, own1);
		return;
	}
	/* adding one more than M backends: not measured */
	x->am = NAN;
	x->as = NAN;
	if (!inst_build(&tmp, a, n, U32_MAX, n, NULL)) {
		for (k = 0; k < nr_keys; k++)
			own1[k] = inst_owner(&tmp, k);
		moved(own0, own1, U32_MAX, n, &x->am, &x->as);
		inst_free(&tmp);
	}
	inst_build(&tmp, a, n, gone, U32_MAX, NULL);
	for (k = 0; k < nr_keys; k++)
		own1[k] = inst_owner(&tmp, k);
	moved(own0, own1, gone, U32_MAX, &x->rm, &x->rs);
	inst_free(&tmp);
}

static u32 env_u32(const char *name, u32 def, u32 lo, u32 hi)
{
	const char *v = getenv(name);
	char *end;
	unsigned long x;

	if (!v || !*v)
		return def;
	errno = 0;
	x = strtoul(v, &end, 10);
	if (errno || *end || x < lo || x > hi) {
		fprintf(stderr, "compare: %s must be %u..%u\n", name, lo, hi);
		exit(2);
	}
	return (u32)x;
}

int main(int argc, char **argv)
{
	const char *ns_env = getenv("COMPARE_NS");
	const char *dir = argc > 1 ? argv[1] : "build/compare";
	char ns_buf[256], path[4096], *tok, *save = NULL;
	struct result *res;
	u32 runs, i, ai;
	u32 *own0, *own1;
	u64 rnd = 0x9e3779b97f4a7c15ULL;
	const hsiphash_key_t zero_key = { { 0, 0 } };
	FILE *tsv;
	u32 ns[64], nr_ns = 0;

	nr_keys = env_u32("COMPARE_KEYS", 100000, 1000, 10000000);
	runs = env_u32("COMPARE_RUNS", 9, 1, MAX_RUNS);
	snprintf(ns_buf, sizeof(ns_buf), "%s",
		 ns_env && *ns_env ? ns_env : "2 3 5 8 10 20 50 100 200 500 1000");
	for (tok = strtok_r(ns_buf, " ,", &save); tok;
	     tok = strtok_r(NULL, " ,", &save)) {
		char *end;
		unsigned long x = strtoul(tok, &end, 10);

		if (*end || x < 2 || x > 60000 || nr_ns == ARRAY_LEN(ns)) {
			fprintf(stderr, "compare: bad COMPARE_NS '%s'\n", tok);
			return 2;
		}
		ns[nr_ns++] = (u32)x;
	}
	if (!nr_ns) {
		fprintf(stderr, "compare: COMPARE_NS is empty\n");
		return 2;
	}
	mkdir(dir, 0777);
	snprintf(path, sizeof(path), "%s/compare.tsv", dir);
	tsv = fopen(path, "w");
	if (!tsv) {
		perror(path);
		return 2;
	}

	key_text = xcalloc(nr_keys, sizeof(*key_text));
	key_mh = xcalloc(nr_keys, sizeof(*key_mh));
	key_rh = xcalloc(nr_keys, sizeof(*key_rh));
	order = xcalloc(nr_keys, sizeof(*order));
	own0 = xcalloc(nr_keys, sizeof(*own0));
	own1 = xcalloc(nr_keys, sizeof(*own1));
	for (i = 0; i < nr_keys; i++) {
		u32 len = (u32)snprintf(key_text[i], sizeof(key_text[i]),
					"172.16.%u.%u:%u", (i / 254) % 256,
					i % 254 + 1, 1024 + i / 65024);

		key_mh[i] = hsiphash(key_text[i], len, &zero_key);
		key_rh[i] = ring_position(RING_64, key_text[i], len);
		order[i] = i;
	}
	for (i = nr_keys - 1; i > 0; i--) {
		u32 j, tmp;

		rnd ^= rnd >> 12;
		rnd ^= rnd << 25;
		rnd ^= rnd >> 27;
		j = (u32)((rnd * 0x2545f4914f6cdd1dULL) % (i + 1));
		tmp = order[i];
		order[i] = order[j];
		order[j] = tmp;
	}

	fprintf(tsv, "# Maglev or ring? %u keys; one block per algorithm\n",
		nr_keys);
	fprintf(tsv, "# algo\tN\tbalance\tarc\tadd_moved\tadd_stay\tadd_ideal\trm_moved\trm_stay\trm_ideal\tmem\tlookup_ns\tbuild_us\n");
	res = xcalloc(ARRAY_LEN(algos) * nr_ns, sizeof(*res));
	for (i = 0; i < nr_ns; i++) {
		struct inst in[ARRAY_LEN(algos)];
		u32 n = ns[i], r;

		for (ai = 0; ai < ARRAY_LEN(algos); ai++)
			measure(&in[ai], &algos[ai], n,
				&res[ai * nr_ns + i], own0, own1);
		/* lookups: the algorithms' passes interleaved, medians */
		for (r = 0; r < runs; r++)
			for (ai = 0; ai < ARRAY_LEN(algos); ai++)
				if (res[ai * nr_ns + i].ok) {
					/* untimed warm-up: own data in cache */
					lookup_pass(&in[ai],
						    &res[ai * nr_ns + i].t[r]);
					lookup_pass(&in[ai],
						    &res[ai * nr_ns + i].t[r]);
				}
		for (ai = 0; ai < ARRAY_LEN(algos); ai++) {
			struct result *x = &res[ai * nr_ns + i];

			if (!x->ok)
				continue;
			qsort(x->t, runs, sizeof(x->t[0]), cmp_u64);
			x->lookup_ns = (double)x->t[runs / 2] / nr_keys;
			inst_free(&in[ai]);
		}
	}

	printf("# Maglev or ring? %u keys, backends 10.0.x.y:80, lookups: median of %u interleaved passes\n",
	       nr_keys, runs);
	printf("%-13s %5s %8s %8s %9s %8s %9s %8s %8s %11s %9s %9s\n",
	       "algo", "N", "balance", "arc", "add_moved", "add_stay",
	       "add_ideal", "rm_moved", "rm_stay", "mem", "lookup_ns",
	       "build_us");
	for (ai = 0; ai < ARRAY_LEN(algos); ai++) {
		const struct algo *a = &algos[ai];

		fprintf(tsv, "# %s\n", a->name);
		for (i = 0; i < nr_ns; i++) {
			const struct result *x = &res[ai * nr_ns + i];
			u32 n = ns[i];

			if (!x->ok) {
				printf("%-13s %5u  (more backends than slots)\n",
				       a->name, n);
				continue;
			}
			printf("%-13s %5u %8.3f %8.3f %9.3f %8.3f %9.3f %8.3f %8.3f %11zu %9.1f %9.1f\n",
			       a->name, n, x->bal, x->arc, x->am, x->as,
			       100.0 / (n + 1), x->rm, x->rs, x->mem,
			       x->lookup_ns, x->build_ns / 1000.0);
			fprintf(tsv, "%s\t%u\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%zu\t%.2f\t%.1f\n",
				a->name, n, x->bal, x->arc, x->am, x->as,
				100.0 / (n + 1), x->rm, x->rs, 100.0 / n,
				x->mem, x->lookup_ns, x->build_ns / 1000.0);
		}
		fprintf(tsv, "\n\n");
	}
	free(res);
	fprintf(stderr, "compare: wrote %s (%llx)\n", path,
		(unsigned long long)(sink & 0xf));
	free(key_text);
	free(key_mh);
	free(key_rh);
	free(order);
	free(own0);
	free(own1);
	return fclose(tsv) ? 2 : 0;
}
