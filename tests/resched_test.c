// SPDX-License-Identifier: GPL-2.0
/*
 * resched_test.c - the reschedule points of maglev_table.c on the host.
 *
 * Built with -DMAGLEV_RESCHED_TEST, the userspace compat header leaves
 * cond_resched() to this file.  tests/run.sh compiles maglev_table.c alone
 * with -fsanitize-coverage=trace-pc: the compiler calls
 * __sanitizer_cov_trace_pc() at the start of every basic block the table
 * code runs (the hook kcov uses), and this file counts them.  The work
 * between two reschedule points is counted in those blocks, whatever the
 * loops are made of and however loaded the machine: a pure function of
 * the code and its input, no clock involved.
 *
 * A build at each size with a backend draining (two fills and the drain
 * merge), then the churn against the previous table.  Asserted, for each
 * case:
 * - no stretch between two calls runs more than MAX_STRETCH_BLOCKS blocks;
 *   the code's own bound is MAGLEV_RESCHED_STEPS probes or slots, or
 *   MAGLEV_RESCHED_BACKENDS backends, each a few blocks (the longest
 *   stretch of this tree is printed); a pass over 5000011 slots or a fill
 *   without a reschedule point is millions of blocks;
 * - at least one call every MAGLEV_RESCHED_STEPS of the units the build
 *   reports: the fills' probes (struct maglev_stats, counted by the fill
 *   itself) and five passes over the M slots.
 *
 * Built without the instrumentation and with -DRESCHED_BENCH (make
 * bench-resched, part of make bench-host), the same cases time the
 * stretches in the thread's CPU time instead, and assert nothing: that
 * is a benchmark, which a loaded machine or page faults can slow down.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "maglev_table.h"

#include "unit.h"

/* 64 blocks a unit for MAGLEV_RESCHED_STEPS units: 2^20 blocks. */
#define MAX_STRETCH_BLOCKS	(64ULL * MAGLEV_RESCHED_STEPS)

static u64 blocks, since, longest, total;
static u32 calls;

/* Called by the compiler at each basic block of maglev_table.c. */
void __sanitizer_cov_trace_pc(void);
void __sanitizer_cov_trace_pc(void)
{
	blocks++;
}

static u64 work_now(void)
{
#ifdef RESCHED_BENCH
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
#else
	return blocks;
#endif
}

void cond_resched(void)
{
	u64 now = work_now();

	if (now - since > longest)
		longest = now - since;
	total += now - since;
	since = now;
	calls++;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p) {
		perror("calloc");
		exit(2);
	}
	return p;
}

static void build_set(struct maglev_backend *b, u32 n, u32 drained)
{
	u32 i;

	for (i = 0; i < n; i++) {
		b[i].name_len = (u32)snprintf(b[i].name, sizeof(b[i].name),
					      "10.0.%u.%u:80", i / 250,
					      i % 250 + 1);
		b[i].weight = 1 + i % 5;
		b[i].drain_weight = 0;
	}
	sort(b, n, sizeof(*b), maglev_backend_cmp, NULL);
	if (drained < n) {
		b[drained].drain_weight = b[drained].weight;
		b[drained].weight = 0;
	}
}

/* Build at size @m with one backend draining, then the churn. */
static void resched_case(u32 m, u32 n)
{
	struct maglev_backend *a = xcalloc(n, sizeof(*a));
	struct maglev_backend *b = xcalloc(n, sizeof(*b));
	struct maglev_table *ta = xcalloc(1, maglev_table_bytes(m, n));
	struct maglev_table *tb = xcalloc(1, maglev_table_bytes(m, n));
	void *work = xcalloc(1, maglev_work_bytes(m, n));
	struct maglev_stats st = { 0 };

	build_set(a, n, n);
	build_set(b, n, n / 2);
	check(!maglev_build(ta, m, a, n, work, NULL, NULL), "build");
	longest = total = 0;
	calls = 0;
	since = work_now();
	check(!maglev_build(tb, m, b, n, work, &st, NULL), "drain build");
	check(maglev_churn(ta, a, n, tb, b, n, work) > 0, "churn");
	cond_resched();
	check(st.fills == 2, "fills %u", st.fills);
	/* the probes, and five passes: drain merge, two finishes, churn... */
	check(calls >= (st.probes + 5ULL * m) / MAGLEV_RESCHED_STEPS,
	      "M %u: %u reschedule points for %llu probes", m, calls,
	      (unsigned long long)st.probes);
#ifdef RESCHED_BENCH
	printf("# M %u N %u: %llu probes, %u reschedule points, %llu us CPU time in all, longest stretch %llu us\n",
	       m, n, (unsigned long long)st.probes, calls,
	       (unsigned long long)total / 1000,
	       (unsigned long long)longest / 1000);
#else
	check(total > 0, "M %u N %u: no basic block counted: maglev_table.c built without -fsanitize-coverage=trace-pc?",
	      m, n);
	check(longest <= MAX_STRETCH_BLOCKS,
	      "M %u N %u: longest stretch %llu basic blocks > %llu", m, n,
	      (unsigned long long)longest, MAX_STRETCH_BLOCKS);
	printf("# M %u N %u: %llu probes, %u reschedule points, %llu basic blocks in all, longest stretch %llu (at most %llu)\n",
	       m, n, (unsigned long long)st.probes, calls,
	       (unsigned long long)total, (unsigned long long)longest,
	       MAX_STRETCH_BLOCKS);
#endif
	free(a);
	free(b);
	free(ta);
	free(tb);
	free(work);
}

static void test_resched_small(void)
{
	resched_case(65537, 1000);
	resched_case(251, 3);
}

static void test_resched_max(void)
{
	resched_case(MAGLEV_SIZE_MAX, 1000);
	resched_case(MAGLEV_SIZE_MAX, 65535);
}

int main(void)
{
	run("reschedule points at M = 65537 and 251", test_resched_small);
	run("reschedule points at M = 5000011", test_resched_max);
	return unit_summary();
}
