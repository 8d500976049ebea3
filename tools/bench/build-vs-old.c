// SPDX-License-Identifier: GPL-2.0
/*
 * build-vs-old - maglev_build() of this tree against the one of the last
 * version before packed slots (git 8ceeba3: 16-bit slots, struct
 * maglev_table of 24 bytes and M u16s), side by side in one process.
 * scripts/bench-old.sh compiles that version's maglev_table.c with its
 * global symbols renamed old_* and links it in; "make bench-old" runs it.
 *
 *   build-vs-old [M [N [drain]]]     (default 65537 1000)
 *
 * Each of RUNS rounds builds the same N servers "10.0.x.y:80" once with
 * each version, the order alternating, and checks that both digests agree
 * (the digest is over the owners, so packing must not change it).  Prints
 * the medians and the median of the per-round ratios new/old with its
 * quartiles.  Times are the thread's CPU time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_time.h"
#include "maglev_table.h"

#define RUNS	31

/* The old version's interface (its struct maglev_table is opaque here). */
int old_maglev_build(void *t, u32 size, struct maglev_backend *b, u32 n,
		     void *work, struct maglev_stats *st, const char **why);
size_t old_maglev_table_bytes(u32 size);
size_t old_maglev_work_bytes(u32 size, u32 nr_backends);

/* The old struct maglev_table: size, nr_backends, nr_filled, reserved. */
#define OLD_DIGEST_OFFSET	16

static u64 now_ns(void)
{
	return bench_ns(CLOCK_THREAD_CPUTIME_ID);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p) {
		fprintf(stderr, "build-vs-old: out of memory\n");
		exit(2);
	}
	return p;
}

int main(int argc, char **argv)
{
	u32 m = argc > 1 ? (u32)strtoul(argv[1], NULL, 10) : 65537;
	u32 n = argc > 2 ? (u32)strtoul(argv[2], NULL, 10) : 1000;
	int drain = argc > 3;
	struct maglev_backend *b = xmalloc(n * sizeof(*b));
	struct maglev_backend *c = xmalloc(n * sizeof(*c));
	struct maglev_table *t = xmalloc(maglev_table_bytes(m, n));
	void *w = xmalloc(maglev_work_bytes(m, n));
	void *ot = xmalloc(old_maglev_table_bytes(m));
	void *ow = xmalloc(old_maglev_work_bytes(m, n));
	u64 tn[RUNS], to[RUNS], ratio[RUNS], od;
	u32 i, r;

	memset(b, 0, n * sizeof(*b));
	for (i = 0; i < n; i++) {
		b[i].name_len = (u32)snprintf(b[i].name, sizeof(b[i].name),
					      "10.0.%u.%u:80", i / 250,
					      i % 250 + 1);
		b[i].weight = 1;
	}
	if (drain) {
		b[n / 2].weight = 0;
		b[n / 2].drain_weight = 1;
	}
	for (r = 0; r < RUNS; r++) {
		int k;

		for (k = 0; k < 2; k++) {
			int old = (r + k) % 2;
			u64 t0;
			int err;

			memcpy(c, b, n * sizeof(*b));
			t0 = now_ns();
			if (old) {
				err = old_maglev_build(ot, m, c, n, ow, NULL,
						       NULL);
			} else {
				sort(c, n, sizeof(*c),
				     maglev_backend_cmp, NULL);
				err = maglev_build(t, m, c, n, w, NULL, NULL);
			}
			if (err) {
				fprintf(stderr, "build-vs-old: build failed\n");
				return 2;
			}
			(old ? to : tn)[r] = now_ns() - t0;
		}
		memcpy(&od, (u8 *)ot + OLD_DIGEST_OFFSET, sizeof(od));
		if (od != t->digest) {
			fprintf(stderr, "build-vs-old: digests differ\n");
			return 1;
		}
		ratio[r] = tn[r] * 1000 / (to[r] ? to[r] : 1);
	}
	qsort(tn, RUNS, sizeof(tn[0]), bench_cmp_u64);
	qsort(to, RUNS, sizeof(to[0]), bench_cmp_u64);
	qsort(ratio, RUNS, sizeof(ratio[0]), bench_cmp_u64);
	printf("maglev_build() M %u N %u%s, %d interleaved rounds: new %.3f ms, old (16-bit slots) %.3f ms; new/old median %.3f [q1 %.3f, q3 %.3f]; digests equal\n",
	       m, n, drain ? ", one draining" : "", RUNS, tn[RUNS / 2] / 1e6,
	       to[RUNS / 2] / 1e6, ratio[RUNS / 2] / 1000.0,
	       ratio[RUNS / 4] / 1000.0, ratio[3 * RUNS / 4] / 1000.0);
	free(b);
	free(c);
	free(t);
	free(w);
	free(ot);
	free(ow);
	return 0;
}
