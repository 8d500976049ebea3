// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "maglev_glue": the IPVS glue on destinations and services made
 * up here: backend names, the destination snapshot a build starts from,
 * /proc after done_service, the timing rule, the fallback choice for
 * unavailable destinations, the client hash against known values, and table
 * memory accounting.  maglev_main.c
 * includes this file at its end when built with MAGLEV_KUNIT=1 (see
 * Kbuild), so its static functions are in reach.
 */
#include <kunit/resource.h>
#include <kunit/test.h>

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/errno.h>
#include <linux/gfp.h>
#include <linux/in.h>
#include <linux/inet.h>
#include <linux/jiffies.h>
#include <linux/limits.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/seq_file.h>
#include <linux/siphash.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/sprintf.h>
#include <linux/string.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include <asm/bitsperlong.h>
#include <asm/byteorder.h>
#include <asm/page.h>

#include <net/ip_vs.h>

#include "maglev_sched.h"
#include "maglev_table.h"

static void maglev_test_kfree(void *p)
{
	kfree(p);
}

/*
 * Set or clear a made-up destination's availability where the kernel keeps
 * it: dest->cflags, or dest->flags before the cflags backport (as
 * maglev_dest_available() reads it).
 */
static void test_set_available(struct ip_vs_dest *d, bool on)
{
#ifdef MAGLEV_HAVE_DEST_CFLAGS
	if (on)
		d->cflags |= IP_VS_DEST_CF_AVAILABLE;
	else
		d->cflags &= ~IP_VS_DEST_CF_AVAILABLE;
#else
	if (on)
		d->flags |= IP_VS_DEST_F_AVAILABLE;
	else
		d->flags &= ~IP_VS_DEST_F_AVAILABLE;
#endif
}

static struct ip_vs_dest *test_dest(struct kunit *test, int af,
				    const char *addr, u16 port, int weight)
{
	struct ip_vs_dest *d = kzalloc(sizeof(*d), GFP_KERNEL);
	int ok;

	KUNIT_ASSERT_NOT_NULL(test, d);
	ok = kunit_add_action_or_reset(test, maglev_test_kfree, d);
	KUNIT_ASSERT_EQ(test, ok, 0);
	d->af = af;
	if (af == AF_INET6)
		ok = in6_pton(addr, -1, d->addr.in6.s6_addr, -1, NULL);
	else
		ok = in4_pton(addr, -1, (u8 *)&d->addr.ip, -1, NULL);
	KUNIT_ASSERT_EQ(test, ok, 1);
	d->port = htons(port);
	atomic_set(&d->weight, weight);
	atomic_set(&d->last_weight, weight);
	test_set_available(d, true);
	refcount_set(&d->refcnt, 1);
	return d;
}

/* ------------------------------------------------------------------ */

struct name_case {
	const char *desc;
	int af;
	const char *addr;
	u16 port;
	const char *want;
};

static const struct name_case name_cases[] = {
	{ "IPv4", AF_INET, "10.1.2.3", 80, "10.1.2.3:80" },
	{ "IPv4 port 0", AF_INET, "192.168.0.1", 0, "192.168.0.1:0" },
	{ "IPv4 port 65535", AF_INET, "0.0.0.0", 65535, "0.0.0.0:65535" },
	{ "IPv6", AF_INET6, "fd00::1", 8080, "[fd00::1]:8080" },
	{ "IPv6 full", AF_INET6, "2001:db8:1:2:3:4:5:6", 443,
	  "[2001:db8:1:2:3:4:5:6]:443" },
	{ "IPv6 leading zero run", AF_INET6, "::1", 53, "[::1]:53" },
};

static void name_case_desc(const struct name_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(name, name_cases, name_case_desc);

static void maglev_name_test(struct kunit *test)
{
	const struct name_case *c = test->param_value;
	struct ip_vs_dest *d = test_dest(test, c->af, c->addr, c->port, 1);
	char buf[MAGLEV_NAME_MAX];
	int n;

	n = maglev_addr_name(buf, sizeof(buf), d->af, &d->addr, d->port);
	KUNIT_EXPECT_EQ(test, n, (int)strlen(c->want));
	KUNIT_EXPECT_STREQ(test, buf, c->want);
}

static void maglev_svc_name_test(struct kunit *test)
{
	struct ip_vs_service *svc = kunit_kzalloc(test, sizeof(*svc),
						  GFP_KERNEL);
	char buf[MAGLEV_SVC_NAME_MAX];

	KUNIT_ASSERT_NOT_NULL(test, svc);
	svc->af = AF_INET;
	svc->protocol = IPPROTO_UDP;
	svc->addr.ip = htonl(0x0a000001);
	svc->port = htons(53);
	maglev_svc_name(buf, sizeof(buf), svc);
	KUNIT_EXPECT_STREQ(test, buf, "UDP 10.0.0.1:53");
	svc->protocol = IPPROTO_SCTP;
	maglev_svc_name(buf, sizeof(buf), svc);
	KUNIT_EXPECT_STREQ(test, buf, "SCTP 10.0.0.1:53");
	svc->fwmark = 4294967295U;
	maglev_svc_name(buf, sizeof(buf), svc);
	KUNIT_EXPECT_STREQ(test, buf, "FWM 4294967295");
	svc->af = AF_INET6;
	maglev_svc_name(buf, sizeof(buf), svc);
	KUNIT_EXPECT_STREQ(test, buf, "FWM6 4294967295");
}

/* ------------------------------------------------------------------ */

/* The all-zero key, as a namespace starts with by default. */
static struct maglev_key test_key;

/*
 * A service state over a made-up IPVS service whose destination list
 * holds @d, in a made-up namespace state with table size 251.
 */
static struct maglev_service *test_service(struct kunit *test,
					   struct ip_vs_dest **d, u32 n)
{
	struct maglev_service *ms = kunit_kzalloc(test, sizeof(*ms),
						  GFP_KERNEL);
	struct ip_vs_service *svc = kunit_kzalloc(test, sizeof(*svc),
						  GFP_KERNEL);
	struct maglev_net *mn = kunit_kzalloc(test, sizeof(*mn), GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, ms);
	KUNIT_ASSERT_NOT_NULL(test, svc);
	KUNIT_ASSERT_NOT_NULL(test, mn);
	INIT_LIST_HEAD(&svc->destinations);
	for (i = 0; i < n; i++) {
		list_add_tail(&d[i]->n_list, &svc->destinations);
		RCU_INIT_POINTER(d[i]->svc, svc);
	}
	svc->num_dests = n;
	svc->af = AF_INET;
	svc->flags = MAGLEV_F_PORT;
	mn->table_size = 251;
	test_key.fp = maglev_key_fingerprint(&test_key.key);
	RCU_INIT_POINTER(mn->key, &test_key);
	ms->svc = svc;
	ms->mn = mn;
	ms->gen = 7;
	spin_lock_init(&ms->lock);
	refcount_set(&ms->ref, 1);
	return ms;
}

static void maglev_snapshot_test(struct kunit *test)
{
	struct ip_vs_dest *d[4];
	struct maglev_service *ms;
	struct maglev_lut *lut;
	u64 gen = 0;
	u32 size = 0;
	int err = 0;
	u32 i;

	d[0] = test_dest(test, AF_INET, "10.0.0.2", 80, 3);
	d[1] = test_dest(test, AF_INET6, "fd00::2", 80, INT_MAX);
	d[2] = test_dest(test, AF_INET, "10.0.0.3", 80, 0);
	atomic_set(&d[2]->last_weight, 5);	/* drained from weight 5 */
	d[3] = test_dest(test, AF_INET, "10.0.0.4", 80, 0);
	atomic_set(&d[3]->last_weight, 0);	/* added with weight 0 */
	ms = test_service(test, d, 4);

	lut = maglev_snapshot(ms, &gen, &size, &err);
	KUNIT_ASSERT_NOT_NULL(test, lut);
	KUNIT_EXPECT_EQ(test, gen, 7ULL);
	KUNIT_EXPECT_EQ(test, size, 251U);
	KUNIT_ASSERT_EQ(test, lut->nr, 4U);
	for (i = 0; i < 4; i++) {
		KUNIT_EXPECT_PTR_EQ(test, lut->dest[i], d[i]);
		KUNIT_EXPECT_PTR_EQ(test, lut->be[i].priv, (void *)d[i]);
		/* One reference for the snapshot. */
		KUNIT_EXPECT_EQ(test, refcount_read(&d[i]->refcnt), 2U);
	}
	KUNIT_EXPECT_EQ(test, lut->be[0].weight, 3U);
	KUNIT_EXPECT_EQ(test, lut->be[0].drain_weight, 0U);
	KUNIT_EXPECT_EQ(test, lut->be[1].weight, (u32)INT_MAX);
	KUNIT_EXPECT_EQ(test, lut->be[2].weight, 0U);
	KUNIT_EXPECT_EQ(test, lut->be[2].drain_weight, 5U);
	KUNIT_EXPECT_EQ(test, lut->be[3].drain_weight, 0U);
	KUNIT_EXPECT_EQ(test, (int)lut->be[1].name_len,
			(int)strlen("[fd00::2]:80"));
	KUNIT_EXPECT_EQ(test, memcmp(lut->be[1].name, "[fd00::2]:80",
				     lut->be[1].name_len), 0);
	KUNIT_EXPECT_GT(test, lut->mem, (size_t)0);

	maglev_lut_free(lut);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, refcount_read(&d[i]->refcnt), 1U);

	/* More than 65535 destinations: refused before any reference. */
	ms->svc->num_dests = MAGLEV_MAX_BACKENDS + 1;
	lut = maglev_snapshot(ms, &gen, &size, &err);
	KUNIT_EXPECT_NULL(test, lut);
	KUNIT_EXPECT_EQ(test, err, -E2BIG);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, refcount_read(&d[i]->refcnt), 1U);
	ms->svc->num_dests = 4;

	/* A deleted service gives no snapshot and takes no reference. */
	ms->dead = true;
	lut = maglev_snapshot(ms, &gen, &size, &err);
	KUNIT_EXPECT_NULL(test, lut);
	KUNIT_EXPECT_EQ(test, err, -ESHUTDOWN);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, refcount_read(&d[i]->refcnt), 1U);
}

/*
 * /proc after done_service: IPVS may have freed the service already
 * (ip_vs_add_service's error path frees it without a grace period), so the
 * listing must not read it.  The service here is poisoned instead of
 * freed, so that a read shows without KASAN too.
 */
static void maglev_show_dead_test(struct kunit *test)
{
	struct ip_vs_dest *d[1];
	struct maglev_service *ms;
	struct seq_file seq = {};
	char *flags;

	d[0] = test_dest(test, AF_INET, "10.0.0.2", 80, 1);
	ms = test_service(test, d, 1);
	strscpy(ms->name, "TCP 10.0.0.1:80", sizeof(ms->name));
	seq.size = PAGE_SIZE;
	seq.buf = kunit_kzalloc(test, seq.size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, seq.buf);

	rcu_read_lock();
	maglev_show_service(&seq, ms);
	rcu_read_unlock();
	flags = strnstr(seq.buf, " flags 0x10 ", seq.count);
	KUNIT_EXPECT_NOT_NULL_MSG(test, flags, "%.*s", (int)seq.count,
				  seq.buf);

	ms->dead = true;
	memset(ms->svc, 0x6b, sizeof(*ms->svc));	/* POISON_FREE */
	seq.count = 0;
	rcu_read_lock();
	maglev_show_service(&seq, ms);
	rcu_read_unlock();
	KUNIT_EXPECT_NOT_NULL_MSG(test, strnstr(seq.buf, " flags 0x0 ",
						seq.count),
				  "%.*s", (int)seq.count, seq.buf);
	KUNIT_EXPECT_NOT_NULL(test, strnstr(seq.buf, " key ", seq.count));
}

/* ------------------------------------------------------------------ */

struct delay_case {
	const char *desc;
	unsigned long now;
	unsigned long when;
	unsigned long want;	/* DELAY_MAX: the hold-off's maximum */
};

#define HMAX		msecs_to_jiffies(MAGLEV_HOLDOFF_MAX_MS)
#define DELAY_MAX	ULONG_MAX

static const struct delay_case delay_cases[] = {
	{ "due now", 1000, 1000, 0 },
	{ "past", 5000, 1000, 0 },
	{ "in 10 jiffies", 1000, 1010, 10 },
	{ "across the jiffies wrap", ULONG_MAX - 4, 5, 10 },
	{ "far ahead", 0, LONG_MAX, DELAY_MAX },
	/* Idle for more than LONG_MAX jiffies: time_before() says "future". */
	{ "recorded LONG_MAX + 1 ago", (unsigned long)LONG_MAX + 1001, 1000,
	  DELAY_MAX },
	{ "recorded LONG_MAX + 10 ago", (unsigned long)LONG_MAX + 1010, 1000,
	  DELAY_MAX },
};

static void delay_case_desc(const struct delay_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(delay, delay_cases, delay_case_desc);

static void maglev_delay_test(struct kunit *test)
{
	const struct delay_case *c = test->param_value;

	unsigned long want = c->want == DELAY_MAX ? HMAX : c->want;

	KUNIT_EXPECT_EQ(test, maglev_delay(c->now, c->when), want);
	KUNIT_EXPECT_LE(test, maglev_delay(c->now, c->when), HMAX);
	/* Exactly the maximum, and one past it. */
	KUNIT_EXPECT_EQ(test, maglev_delay(c->now, c->now + HMAX), HMAX);
	KUNIT_EXPECT_EQ(test, maglev_delay(c->now, c->now + HMAX + 1), HMAX);
}

/*
 * The timing rule of the top comment: the next build may start the
 * hold-off, or the last build's duration up to 1 s, after the end of the
 * last attempt; retries double from 10 ms to 1 s.
 */
static void maglev_timing_test(struct kunit *test)
{
	unsigned long ms10 = msecs_to_jiffies(10), s1 = msecs_to_jiffies(1000);
	unsigned long r = 0;
	int i;

	KUNIT_EXPECT_EQ(test, maglev_next_build(100, 1, msecs_to_jiffies(50)),
			100 + msecs_to_jiffies(50));
	KUNIT_EXPECT_EQ(test, maglev_next_build(100, msecs_to_jiffies(300),
						msecs_to_jiffies(50)),
			100 + msecs_to_jiffies(300));
	KUNIT_EXPECT_EQ(test, maglev_next_build(100, msecs_to_jiffies(5000),
						msecs_to_jiffies(50)),
			100 + s1);
	KUNIT_EXPECT_EQ(test, maglev_next_build(100, msecs_to_jiffies(5000),
						HMAX), 100 + HMAX);
	KUNIT_EXPECT_EQ(test, maglev_next_build(ULONG_MAX, 2, 0), 1UL);

	r = maglev_retry_delay(r);
	KUNIT_EXPECT_EQ(test, r, ms10);
	for (i = 0; i < 20; i++)
		r = maglev_retry_delay(r);
	KUNIT_EXPECT_EQ(test, r, s1);
}

/* A build due now waits for the hold-off, unless it is a retry. */
static void maglev_build_wait_test(struct kunit *test)
{
	unsigned long ms10 = msecs_to_jiffies(10);

	KUNIT_EXPECT_EQ(test, maglev_build_wait(1000, 1000 + ms10, 0), ms10);
	KUNIT_EXPECT_EQ(test, maglev_build_wait(1000, 1000 + ms10, ms10), 0UL);
	KUNIT_EXPECT_EQ(test, maglev_build_wait(1000, 900, 0), 0UL);
	KUNIT_EXPECT_EQ(test, maglev_build_wait(1000, 1000 + 2 * HMAX, 0),
			HMAX);
}

struct queue_probe {
	struct maglev_service *ms;
	struct completion ran;
};

static struct queue_probe *queue_probe_of;

static void queue_probe_work(struct work_struct *work)
{
	complete(&queue_probe_of->ran);
}

/*
 * A change while the build waits for a long retry delay pulls it in to
 * the change's own time, and keeps one queued work (one reference); a
 * later time never pushes an earlier one out.
 */
static void maglev_queue_test(struct kunit *test)
{
	struct ip_vs_dest *d[1];
	struct queue_probe qp;
	unsigned long now = jiffies;

	d[0] = test_dest(test, AF_INET, "10.0.0.2", 80, 1);
	qp.ms = test_service(test, d, 1);
	init_completion(&qp.ran);
	queue_probe_of = &qp;
	INIT_DELAYED_WORK(&qp.ms->work, queue_probe_work);

	spin_lock(&qp.ms->lock);
	maglev_queue(qp.ms, now, msecs_to_jiffies(10000));
	KUNIT_EXPECT_EQ(test, refcount_read(&qp.ms->ref), 2U);
	/* Later than what is queued: nothing changes. */
	maglev_queue(qp.ms, now, msecs_to_jiffies(20000));
	KUNIT_EXPECT_EQ(test, qp.ms->due, now + msecs_to_jiffies(10000));
	/* Earlier: pulled in, still one queued work. */
	maglev_queue(qp.ms, now, 0);
	KUNIT_EXPECT_EQ(test, refcount_read(&qp.ms->ref), 2U);
	KUNIT_EXPECT_EQ(test, qp.ms->due, now);
	spin_unlock(&qp.ms->lock);

	KUNIT_EXPECT_NE(test, wait_for_completion_timeout(&qp.ran,
							  msecs_to_jiffies(2000)),
			0UL);
	cancel_delayed_work_sync(&qp.ms->work);
	queue_probe_of = NULL;
}

/* ------------------------------------------------------------------ */

#define FB_N	5
#define FB_SIZE	251

/*
 * A built table over FB_N IPv4 destinations 10.0.0.1..5:80, weight 1, of
 * the made-up service *@msp (if not NULL).
 */
static struct maglev_lut *test_lut_ms(struct kunit *test,
				      struct ip_vs_dest **d,
				      struct maglev_service **msp)
{
	struct maglev_service *ms;
	struct maglev_lut *lut;
	void *work;
	u64 gen;
	u32 size;
	int err;
	u32 i;

	for (i = 0; i < FB_N; i++) {
		char a[16];

		snprintf(a, sizeof(a), "10.0.0.%u", i + 1);
		d[i] = test_dest(test, AF_INET, a, 80, 1);
	}
	ms = test_service(test, d, FB_N);
	lut = maglev_snapshot(ms, &gen, &size, &err);
	KUNIT_ASSERT_NOT_NULL(test, lut);
	lut->table = maglev_mem_alloc(maglev_table_bytes(FB_SIZE, FB_N),
				      &lut->mem);
	work = kvmalloc(maglev_work_bytes(FB_SIZE, FB_N), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, lut->table);
	KUNIT_ASSERT_NOT_NULL(test, work);
	KUNIT_ASSERT_EQ(test, 0, maglev_build(lut->table, FB_SIZE, lut->be,
					      FB_N, work, NULL, NULL));
	kvfree(work);
	for (i = 0; i < FB_N; i++)
		lut->dest[i] = lut->be[i].priv;
	if (msp)
		*msp = ms;
	return lut;
}

static struct maglev_lut *test_lut(struct kunit *test, struct ip_vs_dest **d)
{
	return test_lut_ms(test, d, NULL);
}

static u32 test_hash(const u8 *key, size_t len)
{
	return maglev_key_hash(key, len, &test_key.hkey);
}

static void maglev_fallback_test(struct kunit *test)
{
	struct ip_vs_dest *d[FB_N], *first, *got, *again;
	struct maglev_service *ms;
	struct maglev_lut *lut = test_lut_ms(test, d, &ms);
	struct ip_vs_service *svc = ms->svc;
	u8 key[4] = { 10, 9, 0, 1 };
	u32 k, i, idx, moved = 0;
	u32 h;

	for (k = 0; k < 200; k++) {
		key[3] = k;
		h = test_hash(key, sizeof(key));
		idx = maglev_lookup(lut->table, h);
		KUNIT_ASSERT_LT(test, idx, FB_N);
		first = lut->dest[idx];

		/* Drained: another destination, the same one every time. */
		atomic_set(&first->weight, 0);
		KUNIT_EXPECT_TRUE(test, maglev_dest_retired(svc, first));
		got = maglev_fallback(svc, lut, h);
		again = maglev_fallback(svc, lut, h);
		KUNIT_EXPECT_NOT_NULL(test, got);
		KUNIT_EXPECT_PTR_NE(test, got, first);
		KUNIT_EXPECT_PTR_EQ(test, got, again);
		atomic_set(&first->weight, 1);

		/* Removed (not available): never chosen either. */
		test_set_available(first, false);
		got = maglev_fallback(svc, lut, h);
		KUNIT_EXPECT_PTR_NE(test, got, first);
		test_set_available(first, true);

		/* Overloaded: unavailable, but not retired. */
		first->flags |= IP_VS_DEST_F_OVERLOAD;
		KUNIT_EXPECT_FALSE(test, maglev_dest_retired(svc, first));
		KUNIT_EXPECT_TRUE(test, maglev_dest_unavailable(svc, first));
		got = maglev_fallback(svc, lut, h);
		KUNIT_EXPECT_PTR_NE(test, got, first);
		first->flags &= ~IP_VS_DEST_F_OVERLOAD;
		if (got != lut->dest[(idx + 1) % FB_N])
			moved++;
	}
	/* The fallback spreads keys, not always to the next destination. */
	KUNIT_EXPECT_GT(test, moved, 0U);

	/* Only one destination left: every key goes there. */
	for (i = 1; i < FB_N; i++)
		atomic_set(&lut->dest[i]->weight, 0);
	for (k = 0; k < 50; k++) {
		key[3] = k;
		h = test_hash(key, sizeof(key));
		idx = maglev_lookup(lut->table, h);
		if (idx == 0)
			continue;
		KUNIT_EXPECT_PTR_EQ(test, maglev_fallback(svc, lut, h),
				    lut->dest[0]);
	}
	/* None left: no destination. */
	atomic_set(&lut->dest[0]->weight, 0);
	key[3] = 1;
	h = test_hash(key, sizeof(key));
	KUNIT_EXPECT_NULL(test, maglev_fallback(svc, lut, h));
	maglev_lut_free(lut);
}

/*
 * /proc takes every table field of a record from the one published table:
 * table_gen (and with it pending) is the table's own generation, not a
 * copy that a build updates apart from the table pointer.
 */
static void maglev_show_one_table_test(struct kunit *test)
{
	struct ip_vs_dest *d[FB_N], *d1[1];
	struct maglev_service *ms;
	struct seq_file seq = {};
	struct maglev_lut *lut;

	lut = test_lut(test, d);
	lut->gen = 7;
	lut->builds = 3;
	d1[0] = test_dest(test, AF_INET, "10.0.1.1", 80, 1);
	ms = test_service(test, d1, 1);
	strscpy(ms->name, "TCP 10.0.0.1:80", sizeof(ms->name));
	rcu_assign_pointer(ms->lut, lut);
	seq.size = PAGE_SIZE;
	seq.buf = kunit_kzalloc(test, seq.size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, seq.buf);

	rcu_read_lock();
	maglev_show_service(&seq, ms);
	rcu_read_unlock();
	KUNIT_EXPECT_NOT_NULL_MSG(test,
				  strnstr(seq.buf, " dests 5 builds 3 ", seq.count),
				  "%.*s", (int)seq.count, seq.buf);
	KUNIT_EXPECT_NOT_NULL_MSG(test,
				  strnstr(seq.buf, " pending 0 gen 7 table_gen 7 ",
					  seq.count),
				  "%.*s", (int)seq.count, seq.buf);

	/* A change not built yet: the same table, now pending. */
	ms->gen = 8;
	seq.count = 0;
	rcu_read_lock();
	maglev_show_service(&seq, ms);
	rcu_read_unlock();
	KUNIT_EXPECT_NOT_NULL_MSG(test,
				  strnstr(seq.buf, " pending 1 gen 8 table_gen 7 ",
					  seq.count),
				  "%.*s", (int)seq.count, seq.buf);
	RCU_INIT_POINTER(ms->lut, NULL);
	maglev_lut_free(lut);
}

/*
 * A destination of the table that now belongs to another service (removed
 * from FWM 42, taken from the trash by FWM6 42, which IPVS allows for a
 * fwmark): available, weight 1, and never chosen by this service again,
 * through the table or its fallback.
 */
static void maglev_moved_dest_test(struct kunit *test)
{
	struct ip_vs_service *svc, *other;
	struct ip_vs_dest *d[FB_N], *got, *again;
	struct ip_vs_iphdr iph = { .protocol = IPPROTO_UDP };
	struct maglev_service *ms;
	struct maglev_lut *lut;
	u32 k;

	lut = test_lut_ms(test, d, &ms);
	svc = ms->svc;
	svc->flags = 0;		/* the address alone: no packet to parse */
	svc->sched_data = ms;
	rcu_assign_pointer(ms->lut, lut);
	other = kunit_kzalloc(test, sizeof(*other), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, other);

	for (k = 0; k < 100; k++) {
		iph.saddr.ip = htonl(0x0a090001 + k);
		rcu_read_lock();
		got = ip_vs_maglev_schedule(svc, NULL, &iph);
		KUNIT_ASSERT_NOT_NULL(test, got);
		RCU_INIT_POINTER(got->svc, other);
		again = ip_vs_maglev_schedule(svc, NULL, &iph);
		RCU_INIT_POINTER(got->svc, svc);
		rcu_read_unlock();
		KUNIT_EXPECT_NOT_NULL(test, again);
		KUNIT_EXPECT_PTR_NE(test, again, got);
		KUNIT_EXPECT_FALSE(test, maglev_dest_retired(svc, got));
	}
	RCU_INIT_POINTER(ms->lut, NULL);
	maglev_lut_free(lut);
}

/* ------------------------------------------------------------------ */

/*
 * The client hash on this kernel: the typed hsiphash helpers the scheduler
 * calls give hsiphash() of the specification's byte strings, and the
 * values tests/siphash_test.c checks maglev-sim's hsiphash against
 * (tests/sim/model.py's, for this word size), so that the kernel and
 * maglev-sim choose alike.
 */
static void maglev_client_hash_test(struct kunit *test)
{
	static const u8 a4[4] = { 10, 0, 0, 1 };
	static const u8 a6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	static const u8 p4[8] = { 10, 0, 0, 1, 0, 80, 0, 0 };
	static const u8 p6[20] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1,
				   [17] = 80 };
	/* key 00 01 .. 0f, then the zero key; IPv4, +port, IPv6, +port */
	static const u32 want[2][4] = {
#if BITS_PER_LONG == 64
		{ 0x35ba05afU, 0x4448c505U, 0x1f661474U, 0x9e2d92ccU },
		{ 0xa835a61eU, 0xbd64f5dcU, 0xf2b8bc94U, 0xc79a97e9U },
#else
		{ 0x836adeddU, 0x2cad2a07U, 0x87ee734fU, 0x939cf161U },
		{ 0xaf4bd032U, 0x4d6dd81dU, 0x3475ef70U, 0xe2f6aabbU },
#endif
	};
	const __be16 port = htons(80);
	u8 kb[MAGLEV_KEY_BYTES];
	hsiphash_key_t key;
	u32 i, j;

	for (i = 0; i < 2; i++) {
		for (j = 0; j < sizeof(kb); j++)
			kb[j] = i ? 0 : j;
		maglev_hkey_from_bytes(&key, kb);
		KUNIT_EXPECT_EQ(test, maglev_hash_ip4(a4, &key),
				hsiphash(a4, sizeof(a4), &key));
		KUNIT_EXPECT_EQ(test, maglev_hash_ip4_port(a4, port, &key),
				hsiphash(p4, sizeof(p4), &key));
		KUNIT_EXPECT_EQ(test, maglev_hash_ip6(a6, &key),
				hsiphash(a6, sizeof(a6), &key));
		KUNIT_EXPECT_EQ(test, maglev_hash_ip6_port(a6, port, &key),
				hsiphash(p6, sizeof(p6), &key));
		KUNIT_EXPECT_EQ(test, maglev_hash_ip4(a4, &key), want[i][0]);
		KUNIT_EXPECT_EQ(test, maglev_hash_ip4_port(a4, port, &key),
				want[i][1]);
		KUNIT_EXPECT_EQ(test, maglev_hash_ip6(a6, &key), want[i][2]);
		KUNIT_EXPECT_EQ(test, maglev_hash_ip6_port(a6, port, &key),
				want[i][3]);
	}
}

/* ------------------------------------------------------------------ */

static void maglev_mem_test(struct kunit *test)
{
	size_t acct = 0, bytes = maglev_table_bytes(65537, 1000);
	void *p;

	/* Above a page: whole pages, not the next power of two. */
	p = maglev_mem_alloc(bytes, &acct);
	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_EXPECT_TRUE(test, is_vmalloc_addr(p));
	KUNIT_EXPECT_EQ(test, acct, PAGE_ALIGN(bytes));
	kvfree(p);

	/*
	 * Up to a page: the kmalloc bucket's size, which is what is
	 * allocated.  The table of 251 slots and 3 backends is 96 bytes, a
	 * bucket itself; 100 bytes take the 128-byte bucket.
	 */
	acct = 0;
	bytes = maglev_table_bytes(251, 3);
	p = maglev_mem_alloc(bytes, &acct);
	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_EXPECT_FALSE(test, is_vmalloc_addr(p));
	KUNIT_EXPECT_EQ(test, acct, kmalloc_size_roundup(bytes));
	kvfree(p);

	acct = 0;
	p = maglev_mem_alloc(100, &acct);
	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_EXPECT_FALSE(test, is_vmalloc_addr(p));
	KUNIT_EXPECT_EQ(test, acct, kmalloc_size_roundup(100));
	KUNIT_EXPECT_GT(test, acct, 100);
	kvfree(p);
}

/* ------------------------------------------------------------------ */

/* Backends "10.0.0.1:80".. with weights @w (0 with a drain weight @dw). */
static struct maglev_backend *test_backends(struct kunit *test, u32 n,
					    const u32 *w, const u32 *dw)
{
	struct maglev_backend *be = kvcalloc(n, sizeof(*be), GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, be);
	/* Made in reverse name order: the cache sorts them. */
	for (i = 0; i < n; i++) {
		be[i].name_len = scnprintf(be[i].name, sizeof(be[i].name),
					   "10.0.0.%u:80", n - i);
		be[i].weight = w[n - 1 - i];
		be[i].drain_weight = dw ? dw[n - 1 - i] : 0;
	}
	maglev_sort_backends(be, n);
	return be;
}

/*
 * maglev_cache_find() answers with the table of exactly the same inputs
 * (size, names, weights, drain weights), never one that only has the
 * same hash; maglev_shared_put() unlinks and frees the last reference's.
 */
static void maglev_cache_test(struct kunit *test)
{
	static const u32 w1[] = { 1, 1, 1 }, w2[] = { 1, 2, 1 };
	static const u32 w0[] = { 1, 0, 1 }, d3[] = { 0, 3, 0 };
	static const u32 d4[] = { 0, 4, 0 };
	struct maglev_cache *c = maglev_cache_alloc();
	struct maglev_backend *be, *q;
	struct maglev_shared *t, *u;
	const char *why = NULL;
	void *work;
	u64 h;
	int err;

	KUNIT_ASSERT_NOT_NULL(test, c);
	work = kvmalloc(maglev_work_bytes(251, 3), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, work);

	be = test_backends(test, 3, w1, NULL);
	KUNIT_EXPECT_EQ(test, memcmp(be[0].name, "10.0.0.1:80", 11), 0);
	h = maglev_inputs_hash(251, be, 3);
	KUNIT_EXPECT_NULL(test, maglev_cache_find(c, 251, be, 3, h));
	t = maglev_shared_fill(c, 251, be, 3, 3 * sizeof(*be), h, work,
			       &why, &err);
	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_EXPECT_EQ(test, c->fills, 1ULL);
	KUNIT_EXPECT_EQ(test, c->tables, 1U);
	KUNIT_EXPECT_EQ(test, c->mem, t->mem);
	KUNIT_EXPECT_EQ(test, t->id, 1ULL);
	KUNIT_EXPECT_EQ(test, t->table->nr_filled, 251U);

	/* The same inputs, made anew: the same table, one more reference. */
	q = test_backends(test, 3, w1, NULL);
	u = maglev_cache_find(c, 251, q, 3, maglev_inputs_hash(251, q, 3));
	KUNIT_EXPECT_PTR_EQ(test, u, t);
	KUNIT_EXPECT_EQ(test, refcount_read(&t->ref), 2U);
	KUNIT_EXPECT_EQ(test, c->found, 1ULL);
	if (u)
		maglev_shared_put(u);
	/* Another size, another weight: none, even under the same hash. */
	KUNIT_EXPECT_NULL(test, maglev_cache_find(c, 509, q, 3, h));
	kvfree(q);
	q = test_backends(test, 3, w2, NULL);
	KUNIT_EXPECT_NULL(test, maglev_cache_find(c, 251, q, 3, h));
	KUNIT_EXPECT_NULL(test, maglev_cache_find(c, 251, q, 3,
						  maglev_inputs_hash(251, q, 3)));
	kvfree(q);
	/* Drained with another drain weight: another table. */
	q = test_backends(test, 3, w0, d3);
	u = maglev_shared_fill(c, 251, q, 3, 3 * sizeof(*q),
			       maglev_inputs_hash(251, q, 3), work, &why, &err);
	KUNIT_ASSERT_NOT_NULL(test, u);
	q = test_backends(test, 3, w0, d4);
	KUNIT_EXPECT_NULL(test, maglev_cache_find(c, 251, q, 3,
						  maglev_inputs_hash(251, q, 3)));
	KUNIT_EXPECT_NE(test, maglev_inputs_hash(251, q, 3),
			maglev_inputs_hash(251, u->be, 3));
	kvfree(q);
	/* One name fewer is another input too. */
	q = test_backends(test, 2, w1, NULL);
	KUNIT_EXPECT_NULL(test, maglev_cache_find(c, 251, q, 2,
						  maglev_inputs_hash(251, q, 2)));
	kvfree(q);
	KUNIT_EXPECT_EQ(test, c->tables, 2U);
	KUNIT_EXPECT_EQ(test, c->fills, 2ULL);

	/* The last references unlink and free; the cache goes last. */
	refcount_inc(&c->ref);
	maglev_shared_put(u);
	KUNIT_EXPECT_EQ(test, c->tables, 1U);
	maglev_shared_put(t);
	KUNIT_EXPECT_EQ(test, c->tables, 0U);
	KUNIT_EXPECT_EQ(test, c->mem, (size_t)0);
	KUNIT_EXPECT_EQ(test, refcount_read(&c->ref), 2U);
	be = test_backends(test, 3, w1, NULL);
	KUNIT_EXPECT_NULL(test, maglev_cache_find(c, 251, be, 3, h));
	kvfree(be);
	kvfree(work);
	maglev_cache_put(c);
	maglev_cache_put(c);
}

static struct kunit_case maglev_glue_test_cases[] = {
	KUNIT_CASE_PARAM(maglev_name_test, name_gen_params),
	KUNIT_CASE(maglev_svc_name_test),
	KUNIT_CASE(maglev_snapshot_test),
	KUNIT_CASE(maglev_show_dead_test),
	KUNIT_CASE_PARAM(maglev_delay_test, delay_gen_params),
	KUNIT_CASE(maglev_timing_test),
	KUNIT_CASE(maglev_build_wait_test),
	KUNIT_CASE(maglev_queue_test),
	KUNIT_CASE(maglev_fallback_test),
	KUNIT_CASE(maglev_moved_dest_test),
	KUNIT_CASE(maglev_show_one_table_test),
	KUNIT_CASE(maglev_client_hash_test),
	KUNIT_CASE(maglev_mem_test),
	KUNIT_CASE(maglev_cache_test),
	{}
};

static struct kunit_suite maglev_glue_test_suite = {
	.name = "maglev_glue",
	.test_cases = maglev_glue_test_cases,
};

kunit_test_suites(&maglev_glue_test_suite);
