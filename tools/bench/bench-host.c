// SPDX-License-Identifier: GPL-2.0
/*
 * bench-host - table build and lookup benchmark for maglev_table.c.
 *
 * Prints figures; it is not a timed test and never fails on a slow machine
 * (only on a table that differs from the reference fill).
 *
 * Builds: for each table size M and backend count N, maglev_fill(), the
 * whole build (maglev_sort_backends(), then maglev_build(): offsets, fill,
 * counts, digest), the plain
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
 * Lookups: the client hash of a 6-byte IPv4 address + port key
 * (maglev_hash_ip4_port(), hsiphash_2u32() under a 128-bit key) followed by
 * maglev_lookup(), over LOOKUP_KEYS different keys with the table in cache;
 * also each half alone.  Median of LOOKUP_RUNS passes, in ns per key.
 *
 * Per new connection: ip_vs_maglev_schedule()'s path from the client
 * address and port to an available destination (maglev_sched_port.c: the
 * key through hsiphash's typed helpers, maglev_lookup(), the destination,
 * its availability test) against ip_vs_mh_schedule()'s (mh_port.c:
 * ip_vs_mh_hashkey(), IPv6 folded, hsiphash(&v, 4) as x86-64 runs it, the
 * modulo, the dest slot, is_unavailable()), for IPv4, IPv4+port, IPv6 and
 * IPv6+port keys, a service of 100 and one of 5 servers, maglev at today's
 * default M and at a prime near 100 N, mh at its default 4093; also mh with
 * hsiphash_1u32() (not what ip_vs_mh runs).  Passes interleaved, medians
 * of PC_RUNS, ratios of the medians.  tools/siphash.c is compiled with the
 * kernel flags too and runs lib/siphash.c's rounds.  "bench-host conn"
 * prints only these figures.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_time.h"
#include "maglev_table.h"
#include "maglev_ref.h"
#include "maglev_sched_port.h"
#include "mh_port.h"

#define RUNS		51
#define LOOKUP_RUNS	9
#define LOOKUP_KEYS	10000000U
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
	return bench_ns(CLOCK_MONOTONIC);
}

static u64 median(u64 *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), bench_cmp_u64);
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
	sort(b, n, sizeof(*b), maglev_backend_cmp, NULL);
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
		d->addr.ip = htonl(0x0a000000U | (i / 250) << 8 | (i % 250 + 1));
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
		sort(p->bb, p->n, sizeof(*p->bb), maglev_backend_cmp, NULL);
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
	       "process, with [first quartile, third quartile].  build is the sort\n"
	       "and maglev_build() (offsets, turns, fill, counts, digest); mh is\n"
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

		sort(b, n, sizeof(*b), maglev_backend_cmp, NULL);
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
static const u8 bench_key_bytes[MAGLEV_KEY_BYTES] = {
	0x79, 0x21, 0x7e, 0x13, 0x19, 0xcd, 0xe0, 0x5b,
	0x6b, 0xbd, 0x41, 0xfb, 0xab, 0xd9, 0x83, 0x1f,
};
static hsiphash_key_t bench_key;

/* Per-key costs; each pass walks LOOKUP_KEYS different keys. */
enum { L_BOTH, L_HASH, L_LOOKUP, NR_L };

static u64 lookup_pass(const struct maglev_table *t, int kind)
{
	u64 sum = 0, x = 0x243f6a8885a308d3ULL;
	u64 t0;
	u32 i;

	t0 = now_ns();
	for (i = 0; i < LOOKUP_KEYS; i++) {
		/* varied IPv4 address and port in network byte order */
		u32 addr = htonl(0x0a000000U + i * 2654435761U);
		u16 port = htons((u16)(i * 40503U));

		switch (kind) {
		case L_BOTH:
			sum += maglev_lookup(t, maglev_hash_ip4_port(&addr, port,
								     &bench_key));
			break;
		case L_HASH:
			sum += maglev_hash_ip4_port(&addr, port, &bench_key);
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

	printf("\nLookups: N = %u, %u different IPv4+port keys per pass,\n",
	       TARGET_N, LOOKUP_KEYS);
	printf("hsiphash_2u32 (maglev_hash_ip4_port()) + maglev_lookup(), table in\n");
	printf("cache, median of %d passes, ns per key (hash+lookup, and each\n",
	       LOOKUP_RUNS);
	printf("half alone).\n\n");
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

/*
 * Per new connection: ip_vs_maglev_schedule()'s path (maglev_sched_port.c)
 * against ip_vs_mh_schedule()'s (mh_port.c), from the client address and
 * port to an available destination, for the four client key kinds.
 */
#define PC_CLIENTS	16384U	/* distinct clients, cycled through */
#define PC_CONNS	1000000U	/* connections per pass */
#define PC_RUNS		21

static const struct {
	const char *name;
	u16 af;
	unsigned int flags;
} pc_kinds[] = {
	{ "IPv4", MHP_AF_INET, 0 },
	{ "IPv4+port", MHP_AF_INET, MHP_SVC_F_PORT },
	{ "IPv6", MHP_AF_INET6, 0 },
	{ "IPv6+port", MHP_AF_INET6, MHP_SVC_F_PORT },
};
#define PC_KINDS	ARRAY_LEN(pc_kinds)

/* Services: N servers; maglev at the default M = 65537 and at mh's size */
static const struct {
	u32 n;
	u32 m_small;
} pc_svcs[] = {
	{ 100, 4093 },
	{ 5, 4093 },
};
#define PC_SVCS		ARRAY_LEN(pc_svcs)
/* The two maglev table sizes of each service, as built. */
static u32 pc_msize[PC_SVCS][2];

/*
 * Variants per service: maglev at 65537, maglev at m_small, mh at 4093,
 * and mh with hsiphash_1u32(v) for hsiphash(&v, 4) (not what ip_vs_mh
 * does: it shows what the store and 8-byte reload of v cost mh).
 */
enum { PC_MAGLEV, PC_MAGLEV_SMALL, PC_MH, PC_MH_1U32, PC_NR };
static const char *const pc_names[PC_NR] = {
	"maglev", "maglev", "mh", "mh-1u32"
};

struct pc_conn {
	union mhp_addr addr;
	u16 port;
};

/* One service: the dests, mh's state and maglev's two tables. */
struct pc_service {
	u32 n;
	u32 m[2];
	struct mhp_service svc;
	struct mhp_state mh;
	struct mhp_dest **dests;
	struct msp_key key;
	struct msp_net net;
	struct msp_lut lut[2];
	struct msp_service ms[2];
	struct maglev_backend *be[2];
};

static void pc_lut_init(struct pc_service *ps, int i)
{
	struct maglev_backend *b = xmalloc(ps->n * sizeof(*b));
	struct msp_lut *lut = &ps->lut[i];
	const char *why = NULL;
	void *work;
	u32 k;

	memset(b, 0, ps->n * sizeof(*b));
	for (k = 0; k < ps->n; k++) {
		b[k].name_len = (u32)snprintf(b[k].name, sizeof(b[k].name),
					      "10.0.%u.%u:80", k / 250,
					      k % 250 + 1);
		b[k].weight = 1;
		b[k].priv = ps->dests[k];
	}
	sort(b, ps->n, sizeof(*b), maglev_backend_cmp, NULL);
	memset(lut, 0, sizeof(*lut));
	lut->nr = ps->n;
	lut->table = xmalloc(maglev_table_bytes(ps->m[i], ps->n));
	lut->dest = xmalloc(ps->n * sizeof(*lut->dest));
	work = xmalloc(maglev_work_bytes(ps->m[i], ps->n));
	if (maglev_build(lut->table, ps->m[i], b, ps->n, work, NULL, &why))
		die("maglev_build", why);
	free(work);
	for (k = 0; k < ps->n; k++)
		lut->dest[k] = b[k].priv;
	lut->be = b;
	ps->be[i] = b;
	memset(&ps->ms[i], 0, sizeof(ps->ms[i]));
	ps->ms[i].mn = &ps->net;
	ps->ms[i].svc = &ps->svc;
	ps->ms[i].lut = lut;
}

static void pc_service_init(struct pc_service *ps, u32 n, u32 m_small)
{
	u32 i;

	memset(ps, 0, sizeof(*ps));
	ps->n = n;
	ps->m[0] = 65537;
	ps->m[1] = maglev_fit_size(m_small, n);
	ps->dests = xmalloc(n * sizeof(*ps->dests));
	mhp_service_init(&ps->svc);
	for (i = 0; i < n; i++) {
		struct mhp_dest *d = xmalloc(sizeof(*d));

		memset(d, 0, sizeof(*d));
		d->af = MHP_AF_INET;
		d->addr.ip = htonl(0x0a000000U | (i / 250) << 8 | (i % 250 + 1));
		d->port = htons(80);
		d->weight = 1;
		d->last_weight = 1;
		d->flags = MHP_DEST_F_AVAILABLE;
		d->cflags = 1;	/* IP_VS_DEST_CF_AVAILABLE */
		mhp_service_add(&ps->svc, d);
		ps->dests[i] = d;
	}
	if (mhp_init_svc(&ps->mh, &ps->svc, MHP_SIZE_SMALL))
		die("mhp_init_svc", NULL);
	ps->key.hkey = bench_key;
	ps->net.key = &ps->key;
	pc_lut_init(ps, 0);
	pc_lut_init(ps, 1);
}

static void pc_service_free(struct pc_service *ps)
{
	u32 i;

	mhp_done_svc(&ps->mh);
	for (i = 0; i < 2; i++) {
		free(ps->lut[i].table);
		free(ps->lut[i].dest);
		free(ps->be[i]);
	}
	for (i = 0; i < ps->n; i++)
		free(ps->dests[i]);
	free(ps->dests);
}

/* Client addresses and ports: random, IPv6 ones under 2001:db8::/32. */
static void pc_conns_init(struct pc_conn *c)
{
	u64 x = 0x9e3779b97f4a7c15ULL;
	u32 i, j;

	for (i = 0; i < PC_CLIENTS; i++) {
		u32 w[4];

		for (j = 0; j < 4; j++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			w[j] = (u32)(x >> 32);
		}
		memset(&c[i], 0, sizeof(c[i]));
		c[i].addr.ip6[0] = htonl(0x20010db8U);
		c[i].addr.ip6[1] = w[1];
		c[i].addr.ip6[2] = w[2];
		c[i].addr.ip6[3] = w[3];
		c[i].port = (u16)w[0];
	}
}

/*
 * One pass: PC_CONNS new connections of the clients at @c (IPv4 keys use
 * the last word, so that IPv4 and IPv6 addresses are equally random).  Every
 * one must find an available destination.
 */
static u64 pc_pass(struct pc_service *ps, int v, const struct pc_conn *c,
		   const union mhp_addr *a4)
{
	const union mhp_addr *addr;
	bool v6 = ps->svc.af == MHP_AF_INET6;
	uintptr_t sum = 0;
	u32 i, k, missed = 0;
	struct mhp_dest *d;
	u64 t0;

	t0 = now_ns();
	for (i = 0; i < PC_CONNS; i++) {
		k = i & (PC_CLIENTS - 1);
		addr = v6 ? &c[k].addr : &a4[k];
		if (v == PC_MH)
			d = mhp_schedule_small(&ps->svc, &ps->mh, addr,
					       c[k].port);
		else if (v == PC_MH_1U32)
			d = mhp_schedule_small_1u32(&ps->svc, &ps->mh, addr,
						    c[k].port);
		else
			d = msp_schedule(&ps->ms[v], addr, c[k].port);
		sum += (uintptr_t)d;
		missed += !d;
	}
	t0 = now_ns() - t0;
	if (missed)
		die("per-connection benchmark", "no destination chosen");
	sink += sum;
	return t0;
}

/* Medians in ns per connection: [kind][service][variant] */
static double pc_med[PC_KINDS][PC_SVCS][PC_NR];

static void bench_per_conn(void)
{
	static u64 ns[PC_KINDS][PC_SVCS][PC_NR][PC_RUNS];
	unsigned int nv = PC_KINDS * PC_SVCS * PC_NR, k, sv, v, r, j;
	struct pc_service *ps = xmalloc(PC_SVCS * sizeof(*ps));
	struct pc_conn *c = xmalloc(PC_CLIENTS * sizeof(*c));
	union mhp_addr *a4 = xmalloc(PC_CLIENTS * sizeof(*a4));

	printf("\nPer new connection: hash, lookup and availability test, from the\n");
	printf("client address (and port) to an available server: maglev's\n");
	printf("ip_vs_maglev_schedule() path (tools/bench/maglev_sched_port.c:\n");
	printf("hsiphash typed helpers, u32 hash, maglev_lookup() on packed\n");
	printf("slots, dest pointer, availability) against ip_vs_mh_schedule()'s\n");
	printf("(tools/bench/mh_port.c: ip_vs_mh_hashkey(), IPv6 folded, hsiphash,\n");
	printf("%% 4093, 8-byte dest slot, is_unavailable()).  %u random clients\n",
	       PC_CLIENTS);
	printf("cycled, %u connections per pass, the %u variants' passes\n",
	       PC_CONNS, nv);
	printf("interleaved (order rotating), median of %d passes, ns per\n",
	       PC_RUNS);
	printf("connection; ratio = maglev median / mh median.\n\n");

	pc_conns_init(c);
	for (k = 0; k < PC_CLIENTS; k++) {
		memset(&a4[k], 0, sizeof(a4[k]));
		a4[k].ip = c[k].addr.ip6[3];
	}
	for (sv = 0; sv < PC_SVCS; sv++) {
		pc_service_init(&ps[sv], pc_svcs[sv].n, pc_svcs[sv].m_small);
		pc_msize[sv][0] = ps[sv].m[0];
		pc_msize[sv][1] = ps[sv].m[1];
	}

	for (r = 0; r <= PC_RUNS; r++) {
		for (j = 0; j < nv; j++) {
			unsigned int x = (r + j) % nv;
			u64 t;

			k = x / (PC_SVCS * PC_NR);
			sv = x / PC_NR % PC_SVCS;
			v = x % PC_NR;
			ps[sv].svc.af = pc_kinds[k].af;
			ps[sv].svc.flags = pc_kinds[k].flags;
			t = pc_pass(&ps[sv], (int)v, c, a4);
			if (r)	/* run 0 warms up */
				ns[k][sv][v][r - 1] = t;
		}
	}

	printf("%-10s %5s %7s %9s %9s %7s\n", "key", "N", "M", "scheduler",
	       "ns/conn", "ratio");
	for (k = 0; k < PC_KINDS; k++) {
		for (sv = 0; sv < PC_SVCS; sv++) {
			for (v = 0; v < PC_NR; v++)
				pc_med[k][sv][v] =
					(double)median(ns[k][sv][v], PC_RUNS) /
					PC_CONNS;
			for (v = 0; v < PC_NR; v++) {
				printf("%-10s %5u %7u %9s %9.2f", pc_kinds[k].name,
				       pc_svcs[sv].n,
				       v >= PC_MH ? MHP_SIZE_SMALL : ps[sv].m[v],
				       pc_names[v], pc_med[k][sv][v]);
				if (v != PC_MH)
					printf(" %6.2fx", pc_med[k][sv][v] /
					       pc_med[k][sv][PC_MH]);
				printf("\n");
			}
		}
	}
	fflush(stdout);
	for (sv = 0; sv < PC_SVCS; sv++)
		pc_service_free(&ps[sv]);
	free(ps);
	free(c);
	free(a4);
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

/* The closing lines of the per-connection figures. */
static void print_per_conn(void)
{
	unsigned int k, sv;

	printf("Per new connection, maglev / mh (mh at %u slots; goal for IPv4 keys\n",
	       MHP_SIZE_SMALL);
	printf("at most 1.00x; mh folds IPv6 to 4 bytes, maglev hashes it whole):\n");
	for (sv = 0; sv < PC_SVCS; sv++)
		for (k = 0; k < PC_KINDS; k++)
			printf("  N %3u %-9s  M %5u %.2fx, M %5u %.2fx  (mh %.2f ns; against mh-1u32 %.2fx, %.2fx)\n",
			       pc_svcs[sv].n, pc_kinds[k].name,
			       pc_msize[sv][0],
			       pc_med[k][sv][PC_MAGLEV] / pc_med[k][sv][PC_MH],
			       pc_msize[sv][1],
			       pc_med[k][sv][PC_MAGLEV_SMALL] /
			       pc_med[k][sv][PC_MH], pc_med[k][sv][PC_MH],
			       pc_med[k][sv][PC_MAGLEV] /
			       pc_med[k][sv][PC_MH_1U32],
			       pc_med[k][sv][PC_MAGLEV_SMALL] /
			       pc_med[k][sv][PC_MH_1U32]);
}

/* "bench-host conn": only the per-connection figures. */
int main(int argc, char **argv)
{
	struct figures t = { 0 };
	double look;
	u64 drain;

	maglev_hkey_from_bytes(&bench_key, bench_key_bytes);
	printf("bench-host: maglev_table.c build and lookup figures\n");
	print_cpu();
	if (argc == 2 && !strcmp(argv[1], "conn")) {
		bench_per_conn();
		printf("\n");
		print_per_conn();
		printf("(checksum %016llx)\n", sink);
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "usage: bench-host [conn]\n");
		return 2;
	}
	printf("\n");
	bench_builds(&t);
	drain = bench_drain_build(TARGET_M, TARGET_N);
	printf("maglev_build, M = %u, N = %u, one backend draining (two fills): %.3f ms\n",
	       TARGET_M, TARGET_N, ms(drain));
	look = bench_lookups();
	bench_per_conn();

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
	printf("  hash+lookup   %.2f ns per key (hsiphash, IPv4+port)\n", look);
	print_per_conn();
	printf("(checksum %016llx)\n", sink);
	return 0;
}
