// SPDX-License-Identifier: GPL-2.0
/*
 * bench-host - table build and lookup benchmark for maglev_table.c.
 *
 * Prints figures; it is not a timed test and never fails on a slow machine
 * (only on a table that differs from the reference fill).
 *
 * Builds: for each table size M and backend count N, maglev_fill(), the
 * whole maglev_build() (sort, offsets, fill, counts, digest), the plain
 * reference fill of tests/maglev_ref.c and a rebuild of ip_vs_mh's table by
 * tools/bench/mh_port.c (a faithful port of Linux 6.12's ip_vs_mh_dest_changed():
 * hsiphash offsets and skips, bitmap, in-place pointer table; at mh's own
 * size nearest M, 4093 or 65521) are timed in the same process, their runs
 * interleaved (the order rotating from run to run) so that a noisy machine
 * hurts all of them alike.  Each figure is the median of RUNS samples, the
 * spread is given by the first and third quartiles; a sample of a small
 * table repeats the call and divides.  The ratios are of the medians.
 *
 * maglev_table.c and mh_port.c are compiled alike, with the kernel's
 * code-generation limits (no SIMD registers, see the Makefile), so that the
 * figures are those of the code the kernel would run.
 *
 * Lookups: maglev_key_hash() (SipHash-2-4 under a 128-bit key, the client
 * hash the scheduler runs per packet) of a 6-byte IPv4 address + port key
 * followed by maglev_lookup(), over LOOKUP_KEYS different keys with the
 * table in cache; also each half alone.  Median of LOOKUP_RUNS passes, in ns
 * per key.
 *
 * Client hash, old and new: per packet, the unkeyed maglev_hash(key, len,
 * seed) (fmix64 per 8 bytes, the client hash before the 128-bit key) +
 * maglev_lookup() against maglev_key_hash() + maglev_lookup(), for IPv4,
 * IPv4+port, IPv6 and IPv6+port keys (4, 6, 16, 18 bytes), passes
 * interleaved; medians of KH_RUNS passes and their ratio.  tools/siphash.c
 * is compiled with the kernel flags too; lib/siphash.c runs the same rounds.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "maglev_table.h"
#include "maglev_ref.h"
#include "mh_port.h"

#define RUNS		51
#define LOOKUP_RUNS	9
#define LOOKUP_KEYS	10000000U
#define KH_RUNS		21
#define KH_KEYS		2000000U
#define SAMPLE_SLOTS	262144U	/* repeat small fills up to this */
#define TARGET_M	65537U
#define TARGET_N	1000U
#define TARGET_NS	500000ULL	/* build goal of issue 12: 0.5 ms */

static const u32 sizes[] = { 4093, 65521, 65537, 655373 };
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

/* After median(): the first and third quartiles of the sorted samples. */
static u64 quartile1(const u64 *v, unsigned int n)
{
	return v[n / 4];
}

static u64 quartile3(const u64 *v, unsigned int n)
{
	return v[n - 1 - n / 4];
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
	u16 *slots;			/* maglev_fill()'s output */
	u16 *ref;
	void *work;
	u32 mh_size;			/* 0: mh has no size near M */
	struct mhp_service svc;
	struct mhp_state mh;
	struct mhp_dest **dests;
};

enum { V_FILL, V_BUILD, V_REF, V_MH, NR_V };

/* Per variant: median and quartiles of the ns per call. */
struct figures {
	u64 med[NR_V], q1[NR_V], q3[NR_V], lo[NR_V];
	/* run by run ratios (x1000): mh / build and ref / fill */
	u64 mh_med, mh_q1, mh_q3, ref_med, ref_q1, ref_q3;
};

/* ip_vs_mh's compile-time size used for a maglev table of @size slots. */
static u32 mh_size_for(u32 size)
{
	if (size == MHP_SIZE_SMALL)
		return MHP_SIZE_SMALL;
	if (size == MHP_SIZE_LARGE || size == 65537)
		return MHP_SIZE_LARGE;
	return 0;
}

/*
 * The same N real servers (10.0.x.y:80, weight 1) added one by one to an
 * mh service, as IPVS would: each new dest goes to the head of the list.
 * The table is built once here; each timed call is one more rebuild of the
 * same set in place, ip_vs_mh's cheapest case (no slot changes owner).
 */
static void mh_init(struct point *p)
{
	u32 i;

	p->dests = xmalloc(p->n * sizeof(*p->dests));
	mhp_service_init(&p->svc);
	for (i = 0; i < p->n; i++) {
		struct mhp_dest *d = xmalloc(sizeof(*d));

		memset(d, 0, sizeof(*d));
		d->af = AF_INET;
		d->addr[0] = htonl(0x0a000000U | (i / 250) << 8 | (i % 250 + 1));
		d->port = htons(80);
		d->weight = 1;
		d->last_weight = 1;
		mhp_service_add(&p->svc, d);
		p->dests[i] = d;
	}
	if (mhp_init_svc(&p->mh, &p->svc, p->mh_size))
		die("mhp_init_svc", NULL);
}

static void point_init(struct point *p, u32 size, u32 n)
{
	const char *why = NULL;

	p->size = size;
	p->n = n;
	p->b = xmalloc(n * sizeof(*p->b));
	p->bb = xmalloc(n * sizeof(*p->bb));
	p->t = xmalloc(maglev_table_bytes(size, n));
	p->slots = xmalloc(size * sizeof(u16));
	p->ref = xmalloc(size * sizeof(u16));
	p->work = xmalloc(maglev_work_bytes(size, n));
	make_backends(p->b, n);
	if (maglev_prepare(p->b, n, size, &why))
		die("maglev_prepare", why);
	memcpy(p->bb, p->b, n * sizeof(*p->b));
	p->mh_size = mh_size_for(size);
	p->dests = NULL;
	if (p->mh_size)
		mh_init(p);
}

static void point_free(struct point *p)
{
	free(p->b);
	free(p->bb);
	free(p->t);
	free(p->slots);
	free(p->ref);
	free(p->work);
	if (p->dests) {
		u32 i;

		mhp_done_svc(&p->mh);
		for (i = 0; i < p->n; i++)
			free(p->dests[i]);
		free(p->dests);
	}
}

/* One call of variant @v. */
static void run_variant(struct point *p, int v)
{
	const char *why = NULL;

	switch (v) {
	case V_FILL:
		maglev_fill(p->slots, p->size, p->b, p->n, p->work, NULL);
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
		if (p->mh_size && mhp_dest_changed(&p->mh, &p->svc))
			die("mhp_dest_changed", NULL);
		break;
	}
}

/* maglev_fill() and maglev_build() agree with the reference fill. */
static void point_verify(struct point *p)
{
	struct maglev_stats st = { 0 };
	const char *why = NULL;

	u32 s;

	if (maglev_ref_fill(p->ref, p->size, p->b, p->n) !=
	    maglev_fill(p->slots, p->size, p->b, p->n, p->work, NULL) ||
	    memcmp(p->slots, p->ref, p->size * sizeof(u16)))
		die("maglev_fill", "table differs from maglev_ref_fill");
	if (maglev_build(p->t, p->size, p->bb, p->n, p->work, &st, &why))
		die("maglev_build", why);
	for (s = 0; s < p->size; s++)
		if (maglev_table_get(p->t, s) != p->ref[s])
			die("maglev_build", "table differs from maglev_ref_fill");
}

/*
 * Median and quartiles of the ns per call of each variant, runs interleaved
 * with the order rotating, and of the ratios within each run.  Return the
 * probes per slot of one maglev_fill().
 */
static double point_time(struct point *p, struct figures *f)
{
	u32 reps = p->size < SAMPLE_SLOTS ? SAMPLE_SLOTS / p->size : 1;
	struct maglev_stats st = { 0 };
	u64 ns[NR_V][RUNS], mh[RUNS], ref[RUNS];
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
	for (r = 0; r < RUNS; r++) {
		mh[r] = ns[V_MH][r] * 1000 / (ns[V_BUILD][r] ? : 1);
		ref[r] = ns[V_REF][r] * 1000 / (ns[V_FILL][r] ? : 1);
	}
	f->mh_med = median(mh, RUNS);
	f->mh_q1 = quartile1(mh, RUNS);
	f->mh_q3 = quartile3(mh, RUNS);
	f->ref_med = median(ref, RUNS);
	f->ref_q1 = quartile1(ref, RUNS);
	f->ref_q3 = quartile3(ref, RUNS);
	for (k = 0; k < NR_V; k++) {
		f->med[k] = median(ns[k], RUNS);
		f->q1[k] = quartile1(ns[k], RUNS);
		f->q3[k] = quartile3(ns[k], RUNS);
		f->lo[k] = ns[k][0];	/* sorted by median() */
	}

	maglev_fill(p->slots, p->size, p->b, p->n, p->work, &st);
	sink += p->slots[0];
	return (double)st.probes / p->size;
}

static double ms(u64 ns)
{
	return ns / 1e6;
}

static void bench_builds(struct figures *target)
{
	unsigned int i, j;

	printf("Table builds: ms per build, median of %d runs interleaved in this\n"
	       "process, with [first quartile, third quartile].  build is all of\n"
	       "maglev_build() (sort, offsets, turns, fill, counts, digest); mh is\n"
	       "one rebuild of ip_vs_mh's table by the faithful port of Linux 6.12's\n"
	       "ip_vs_mh (tools/bench/mh_port.c) at mh's size given in brackets, the\n"
	       "same N servers, in place; ref is the plain reference fill.  The\n"
	       "ratios are medians of the run-by-run ratios mh/build and ref/fill.\n\n",
	       RUNS);
	printf("%7s %5s %7s %21s %6s %7s %6s %7s %21s %6s\n", "M", "N",
	       "fill", "build [q1, q3]", "probe/", "ref", "ref/", "mh at",
	       "mh [q1, q3]", "mh/");
	printf("%7s %5s %7s %21s %6s %7s %6s %7s %21s %6s\n", "", "", "",
	       "", "slot", "", "fill", "", "", "build");

	for (i = 0; i < ARRAY_LEN(sizes); i++) {
		for (j = 0; j < ARRAY_LEN(counts); j++) {
			struct figures f;
			struct point p;
			double pps;

			point_init(&p, sizes[i], counts[j]);
			point_verify(&p);
			pps = point_time(&p, &f);
			printf("%7u %5u %7.3f %7.3f [%5.3f, %5.3f] %6.2f %7.3f %5.2fx",
			       p.size, p.n, ms(f.med[V_FILL]), ms(f.med[V_BUILD]),
			       ms(f.q1[V_BUILD]), ms(f.q3[V_BUILD]), pps,
			       ms(f.med[V_REF]), f.ref_med / 1000.0);
			if (p.mh_size)
				printf(" %7u %7.3f [%5.3f, %5.3f] %5.2fx\n",
				       p.mh_size, ms(f.med[V_MH]),
				       ms(f.q1[V_MH]), ms(f.q3[V_MH]),
				       f.mh_med / 1000.0);
			else
				printf(" %7s\n", "-");
			fflush(stdout);
			if (p.size == TARGET_M && p.n == TARGET_N)
				*target = f;
			point_free(&p);
		}
	}
	printf("\nAll tables checked bit-identical to maglev_ref_fill.\n");
}

/* maglev_build() with one of N backends draining: two fills. */
static u64 bench_drain_build(u32 size, u32 n)
{
	struct maglev_backend *b = xmalloc(n * sizeof(*b));
	struct maglev_table *t = xmalloc(maglev_table_bytes(size, n));
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

/* An arbitrary client hash key; its value does not change the cost. */
static const siphash_key_t bench_key = {
	{ 0x5be0cd19137e2179ULL, 0x1f83d9abfb41bd6bULL }
};

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
			sum += maglev_lookup(t, maglev_key_hash(key, 6,
								&bench_key));
			break;
		case L_HASH:
			sum += maglev_key_hash(key, 6, &bench_key);
			break;
		case L_LOOKUP:
			/* a cheap 64-bit LCG stands in for the hash */
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			sum += maglev_lookup(t, (u32)(x >> 32));
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
	printf("table in cache, median of %d passes, ns per key\n",
	       LOOKUP_RUNS);
	printf("(hash+lookup, and each half alone).\n\n");
	printf("%8s %12s %9s %9s\n", "M", "hash+lookup", "hash", "lookup");

	for (i = 0; i < ARRAY_LEN(sizes); i++) {
		struct point p;
		u64 ns[NR_L][LOOKUP_RUNS];
		double per[NR_L];

		point_init(&p, sizes[i], TARGET_N);
		run_variant(&p, V_BUILD);
		lookup_pass(p.t, L_BOTH);
		for (r = 0; r < LOOKUP_RUNS; r++)
			for (k = 0; k < NR_L; k++)
				ns[(r + k) % NR_L][r] =
					lookup_pass(p.t, (r + k) % NR_L);
		for (k = 0; k < NR_L; k++)
			per[k] = (double)median(ns[k], LOOKUP_RUNS) /
				 LOOKUP_KEYS;
		printf("%8u %12.2f %9.2f %9.2f\n", p.size, per[L_BOTH],
		       per[L_HASH], per[L_LOOKUP]);
		fflush(stdout);
		if (p.size == TARGET_M)
			target = per[L_BOTH];
		point_free(&p);
	}
	return target;
}

/* Client keys of the old/new comparison: IPv4, IPv4+port, IPv6, IPv6+port. */
static const struct {
	const char *name;
	u32 len;
} kh_keys[] = {
	{ "IPv4", 4 },
	{ "IPv4+port", 6 },
	{ "IPv6", 16 },
	{ "IPv6+port", 18 },
};

/*
 * One pass of KH_KEYS lookups of @len-byte keys, hashed with the old
 * unkeyed maglev_hash() (@keyed false) or with maglev_key_hash().  The key
 * changes from one packet to the next as the scheduler copies it from the
 * packet, with no store wider than the hash's loads that follow (which
 * would stall store forwarding): one 4-byte store of an IPv4 address, or
 * one 8-byte store of an IPv6 address's last half, then the port.
 */
static u64 kh_pass(const struct maglev_table *t, u32 len, bool keyed)
{
	u8 key[18] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0 };
	u32 alen = len & ~3U, i;
	u64 sum = 0, t0;

	t0 = now_ns();
	for (i = 0; i < KH_KEYS; i++) {
		u32 a = htonl(0x0a000000U + i * 2654435761U);
		u32 b = i * 40503U;
		u64 a6 = (u64)b << 32 | a;
		u16 port = htons((u16)b);
		u64 h;

		if (alen == 16)
			memcpy(key + 8, &a6, sizeof(a6));
		else
			memcpy(key, &a, sizeof(a));
		if (len > alen)
			memcpy(key + alen, &port, sizeof(port));
		if (keyed)
			h = maglev_key_hash(key, len, &bench_key);
		else
			h = maglev_hash(key, len, 0x0123456789abcdefULL);
		sum += maglev_lookup(t, h);
	}
	t0 = now_ns() - t0;
	sink += sum;
	return t0;
}

/* Medians in ns per key: old[k] and new[k] for kh_keys[k]. */
static void bench_key_hash(double *old, double *new)
{
	u64 ns[ARRAY_LEN(kh_keys)][2][KH_RUNS];
	unsigned int k, r, j, nv = 2 * ARRAY_LEN(kh_keys);
	struct point p;

	printf("\nClient hash, old and new: unkeyed maglev_hash(key, len, seed) +\n");
	printf("maglev_lookup against SipHash-2-4 maglev_key_hash(key, len, &key) +\n");
	printf("maglev_lookup, M = %u, N = %u, %u different keys per pass,\n",
	       TARGET_M, TARGET_N, KH_KEYS);
	printf("passes interleaved, median of %d, ns per key.\n\n", KH_RUNS);
	printf("%-10s %5s %11s %11s %12s\n", "key", "bytes", "old (fmix)",
	       "siphash", "siphash/old");

	point_init(&p, TARGET_M, TARGET_N);
	run_variant(&p, V_BUILD);
	for (j = 0; j < nv; j++)
		kh_pass(p.t, kh_keys[j / 2].len, j % 2);
	/* the order of the eight variants rotates from pass to pass */
	for (r = 0; r < KH_RUNS; r++) {
		for (j = 0; j < nv; j++) {
			unsigned int v = (r + j) % nv;

			k = v / 2;
			ns[k][v % 2][r] = kh_pass(p.t, kh_keys[k].len, v % 2);
		}
	}
	for (k = 0; k < ARRAY_LEN(kh_keys); k++) {
		old[k] = (double)median(ns[k][0], KH_RUNS) / KH_KEYS;
		new[k] = (double)median(ns[k][1], KH_RUNS) / KH_KEYS;
		printf("%-10s %5u %11.2f %11.2f %11.2fx\n", kh_keys[k].name,
		       kh_keys[k].len, old[k], new[k], new[k] / old[k]);
	}
	fflush(stdout);
	point_free(&p);
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

int main(void)
{
	struct figures t = { 0 };
	double look, kh_old[ARRAY_LEN(kh_keys)], kh_new[ARRAY_LEN(kh_keys)];
	unsigned int k;
	u64 drain;

	printf("bench-host: maglev_table.c build and lookup figures\n");
	print_cpu();
	printf("\n");
	bench_builds(&t);
	drain = bench_drain_build(TARGET_M, TARGET_N);
	printf("maglev_build, M = %u, N = %u, one backend draining (two fills): %.3f ms\n",
	       TARGET_M, TARGET_N, ms(drain));
	look = bench_lookups();
	bench_key_hash(kh_old, kh_new);

	printf("\nAt M = %u, N = %u (mh at %u), median [q1, q3] of %d runs:\n",
	       TARGET_M, TARGET_N, MHP_SIZE_LARGE, RUNS);
	printf("  maglev_build  %.3f ms [%.3f, %.3f]  (goal 0.5 ms: %s)\n",
	       ms(t.med[V_BUILD]), ms(t.q1[V_BUILD]), ms(t.q3[V_BUILD]),
	       t.med[V_BUILD] <= TARGET_NS ? "met" : "missed");
	printf("  maglev_fill   %.3f ms [%.3f, %.3f]\n", ms(t.med[V_FILL]),
	       ms(t.q1[V_FILL]), ms(t.q3[V_FILL]));
	printf("  mh rebuild    %.3f ms [%.3f, %.3f]  (faithful ip_vs_mh port)\n",
	       ms(t.med[V_MH]), ms(t.q1[V_MH]), ms(t.q3[V_MH]));
	printf("  ref fill      %.3f ms [%.3f, %.3f]\n", ms(t.med[V_REF]),
	       ms(t.q1[V_REF]), ms(t.q3[V_REF]));
	printf("  mh / maglev_build   %.2fx [%.2f, %.2f]\n", t.mh_med / 1000.0,
	       t.mh_q1 / 1000.0, t.mh_q3 / 1000.0);
	printf("  ref / maglev_fill   %.2fx [%.2f, %.2f]\n", t.ref_med / 1000.0,
	       t.ref_q1 / 1000.0, t.ref_q3 / 1000.0);
	printf("  fastest runs: maglev_build %.3f ms, mh rebuild %.3f ms, ratio %.2fx\n",
	       ms(t.lo[V_BUILD]), ms(t.lo[V_MH]),
	       (double)t.lo[V_MH] / (t.lo[V_BUILD] ? : 1));
	printf("  hash+lookup   %.2f ns per key (SipHash-2-4, IPv4+port)\n",
	       look);
	for (k = 0; k < ARRAY_LEN(kh_keys); k++)
		printf("  %-9s     siphash %.2f / old %.2f ns = %.2fx\n",
		       kh_keys[k].name, kh_new[k], kh_old[k],
		       kh_new[k] / kh_old[k]);
	printf("(checksum %016llx)\n", sink);
	return 0;
}
