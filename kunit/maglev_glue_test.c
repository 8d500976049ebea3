// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "maglev_glue": the IPVS glue driven through its scheduler
 * callbacks, on IPVS services and destinations made up here and changed as
 * ip_vs_ctl.c changes them (the list first, then the callback; a deleted
 * destination reused at once, as IPVS's trash does), in the initial
 * namespace's builder: backend names, the set a build copies, tables
 * independent of the order of the changes, drain weights, the repair of an
 * incomplete set, the lookup's fallback and its spare, overload and
 * takeover, and the client hash against known values.  maglev_main.c
 * includes this file at its end when built with MAGLEV_KUNIT=1 (Kbuild).
 */
#include <kunit/test.h>

#include <linux/delay.h>
#include <linux/inet.h>
#include <linux/skbuff.h>

#include <asm/bitsperlong.h>

/* The made-up IPVS: its configuration mutex, and one netns_ipvs. */
static DEFINE_MUTEX(test_ipvs_mutex);

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

/* A destination, with the test's reference; checked back at 1 at the end. */
static struct ip_vs_dest *test_dest(struct kunit *test, int af,
				    const char *addr, u16 port)
{
	struct ip_vs_dest *d = kunit_kzalloc(test, sizeof(*d), GFP_KERNEL);
	int ok;

	KUNIT_ASSERT_NOT_NULL(test, d);
	d->af = af;
	if (af == AF_INET6)
		ok = in6_pton(addr, -1, d->addr.in6.s6_addr, -1, NULL);
	else
		ok = in4_pton(addr, -1, (u8 *)&d->addr.ip, -1, NULL);
	KUNIT_ASSERT_EQ(test, ok, 1);
	d->port = htons(port);
	refcount_set(&d->refcnt, 1);
	return d;
}

static struct ip_vs_dest *test_dest4(struct kunit *test, u32 i)
{
	char a[16];

	snprintf(a, sizeof(a), "10.0.%u.%u", i / 250, i % 250 + 1);
	return test_dest(test, AF_INET, a, 80);
}

/* The initial namespace's builder, with table size 251 and no hold-off. */
static struct maglev_net *test_builder(struct kunit *test)
{
	struct maglev_net *b = maglev_pernet(&init_net);
	unsigned int *saved = kunit_kmalloc(test, 2 * sizeof(*saved),
					    GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, saved);
	saved[0] = xchg(&b->table_size, 251);
	saved[1] = xchg(&b->holdoff_ms, 0);
	test->priv = saved;
	return b;
}

static void test_builder_exit(struct kunit *test)
{
	struct maglev_net *b = maglev_pernet(&init_net);
	unsigned int *saved = test->priv;

	if (saved) {
		WRITE_ONCE(b->table_size, saved[0]);
		WRITE_ONCE(b->holdoff_ms, saved[1]);
	}
}

/* A TCP service on 10.0.0.1:80 using the scheduler, with no destination. */
static struct ip_vs_service *test_service(struct kunit *test)
{
	struct ip_vs_service *svc = kunit_kzalloc(test, sizeof(*svc),
						  GFP_KERNEL);
	struct netns_ipvs *ipvs = kunit_kzalloc(test, sizeof(*ipvs),
						GFP_KERNEL);
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, svc);
	KUNIT_ASSERT_NOT_NULL(test, ipvs);
	ipvs->net = &init_net;
	svc->ipvs = ipvs;
	svc->af = AF_INET;
	svc->protocol = IPPROTO_TCP;
	svc->addr.ip = htonl(0x0a000001);
	svc->port = htons(80);
	INIT_LIST_HEAD(&svc->destinations);
	mutex_lock(&test_ipvs_mutex);
	ret = ip_vs_maglev_init_svc(svc);
	mutex_unlock(&test_ipvs_mutex);
	KUNIT_ASSERT_EQ(test, ret, 0);
	return svc;
}

/* ip_vs_add_dest(), also of a destination back from the trash. */
static void test_add(struct ip_vs_service *svc, struct ip_vs_dest *d, int w)
{
	mutex_lock(&test_ipvs_mutex);
	atomic_set(&d->last_weight, w);
	atomic_set(&d->weight, w);
	RCU_INIT_POINTER(d->svc, svc);
	test_set_available(d, true);
	list_add_rcu(&d->n_list, &svc->destinations);
	svc->num_dests++;
	ip_vs_maglev_add_dest(svc, d);
	mutex_unlock(&test_ipvs_mutex);
}

/* ip_vs_edit_dest(): a weight of 0 keeps the last one. */
static void test_upd(struct ip_vs_service *svc, struct ip_vs_dest *d, int w)
{
	mutex_lock(&test_ipvs_mutex);
	if (w)
		atomic_set(&d->last_weight, w);
	atomic_set(&d->weight, w);
	ip_vs_maglev_add_dest(svc, d);
	mutex_unlock(&test_ipvs_mutex);
}

/* ip_vs_del_dest(): unlinked, to the trash. */
static void test_del(struct ip_vs_service *svc, struct ip_vs_dest *d)
{
	mutex_lock(&test_ipvs_mutex);
	test_set_available(d, false);
	list_del_rcu(&d->n_list);
	svc->num_dests--;
	ip_vs_maglev_del_dest(svc, d);
	mutex_unlock(&test_ipvs_mutex);
}

static void test_done(struct ip_vs_service *svc)
{
	mutex_lock(&test_ipvs_mutex);
	ip_vs_maglev_done_svc(svc);
	mutex_unlock(&test_ipvs_mutex);
}

/*
 * Run the builder's work until the service's pending build has run (one
 * that fails for too many destinations is not retried), however long its
 * hold-off (at least its last build's duration).
 */
static void test_unpend(struct kunit *test, struct maglev_service *ms)
{
	int i;

	for (i = 0; i < 200 && !list_empty(&ms->pending_node); i++) {
		flush_delayed_work(&ms->mn->work);
		msleep(20);
	}
	flush_delayed_work(&ms->mn->work);
	KUNIT_EXPECT_TRUE(test, list_empty(&ms->pending_node));
}

/* Run the builder's work until the service's table is current. */
static const struct maglev_lut *test_settle(struct kunit *test,
					    struct ip_vs_service *svc)
{
	struct maglev_service *ms = svc->sched_data;
	const struct maglev_lut *lut;
	int i;

	for (i = 0; i < 200; i++) {
		flush_delayed_work(&ms->mn->work);
		lut = rcu_dereference_protected(ms->lut, 1);
		if (lut && lut->gen == READ_ONCE(ms->gen) &&
		    list_empty(&ms->pending_node))
			return lut;
		msleep(20);
	}
	KUNIT_FAIL(test, "%s: no current table", ms->name);
	return NULL;
}

/*
 * Every replaced table freed: the destinations hold only the test's.  As
 * at module unload: the builds still running (a dead service's last put
 * retires its table), their tables' grace periods, then their frees.
 */
static void test_quiesce(struct kunit *test, struct ip_vs_dest **d, u32 n)
{
	u32 i;

	flush_workqueue(maglev_wq);
	rcu_barrier();
	flush_workqueue(maglev_wq);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ(test, refcount_read(&d[i]->refcnt), 1);
}

static struct ip_vs_dest *test_pick(struct ip_vs_service *svc, __be32 client)
{
	struct ip_vs_iphdr iph = { .protocol = IPPROTO_UDP };
	struct ip_vs_dest *dest;

	iph.saddr.ip = client;
	rcu_read_lock();
	dest = ip_vs_maglev_schedule(svc, NULL, &iph);
	rcu_read_unlock();
	return dest;
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
	{ "IPv6 longest", AF_INET6, "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255",
	  65535, "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535" },
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
	struct ip_vs_dest *d = test_dest(test, c->af, c->addr, c->port);
	char buf[MAGLEV_ADDR_NAME_MAX + 1];
	u32 n = maglev_dest_name(buf, d);

	KUNIT_ASSERT_EQ(test, n, (u32)strlen(c->want));
	KUNIT_EXPECT_EQ(test, memcmp(buf, c->want, n), 0);
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

#define SET_N	6

/*
 * The digest maglev_build() gives the backends named as @d (weights @w,
 * drain weights @dw), in @d's order, which must be name order.
 */
static u64 test_digest(struct kunit *test, struct ip_vs_dest **d,
		       const u32 *w, const u32 *dw, u32 n)
{
	struct maglev_backend *be = kunit_kcalloc(test, n, sizeof(*be),
						  GFP_KERNEL);
	struct maglev_table *t = kunit_kzalloc(test,
					       maglev_table_bytes(251, n),
					       GFP_KERNEL);
	void *work = kunit_kzalloc(test, maglev_work_bytes(251, n),
				   GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_TRUE(test, be && t && work);
	for (i = 0; i < n; i++) {
		be[i].name_len = maglev_dest_name(be[i].name, d[i]);
		be[i].weight = w[i];
		be[i].drain_weight = dw[i];
	}
	KUNIT_ASSERT_EQ(test, maglev_build(t, 251, be, n, work, NULL, NULL),
			0);
	return t->digest;
}

/* The slot counts /proc shows equal a count of the packed slots. */
static void test_recount(struct kunit *test, const struct maglev_lut *lut)
{
	u32 *count = kunit_kcalloc(test, lut->nr, sizeof(*count), GFP_KERNEL);
	u32 s, i;

	KUNIT_ASSERT_NOT_NULL(test, count);
	for (s = 0; s < lut->table->size; s++) {
		i = maglev_table_get(lut->table, s);
		KUNIT_ASSERT_LT(test, i, lut->nr);
		count[i]++;
	}
	for (i = 0; i < lut->nr; i++)
		KUNIT_EXPECT_EQ(test, lut->shared->be[i].slots, count[i]);
}

/*
 * Two services given the same destinations in opposite orders publish the
 * same table (one fill, shared), with their own destinations in name
 * order; a drained destination gives the table maglev_build() gives it
 * with its last weight as drain weight, and restoring it restores the
 * table.
 */
static void maglev_set_order_test(struct kunit *test)
{
	static const u32 w[SET_N] = { 1, 2, 1, 3, 1, 1 };
	static const u32 none[SET_N];
	u32 dw[SET_N] = { 0 }, wd[SET_N];
	struct ip_vs_dest *a[SET_N], *b[SET_N];
	struct maglev_net *bl = test_builder(test);
	struct ip_vs_service *sa = test_service(test), *sb = test_service(test);
	const struct maglev_lut *la, *lb;
	u64 found = READ_ONCE(bl->found), digest;
	int i;

	for (i = 0; i < SET_N; i++) {
		a[i] = test_dest4(test, i);
		b[i] = test_dest4(test, i);
	}
	for (i = 0; i < SET_N; i++)
		test_add(sa, a[i], w[i]);
	for (i = SET_N - 1; i >= 0; i--)
		test_add(sb, b[i], w[i]);
	la = test_settle(test, sa);
	lb = test_settle(test, sb);
	KUNIT_ASSERT_TRUE(test, la && lb);
	digest = test_digest(test, a, w, none, SET_N);
	KUNIT_EXPECT_EQ(test, la->table->digest, digest);
	KUNIT_EXPECT_PTR_EQ(test, la->shared, lb->shared);
	KUNIT_EXPECT_GE(test, READ_ONCE(bl->found), found + 1);
	for (i = 0; i < SET_N; i++) {
		KUNIT_EXPECT_PTR_EQ(test, la->dest[i], a[i]);
		KUNIT_EXPECT_PTR_EQ(test, lb->dest[i], b[i]);
	}
	test_recount(test, la);

	/* Drained: the last weight hands its slots over. */
	memcpy(wd, w, sizeof(wd));
	wd[3] = 0;
	dw[3] = w[3];
	test_upd(sa, a[3], 0);
	la = test_settle(test, sa);
	KUNIT_ASSERT_NOT_NULL(test, la);
	KUNIT_EXPECT_EQ(test, la->table->digest,
			test_digest(test, a, wd, dw, SET_N));
	KUNIT_EXPECT_EQ(test, la->shared->be[3].slots, 0U);
	test_recount(test, la);
	test_upd(sa, a[3], w[3]);
	la = test_settle(test, sa);
	KUNIT_ASSERT_NOT_NULL(test, la);
	KUNIT_EXPECT_EQ(test, la->table->digest, digest);

	test_done(sa);
	test_done(sb);
	test_quiesce(test, a, SET_N);
	test_quiesce(test, b, SET_N);
}

/*
 * IPVS's trash hands a deleted destination back at once, to its service
 * (a health check that recovers) or to a new service at the same address
 * (ipvsadm -C; ipvsadm -R): every table names only the service's own
 * destinations, and the last one equals that of a fresh service.
 */
static void maglev_trash_reuse_test(struct kunit *test)
{
	static const u32 w[SET_N] = { 1, 1, 1, 1, 1, 1 }, none[SET_N];
	struct ip_vs_dest *d[SET_N];
	struct ip_vs_service *svc, *again;
	const struct maglev_lut *lut;
	u32 i, round;

	test_builder(test);
	for (i = 0; i < SET_N; i++)
		d[i] = test_dest4(test, i);
	svc = test_service(test);
	for (i = 0; i < SET_N; i++)
		test_add(svc, d[i], 1);
	for (round = 0; round < 20; round++) {
		/* A build may run between any two changes. */
		for (i = 0; i < SET_N; i++) {
			test_del(svc, d[i]);
			if (round % 2)
				flush_delayed_work(&maglev_pernet(&init_net)->work);
			test_add(svc, d[i], 1);
		}
		lut = test_settle(test, svc);
		KUNIT_ASSERT_NOT_NULL(test, lut);
		KUNIT_EXPECT_EQ(test, lut->nr, (u32)SET_N);
		for (i = 0; i < lut->nr; i++)
			KUNIT_EXPECT_PTR_EQ(test, lut->dest[i], d[i]);
	}
	/* Deleted and created again with the same destinations. */
	for (i = 0; i < SET_N; i++)
		test_del(svc, d[i]);
	test_done(svc);
	again = test_service(test);
	for (i = 0; i < SET_N; i++)
		test_add(again, d[i], 1);
	lut = test_settle(test, again);
	KUNIT_ASSERT_NOT_NULL(test, lut);
	KUNIT_EXPECT_EQ(test, lut->table->digest,
			test_digest(test, d, w, none, SET_N));
	test_done(again);
	test_quiesce(test, d, SET_N);
}

/*
 * A set that lost a destination for lack of memory is repaired by its next
 * build, with no other callback of the service: the build finds the
 * destination on IPVS's list and publishes; more than MAGLEV_MAX_BACKENDS
 * fails the build until the count comes back down.
 */
static void maglev_set_repair_test(struct kunit *test)
{
	static const u32 w[3] = { 1, 1, 1 }, none[3];
	struct ip_vs_service *svc;
	struct maglev_service *ms;
	const struct maglev_lut *lut;
	struct ip_vs_dest *d[3];
	u64 builds, fails;
	u32 i, nr;

	test_builder(test);
	for (i = 0; i < 3; i++)
		d[i] = test_dest4(test, i);
	svc = test_service(test);
	ms = svc->sched_data;
	test_add(svc, d[0], 1);
	test_add(svc, d[2], 1);
	lut = test_settle(test, svc);
	KUNIT_ASSERT_NOT_NULL(test, lut);
	builds = lut->builds;

	/* IPVS linked d[1], but its entry could not be allocated. */
	mutex_lock(&test_ipvs_mutex);
	atomic_set(&d[1]->weight, 1);
	atomic_set(&d[1]->last_weight, 1);
	RCU_INIT_POINTER(d[1]->svc, svc);
	test_set_available(d[1], true);
	list_add_rcu(&d[1]->n_list, &svc->destinations);
	mutex_lock(&ms->set_lock);
	ms->incomplete = true;
	mutex_unlock(&ms->set_lock);
	mutex_unlock(&test_ipvs_mutex);
	maglev_changed(ms);
	lut = test_settle(test, svc);
	KUNIT_ASSERT_NOT_NULL(test, lut);
	KUNIT_EXPECT_FALSE(test, ms->incomplete);
	KUNIT_EXPECT_EQ(test, lut->builds, builds + 1);
	KUNIT_EXPECT_EQ(test, lut->nr, 3U);
	KUNIT_EXPECT_EQ(test, lut->table->digest,
			test_digest(test, d, w, none, 3));

	/* Too many: the build fails, and succeeds once they are fewer. */
	fails = READ_ONCE(ms->build_fail);
	mutex_lock(&ms->set_lock);
	nr = ms->nr;
	ms->nr = MAGLEV_MAX_BACKENDS + 1;
	mutex_unlock(&ms->set_lock);
	maglev_changed(ms);
	test_unpend(test, ms);
	KUNIT_EXPECT_EQ(test, READ_ONCE(ms->build_fail), fails + 1);
	KUNIT_EXPECT_PTR_EQ(test, rcu_dereference_protected(ms->lut, 1), lut);
	mutex_lock(&ms->set_lock);
	ms->nr = nr;
	mutex_unlock(&ms->set_lock);
	test_del(svc, d[2]);
	lut = test_settle(test, svc);
	KUNIT_ASSERT_NOT_NULL(test, lut);
	KUNIT_EXPECT_EQ(test, lut->nr, 2U);

	test_done(svc);
	test_quiesce(test, d, 3);
}

/*
 * The lookup: a retired choice (drained, removed, or given to another
 * service) falls back to a destination available; while the table lags
 * (none yet, or all its destinations retired) the destinations with a
 * weight take the connections, spread; with none available, none.
 */
static void maglev_fallback_test(struct kunit *test)
{
	struct ip_vs_dest *d[SET_N], *got, *want, *extra;
	struct ip_vs_service *svc, *other;
	u32 k, i;

	test_builder(test);
	svc = test_service(test);
	other = kunit_kzalloc(test, sizeof(*other), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, other);
	for (i = 0; i < SET_N; i++)
		d[i] = test_dest4(test, i);
	/* No destination, then (maybe before the first table) one. */
	KUNIT_EXPECT_NULL(test, test_pick(svc, htonl(0x0a090001)));
	for (i = 0; i < SET_N; i++)
		test_add(svc, d[i], 1);
	KUNIT_EXPECT_NOT_NULL(test, test_pick(svc, htonl(0x0a090001)));
	/* Without a table, the clients spread over them, not all to one. */
	rcu_read_lock();
	want = maglev_fallback(svc, svc->sched_data, NULL, 0);
	for (k = 1; k < 100; k++)
		if (maglev_fallback(svc, svc->sched_data, NULL,
				    k * 0x9e3779b9) != want)
			break;
	rcu_read_unlock();
	KUNIT_EXPECT_NOT_NULL(test, want);
	KUNIT_EXPECT_LT(test, k, 100U);
	KUNIT_ASSERT_NOT_NULL(test, test_settle(test, svc));

	for (k = 0; k < 100; k++) {
		__be32 client = htonl(0x0a090001 + k);

		want = test_pick(svc, client);
		KUNIT_ASSERT_NOT_NULL(test, want);
		atomic_set(&want->weight, 0);
		got = test_pick(svc, client);
		KUNIT_EXPECT_NOT_NULL(test, got);
		KUNIT_EXPECT_PTR_NE(test, got, want);
		KUNIT_EXPECT_PTR_EQ(test, test_pick(svc, client), got);
		atomic_set(&want->weight, 1);
		RCU_INIT_POINTER(want->svc, other);
		got = test_pick(svc, client);
		KUNIT_EXPECT_PTR_NE(test, got, want);
		RCU_INIT_POINTER(want->svc, svc);
		KUNIT_EXPECT_PTR_EQ(test, test_pick(svc, client), want);
	}

	/* All but one drained before the table follows: every key goes there. */
	for (i = 1; i < SET_N; i++)
		test_upd(svc, d[i], 0);
	for (k = 0; k < 100; k++)
		KUNIT_EXPECT_PTR_EQ(test, test_pick(svc, htonl(0x0a090001 + k)),
				    d[0]);
	/* And a new one added before the table has it: the spare. */
	extra = test_dest4(test, 99);
	test_del(svc, d[0]);
	test_add(svc, extra, 1);
	for (k = 0; k < 100; k++)
		KUNIT_EXPECT_PTR_EQ(test, test_pick(svc, htonl(0x0a090001 + k)),
				    extra);
	test_del(svc, extra);
	KUNIT_EXPECT_NULL(test, test_pick(svc, htonl(0x0a090001)));
	test_done(svc);
	test_quiesce(test, d, SET_N);
	test_quiesce(test, &extra, 1);
}

/*
 * ipvsadm -E: a service that switches to maglev with destinations already
 * gets its table from them, as a fresh one would.
 */
static void maglev_switch_test(struct kunit *test)
{
	static const u32 w[3] = { 1, 5, 2 }, none[3];
	struct ip_vs_dest *d[3];
	struct ip_vs_service *svc;
	const struct maglev_lut *lut;
	int i, ret;

	test_builder(test);
	svc = test_service(test);
	for (i = 0; i < 3; i++) {
		d[i] = test_dest4(test, i);
		test_add(svc, d[i], w[i]);
	}
	test_done(svc);		/* unbound from maglev, bound to another */
	mutex_lock(&test_ipvs_mutex);
	ret = ip_vs_maglev_init_svc(svc);
	mutex_unlock(&test_ipvs_mutex);
	KUNIT_ASSERT_EQ(test, ret, 0);
	lut = test_settle(test, svc);
	KUNIT_ASSERT_NOT_NULL(test, lut);
	KUNIT_EXPECT_EQ(test, lut->nr, 3U);
	KUNIT_EXPECT_EQ(test, lut->table->digest,
			test_digest(test, d, w, none, 3));
	test_done(svc);
	test_quiesce(test, d, 3);
}

/*
 * The hold-off: a change right after a build waits for it, and a service
 * deleted while its build waits never builds; its references all return.
 */
static void maglev_holdoff_test(struct kunit *test)
{
	struct maglev_net *b = test_builder(test);
	struct ip_vs_service *svc;
	struct maglev_service *ms;
	const struct maglev_lut *lut;
	struct ip_vs_dest *d[2];
	unsigned long t0;
	u64 builds;

	d[0] = test_dest4(test, 0);
	d[1] = test_dest4(test, 1);
	svc = test_service(test);
	ms = svc->sched_data;
	test_add(svc, d[0], 1);
	lut = test_settle(test, svc);
	KUNIT_ASSERT_NOT_NULL(test, lut);
	WRITE_ONCE(b->holdoff_ms, 300);
	/* The build that ends now sets the next hold-off. */
	test_add(svc, d[1], 1);
	lut = test_settle(test, svc);
	KUNIT_ASSERT_NOT_NULL(test, lut);
	builds = lut->builds;
	t0 = jiffies;
	test_upd(svc, d[1], 2);
	KUNIT_EXPECT_FALSE(test, list_empty(&ms->pending_node));
	KUNIT_EXPECT_TRUE(test, time_after(READ_ONCE(ms->due),
					   t0 + msecs_to_jiffies(100)));
	lut = test_settle(test, svc);
	KUNIT_ASSERT_NOT_NULL(test, lut);
	KUNIT_EXPECT_EQ(test, lut->builds, builds + 1);
	KUNIT_EXPECT_GE(test, jiffies - t0, msecs_to_jiffies(250));
	/* Deleted while it waits: no build, no table, no reference left. */
	test_upd(svc, d[1], 3);
	KUNIT_EXPECT_FALSE(test, list_empty(&ms->pending_node));
	test_del(svc, d[0]);
	test_del(svc, d[1]);
	test_done(svc);
	test_quiesce(test, d, 2);
}

/*
 * A server over its upper threshold (IP_VS_DEST_F_OVERLOAD) takes no new
 * connection: a SYN, or a UDP datagram, is refused without flag-1 and goes
 * elsewhere with it.  A TCP packet without SYN that IPVS schedules
 * (sloppy_tcp) belongs to a connection that lives on the table's server
 * already: it goes there, whatever its load.
 */
static void maglev_overload_takeover_test(struct kunit *test)
{
	struct ip_vs_iphdr iph = { .protocol = IPPROTO_TCP, .len = 0 };
	struct ip_vs_dest *d[SET_N], *want, *got[7];
	struct ip_vs_service *svc;
	struct sk_buff *skb;
	struct tcphdr *th;
	u32 k, i;

	test_builder(test);
	svc = test_service(test);
	for (i = 0; i < SET_N; i++) {
		d[i] = test_dest4(test, i);
		test_add(svc, d[i], 1);
	}
	KUNIT_ASSERT_NOT_NULL(test, test_settle(test, svc));
	skb = alloc_skb(sizeof(*th), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	th = skb_put_zero(skb, sizeof(*th));
	th->source = htons(40000);
	th->dest = htons(80);

	for (k = 0; k < 50; k++) {
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
		got[0] = ip_vs_maglev_schedule(svc, skb, &iph);
		svc->flags |= MAGLEV_F_FALLBACK;
		got[1] = ip_vs_maglev_schedule(svc, skb, &iph);
		iph.protocol = IPPROTO_UDP;
		got[2] = ip_vs_maglev_schedule(svc, skb, &iph);
		svc->flags &= ~MAGLEV_F_FALLBACK;
		got[3] = ip_vs_maglev_schedule(svc, skb, &iph);
		iph.protocol = IPPROTO_TCP;
		th->syn = 0;
		th->ack = 1;
		got[4] = ip_vs_maglev_schedule(svc, skb, &iph);
		svc->flags |= MAGLEV_F_FALLBACK;
		got[5] = ip_vs_maglev_schedule(svc, skb, &iph);
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
	test_done(svc);
	test_quiesce(test, d, SET_N);
}

/*
 * The client hash on this kernel: the typed hsiphash helpers the scheduler
 * calls give hsiphash() of the specification's byte strings, and the
 * values tests/siphash_test.c checks maglev-sim's hsiphash against, so
 * that the kernel and maglev-sim choose alike.
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

static struct kunit_case maglev_glue_cases[] = {
	KUNIT_CASE_PARAM(maglev_name_test, name_gen_params),
	KUNIT_CASE(maglev_svc_name_test),
	KUNIT_CASE(maglev_set_order_test),
	KUNIT_CASE(maglev_trash_reuse_test),
	KUNIT_CASE(maglev_set_repair_test),
	KUNIT_CASE(maglev_fallback_test),
	KUNIT_CASE(maglev_switch_test),
	KUNIT_CASE(maglev_holdoff_test),
	KUNIT_CASE(maglev_overload_takeover_test),
	KUNIT_CASE(maglev_client_hash_test),
	{}
};

static struct kunit_suite maglev_glue_suite = {
	.name = "maglev_glue",
	.exit = test_builder_exit,
	.test_cases = maglev_glue_cases,
};

kunit_test_suite(maglev_glue_suite);
