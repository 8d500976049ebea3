// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "maglev_glue": the IPVS glue on destinations and services made
 * up here: backend names, the destination snapshot a build starts from,
 * /proc after done_service, the timing rule, the fallback choice for
 * unavailable destinations, the client hash against known values, and table
 * memory accounting.  Built into the module with MAGLEV_KUNIT=1 (see
 * Kbuild); the functions it calls that are static otherwise are
 * VISIBLE_IF_KUNIT (include/maglev_sched.h).
 */
#include <kunit/resource.h>
#include <kunit/test.h>

#include <linux/array_size.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/errno.h>
#include <linux/gfp.h>
#include <linux/hash.h>
#include <linux/in.h>
#include <linux/inet.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/limits.h>
#include <linux/list.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/rculist.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/siphash.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/sprintf.h>
#include <linux/string.h>
#include <linux/tcp.h>
#include <linux/timekeeping.h>
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
	svc->protocol = IPPROTO_TCP;
	svc->addr.ip = htonl(0x0a000001);	/* TCP 10.0.0.1:80 */
	svc->port = htons(80);
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
	struct maglev_backend *be;
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

	lut = maglev_snapshot(ms, &be, &gen, &size, &err);
	KUNIT_ASSERT_NOT_NULL(test, lut);
	KUNIT_EXPECT_EQ(test, gen, 7ULL);
	KUNIT_EXPECT_EQ(test, size, 251U);
	KUNIT_ASSERT_EQ(test, lut->nr, 4U);
	for (i = 0; i < 4; i++) {
		KUNIT_EXPECT_PTR_EQ(test, lut->dest[i], d[i]);
		KUNIT_EXPECT_PTR_EQ(test, be[i].priv, (void *)d[i]);
		/* One reference for the snapshot. */
		KUNIT_EXPECT_EQ(test, refcount_read(&d[i]->refcnt), 2U);
	}
	KUNIT_EXPECT_EQ(test, be[0].weight, 3U);
	KUNIT_EXPECT_EQ(test, be[0].drain_weight, 0U);
	KUNIT_EXPECT_EQ(test, be[1].weight, (u32)INT_MAX);
	KUNIT_EXPECT_EQ(test, be[2].weight, 0U);
	KUNIT_EXPECT_EQ(test, be[2].drain_weight, 5U);
	KUNIT_EXPECT_EQ(test, be[3].drain_weight, 0U);
	KUNIT_EXPECT_EQ(test, (int)be[1].name_len,
			(int)strlen("[fd00::2]:80"));
	KUNIT_EXPECT_EQ(test, memcmp(be[1].name, "[fd00::2]:80",
				     be[1].name_len), 0);
	KUNIT_EXPECT_GT(test, lut->mem, (size_t)0);

	maglev_lut_free(lut);
	kvfree(be);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, refcount_read(&d[i]->refcnt), 1U);

	/* More than 65535 destinations: refused before any reference. */
	ms->svc->num_dests = MAGLEV_MAX_BACKENDS + 1;
	lut = maglev_snapshot(ms, &be, &gen, &size, &err);
	KUNIT_EXPECT_NULL(test, lut);
	KUNIT_EXPECT_EQ(test, err, -E2BIG);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, refcount_read(&d[i]->refcnt), 1U);
	/* Its build fails and counts; no table is published. */
	KUNIT_EXPECT_EQ(test, maglev_build_table(ms), -E2BIG);
	KUNIT_EXPECT_EQ(test, ms->build_fail, 1ULL);
	KUNIT_EXPECT_NULL(test, rcu_access_pointer(ms->lut));
	ms->svc->num_dests = 4;

	/* A deleted service gives no snapshot and takes no reference. */
	ms->dead = true;
	lut = maglev_snapshot(ms, &be, &gen, &size, &err);
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
	seq.size = PAGE_SIZE;
	seq.buf = kunit_kzalloc(test, seq.size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, seq.buf);

	rcu_read_lock();
	maglev_show_service(&seq, ms);
	rcu_read_unlock();
	flags = strnstr(seq.buf, " flags 0x10 ", seq.count);
	KUNIT_EXPECT_NOT_NULL_MSG(test, flags, "%.*s", (int)seq.count,
				  seq.buf);

	KUNIT_EXPECT_NOT_NULL_MSG(test, strnstr(seq.buf, "service TCP 10.0.0.1:80 ",
						seq.count),
				  "%.*s", (int)seq.count, seq.buf);

	/* Dead, being deleted: no record, and the service is not read. */
	ms->dead = true;
	memset(ms->svc, 0x6b, sizeof(*ms->svc));	/* POISON_FREE */
	seq.count = 0;
	rcu_read_lock();
	maglev_show_service(&seq, ms);
	rcu_read_unlock();
	KUNIT_EXPECT_EQ_MSG(test, seq.count, (size_t)0, "%.*s",
			    (int)seq.count, seq.buf);
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

/* A table of @be filled and inserted into @c, as a build does. */
static struct maglev_shared *test_fill(struct kunit *test,
				       struct maglev_cache *c, u32 size,
				       const struct maglev_backend *be, u32 nr,
				       void *work)
{
	struct maglev_shared *t = maglev_shared_alloc(size, be, nr);

	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_EQ(test, 0, maglev_build(t->table, size, t->be, nr, work,
					      NULL, NULL));
	maglev_cache_insert(c, t, maglev_inputs_hash(size, be, nr));
	return t;
}

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
	struct maglev_cache *c = maglev_cache_alloc();
	struct maglev_backend *be;
	struct maglev_service *ms;
	struct maglev_shared *t;
	struct maglev_lut *lut;
	void *work;
	u64 gen;
	u32 size;
	int err;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, c);

	for (i = 0; i < FB_N; i++) {
		char a[16];

		snprintf(a, sizeof(a), "10.0.0.%u", i + 1);
		d[i] = test_dest(test, AF_INET, a, 80, 1);
	}
	ms = test_service(test, d, FB_N);
	lut = maglev_snapshot(ms, &be, &gen, &size, &err);
	KUNIT_ASSERT_NOT_NULL(test, lut);
	work = kvmalloc(maglev_work_bytes(FB_SIZE, FB_N), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, work);
	t = test_fill(test, c, FB_SIZE, be, FB_N, work);
	kvfree(work);
	/* The table holds the store now, and the descriptor the table. */
	maglev_cache_put(c);
	lut->shared = t;
	lut->table = t->table;
	for (i = 0; i < FB_N; i++)
		lut->dest[i] = be[i].priv;
	kvfree(be);
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

/*
 * A server over its upper threshold (IP_VS_DEST_F_OVERLOAD) takes no new
 * connection: a SYN, or a UDP datagram, is refused without flag-1 and goes
 * elsewhere with it.  A TCP packet without SYN that IPVS schedules
 * (sloppy_tcp) belongs to a connection that lives on the table's server
 * already (another load balancer had it): it goes there, whatever its load.
 */
static void maglev_overload_takeover_test(struct kunit *test)
{
	struct ip_vs_iphdr iph = { .protocol = IPPROTO_TCP, .len = 0 };
	struct ip_vs_dest *d[FB_N], *want;
	struct maglev_service *ms;
	struct ip_vs_service *svc;
	struct maglev_lut *lut;
	struct sk_buff *skb;
	struct tcphdr *th;
	u32 k;

	lut = test_lut_ms(test, d, &ms);
	svc = ms->svc;
	svc->sched_data = ms;
	rcu_assign_pointer(ms->lut, lut);
	skb = alloc_skb(sizeof(*th), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	th = skb_put_zero(skb, sizeof(*th));
	th->source = htons(40000);
	th->dest = htons(80);

	for (k = 0; k < 50; k++) {
		struct ip_vs_dest *got[7];

		iph.saddr.ip = htonl(0x0a090001 + k);
		svc->flags = MAGLEV_F_PORT;
		iph.protocol = IPPROTO_TCP;
		th->syn = 1;
		th->ack = 0;
		/* The choices under RCU, the expectations (which sleep) after. */
		rcu_read_lock();
		want = ip_vs_maglev_schedule(svc, skb, &iph);
		if (!want) {
			rcu_read_unlock();
			KUNIT_ASSERT_NOT_NULL(test, want);
		}
		want->flags |= IP_VS_DEST_F_OVERLOAD;
		/* New connections: refused, or elsewhere with flag-1. */
		got[0] = ip_vs_maglev_schedule(svc, skb, &iph);
		svc->flags |= MAGLEV_F_FALLBACK;
		got[1] = ip_vs_maglev_schedule(svc, skb, &iph);
		iph.protocol = IPPROTO_UDP;
		got[2] = ip_vs_maglev_schedule(svc, skb, &iph);
		svc->flags &= ~MAGLEV_F_FALLBACK;
		got[3] = ip_vs_maglev_schedule(svc, skb, &iph);
		/* A connection taken over: its server, with or without flag-1. */
		iph.protocol = IPPROTO_TCP;
		th->syn = 0;
		th->ack = 1;
		got[4] = ip_vs_maglev_schedule(svc, skb, &iph);
		svc->flags |= MAGLEV_F_FALLBACK;
		got[5] = ip_vs_maglev_schedule(svc, skb, &iph);
		/* Not when the server is retired: drained, it goes elsewhere. */
		atomic_set(&want->weight, 0);
		got[6] = ip_vs_maglev_schedule(svc, skb, &iph);
		atomic_set(&want->weight, 1);
		want->flags &= ~IP_VS_DEST_F_OVERLOAD;
		rcu_read_unlock();

		KUNIT_EXPECT_NULL(test, got[0]);
		KUNIT_EXPECT_NOT_NULL(test, got[1]);
		KUNIT_EXPECT_PTR_NE(test, got[1], want);
		KUNIT_EXPECT_PTR_NE(test, got[2], want);
		KUNIT_EXPECT_NULL(test, got[3]);
		KUNIT_EXPECT_PTR_EQ(test, got[4], want);
		KUNIT_EXPECT_PTR_EQ(test, got[5], want);
		KUNIT_EXPECT_PTR_NE(test, got[6], want);
	}
	kfree_skb(skb);
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
	 * What kvmalloc() does instead: kmalloc() first, which, when it finds
	 * the pages, takes the next power of two of them.
	 */
	p = kvmalloc(bytes, GFP_KERNEL | __GFP_NORETRY);
	KUNIT_ASSERT_NOT_NULL(test, p);
	if (!is_vmalloc_addr(p)) {
		kunit_info(test, "kvmalloc(%zu) takes %zu bytes\n", bytes,
			   ksize(p));
		KUNIT_EXPECT_EQ(test, ksize(p), PAGE_SIZE << get_order(bytes));
	}
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
 * same hash; maglev_shared_put() unlinks the last reference's and frees it
 * after a grace period.
 */
static void maglev_cache_test(struct kunit *test)
{
	static const u32 w1[] = { 1, 1, 1 }, w2[] = { 1, 2, 1 };
	static const u32 w0[] = { 1, 0, 1 }, d3[] = { 0, 3, 0 };
	static const u32 d4[] = { 0, 4, 0 };
	struct maglev_cache *c = maglev_cache_alloc();
	struct maglev_backend *be, *q;
	struct maglev_shared *t, *u;
	void *work;
	u64 h;

	KUNIT_ASSERT_NOT_NULL(test, c);
	work = kvmalloc(maglev_work_bytes(251, 3), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, work);

	be = test_backends(test, 3, w1, NULL);
	KUNIT_EXPECT_EQ(test, memcmp(be[0].name, "10.0.0.1:80", 11), 0);
	h = maglev_inputs_hash(251, be, 3);
	KUNIT_EXPECT_NULL(test, maglev_cache_find(c, 251, be, 3, h));
	t = test_fill(test, c, 251, be, 3, work);
	/* The table keeps a copy of the backends, in its own allocation. */
	KUNIT_EXPECT_PTR_EQ(test, (void *)t->be, (void *)(t + 1));
	KUNIT_EXPECT_PTR_EQ(test, (void *)t->table, (void *)(t->be + 3));
	KUNIT_EXPECT_EQ(test, memcmp(t->be[2].name, be[2].name, be[2].name_len),
			0);
	KUNIT_EXPECT_EQ(test, t->mem,
			kmalloc_size_roundup(sizeof(*t) + 3 * sizeof(*be) +
					     maglev_table_bytes(251, 3)));
	kvfree(be);
	KUNIT_EXPECT_EQ(test, c->next_id, 1ULL);
	KUNIT_EXPECT_EQ(test, c->tables, 1U);
	KUNIT_EXPECT_EQ(test, c->mem, t->mem);
	KUNIT_EXPECT_EQ(test, t->id, 1ULL);
	KUNIT_EXPECT_EQ(test, t->table->nr_filled, 251U);

	/* The same inputs, made anew: the same table, one more reference. */
	q = test_backends(test, 3, w1, NULL);
	u = maglev_cache_find(c, 251, q, 3, maglev_inputs_hash(251, q, 3));
	KUNIT_EXPECT_PTR_EQ(test, u, t);
	KUNIT_EXPECT_EQ(test, refcount_read(&t->ref), 2U);
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
	u = test_fill(test, c, 251, q, 3, work);
	kvfree(q);
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
	KUNIT_EXPECT_EQ(test, c->next_id, 2ULL);

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

/* ------------------------------------------------------------------ */

/*
 * A table-size write walks the namespace's services under RCU without a
 * reference (maglev_rebuild_net()) and may reach one that done_service has
 * just released: its last maglev_svc_put() put @ms->memcg and freed it after a
 * grace period.  maglev_changed() on it must store no memory cgroup
 * reference (it would never be put: a zombie memcg) and swap none out (it
 * was put already: a double put), move no generation and queue no build.
 */
static void maglev_changed_dead_test(struct kunit *test)
{
	struct maglev_net *mn = kunit_kzalloc(test, sizeof(*mn), GFP_KERNEL);
	struct ip_vs_service *svc = kunit_kzalloc(test, sizeof(*svc),
						  GFP_KERNEL);
	struct maglev_service *ms;
	struct mem_cgroup *memcg;
	struct maglev_builder *c;
	bool queued, listed;
	u64 gen, gen_after;

	KUNIT_ASSERT_NOT_NULL(test, mn);
	KUNIT_ASSERT_NOT_NULL(test, svc);
	c = maglev_builder_alloc();
	KUNIT_ASSERT_NOT_NULL(test, c);
	/* Freed by done_service's last reference, as ip_vs_maglev_init_svc's. */
	ms = kzalloc(sizeof(*ms), GFP_KERNEL);
	if (!ms)
		maglev_builder_put(c);
	KUNIT_ASSERT_NOT_NULL(test, ms);
	INIT_LIST_HEAD(&mn->services);
	mn->builder = c;
	INIT_LIST_HEAD(&svc->destinations);
	ms->mn = mn;
	ms->svc = svc;
	spin_lock_init(&ms->lock);
	refcount_set(&ms->ref, 1);
	INIT_DELAYED_WORK(&ms->work, maglev_build_work);
	INIT_LIST_HEAD(&ms->ready_node);
	ms->gen = 1;
	/* A build took the memory cgroup of the last change. */
	ms->memcg = NULL;
	refcount_inc(&c->ref);
	ms->builder = c;
	svc->sched_data = ms;
	list_add_tail_rcu(&ms->node, &mn->services);

	/*
	 * The sysctl writer found the service before done_service ran.  The
	 * state is read under RCU (it is freed after a grace period) and
	 * checked after (a failed expectation sleeps).
	 */
	rcu_read_lock();
	ip_vs_maglev_done_svc(svc);
	gen = ms->gen;
	maglev_changed(ms);
	memcg = READ_ONCE(ms->memcg);
	gen_after = ms->gen;
	queued = delayed_work_pending(&ms->work);
	listed = !list_empty(&ms->ready_node);
	rcu_read_unlock();
	KUNIT_EXPECT_NULL(test, memcg);
	KUNIT_EXPECT_EQ(test, gen_after, gen);
	KUNIT_EXPECT_FALSE(test, queued);
	KUNIT_EXPECT_FALSE(test, listed);
	KUNIT_EXPECT_TRUE(test, list_empty(&mn->services));
	rcu_barrier();
	maglev_builder_put(c);
}

/* ------------------------------------------------------------------ */

/*
 * Every build scratch area passes through maglev_test_scratch(): the
 * tests below record what was asked for and may make it fail.
 */
struct scratch_probe {
	u32 seen;
	size_t bytes[8];
	bool vmalloc[8];
	u32 fail_from;		/* fail the requests from this one on, 0: none */
};

static struct scratch_probe *scratch_probe_of;

void *maglev_test_scratch(void *p, size_t bytes)
{
	struct scratch_probe *sp = READ_ONCE(scratch_probe_of);
	u32 n;

	if (!sp || !p)
		return p;
	n = sp->seen++;
	if (n < ARRAY_SIZE(sp->bytes)) {
		sp->bytes[n] = bytes;
		sp->vmalloc[n] = is_vmalloc_addr(p);
	}
	if (sp->fail_from && n + 1 >= sp->fail_from) {
		kvfree(p);
		return NULL;
	}
	return p;
}

static void scratch_probe_off(void *unused)
{
	WRITE_ONCE(scratch_probe_of, NULL);
}

/* Unpublish and free @ms's table, after the RCU callbacks of the others. */
static void test_unpublish(struct maglev_service *ms)
{
	struct maglev_lut *lut = rcu_dereference_protected(ms->lut, true);

	RCU_INIT_POINTER(ms->lut, NULL);
	rcu_barrier();
	if (lut) {
		atomic_dec(&lut->shared->users);
		maglev_lut_free(lut);
	}
}

/*
 * maglev_build_table() on a made-up service: its scratch comes from
 * kmalloc() up to a page and vmalloc() above, never kvmalloc()'s
 * high-order kmalloc() try; a table found in the cache asks only for what
 * the churn needs, and is published even when that fails, with the churn
 * unknown; a table keeps no pointer to the destinations of the service
 * that filled it.
 */
static void maglev_build_table_test(struct kunit *test)
{
	struct scratch_probe sp = {};
	struct ip_vs_dest *d[FB_N];
	struct maglev_service *ms;
	struct maglev_shared *t1, *t2;
	struct maglev_builder *b;
	struct maglev_lut *lut;
	u32 i;
	int ok;

	for (i = 0; i < FB_N; i++) {
		char a[16];

		snprintf(a, sizeof(a), "10.0.0.%u", i + 1);
		d[i] = test_dest(test, AF_INET, a, 80, 1);
	}
	ms = test_service(test, d, FB_N);
	b = maglev_builder_alloc();
	KUNIT_ASSERT_NOT_NULL(test, b);
	ms->builder = b;
	ms->mn->table_size = 65537;
	ok = kunit_add_action_or_reset(test, scratch_probe_off, NULL);
	KUNIT_ASSERT_EQ(test, ok, 0);
	WRITE_ONCE(scratch_probe_of, &sp);

	/* A fill above a page: vmalloc(), not kvmalloc()'s kmalloc(). */
	KUNIT_ASSERT_EQ(test, maglev_build_table(ms), 0);
	KUNIT_ASSERT_EQ(test, sp.seen, 1U);
	KUNIT_EXPECT_EQ(test, sp.bytes[0], maglev_work_bytes(65537, FB_N));
	KUNIT_EXPECT_GT(test, sp.bytes[0], (size_t)PAGE_SIZE);
	KUNIT_EXPECT_TRUE(test, sp.vmalloc[0]);
	lut = rcu_dereference_protected(ms->lut, true);
	KUNIT_ASSERT_NOT_NULL(test, lut);
	t1 = lut->shared;
	KUNIT_ASSERT_NOT_NULL(test, t1);
	for (i = 0; i < FB_N; i++) {
		KUNIT_EXPECT_NULL(test, t1->be[i].priv);
		KUNIT_EXPECT_PTR_EQ(test, lut->dest[i], d[i]);
	}
	/* Kept in the cache while the service moves on. */
	refcount_inc(&t1->ref);

	/* Another weight: another fill, which counts the churn from t1. */
	atomic_set(&d[0]->weight, 2);
	KUNIT_ASSERT_EQ(test, maglev_build_table(ms), 0);
	KUNIT_EXPECT_EQ(test, sp.seen, 2U);
	lut = rcu_dereference_protected(ms->lut, true);
	t2 = lut->shared;
	KUNIT_ASSERT_PTR_NE(test, t2, t1);
	KUNIT_EXPECT_NE(test, lut->churn, MAGLEV_CHURN_UNKNOWN);
	refcount_inc(&t2->ref);

	/*
	 * Back: t1 comes from the cache, and its churn memo is not from t2.
	 * The churn needs a u16 per old backend, and when even that fails
	 * the table is published, the churn unknown.
	 */
	atomic_set(&d[0]->weight, 1);
	sp.fail_from = 3;
	KUNIT_ASSERT_EQ(test, maglev_build_table(ms), 0);
	KUNIT_EXPECT_EQ(test, sp.seen, 3U);
	KUNIT_EXPECT_EQ(test, sp.bytes[2], maglev_churn_bytes(FB_N));
	KUNIT_EXPECT_LT(test, sp.bytes[2], maglev_work_bytes(65537, FB_N));
	lut = rcu_dereference_protected(ms->lut, true);
	KUNIT_EXPECT_PTR_EQ(test, lut->shared, t1);
	KUNIT_EXPECT_EQ(test, lut->churn, MAGLEV_CHURN_UNKNOWN);
	KUNIT_EXPECT_EQ(test, ms->alloc_fail, 0ULL);
	KUNIT_EXPECT_EQ(test, b->found, 1ULL);

	/* To t2 from the cache: its memo is from t1, no scratch. */
	sp.fail_from = 0;
	atomic_set(&d[0]->weight, 2);
	KUNIT_ASSERT_EQ(test, maglev_build_table(ms), 0);
	KUNIT_EXPECT_EQ(test, sp.seen, 3U);
	lut = rcu_dereference_protected(ms->lut, true);
	KUNIT_EXPECT_PTR_EQ(test, lut->shared, t2);
	KUNIT_EXPECT_EQ(test, lut->churn, t2->churn);
	KUNIT_EXPECT_EQ(test, b->found, 2ULL);

	/* Back to t1 with memory: counted, the same slots as the other way. */
	atomic_set(&d[0]->weight, 1);
	KUNIT_ASSERT_EQ(test, maglev_build_table(ms), 0);
	KUNIT_EXPECT_EQ(test, sp.seen, 4U);
	KUNIT_EXPECT_EQ(test, sp.bytes[3], maglev_churn_bytes(FB_N));
	lut = rcu_dereference_protected(ms->lut, true);
	KUNIT_EXPECT_PTR_EQ(test, lut->shared, t1);
	KUNIT_EXPECT_EQ(test, lut->churn, t2->churn);
	KUNIT_EXPECT_GT(test, lut->churn, 0U);

	WRITE_ONCE(scratch_probe_of, NULL);
	test_unpublish(ms);
	maglev_shared_put(t1);
	maglev_shared_put(t2);
	KUNIT_EXPECT_EQ(test, b->cache->tables, 0U);
	KUNIT_EXPECT_EQ(test, b->cache->next_id, 2ULL);
	maglev_builder_put(b);
	for (i = 0; i < FB_N; i++)
		KUNIT_EXPECT_EQ(test, refcount_read(&d[i]->refcnt), 1U);
}

static void build_wait_nop(struct work_struct *work)
{
}

/* Cancel the work maglev_build_service() queued, with its reference. */
static void test_unqueue(struct maglev_service *ms)
{
	if (cancel_delayed_work_sync(&ms->work))
		refcount_dec(&ms->ref);
}

/*
 * A build due now waits for the hold-off, unless it is a retry:
 * maglev_build_service() then builds nothing and queues the service's work
 * for the end of the hold-off, at most HMAX away.  A retry, or a build
 * whose hold-off has passed, builds at once.
 */
static void maglev_build_wait_test(struct kunit *test)
{
	unsigned long s5 = msecs_to_jiffies(5000), before, after;
	struct ip_vs_dest *d[1];
	struct maglev_service *ms;
	struct maglev_builder *b;
	struct maglev_lut *lut;

	d[0] = test_dest(test, AF_INET, "10.0.0.2", 80, 1);
	ms = test_service(test, d, 1);
	b = maglev_builder_alloc();
	KUNIT_ASSERT_NOT_NULL(test, b);
	ms->builder = b;
	INIT_DELAYED_WORK(&ms->work, build_wait_nop);

	/* In the hold-off: queued for its end, one reference, no table. */
	ms->next_build = jiffies + s5;
	maglev_build_service(ms);
	KUNIT_EXPECT_TRUE(test, delayed_work_pending(&ms->work));
	KUNIT_EXPECT_EQ(test, ms->due, ms->next_build);
	KUNIT_EXPECT_EQ(test, refcount_read(&ms->ref), 2U);
	KUNIT_EXPECT_NULL(test, rcu_access_pointer(ms->lut));
	test_unqueue(ms);

	/* Further than HMAX (a time from before a wrap): HMAX at most. */
	before = jiffies;
	ms->next_build = before + 2 * HMAX;
	maglev_build_service(ms);
	after = jiffies;
	KUNIT_EXPECT_TRUE(test, time_in_range(ms->due, before + HMAX,
					      after + HMAX));
	KUNIT_EXPECT_NULL(test, rcu_access_pointer(ms->lut));
	test_unqueue(ms);

	/* A retry does not wait for the hold-off. */
	ms->next_build = jiffies + s5;
	ms->retry = msecs_to_jiffies(10);
	maglev_build_service(ms);
	KUNIT_EXPECT_FALSE(test, delayed_work_pending(&ms->work));
	lut = rcu_dereference_protected(ms->lut, true);
	KUNIT_ASSERT_NOT_NULL(test, lut);
	KUNIT_EXPECT_EQ(test, lut->builds, 1ULL);
	KUNIT_EXPECT_EQ(test, ms->retry, 0UL);

	/* The hold-off has passed: built at once. */
	ms->next_build = jiffies - 100;
	maglev_build_service(ms);
	KUNIT_EXPECT_FALSE(test, delayed_work_pending(&ms->work));
	lut = rcu_dereference_protected(ms->lut, true);
	KUNIT_EXPECT_EQ(test, lut->builds, 2ULL);
	KUNIT_EXPECT_EQ(test, refcount_read(&ms->ref), 1U);

	/* Dead: no build attempted (next_build stays), nothing queued. */
	ms->dead = true;
	before = jiffies - 100;
	ms->next_build = before;
	maglev_build_service(ms);
	KUNIT_EXPECT_EQ(test, ms->next_build, before);
	ms->next_build = jiffies + s5;
	maglev_build_service(ms);
	KUNIT_EXPECT_FALSE(test, delayed_work_pending(&ms->work));
	KUNIT_EXPECT_PTR_EQ(test, rcu_access_pointer(ms->lut), lut);
	KUNIT_EXPECT_EQ(test, refcount_read(&ms->ref), 1U);
	ms->dead = false;

	test_unpublish(ms);
	maglev_builder_put(b);
	KUNIT_EXPECT_EQ(test, refcount_read(&d[0]->refcnt), 1U);
}

/* ------------------------------------------------------------------ */

/*
 * Timed at the largest N: while maglev_snapshot() walks 65535
 * destinations and maglev_cache_find() compares 65535 names, a kthread
 * tries the lock each must not hold over the whole walk (the service's,
 * the cache's) in a loop and notes the longest time it found it held.  The
 * calls' durations are printed with it; it must stay under a tenth of
 * theirs.
 */
#define BIG_N	MAGLEV_MAX_BACKENDS

struct lock_waiter {
	spinlock_t *lock;	/* the lock to try and time */
	bool bh;
	bool stop;
	bool started;
	u64 held_ns;
	struct completion done;
};

/*
 * Try the lock in a loop; the longest run of failed tries, from the first
 * to the last, is the longest time it was seen held.  A pause of this
 * vCPU (the host preempting it) ends no run and makes none longer: the
 * next try succeeds unless the lock is held then too.
 */
static bool lock_waiter_try(struct lock_waiter *lw)
{
	if (lw->bh) {
		if (!spin_trylock_bh(lw->lock))
			return false;
		spin_unlock_bh(lw->lock);
		return true;
	}
	if (!spin_trylock(lw->lock))
		return false;
	spin_unlock(lw->lock);
	return true;
}

static int lock_waiter_fn(void *arg)
{
	struct lock_waiter *lw = arg;
	u64 first = 0, now;
	bool got;

	WRITE_ONCE(lw->started, true);
	while (!READ_ONCE(lw->stop)) {
		got = lock_waiter_try(lw);
		now = ktime_get_ns();
		if (got)
			first = 0;
		else if (!first)
			first = now;
		else
			lw->held_ns = max(lw->held_ns, now - first);
		cond_resched();
	}
	complete(&lw->done);
	return 0;
}

static bool lock_waiter_start(struct kunit *test, struct lock_waiter *lw,
			      spinlock_t *lock, bool bh)
{
	struct task_struct *k;
	int n = 1000;

	memset(lw, 0, sizeof(*lw));
	lw->lock = lock;
	lw->bh = bh;
	init_completion(&lw->done);
	k = kthread_run(lock_waiter_fn, lw, "maglev-kunit-waiter");
	if (IS_ERR(k))
		return false;
	while (!READ_ONCE(lw->started) && n--)
		usleep_range(1000, 2000);
	return READ_ONCE(lw->started);
}

static void lock_waiter_stop(struct lock_waiter *lw)
{
	WRITE_ONCE(lw->stop, true);
	wait_for_completion(&lw->done);
}

/*
 * Three rounds, the least of the longest holds kept: a vCPU the host
 * preempts while it holds the lock makes one hold long, not three.
 */
#define BIG_ROUNDS	3

static void maglev_big_walk_test(struct kunit *test)
{
	u64 gen, t0, dt, snap_ns = U64_MAX, find_ns = U64_MAX;
	u64 snap_wait = U64_MAX, find_wait = U64_MAX;
	struct maglev_shared *t, *found;
	struct ip_vs_dest *dests, **d;
	struct maglev_service *ms;
	struct maglev_lut *lut = NULL;
	struct maglev_backend *be = NULL;
	struct maglev_cache *c;
	struct lock_waiter lw;
	u32 size, i, r;
	int err;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two CPUs");
	dests = kvcalloc(BIG_N, sizeof(*dests), GFP_KERNEL);
	d = kvcalloc(BIG_N, sizeof(*d), GFP_KERNEL);
	if (!dests || !d) {
		kvfree(dests);
		kvfree(d);
		kunit_skip(test, "no memory for %u destinations", BIG_N);
	}
	for (i = 0; i < BIG_N; i++) {
		d[i] = &dests[i];
		d[i]->af = AF_INET;
		d[i]->addr.ip = htonl(0x0a000000 + i);
		d[i]->port = htons(80);
		atomic_set(&d[i]->weight, 1);
		refcount_set(&d[i]->refcnt, 1);
		test_set_available(d[i], true);
	}
	ms = test_service(test, d, BIG_N);

	for (r = 0; r < BIG_ROUNDS; r++) {
		if (lut)
			maglev_lut_free(lut);
		kvfree(be);
		KUNIT_ASSERT_TRUE(test, lock_waiter_start(test, &lw, &ms->lock,
							  false));
		t0 = ktime_get_ns();
		lut = maglev_snapshot(ms, &be, &gen, &size, &err);
		dt = ktime_get_ns() - t0;
		lock_waiter_stop(&lw);
		KUNIT_ASSERT_NOT_NULL(test, lut);
		KUNIT_EXPECT_EQ(test, lut->nr, (u32)BIG_N);
		snap_ns = min(snap_ns, dt);
		snap_wait = min(snap_wait, lw.held_ns);
	}

	/* A table of these backends in the cache, found by the same ones. */
	c = maglev_cache_alloc();
	KUNIT_ASSERT_NOT_NULL(test, c);
	/* Not filled: only the inputs are compared. */
	t = maglev_shared_alloc(65537, be, BIG_N);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t->table->size = 65537;
	t->table->nr_backends = BIG_N;
	maglev_cache_insert(c, t, maglev_inputs_hash(65537, t->be, BIG_N));

	for (r = 0; r < BIG_ROUNDS; r++) {
		KUNIT_ASSERT_TRUE(test, lock_waiter_start(test, &lw, &c->lock,
							  true));
		t0 = ktime_get_ns();
		found = maglev_cache_find(c, 65537, be, BIG_N, t->hash);
		dt = ktime_get_ns() - t0;
		lock_waiter_stop(&lw);
		KUNIT_EXPECT_PTR_EQ(test, found, t);
		if (found)
			maglev_shared_put(found);
		find_ns = min(find_ns, dt);
		find_wait = min(find_wait, lw.held_ns);
	}

	kunit_info(test,
		   "N=%u, least of %u rounds: maglev_snapshot %llu us, the service's lock held at most %llu us meanwhile; maglev_cache_find %llu us, the cache's lock held at most %llu us\n",
		   BIG_N, BIG_ROUNDS, div_u64(snap_ns, 1000),
		   div_u64(snap_wait, 1000), div_u64(find_ns, 1000),
		   div_u64(find_wait, 1000));
	/* Held for a few reads, not across the walk (u64 division: i386). */
	KUNIT_EXPECT_LT(test, snap_wait, div_u64(snap_ns, 10));
	KUNIT_EXPECT_LT(test, find_wait, div_u64(find_ns, 10));

	maglev_shared_put(t);
	maglev_cache_put(c);
	maglev_lut_free(lut);
	kvfree(be);
	kvfree(d);
	kvfree(dests);
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
	KUNIT_CASE(maglev_overload_takeover_test),
	KUNIT_CASE(maglev_show_one_table_test),
	KUNIT_CASE(maglev_client_hash_test),
	KUNIT_CASE(maglev_mem_test),
	KUNIT_CASE(maglev_cache_test),
	KUNIT_CASE(maglev_changed_dead_test),
	KUNIT_CASE(maglev_build_table_test),
	KUNIT_CASE(maglev_big_walk_test),
	{}
};

static struct kunit_suite maglev_glue_test_suite = {
	.name = "maglev_glue",
	.test_cases = maglev_glue_test_cases,
};

kunit_test_suites(&maglev_glue_test_suite);
