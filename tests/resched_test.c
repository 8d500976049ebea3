// SPDX-License-Identifier: GPL-2.0
/*
 * resched_test.c - the reschedule points of maglev_table.c on the host:
 * built with -DMAGLEV_RESCHED_TEST, the algorithm reports every step of
 * work (a probe of a fill, a slot of a loop over the table) through
 * maglev_test_steps() and every reschedule point through
 * maglev_test_resched(), defined here.  No stretch between two reschedule
 * points may exceed MAGLEV_RESCHED_STEPS + MAGLEV_TAIL_SLOTS steps, also
 * across calls (a build, then the churn against the previous table), and
 * the steps must cover the probes and the passes over the table.  The
 * KUnit case maglev_resched_test checks the same in the kernel.
 */
#include <stdio.h>
#include <stdlib.h>

#include "maglev_table.h"

#include "unit.h"

static u64 steps, total, longest;
static u32 calls;

void maglev_test_steps(u32 n)
{
	steps += n;
	total += n;
}

void maglev_test_resched(void)
{
	if (steps > longest)
		longest = steps;
	steps = 0;
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
	maglev_sort_backends(b, n);
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
	u64 bound = (u64)MAGLEV_RESCHED_STEPS + MAGLEV_TAIL_SLOTS;

	build_set(a, n, n);
	build_set(b, n, n / 2);
	check(!maglev_build(ta, m, a, n, work, NULL, NULL), "build");
	steps = total = longest = 0;
	calls = 0;
	check(!maglev_build(tb, m, b, n, work, &st, NULL), "drain build");
	check(maglev_churn(ta, a, n, tb, b, n, work) > 0, "churn");
	if (steps > longest)
		longest = steps;
	check(st.fills == 2, "fills %u", st.fills);
	check(longest <= bound, "M %u N %u: longest stretch %llu steps > %llu",
	      m, n, (unsigned long long)longest, (unsigned long long)bound);
	check(total >= st.probes + 5ULL * m,
	      "M %u: %llu steps for %llu probes and 5 passes", m,
	      (unsigned long long)total, (unsigned long long)st.probes);
	check(calls >= total / bound, "M %u: %u reschedule points for %llu steps",
	      m, calls, (unsigned long long)total);
	printf("# M %u N %u: %llu probes, %llu steps, %u reschedule points, longest stretch %llu\n",
	       m, n, (unsigned long long)st.probes, (unsigned long long)total,
	       calls, (unsigned long long)longest);
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
}

int main(void)
{
	run("reschedule points at M = 65537 and 251", test_resched_small);
	run("reschedule points at M = 5000011", test_resched_max);
	return unit_summary();
}
