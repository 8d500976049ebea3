// SPDX-License-Identifier: GPL-2.0
/*
 * bench-host - table build and lookup benchmark for maglev_table.c.
 *
 * Prints figures; it is not a timed test and never fails on a slow machine
 * (only on a table that differs from the reference fill).
 *
 * Builds: for each table size M and backend count N, maglev_fill(), the
 * whole maglev_build() (sort, offsets, fill, counts, digest), the plain
 * reference fill of tests/maglev_ref.c and an ip_vs_mh-style fill are timed
 * in the same process, their runs interleaved (the order rotating from run
 * to run) so that a noisy machine hurts all of them alike.  Each figure is
 * the median of RUNS samples; a sample of a small table repeats the call
 * and divides.  The ratios are of those medians.
 *
 * Lookups: maglev_hash() of a 6-byte IPv4 address + port key followed by
 * maglev_lookup(), over LOOKUP_KEYS different keys with the table in cache;
 * also each half alone.  Median of RUNS passes, in ns per key.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "maglev_table.h"
#include "maglev_ref.h"

#define RUNS		9
#define LOOKUP_KEYS	10000000U
#define SAMPLE_SLOTS	262144U	/* repeat small fills up to this */
#define TARGET_M	65537U
#define TARGET_N	1000U
#define TARGET_NS	1000000ULL	/* build target: 1 ms, stretch 0.5 ms */
#define TARGET_LOOKUP	5.0		/* ns per lookup */

static const u32 sizes[] = { 4093, 65537, 655373 };
static const u32 counts[] = { 10, 100, 1000 };

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * Results are folded in here and printed at the end, so that the compiler
 * cannot drop the work being timed.
 */
static u64 sink;

static u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static u64 median(u64 *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[n / 2];
}

static void *xmalloc(size_t bytes)
{
	void *p = malloc(bytes ? bytes : 1);

	if (!p) {
		fprintf(stderr, "bench-host: out of memory\n");
		exit(2);
	}
	return p;
}

static void die(const char *what, const char *why)
{
	fprintf(stderr, "bench-host: %s: %s\n", what, why ? why : "failed");
	exit(1);
}

static void make_backends(struct maglev_backend *b, u32 n)
{
	u32 i;

	memset(b, 0, n * sizeof(*b));
	for (i = 0; i < n; i++) {
		b[i].name_len = (u32)snprintf(b[i].name, sizeof(b[i].name),
					      "10.0.%u.%u:80", i / 250,
					      i % 250 + 1);
		b[i].weight = 1;
	}
}

/* Everything one (M, N) point needs. */
struct point {
	u32 size;
	u32 n;
	struct maglev_backend *b;	/* prepared: sorted, offset, skip */
	struct maglev_backend *bb;	/* maglev_build()'s own copy */
	struct maglev_table *t;
	struct maglev_table *ref;
	const struct maglev_backend **mh;
	void *work;
};

enum { V_FILL, V_BUILD, V_REF, V_MH, NR_V };

static const char *const v_name[NR_V] = { "fill", "build", "ref", "mh" };

static void point_init(struct point *p, u32 size, u32 n)
{
	const char *why = NULL;

	p->size = size;
	p->n = n;
	p->b = xmalloc(n * sizeof(*p->b));
	p->bb = xmalloc(n * sizeof(*p->bb));
	p->t = xmalloc(maglev_table_bytes(size));
	p->ref = xmalloc(maglev_table_bytes(size));
	p->mh = xmalloc(size * sizeof(*p->mh));
	p->work = xmalloc(maglev_work_bytes(size, n));
	make_backends(p->b, n);
	if (maglev_prepare(p->b, n, size, &why))
		die("maglev_prepare", why);
	memcpy(p->bb, p->b, n * sizeof(*p->b));
}

static void point_free(struct point *p)
{
	free(p->b);
	free(p->bb);
	free(p->t);
	free(p->ref);
	free(p->mh);
	free(p->work);
}

/* One call of variant @v. */
static void run_variant(struct point *p, int v)
{
	const char *why = NULL;

	switch (v) {
	case V_FILL:
		maglev_fill(p->t, p->size, p->b, p->n, p->work, NULL);
		break;
	case V_BUILD:
		if (maglev_build(p->t, p->size, p->bb, p->n, p->work, NULL,
				 &why))
			die("maglev_build", why);
		break;
	case V_REF:
		maglev_ref_fill(p->ref, p->size, p->b, p->n);
		break;
	case V_MH:
		maglev_ref_fill_mh_style(p->mh, p->size, p->b, p->n);
		break;
	}
}

/* maglev_fill(), maglev_build() and the mh-style fill agree with the ref. */
static void point_verify(struct point *p)
{
	struct maglev_stats st = { 0 };
	const char *why = NULL;
	u32 s;

	maglev_ref_fill(p->ref, p->size, p->b, p->n);
	maglev_fill(p->t, p->size, p->b, p->n, p->work, NULL);
	if (p->t->nr_filled != p->ref->nr_filled ||
	    memcmp(p->t->slot, p->ref->slot, p->size * sizeof(u16)))
		die("maglev_fill", "table differs from maglev_ref_fill");
	if (maglev_build(p->t, p->size, p->bb, p->n, p->work, &st, &why))
		die("maglev_build", why);
	if (memcmp(p->t->slot, p->ref->slot, p->size * sizeof(u16)))
		die("maglev_build", "table differs from maglev_ref_fill");
	maglev_ref_fill_mh_style(p->mh, p->size, p->b, p->n);
	for (s = 0; s < p->size; s++)
		if (p->mh[s] - p->b != p->ref->slot[s])
			die("maglev_ref_fill_mh_style",
			    "table differs from maglev_ref_fill");
}

/*
 * Median ns per call of each variant; runs interleaved, the order rotating.
 * Return the probes per slot of one maglev_fill().
 */
static double point_time(struct point *p, u64 med[NR_V], u64 lo[NR_V])
{
	u32 reps = p->size < SAMPLE_SLOTS ? SAMPLE_SLOTS / p->size : 1;
	struct maglev_stats st = { 0 };
	u64 ns[NR_V][RUNS];
	unsigned int r, k, i;

	/* warm up caches and page tables */
	for (k = 0; k < NR_V; k++)
		run_variant(p, k);

	for (r = 0; r < RUNS; r++) {
		for (k = 0; k < NR_V; k++) {
			int v = (r + k) % NR_V;
			u64 t0 = now_ns();

			for (i = 0; i < reps; i++)
				run_variant(p, v);
			ns[v][r] = (now_ns() - t0) / reps;
		}
	}
	for (k = 0; k < NR_V; k++) {
		med[k] = median(ns[k], RUNS);
		lo[k] = ns[k][0];	/* sorted by median() */
	}

	maglev_fill(p->t, p->size, p->b, p->n, p->work, &st);
	sink += p->t->slot[0];
	return (double)st.probes / p->size;
}

static double ms(u64 ns)
{
	return ns / 1e6;
}

static void bench_builds(u64 target[NR_V], u64 target_lo[NR_V])
{
	unsigned int i, j;

	printf("Table builds: median of %d runs, ms per build; ratios are the\n"
	       "reference fill's and the ip_vs_mh-style fill's medians over\n"
	       "maglev_fill()'s, measured interleaved in the same run.\n\n",
	       RUNS);
	printf("%8s %5s %9s %9s %7s %9s %7s %9s %7s\n", "M", "N", "fill",
	       "build", "probes", "ref", "ref/", "mh-style", "mh/");
	printf("%8s %5s %9s %9s %7s %9s %7s %9s %7s\n", "", "", "", "",
	       "/slot", "fill", "fill", "fill", "fill");

	for (i = 0; i < ARRAY_LEN(sizes); i++) {
		for (j = 0; j < ARRAY_LEN(counts); j++) {
			struct point p;
			u64 med[NR_V], lo[NR_V];
			double pps;

			point_init(&p, sizes[i], counts[j]);
			point_verify(&p);
			pps = point_time(&p, med, lo);
			printf("%8u %5u %9.3f %9.3f %7.2f %9.3f %6.2fx %9.3f %6.2fx\n",
			       p.size, p.n, ms(med[V_FILL]), ms(med[V_BUILD]),
			       pps, ms(med[V_REF]),
			       (double)med[V_REF] / med[V_FILL],
			       ms(med[V_MH]),
			       (double)med[V_MH] / med[V_FILL]);
			fflush(stdout);
			if (p.size == TARGET_M && p.n == TARGET_N) {
				memcpy(target, med, sizeof(med));
				memcpy(target_lo, lo, sizeof(lo));
			}
			point_free(&p);
		}
	}
	printf("\nAll tables checked bit-identical to maglev_ref_fill.\n");
	printf("%s = maglev_build(): sort, offsets, turns, fill, counts, digest.\n",
	       v_name[V_BUILD]);
}

/* maglev_build() with one of N backends draining: two fills. */
static u64 bench_drain_build(u32 size, u32 n)
{
	struct maglev_backend *b = xmalloc(n * sizeof(*b));
	struct maglev_table *t = xmalloc(maglev_table_bytes(size));
	void *work = xmalloc(maglev_work_bytes(size, n));
	const char *why = NULL;
	u64 ns[RUNS];
	unsigned int r;

	make_backends(b, n);
	b[n / 2].weight = 0;
	b[n / 2].drain_weight = 1;
	if (maglev_build(t, size, b, n, work, NULL, &why))
		die("maglev_build", why);
	for (r = 0; r < RUNS; r++) {
		u64 t0 = now_ns();

		if (maglev_build(t, size, b, n, work, NULL, &why))
			die("maglev_build", why);
		ns[r] = now_ns() - t0;
	}
	sink += t->digest;
	free(b);
	free(t);
	free(work);
	return median(ns, RUNS);
}

/* Per-key costs; each pass walks LOOKUP_KEYS different keys. */
enum { L_BOTH, L_HASH, L_LOOKUP, NR_L };

static u64 lookup_pass(const struct maglev_table *t, int kind)
{
	u64 sum = 0, x = 0x243f6a8885a308d3ULL;
	u8 key[6];
	u64 t0;
	u32 i;

	t0 = now_ns();
	for (i = 0; i < LOOKUP_KEYS; i++) {
		/*
		 * Varied IPv4 address and port in network byte order, copied
		 * into the key as the scheduler copies them from the packet:
		 * one 4-byte and one 2-byte store.
		 */
		u32 addr = htonl(0x0a000000U + i * 2654435761U);
		u16 port = htons((u16)(i * 40503U));

		memcpy(key, &addr, sizeof(addr));
		memcpy(key + 4, &port, sizeof(port));
		switch (kind) {
		case L_BOTH:
			sum += maglev_lookup(t, maglev_hash(key, 6, 0));
			break;
		case L_HASH:
			sum += maglev_hash(key, 6, 0);
			break;
		case L_LOOKUP:
			/* a cheap 64-bit LCG stands in for the hash */
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			sum += maglev_lookup(t, x);
			break;
		}
	}
	t0 = now_ns() - t0;
	sink += sum;
	return t0;
}

static double bench_lookups(void)
{
	double target = 0;
	unsigned int i, r, k;

	printf("\nLookups: N = %u, %u different 6-byte IPv4+port keys per pass,\n",
	       TARGET_N, LOOKUP_KEYS);
	printf("table in cache, median of %d passes, ns per key\n", RUNS);
	printf("(hash+lookup, and each half alone).\n\n");
	printf("%8s %12s %9s %9s\n", "M", "hash+lookup", "hash", "lookup");

	for (i = 0; i < ARRAY_LEN(sizes); i++) {
		struct point p;
		u64 ns[NR_L][RUNS];
		double per[NR_L];

		point_init(&p, sizes[i], TARGET_N);
		maglev_fill(p.t, p.size, p.b, p.n, p.work, NULL);
		lookup_pass(p.t, L_BOTH);
		for (r = 0; r < RUNS; r++)
			for (k = 0; k < NR_L; k++)
				ns[(r + k) % NR_L][r] =
					lookup_pass(p.t, (r + k) % NR_L);
		for (k = 0; k < NR_L; k++)
			per[k] = (double)median(ns[k], RUNS) / LOOKUP_KEYS;
		printf("%8u %12.2f %9.2f %9.2f\n", p.size, per[L_BOTH],
		       per[L_HASH], per[L_LOOKUP]);
		fflush(stdout);
		if (p.size == TARGET_M)
			target = per[L_BOTH];
		point_free(&p);
	}
	return target;
}

static void print_cpu(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "model name", 10)) {
			char *c = strchr(line, ':');

			printf("cpu:%s", c ? c + 1 : line);
			break;
		}
	}
	fclose(f);
}

static void print_target(const char *what, u64 med, u64 lo)
{
	printf("  %-12s %6.3f ms median, %6.3f ms min  (<= 1 ms: %s; stretch 0.5 ms: %s)\n",
	       what, ms(med), ms(lo), med <= TARGET_NS ? "met" : "MISSED",
	       med <= TARGET_NS / 2 ? "met" : "missed");
}

int main(void)
{
	u64 target[NR_V] = { 0 }, target_lo[NR_V] = { 0 }, drain;
	double look;

	printf("bench-host: maglev_table.c build and lookup figures\n");
	print_cpu();
	printf("\n");
	bench_builds(target, target_lo);
	drain = bench_drain_build(TARGET_M, TARGET_N);
	printf("maglev_build, M = %u, N = %u, one backend draining (two fills): %.3f ms\n",
	       TARGET_M, TARGET_N, ms(drain));
	look = bench_lookups();

	printf("\nTargets (M = %u, N = %u):\n", TARGET_M, TARGET_N);
	print_target("maglev_fill", target[V_FILL], target_lo[V_FILL]);
	print_target("maglev_build", target[V_BUILD], target_lo[V_BUILD]);
	printf("  %-12s %6.2f ns median  (<= %.0f ns: %s)\n", "hash+lookup",
	       look, TARGET_LOOKUP, look <= TARGET_LOOKUP ? "met" : "MISSED");
	printf("(checksum %016llx)\n", sink);
	return 0;
}
