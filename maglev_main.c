// SPDX-License-Identifier: GPL-2.0
/*
 * ip_vs_maglev - IPVS scheduler "maglev": Maglev consistent hashing
 * (Eisenbud et al., NSDI 2016) with a table that userspace can reproduce.
 *
 *	ipvsadm -A -t 10.0.0.1:80 -s maglev [-b flag-1,flag-2]
 *
 * Each service owns a lookup table built by maglev_build() (maglev_table.c)
 * from its destinations.  A backend is named after its destination,
 * "A.B.C.D:port" or "[IPv6]:port" (port in decimal), so maglev-sim reproduces
 * the table, its digest and every choice from an "ipvsadm -Ln" listing.
 *
 * Control path: the IPVS callbacks (init_service, add_dest, del_dest,
 * upd_dest, done_service) run under IPVS's global configuration mutex.  They
 * only record the change: the service's list of destination pointers is
 * updated (O(1) for an add, one pointer scan for a delete), its generation
 * "gen" goes up by one, and the service's build work is queued on the
 * module's workqueue.  Nothing there depends on the table size.  The build
 * runs later in that work item, in process context, without IPVS's mutex or
 * any lock that /proc readers or other services take:
 *
 *  1. under the service's spinlock, copy the destination pointers, take one
 *     reference on each, read their weights and last weights, and note the
 *     generation this snapshot reflects;
 *  2. read table_size and hash_seed, name the backends, allocate the new
 *     table and build it;
 *  3. publish it with rcu_assign_pointer() (under the spinlock, so it is
 *     never published for a deleted service), record its generation as
 *     "table_gen", and release the old table after a grace period.
 *
 * Changes made while a build runs queue the work again, so a burst of any
 * number of changes costs at most the running build and one more.  A
 * service's next build starts no sooner than holdoff_ms (50 ms), or the
 * duration of its last build if longer (up to 1 s), after the last one
 * ended; a change after a quiet period builds at once.  So a stream of
 * changes (say, one "ipvsadm -a" after another) costs one build per such
 * interval, not one per change, and builds take at most about half of a
 * CPU per service.
 *
 * A published table holds one reference on each of its destinations,
 * dropped when the table is freed.  A build that fails for lack of memory
 * is retried by the same work item after a delay that doubles from 10 ms
 * up to 1 s (counted in alloc_fail); any other failure (more than 65535 destinations,
 * input maglev_build() rejects) is counted in build_fail and waits for the
 * next change.  The previous table keeps serving in both cases.
 *
 * A new service starts without a table; its first build is queued at once.
 * Until it is published, schedule() picks an available destination from the
 * service's list by the key hash (O(N)), so "ipvsadm -E -s maglev" on a busy
 * service never refuses connections.
 *
 * What holds while a build is pending: a removed destination never gets a
 * new connection once "ipvsadm -d" has returned (IPVS clears its available
 * flag; a table still naming it falls back, below), and neither does one
 * whose weight was set to 0 once "ipvsadm -e" has returned; a destination
 * added gets its share when the next build publishes.
 *
 * Service deletion (done_service, under IPVS's mutex) does not wait for a
 * running build: it marks the service dead under its spinlock and cancels
 * queued work.  A build already running finishes on its own copy, sees the
 * mark and discards its result; it touches neither the IPVS service nor the
 * network namespace, only its snapshot (whose destination references keep
 * the destinations' memory alive).  The service's state is reference
 * counted (the IPVS service and each queued work item) and freed with the
 * last reference.  Module unload destroys the workqueue, which waits for
 * such builds, and then waits for the RCU callbacks.
 *
 * Draining: a destination whose weight is set to 0 is built with weight 0 and
 * drain_weight = its last positive weight (dest->last_weight, which IPVS
 * keeps for this purpose and resets when the destination is added again).
 * Only the keys that mapped to it move; restoring the weight restores the
 * previous table bit for bit.
 *
 * Scheduling: the key is the client address (the destination address for
 * inverse lookups), 4 or 16 bytes in network byte order, followed with
 * flag-2 (IP_VS_SVC_F_SCHED2) by the client port, 2 bytes in network byte
 * order.  hash = maglev_hash(key, len, seed); the slot's owner is the choice.
 * An unavailable choice falls back to a few rehashes with derived seeds and
 * then to a walk over the destinations from a hash-derived index.  A choice
 * with weight 0 or removed (the table is about to drop it) always falls
 * back, so draining never drops a connection; an overloaded one
 * (IP_VS_DEST_F_OVERLOAD) only with flag-1 (IP_VS_SVC_F_SCHED1), and without
 * it no destination is returned.
 *
 * Module parameters (0644):
 *	table_size	prime table size M in 251..5000011 (default 65537)
 *	hash_seed	64-bit seed of the key hash (default 0)
 *	holdoff_ms	least time from the end of a service's build to the
 *			start of its next, 0..10000 (default 50); applies
 *			from the next build on
 * Writing a different table_size or hash_seed queues a rebuild of every
 * maglev service in every network namespace at once (their gen goes up).
 * A service with more
 * destinations than table_size gets the smallest prime table that holds
 * them (maglev_fit_size()).
 *
 * Memory: the slot table (2 bytes per slot plus a 24-byte header) is one
 * allocation, the destination pointers and backends another, the table's
 * descriptor a third.  Each is kmalloc()ed up to a page and vmalloc()ed
 * above, so a table costs its size rounded up to a page, not to the next
 * power of two.  Nothing is zeroed that the build overwrites.
 *
 * /proc/net/ip_vs_maglev (per network namespace, read-only) lists the maglev
 * services of the reader's namespace, one "service" line each followed by
 * one "dest" line per destination of the published table in name order (the
 * backend index order of the table).  It is a seq_file iterator over the
 * namespace's service list under RCU: readers never block a configuration
 * change or a build.  Fields are separated by single spaces; every value
 * follows its keyword:
 *
 *	service PROTO VIP size M seed S flags 0xF dests N builds B churn C
 *		build_ns T alloc_fail A build_fail E digest D pending P
 *		gen G table_gen TG mem MB
 *	  dest NAME weight W slots K
 *
 * (the service line is one line, wrapped here only).
 *	PROTO	TCP, UDP or SCTP (then VIP is "A.B.C.D:port" or
 *		"[IPv6]:port"), FWM (IPv4 fwmark service) or FWM6 (IPv6
 *		fwmark service; then VIP is the decimal mark)
 *	M, S	table size and hash seed the published table was built with
 *	F	the service's scheduler flags in hex: 0x8 flag-1 (fallback),
 *		0x10 flag-2 (port hashing), 0x20 flag-3 (unused)
 *	N	destinations in the published table
 *	B	tables built and published since the service was created
 *	C	slots whose owner changed in the last build (the first build
 *		counts its filled slots)
 *	T	duration of the last maglev_build() call in nanoseconds
 *	A	builds that failed for lack of memory (each is retried)
 *	E	builds that failed for any other reason
 *	D	digest of the published table, 16 lower-case hex digits
 *	P	1 while a change is not yet in the published table (a build is
 *		queued, running, waiting to retry, or failed), else 0
 *	G	configuration changes the service has seen: 1 at creation, +1
 *		for each add_dest, del_dest, upd_dest and each parameter
 *		write that changes table_size or hash_seed
 *	TG	the G the published table was built from (0: none yet)
 *	MB	bytes the published table occupies as allocated: its
 *		descriptor (ksize()), its destinations and backends and its
 *		slot table (ksize() below a page, whole pages above)
 *	NAME	backend name, "A.B.C.D:port" or "[IPv6]:port"
 *	W	weight the table was built with (0: drained or added with 0)
 *	K	slots the destination owns
 *
 * Until its first table is published a service shows size 0, seed 0,
 * dests 0, builds 0, digest 0000000000000000, table_gen 0 and mem 0.
 *
 * Caught up: a controller that changed the configuration waits until every
 * service it cares about shows pending 0 (equivalently table_gen equal to
 * gen); the listing then describes the configuration as of that change or
 * later.  pending stays 1 after a build_fail until the next change.
 *
 * Example (the first line again wrapped here only):
 *	service TCP 10.0.0.1:80 size 65537 seed 0 flags 0x0 dests 2 builds 3
 *		churn 32768 build_ns 812345 alloc_fail 0 build_fail 0
 *		digest 0123456789abcdef pending 0 gen 3 table_gen 3 mem 135168
 *	  dest 10.0.0.2:80 weight 1 slots 32769
 *	  dest 10.0.0.3:80 weight 1 slots 32768
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/overflow.h>
#include <linux/rcupdate.h>
#include <linux/rculist.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/refcount.h>
#include <linux/workqueue.h>
#include <linux/list.h>
#include <linux/ktime.h>
#include <linux/skbuff.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/seq_file_net.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/ip_vs.h>

#include "maglev_table.h"

#define MAGLEV_F_FALLBACK	IP_VS_SVC_F_SCHED1
#define MAGLEV_F_PORT		IP_VS_SVC_F_SCHED2
#define MAGLEV_F_SCHED		(IP_VS_SVC_F_SCHED1 | IP_VS_SVC_F_SCHED2 | \
				 IP_VS_SVC_F_SCHED3)

/* Rehashes tried by the fallback before it walks the destinations. */
#define MAGLEV_FALLBACK_TRIES	4
/* Added to the seed for each fallback rehash (2^64 / golden ratio). */
#define MAGLEV_SEED_STEP	0x9e3779b97f4a7c15ULL

/* Longest service description, "FWM6 4294967295" or "SCTP [v6]:65535". */
#define MAGLEV_SVC_NAME_MAX	(8 + MAGLEV_NAME_MAX)

/* Retry delays of a build that ran out of memory. */
#define MAGLEV_RETRY_MIN	msecs_to_jiffies(10)
#define MAGLEV_RETRY_MAX	msecs_to_jiffies(1000)

/*
 * A service's builds start at least holdoff_ms, and at least the duration
 * of its last build (up to MAGLEV_HOLDOFF_LONG), after the end of the
 * previous one; a change after a quiet period builds at once.
 */
#define MAGLEV_HOLDOFF_DEFAULT	50
#define MAGLEV_HOLDOFF_MAX_MS	10000
#define MAGLEV_HOLDOFF_LONG	msecs_to_jiffies(1000)

/* Smallest capacity of a service's destination list. */
#define MAGLEV_CFG_MIN		8

/*
 * Name the scheduler registers with IPVS.  "make MH_COMPAT=1" builds the
 * same scheduler as ip_vs_mh.ko registering "mh", for control planes that
 * accept only the names they know.
 */
#ifndef MAGLEV_SCHED_NAME
#define MAGLEV_SCHED_NAME	"maglev"
#endif

static unsigned int maglev_table_size = MAGLEV_SIZE_DEFAULT;
static unsigned int maglev_holdoff_ms = MAGLEV_HOLDOFF_DEFAULT;
static u64 maglev_hash_seed;
static unsigned int maglev_net_id __read_mostly;
static struct workqueue_struct *maglev_wq;

/* Every maglev service of every namespace, for parameter changes. */
static LIST_HEAD(maglev_all);
static DEFINE_MUTEX(maglev_all_lock);

/**
 * struct maglev_lut - a published lookup table with its destinations
 * @rcu: frees the table (and drops the destination references) after a
 *	grace period
 * @seed: hash seed the lookups of this table use
 * @nr: number of destinations (backends)
 * @churn: slots whose owner changed against the previous table
 * @builds: tables published for the service, this one included
 * @build_ns: duration of maglev_build() for this table
 * @gen: generation of the configuration snapshot it was built from
 * @mem: bytes allocated for this table (see the top comment)
 * @table: the slot table; entries index @dest and @be
 * @dest: the destinations in backend (name) order, one reference each
 * @be: the backends the table was built from, for /proc and churn
 *
 * Immutable once published.
 */
struct maglev_lut {
	struct rcu_head rcu;
	u64 seed;
	u32 nr;
	u32 churn;
	u64 builds;
	u64 build_ns;
	u64 gen;
	size_t mem;
	struct maglev_table *table;
	struct ip_vs_dest **dest;
	struct maglev_backend *be;
};

/**
 * struct maglev_service - per-service scheduler state (svc->sched_data)
 * @node: entry in the namespace's service list (RCU, maglev_net.lock)
 * @all: entry in maglev_all, under maglev_all_lock
 * @svc: the IPVS service; used by the callbacks and /proc only
 * @lut: the published table, or NULL before the first build; written by
 *	the build work under @lock, read under RCU
 * @lock: protects @cfg, @nr, @cap, @gen, @table_gen, @dead, @retry,
 *	@next_build and publishing
 * @cfg: the service's destinations (no references: a destination is on
 *	this list only while IPVS has it linked to the service)
 * @nr: entries in @cfg
 * @cap: capacity of @cfg
 * @gen: configuration changes seen
 * @table_gen: @gen of the snapshot the published table was built from
 * @dead: set by done_service; no build is queued or published after it
 * @ref: one for the IPVS service, one for each queued build work
 * @work: the build work (delayed by the hold-off or an ENOMEM retry)
 * @retry: current retry delay in jiffies, 0 when not retrying
 * @next_build: jiffies before which no build starts (the hold-off)
 * @alloc_fail: builds that failed for lack of memory
 * @build_fail: builds that failed for any other reason
 * @name: service description for messages, "TCP 10.0.0.1:80"
 * @rcu: frees this structure after a grace period
 */
struct maglev_service {
	struct list_head node;
	struct list_head all;
	struct ip_vs_service *svc;
	struct maglev_lut __rcu *lut;
	spinlock_t lock;	/* see above */
	struct ip_vs_dest **cfg;
	u32 nr;
	u32 cap;
	u64 gen;
	u64 table_gen;
	bool dead;
	refcount_t ref;
	struct delayed_work work;
	unsigned long retry;
	unsigned long next_build;
	u64 alloc_fail;
	u64 build_fail;
	char name[MAGLEV_SVC_NAME_MAX];
	struct rcu_head rcu;
};

/**
 * struct maglev_net - per network namespace state
 * @lock: serialises changes of @services (readers use RCU)
 * @services: the namespace's maglev services (struct maglev_service)
 */
struct maglev_net {
	spinlock_t lock;	/* protects services (writers) */
	struct list_head services;
};

static struct maglev_net *maglev_pernet(struct net *net)
{
	return net_generic(net, maglev_net_id);
}

static void maglev_rebuild_all(void);

/* Module parameters */

static int maglev_size_set(const char *val, const struct kernel_param *kp)
{
	const char *why = NULL;
	unsigned int size, old = *(unsigned int *)kp->arg;
	int ret;

	ret = kstrtouint(val, 0, &size);
	if (ret) {
		pr_err("table_size: not an unsigned number\n");
		return -EINVAL;
	}
	ret = maglev_check_size(size, &why);
	if (ret) {
		pr_err("table_size %u rejected: %s\n", size,
		       why ? why : "invalid size");
		return -EINVAL;
	}
	*(unsigned int *)kp->arg = size;
	if (size != old)
		maglev_rebuild_all();
	return 0;
}

static const struct kernel_param_ops maglev_size_ops = {
	.set = maglev_size_set,
	.get = param_get_uint,
};

static int maglev_seed_set(const char *val, const struct kernel_param *kp)
{
	u64 old = *(u64 *)kp->arg;
	int ret;

	ret = param_set_ullong(val, kp);
	if (!ret && *(u64 *)kp->arg != old)
		maglev_rebuild_all();
	return ret;
}

static const struct kernel_param_ops maglev_seed_ops = {
	.set = maglev_seed_set,
	.get = param_get_ullong,
};

static int maglev_holdoff_set(const char *val, const struct kernel_param *kp)
{
	unsigned int ms;

	if (kstrtouint(val, 0, &ms) || ms > MAGLEV_HOLDOFF_MAX_MS) {
		pr_err("holdoff_ms: not a number of milliseconds in 0..%u\n",
		       MAGLEV_HOLDOFF_MAX_MS);
		return -EINVAL;
	}
	WRITE_ONCE(*(unsigned int *)kp->arg, ms);
	return 0;
}

static const struct kernel_param_ops maglev_holdoff_ops = {
	.set = maglev_holdoff_set,
	.get = param_get_uint,
};

module_param_cb(table_size, &maglev_size_ops, &maglev_table_size, 0644);
MODULE_PARM_DESC(table_size,
		 "lookup table size, a prime in 251..5000011 (default 65537); a change rebuilds every service");
module_param_cb(hash_seed, &maglev_seed_ops, &maglev_hash_seed, 0644);
MODULE_PARM_DESC(hash_seed,
		 "64-bit seed of the client key hash (default 0); a change rebuilds every service");
module_param_cb(holdoff_ms, &maglev_holdoff_ops, &maglev_holdoff_ms, 0644);
MODULE_PARM_DESC(holdoff_ms,
		 "least time in ms from the end of a service's build to the start of its next (0..10000, default 50)");

/* Names */

static int maglev_addr_name(char *buf, size_t len, int af,
			    const union nf_inet_addr *addr, __be16 port)
{
	/* The one formatter maglev-sim uses too: inet_ntop()'s text. */
	int n = maglev_format_name(buf, len, addr, af == AF_INET6 ? 16 : 4,
				   ntohs(port));

	return WARN_ON_ONCE(n < 0) ? 0 : n;
}

static void maglev_svc_name(char *buf, size_t len,
			    const struct ip_vs_service *svc)
{
	const char *proto;
	int n;

	if (svc->fwmark) {
		scnprintf(buf, len, "%s %u",
			  svc->af == AF_INET6 ? "FWM6" : "FWM", svc->fwmark);
		return;
	}
	switch (svc->protocol) {
	case IPPROTO_TCP:
		proto = "TCP";
		break;
	case IPPROTO_UDP:
		proto = "UDP";
		break;
	case IPPROTO_SCTP:
		proto = "SCTP";
		break;
	default:
		proto = NULL;
		break;
	}
	if (proto)
		n = scnprintf(buf, len, "%s ", proto);
	else
		n = scnprintf(buf, len, "P%u ", svc->protocol);
	maglev_addr_name(buf + n, len - n, svc->af, &svc->addr, svc->port);
}

/* Table life cycle */

/*
 * Allocate @bytes for a table part and add what it really occupies to
 * *@acct: kmalloc() (its bucket, ksize()) up to a page, vmalloc() (whole
 * pages) above, so that a large table does not pay for the next power of
 * two.  Not zeroed.  Freed with kvfree().
 */
static void *maglev_mem_alloc(size_t bytes, size_t *acct)
{
	void *p;

	if (bytes <= PAGE_SIZE) {
		p = kmalloc(bytes, GFP_KERNEL | __GFP_NOWARN);
		if (p)
			*acct += ksize(p);
	} else {
		p = __vmalloc(bytes, GFP_KERNEL | __GFP_NOWARN);
		if (p)
			*acct += PAGE_ALIGN(bytes);
	}
	return p;
}

/* A table descriptor with room for @nr destinations; no table yet. */
static struct maglev_lut *maglev_lut_alloc(u32 nr)
{
	struct maglev_lut *lut;
	size_t bytes;

	lut = kmalloc(sizeof(*lut), GFP_KERNEL | __GFP_NOWARN);
	if (!lut)
		return NULL;
	lut->mem = ksize(lut);
	lut->nr = 0;
	lut->table = NULL;
	bytes = size_add(array_size(nr, sizeof(*lut->dest)),
			 array_size(nr, sizeof(*lut->be)));
	lut->dest = maglev_mem_alloc(bytes, &lut->mem);
	if (!lut->dest) {
		kfree(lut);
		return NULL;
	}
	lut->be = (struct maglev_backend *)(lut->dest + nr);
	return lut;
}

/* Free a table that holds references on its first lut->nr destinations. */
static void maglev_lut_free(struct maglev_lut *lut)
{
	u32 i;

	/*
	 * A removed destination lives in the IPVS trash until its last
	 * reference is gone; whoever drops that reference frees it.
	 */
	for (i = 0; i < lut->nr; i++)
		ip_vs_dest_put_and_free(lut->dest[i]);
	kvfree(lut->table);
	kvfree(lut->dest);
	kfree(lut);
}

static void maglev_lut_free_rcu(struct rcu_head *head)
{
	maglev_lut_free(container_of(head, struct maglev_lut, rcu));
}

static void maglev_put(struct maglev_service *ms)
{
	struct maglev_lut *lut;

	if (!refcount_dec_and_test(&ms->ref))
		return;
	/* Last reference: no build runs and none is queued. */
	lut = rcu_dereference_protected(ms->lut, true);
	if (lut)
		call_rcu(&lut->rcu, maglev_lut_free_rcu);
	kvfree(ms->cfg);
	kfree_rcu(ms, rcu);
}

/* Queue @ms's build after @delay jiffies.  Context: @ms->lock held. */
static void maglev_queue(struct maglev_service *ms, unsigned long delay)
{
	lockdep_assert_held(&ms->lock);
	if (!ms->dead && queue_delayed_work(maglev_wq, &ms->work, delay))
		refcount_inc(&ms->ref);
}

/* Record a configuration change of @ms and queue its build. */
static void maglev_changed(struct maglev_service *ms)
{
	unsigned long now = jiffies;

	spin_lock(&ms->lock);
	ms->gen++;
	/* No effect if the work is already waiting (hold-off or retry). */
	maglev_queue(ms, time_before(now, ms->next_build) ?
			 ms->next_build - now : 0);
	spin_unlock(&ms->lock);
}

/* Parameters changed: rebuild every service of every namespace. */
static void maglev_rebuild_all(void)
{
	struct maglev_service *ms;

	mutex_lock(&maglev_all_lock);
	list_for_each_entry(ms, &maglev_all, all)
		maglev_changed(ms);
	mutex_unlock(&maglev_all_lock);
}

/*
 * maglev_snapshot() - copy @ms's destinations into a new table descriptor
 *
 * Takes a reference on each destination and reads its weights under
 * @ms->lock, so the backends are the service's destinations at one instant
 * (IPVS makes its changes one at a time, each followed by its callback).
 * Returns NULL with *@err set: -ENOMEM, or -ESHUTDOWN for a dead service.
 */
static struct maglev_lut *maglev_snapshot(struct maglev_service *ms,
					  u64 *gen, int *err)
{
	struct maglev_lut *lut;
	u32 room, i;

	spin_lock(&ms->lock);
	room = ms->nr;
	for (;;) {
		spin_unlock(&ms->lock);
		lut = maglev_lut_alloc(room);
		if (!lut) {
			*err = -ENOMEM;
			return NULL;
		}
		spin_lock(&ms->lock);
		if (ms->dead || ms->nr <= room)
			break;
		/* Destinations were added meanwhile; try again. */
		room = ms->nr;
		spin_unlock(&ms->lock);
		maglev_lut_free(lut);
		spin_lock(&ms->lock);
	}
	if (ms->dead) {
		spin_unlock(&ms->lock);
		maglev_lut_free(lut);
		*err = -ESHUTDOWN;
		return NULL;
	}
	*gen = ms->gen;
	for (i = 0; i < ms->nr; i++) {
		struct ip_vs_dest *dest = ms->cfg[i];
		struct maglev_backend *b = &lut->be[i];
		int weight = atomic_read(&dest->weight);

		ip_vs_dest_hold(dest);
		lut->dest[i] = dest;
		b->priv = dest;
		/* IPVS allows weights up to INT_MAX. */
		b->weight = max(weight, 0);
		b->drain_weight = b->weight ? 0 :
				  max(atomic_read(&dest->last_weight), 0);
	}
	lut->nr = ms->nr;
	spin_unlock(&ms->lock);

	for (i = 0; i < lut->nr; i++) {
		struct maglev_backend *b = &lut->be[i];
		const struct ip_vs_dest *dest = lut->dest[i];

		b->name_len = maglev_addr_name(b->name, sizeof(b->name),
					       dest->af, &dest->addr,
					       dest->port);
	}
	return lut;
}

/**
 * maglev_build_table() - build and publish a new table for a service
 * @ms: the service's state; the caller holds a reference
 *
 * Snapshots the destinations, builds the table with the current module
 * parameters in new memory and swaps it in.  On failure the published
 * table (if any) is left alone and keeps serving.
 *
 * Context: process context (the build work), no locks held; sleeps.
 * Return: 0, -ESHUTDOWN for a dead service, or the build's negative errno.
 */
static int maglev_build_table(struct maglev_service *ms)
{
	struct maglev_lut *lut, *old;
	struct maglev_stats st = {};
	const char *why = NULL;
	void *work = NULL;
	u64 seed, t0, gen = 0;
	u32 size, nr = 0, i;
	int ret;

	lut = maglev_snapshot(ms, &gen, &ret);
	if (!lut)
		goto fail;
	nr = lut->nr;

	kernel_param_lock(THIS_MODULE);
	size = maglev_table_size;
	seed = maglev_hash_seed;
	kernel_param_unlock(THIS_MODULE);

	/* Only this work replaces the table, and it never runs twice at once. */
	old = rcu_dereference_protected(ms->lut, true);

	ret = -E2BIG;
	why = "too many destinations";
	if (nr > MAGLEV_MAX_BACKENDS)
		goto fail_lut;
	size = maglev_fit_size(size, nr);

	ret = -ENOMEM;
	why = "out of memory";
	lut->table = maglev_mem_alloc(maglev_table_bytes(size), &lut->mem);
	if (!lut->table)
		goto fail_lut;
	/* The scratch area serves maglev_build() and then maglev_churn(). */
	work = kvmalloc(maglev_work_bytes(size, max(nr, old ? old->nr : 0)),
			GFP_KERNEL | __GFP_NOWARN);
	if (!work)
		goto fail_lut;

	why = NULL;
	t0 = ktime_get_ns();
	ret = maglev_build(lut->table, size, lut->be, nr, work, &st, &why);
	lut->build_ns = ktime_get_ns() - t0;
	if (ret)
		goto fail_lut;

	/* maglev_build() sorted the backends; the references follow them. */
	for (i = 0; i < nr; i++)
		lut->dest[i] = lut->be[i].priv;
	lut->seed = seed;
	lut->gen = gen;
	lut->builds = old ? old->builds + 1 : 1;
	if (old)
		lut->churn = maglev_churn(old->table, old->be, old->nr,
					  lut->table, lut->be, lut->nr, work);
	else
		lut->churn = lut->table->nr_filled;
	kvfree(work);

	spin_lock(&ms->lock);
	if (ms->dead) {
		spin_unlock(&ms->lock);
		maglev_lut_free(lut);
		return -ESHUTDOWN;
	}
	rcu_assign_pointer(ms->lut, lut);
	ms->table_gen = gen;
	spin_unlock(&ms->lock);

	if (old)
		call_rcu(&old->rcu, maglev_lut_free_rcu);
	return 0;

fail_lut:
	kvfree(work);
	maglev_lut_free(lut);
fail:
	if (ret == -ESHUTDOWN)
		return ret;
	if (ret == -ENOMEM)
		WRITE_ONCE(ms->alloc_fail, ms->alloc_fail + 1);
	else
		WRITE_ONCE(ms->build_fail, ms->build_fail + 1);
	pr_warn_ratelimited("%s: table build (%u dests) failed: %s (%d)%s\n",
			    ms->name, nr, why ? why : "out of memory", ret,
			    ret == -ENOMEM ? "; retrying" : "");
	return ret;
}

static void maglev_build_work(struct work_struct *work)
{
	struct maglev_service *ms = container_of(to_delayed_work(work),
						 struct maglev_service, work);
	unsigned long start = jiffies;
	int ret;

	spin_lock(&ms->lock);
	if (!ms->dead && time_before(start, ms->next_build)) {
		/* Too soon after the last build: gather more changes. */
		maglev_queue(ms, ms->next_build - start);
		spin_unlock(&ms->lock);
		maglev_put(ms);
		return;
	}
	spin_unlock(&ms->lock);

	ret = maglev_build_table(ms);

	spin_lock(&ms->lock);
	ms->next_build = jiffies +
			 max(min(jiffies - start, MAGLEV_HOLDOFF_LONG),
			     msecs_to_jiffies(READ_ONCE(maglev_holdoff_ms)));
	if (ret == -ENOMEM) {
		ms->retry = ms->retry ? min(ms->retry * 2, MAGLEV_RETRY_MAX) :
					MAGLEV_RETRY_MIN;
		/* A change queued meanwhile keeps its earlier time. */
		maglev_queue(ms, ms->retry);
	} else {
		ms->retry = 0;
	}
	spin_unlock(&ms->lock);
	maglev_put(ms);
}

/* Make room for one more destination in @ms->cfg.  IPVS mutex held. */
static void maglev_cfg_grow(struct maglev_service *ms)
{
	struct ip_vs_dest **cfg, **old;
	u32 cap;

	if (ms->nr < ms->cap)
		return;
	cap = max(ms->cap * 2, MAGLEV_CFG_MIN);
	cfg = kvmalloc_array(cap, sizeof(*cfg), GFP_KERNEL | __GFP_NOWARN);
	if (!cfg)
		/*
		 * IPVS has added the destination already and ignores our
		 * return value: this small list must not lose it.
		 */
		cfg = kvmalloc_array(cap, sizeof(*cfg),
				     GFP_KERNEL | __GFP_NOFAIL);
	spin_lock(&ms->lock);
	memcpy(cfg, ms->cfg, ms->nr * sizeof(*cfg));
	old = ms->cfg;
	ms->cfg = cfg;
	ms->cap = cap;
	spin_unlock(&ms->lock);
	kvfree(old);
}

/**
 * ip_vs_maglev_init_svc() - set up a service that starts using maglev
 * @svc: the service, possibly with destinations already (ipvsadm -E)
 *
 * Records the destinations and queues the first build; until it publishes,
 * schedule() picks from the destination list.
 *
 * Context: process context, IPVS configuration mutex held.
 * Return: 0, or -ENOMEM.
 */
static int ip_vs_maglev_init_svc(struct ip_vs_service *svc)
{
	struct maglev_net *mn = maglev_pernet(svc->ipvs->net);
	struct maglev_service *ms;
	struct ip_vs_dest *dest;

	ms = kzalloc(sizeof(*ms), GFP_KERNEL | __GFP_NOWARN);
	if (!ms)
		return -ENOMEM;
	ms->cap = max_t(u32, roundup_pow_of_two(svc->num_dests + 1),
			MAGLEV_CFG_MIN);
	ms->cfg = kvmalloc_array(ms->cap, sizeof(*ms->cfg),
				 GFP_KERNEL | __GFP_NOWARN);
	if (!ms->cfg) {
		kfree(ms);
		return -ENOMEM;
	}
	list_for_each_entry(dest, &svc->destinations, n_list) {
		if (WARN_ON_ONCE(ms->nr == ms->cap))
			break;
		ms->cfg[ms->nr++] = dest;
	}
	ms->svc = svc;
	spin_lock_init(&ms->lock);
	refcount_set(&ms->ref, 1);
	INIT_DELAYED_WORK(&ms->work, maglev_build_work);
	ms->next_build = jiffies;
	maglev_svc_name(ms->name, sizeof(ms->name), svc);
	ms->gen = 1;

	svc->sched_data = ms;
	spin_lock(&mn->lock);
	list_add_tail_rcu(&ms->node, &mn->services);
	spin_unlock(&mn->lock);
	mutex_lock(&maglev_all_lock);
	list_add_tail(&ms->all, &maglev_all);
	mutex_unlock(&maglev_all_lock);

	spin_lock(&ms->lock);
	maglev_queue(ms, 0);
	spin_unlock(&ms->lock);
	return 0;
}

/**
 * ip_vs_maglev_done_svc() - release a service's scheduler state
 * @svc: the service, being deleted or switched to another scheduler
 *
 * Does not wait for a running build (see the top comment).  Schedulers
 * still running on another CPU and /proc readers may use the state until a
 * grace period has passed, so everything is freed through RCU.
 *
 * Context: process context, IPVS configuration mutex held.
 */
static void ip_vs_maglev_done_svc(struct ip_vs_service *svc)
{
	struct maglev_net *mn = maglev_pernet(svc->ipvs->net);
	struct maglev_service *ms = svc->sched_data;
	bool queued;

	mutex_lock(&maglev_all_lock);
	list_del(&ms->all);
	mutex_unlock(&maglev_all_lock);
	spin_lock(&mn->lock);
	list_del_rcu(&ms->node);
	spin_unlock(&mn->lock);

	spin_lock(&ms->lock);
	ms->dead = true;
	spin_unlock(&ms->lock);
	queued = cancel_delayed_work(&ms->work);
	if (queued)
		maglev_put(ms);
	maglev_put(ms);
}

static int ip_vs_maglev_add_dest(struct ip_vs_service *svc,
				 struct ip_vs_dest *dest)
{
	struct maglev_service *ms = svc->sched_data;

	maglev_cfg_grow(ms);
	spin_lock(&ms->lock);
	ms->cfg[ms->nr++] = dest;
	spin_unlock(&ms->lock);
	maglev_changed(ms);
	return 0;
}

static int ip_vs_maglev_del_dest(struct ip_vs_service *svc,
				 struct ip_vs_dest *dest)
{
	struct maglev_service *ms = svc->sched_data;
	u32 i;

	spin_lock(&ms->lock);
	for (i = 0; i < ms->nr; i++) {
		if (ms->cfg[i] == dest) {
			/* The order does not matter: builds sort by name. */
			ms->cfg[i] = ms->cfg[--ms->nr];
			break;
		}
	}
	spin_unlock(&ms->lock);
	maglev_changed(ms);
	return 0;
}

static int ip_vs_maglev_upd_dest(struct ip_vs_service *svc,
				 struct ip_vs_dest *dest)
{
	maglev_changed(svc->sched_data);
	return 0;
}

/*
 * Weight 0 or removed: the next table drops the destination (or a build
 * failed and the table still names it).  Its new connections always go
 * elsewhere.
 */
static bool maglev_dest_retired(const struct ip_vs_dest *dest)
{
	return atomic_read(&dest->weight) <= 0 ||
	       !(dest->cflags & IP_VS_DEST_CF_AVAILABLE);
}

static bool maglev_dest_unavailable(const struct ip_vs_dest *dest)
{
	return maglev_dest_retired(dest) ||
	       dest->flags & IP_VS_DEST_F_OVERLOAD;
}

/* Client port of a TCP, UDP or SCTP packet in network order, 0 otherwise. */
static __be16 maglev_client_port(const struct sk_buff *skb,
				 const struct ip_vs_iphdr *iph)
{
	__be16 buf[2];
	const __be16 *ports;

	if (iph->protocol != IPPROTO_TCP && iph->protocol != IPPROTO_UDP &&
	    iph->protocol != IPPROTO_SCTP)
		return 0;
	/* Source and destination port lead all three headers. */
	ports = skb_header_pointer(skb, iph->len, sizeof(buf), buf);
	if (unlikely(!ports))
		return 0;
	return ip_vs_iph_inverse(iph) ? ports[1] : ports[0];
}

static struct ip_vs_dest *maglev_fallback(const struct maglev_lut *lut,
					  const u8 *key, unsigned int len,
					  u64 hash)
{
	struct ip_vs_dest *dest;
	u32 i, idx;

	for (i = 1; i <= MAGLEV_FALLBACK_TRIES; i++) {
		u64 h = maglev_hash(key, len, lut->seed + i * MAGLEV_SEED_STEP);

		idx = maglev_lookup(lut->table, h);
		if (idx >= lut->nr)
			return NULL;
		dest = lut->dest[idx];
		if (!maglev_dest_unavailable(dest))
			return dest;
	}

	/* Bounded: one pass over the N destinations, not the M slots. */
	idx = (u32)(((hash & 0xffffffff) * lut->nr) >> 32);
	for (i = 0; i < lut->nr; i++) {
		dest = lut->dest[idx];
		if (!maglev_dest_unavailable(dest))
			return dest;
		if (++idx == lut->nr)
			idx = 0;
	}
	return NULL;
}

/*
 * No table yet (its first build is pending): an available destination from
 * the service's list, starting at a hash-derived position.  O(N), only
 * until the first table is published.
 */
static struct ip_vs_dest *maglev_pick_any(struct ip_vs_service *svc, u64 hash)
{
	u32 n = READ_ONCE(svc->num_dests), skip;
	struct ip_vs_dest *dest, *first = NULL;

	skip = (u32)(((hash & 0xffffffff) * n) >> 32);
	list_for_each_entry_rcu(dest, &svc->destinations, n_list) {
		if (maglev_dest_unavailable(dest))
			continue;
		if (!first)
			first = dest;
		if (!skip)
			return dest;
		skip--;
	}
	return first;
}

/**
 * ip_vs_maglev_schedule() - pick the destination of a new connection
 * @svc: the service
 * @skb: the packet
 * @iph: its parsed IP header
 *
 * One hash and one table load; with flag-1 a bounded fallback when the
 * chosen destination is unavailable.
 *
 * Context: softirq or process context, RCU read lock held.
 * Return: the destination, or NULL (after ip_vs_scheduler_err()).
 */
static struct ip_vs_dest *
ip_vs_maglev_schedule(struct ip_vs_service *svc, const struct sk_buff *skb,
		      struct ip_vs_iphdr *iph)
{
	struct maglev_service *ms = svc->sched_data;
	const union nf_inet_addr *addr;
	u8 key[sizeof(struct in6_addr) + sizeof(__be16)];
	const struct maglev_lut *lut;
	struct ip_vs_dest *dest;
	unsigned int len;
	u64 hash;
	u32 idx;

	lut = rcu_dereference(ms->lut);
	addr = ip_vs_iph_inverse(iph) ? &iph->daddr : &iph->saddr;
	if (svc->af == AF_INET6) {
		memcpy(key, &addr->in6, sizeof(addr->in6));
		len = sizeof(addr->in6);
	} else {
		memcpy(key, &addr->ip, sizeof(addr->ip));
		len = sizeof(addr->ip);
	}
	if (svc->flags & MAGLEV_F_PORT) {
		__be16 port = maglev_client_port(skb, iph);

		memcpy(key + len, &port, sizeof(port));
		len += sizeof(port);
	}

	if (unlikely(!lut)) {
		dest = maglev_pick_any(svc, maglev_hash(key, len, 0));
		goto out;
	}
	hash = maglev_hash(key, len, lut->seed);
	idx = maglev_lookup(lut->table, hash);
	dest = idx < lut->nr ? lut->dest[idx] : NULL;
	if (dest && maglev_dest_unavailable(dest))
		dest = (svc->flags & MAGLEV_F_FALLBACK) ||
		       maglev_dest_retired(dest) ?
		       maglev_fallback(lut, key, len, hash) : NULL;
out:
	if (!dest) {
		ip_vs_scheduler_err(svc, "no destination available");
		return NULL;
	}
	return dest;
}

/* /proc/net/ip_vs_maglev */

static void maglev_show_service(struct seq_file *seq,
				const struct maglev_service *ms)
{
	static const struct maglev_table none = {};
	const struct maglev_table *t = &none;
	const struct maglev_lut *lut;
	u64 gen, table_gen;
	u32 i, nr = 0;

	/* table_gen first: a build publishing meanwhile only lowers P. */
	table_gen = READ_ONCE(ms->table_gen);
	gen = READ_ONCE(ms->gen);
	lut = rcu_dereference(ms->lut);
	if (lut) {
		t = lut->table;
		nr = lut->nr;
	}
	seq_printf(seq,
		   "service %s size %u seed %llu flags 0x%x dests %u builds %llu churn %u build_ns %llu alloc_fail %llu build_fail %llu digest %016llx pending %u gen %llu table_gen %llu mem %zu\n",
		   ms->name, t->size, lut ? lut->seed : 0,
		   READ_ONCE(ms->svc->flags) & MAGLEV_F_SCHED, nr,
		   lut ? lut->builds : 0, lut ? lut->churn : 0,
		   lut ? lut->build_ns : 0, READ_ONCE(ms->alloc_fail),
		   READ_ONCE(ms->build_fail), t->digest, gen != table_gen,
		   gen, table_gen, lut ? lut->mem : 0);
	for (i = 0; i < nr; i++) {
		const struct maglev_backend *b = &lut->be[i];

		seq_printf(seq, "  dest %.*s weight %u slots %u\n",
			   (int)b->name_len, b->name, b->weight, b->slots);
	}
}

/* One record per service of the reader's namespace, under RCU. */
static void *maglev_seq_start(struct seq_file *seq, loff_t *pos)
	__acquires(RCU)
{
	struct maglev_net *mn = maglev_pernet(seq_file_net(seq));
	struct maglev_service *ms;
	loff_t n = *pos;

	rcu_read_lock();
	list_for_each_entry_rcu(ms, &mn->services, node)
		if (n-- == 0)
			return ms;
	return NULL;
}

static void *maglev_seq_next(struct seq_file *seq, void *v, loff_t *pos)
{
	struct maglev_net *mn = maglev_pernet(seq_file_net(seq));
	struct maglev_service *ms = v;
	struct list_head *next;

	++*pos;
	next = rcu_dereference(list_next_rcu(&ms->node));
	if (next == &mn->services)
		return NULL;
	return list_entry(next, struct maglev_service, node);
}

static void maglev_seq_stop(struct seq_file *seq, void *v)
	__releases(RCU)
{
	rcu_read_unlock();
}

static int maglev_seq_show(struct seq_file *seq, void *v)
{
	maglev_show_service(seq, v);
	return 0;
}

static const struct seq_operations maglev_seq_ops = {
	.start = maglev_seq_start,
	.next = maglev_seq_next,
	.stop = maglev_seq_stop,
	.show = maglev_seq_show,
};

/* Registration */

static int __net_init maglev_net_init(struct net *net)
{
	struct maglev_net *mn = maglev_pernet(net);

	spin_lock_init(&mn->lock);
	INIT_LIST_HEAD(&mn->services);
	if (IS_ENABLED(CONFIG_PROC_FS) &&
	    !proc_create_net("ip_vs_maglev", 0444, net->proc_net,
			     &maglev_seq_ops, sizeof(struct seq_net_private)))
		return -ENOMEM;
	return 0;
}

static void __net_exit maglev_net_exit(struct net *net)
{
	/*
	 * IPVS flushes the namespace's services (done_service) from its own
	 * pernet exit, after this one; the list and its lock live in the
	 * pernet storage, which is freed only after every exit method ran.
	 * Builds still running then touch only their own memory.
	 */
	remove_proc_entry("ip_vs_maglev", net->proc_net);
}

static struct pernet_operations maglev_net_ops = {
	.init = maglev_net_init,
	.exit = maglev_net_exit,
	.id = &maglev_net_id,
	.size = sizeof(struct maglev_net),
};

static struct ip_vs_scheduler ip_vs_maglev_scheduler = {
	.name =			MAGLEV_SCHED_NAME,
	.refcnt =		ATOMIC_INIT(0),
	.module =		THIS_MODULE,
	.n_list =		LIST_HEAD_INIT(ip_vs_maglev_scheduler.n_list),
	.init_service =		ip_vs_maglev_init_svc,
	.done_service =		ip_vs_maglev_done_svc,
	.add_dest =		ip_vs_maglev_add_dest,
	.del_dest =		ip_vs_maglev_del_dest,
	.upd_dest =		ip_vs_maglev_upd_dest,
	.schedule =		ip_vs_maglev_schedule,
};

static int __init ip_vs_maglev_init(void)
{
	int ret;

	/* Unbound: long builds do not hold up per-CPU work. */
	maglev_wq = alloc_workqueue("ip_vs_maglev", WQ_UNBOUND, 0);
	if (!maglev_wq)
		return -ENOMEM;
	ret = register_pernet_subsys(&maglev_net_ops);
	if (ret)
		goto fail_wq;
	ret = register_ip_vs_scheduler(&ip_vs_maglev_scheduler);
	if (ret)
		goto fail_pernet;
	return 0;

fail_pernet:
	unregister_pernet_subsys(&maglev_net_ops);
fail_wq:
	destroy_workqueue(maglev_wq);
	return ret;
}

static void __exit ip_vs_maglev_exit(void)
{
	unregister_ip_vs_scheduler(&ip_vs_maglev_scheduler);
	unregister_pernet_subsys(&maglev_net_ops);
	/* Wait for builds of deleted services still running. */
	destroy_workqueue(maglev_wq);
	/* Wait for maglev_lut_free_rcu() callbacks still queued. */
	rcu_barrier();
}

module_init(ip_vs_maglev_init);
module_exit(ip_vs_maglev_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("IPVS maglev consistent hashing scheduler");
