// SPDX-License-Identifier: GPL-2.0
/*
 * resched_test.c - the reschedule points of maglev_table.c on the host.
 * Built with -DMAGLEV_RESCHED_TEST, the userspace compat header leaves
 * cond_resched() to this file, which times the stretches between two calls
 * in the thread's CPU time (time spent preempted does not count).  A build
 * at each size with a backend draining (two fills and the drain merge),
 * then the churn against the previous table: no stretch may exceed
 * MAX_STRETCH_NS, the bound of 1 ms, where the code's own is
 * MAGLEV_RESCHED_STEPS probes or slots (about 0.2 ms); a fill or a pass
 * over 5000011 slots without a reschedule point takes 10 ms and more.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "maglev_table.h"

#include "unit.h"

#define MAX_STRETCH_NS	1000000ULL

static u64 since, longest, total;
static u32 calls;

static u64 cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
}

void cond_resched(void)
{
	u64 now = cpu_ns();

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
	since = cpu_ns();
	check(!maglev_build(tb, m, b, n, work, &st, NULL), "drain build");
	check(maglev_churn(ta, a, n, tb, b, n, work) > 0, "churn");
	cond_resched();
	check(st.fills == 2, "fills %u", st.fills);
	check(longest <= MAX_STRETCH_NS,
	      "M %u N %u: longest stretch %llu ns > %llu", m, n,
	      (unsigned long long)longest, MAX_STRETCH_NS);
	/* the probes, and five passes: drain merge, two finishes, churn... */
	check(calls >= (st.probes + 5ULL * m) / MAGLEV_RESCHED_STEPS,
	      "M %u: %u reschedule points for %llu probes", m, calls,
	      (unsigned long long)st.probes);
	printf("# M %u N %u: %llu probes, %u reschedule points, %llu us in all, longest stretch %llu us\n",
	       m, n, (unsigned long long)st.probes, calls,
	       (unsigned long long)total / 1000,
	       (unsigned long long)longest / 1000);
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
