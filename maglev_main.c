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
 * Table life cycle: init_service, add_dest, del_dest and upd_dest run under
 * the IPVS configuration mutex and build a complete new table in fresh
 * memory, publish it with rcu_assign_pointer() and release the old one after
 * a grace period.  A published table holds one reference on each of its
 * destinations, dropped when the table is freed.  When a rebuild fails (no
 * memory, or parameters maglev_build() rejects) the previous table keeps
 * serving; the failure is counted and logged, and the next change retries.
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
 * with weight 0 (set to 0 while the table was being rebuilt) or removed (a
 * rebuild failed) always falls back, so draining never drops a connection;
 * an overloaded one (IP_VS_DEST_F_OVERLOAD) only with flag-1
 * (IP_VS_SVC_F_SCHED1), and without it no destination is returned.
 *
 * Module parameters (0644), used from a service's next rebuild on:
 *	table_size	prime table size M in 251..5000011 (default 65537)
 *	hash_seed	64-bit seed of the key hash (default 0)
 *
 * /proc/net/ip_vs_maglev (per network namespace, read-only) lists the maglev
 * services of the reader's namespace, one "service" line each followed by
 * one "dest" line per destination in name order (the backend index order of
 * the table).  Fields are separated by single spaces; every value follows
 * its keyword:
 *
 *	service PROTO VIP size M seed S flags 0xF dests N builds B churn C
 *		build_ns T alloc_fail A build_fail E digest D
 *	  dest NAME weight W slots K
 *
 * (the service line is one line, wrapped here only).
 *	PROTO	TCP, UDP or SCTP (then VIP is "A.B.C.D:port" or
 *		"[IPv6]:port"), FWM (IPv4 fwmark service) or FWM6 (IPv6
 *		fwmark service; then VIP is the decimal mark)
 *	M, S	table size and hash seed of the published table
 *	F	the service's scheduler flags in hex: 0x8 flag-1 (fallback),
 *		0x10 flag-2 (port hashing), 0x20 flag-3 (unused)
 *	N	destinations in the published table
 *	B	tables built and published since the service was created
 *	C	slots whose owner changed in the last build (the first build
 *		counts its filled slots)
 *	T	duration of the last maglev_build() call in nanoseconds
 *	A	rebuilds that failed for lack of memory
 *	E	rebuilds that failed for any other reason
 *	D	digest of the published table, 16 lower-case hex digits
 *	NAME	backend name, "A.B.C.D:port" or "[IPv6]:port"
 *	W	weight the table was built with (0: drained or added with 0)
 *	K	slots the destination owns
 *
 * Example (the first line again wrapped here only):
 *	service TCP 10.0.0.1:80 size 65537 seed 0 flags 0x0 dests 2 builds 3
 *		churn 32768 build_ns 812345 alloc_fail 0 build_fail 0
 *		digest 0123456789abcdef
 *	  dest 10.0.0.2:80 weight 1 slots 32769
 *	  dest 10.0.0.3:80 weight 1 slots 32768
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/overflow.h>
#include <linux/rcupdate.h>
#include <linux/mutex.h>
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

/*
 * Name the scheduler registers with IPVS.  "make MH_COMPAT=1" builds the
 * same scheduler as ip_vs_mh.ko registering "mh", for control planes that
 * accept only the names they know.
 */
#ifndef MAGLEV_SCHED_NAME
#define MAGLEV_SCHED_NAME	"maglev"
#endif

static unsigned int maglev_table_size = MAGLEV_SIZE_DEFAULT;
static u64 maglev_hash_seed;
static unsigned int maglev_net_id __read_mostly;

/**
 * struct maglev_lut - a published lookup table with its destinations
 * @rcu: frees the table (and drops the destination references) after a
 *	grace period
 * @seed: hash seed the lookups of this table use
 * @nr: number of destinations (backends)
 * @table: the slot table; entries index @dest and @be
 * @dest: the destinations in backend (name) order, one reference each
 * @be: the backends the table was built from, for /proc and churn
 *
 * Immutable once published.  One kvmalloc() block: header, @dest, @be, then
 * the table.
 */
struct maglev_lut {
	struct rcu_head rcu;
	u64 seed;
	u32 nr;
	struct maglev_table *table;
	struct ip_vs_dest **dest;
	struct maglev_backend *be;
};

/**
 * struct maglev_service - per-service scheduler state (svc->sched_data)
 * @node: entry in the namespace's service list, under maglev_net.lock
 * @svc: the IPVS service
 * @lut: the published table; written under the IPVS configuration mutex
 *	and maglev_net.lock, read under RCU
 * @builds: tables built and published
 * @alloc_fail: rebuilds that failed for lack of memory
 * @build_fail: rebuilds that failed for any other reason
 * @build_ns: duration of the last successful maglev_build()
 * @churn: slots whose owner changed in the last build
 * @rcu: frees this structure after a grace period
 *
 * The counters are written under both locks, read under maglev_net.lock.
 */
struct maglev_service {
	struct list_head node;
	struct ip_vs_service *svc;
	struct maglev_lut __rcu *lut;
	u64 builds;
	u64 alloc_fail;
	u64 build_fail;
	u64 build_ns;
	u32 churn;
	struct rcu_head rcu;
};

/**
 * struct maglev_net - per network namespace state
 * @lock: protects @services and the counters of its entries
 * @services: the namespace's maglev services (struct maglev_service)
 */
struct maglev_net {
	struct mutex lock;	/* protects services and their counters */
	struct list_head services;
};

static struct maglev_net *maglev_pernet(struct net *net)
{
	return net_generic(net, maglev_net_id);
}

/* Module parameters */

static int maglev_size_set(const char *val, const struct kernel_param *kp)
{
	const char *why = NULL;
	unsigned int size;
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
	return 0;
}

static const struct kernel_param_ops maglev_size_ops = {
	.set = maglev_size_set,
	.get = param_get_uint,
};

module_param_cb(table_size, &maglev_size_ops, &maglev_table_size, 0644);
MODULE_PARM_DESC(table_size,
		 "lookup table size, a prime in 251..5000011 (default 65537); applies at a service's next rebuild");
module_param_named(hash_seed, maglev_hash_seed, ullong, 0644);
MODULE_PARM_DESC(hash_seed,
		 "64-bit seed of the client key hash (default 0); applies at a service's next rebuild");

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

static size_t maglev_lut_bytes(u32 size, u32 nr)
{
	size_t bytes;

	bytes = size_add(sizeof(struct maglev_lut),
			 array_size(nr, sizeof(struct ip_vs_dest *)));
	bytes = size_add(bytes, array_size(nr, sizeof(struct maglev_backend)));
	return size_add(bytes, maglev_table_bytes(size));
}

static struct maglev_lut *maglev_lut_alloc(u32 size, u32 nr)
{
	struct maglev_lut *lut;
	void *p;

	lut = kvzalloc(maglev_lut_bytes(size, nr), GFP_KERNEL);
	if (!lut)
		return NULL;
	p = lut + 1;
	lut->dest = p;
	p += array_size(nr, sizeof(struct ip_vs_dest *));
	lut->be = p;
	p += array_size(nr, sizeof(struct maglev_backend));
	lut->table = p;
	lut->nr = nr;
	return lut;
}

static void maglev_lut_free_rcu(struct rcu_head *head)
{
	struct maglev_lut *lut = container_of(head, struct maglev_lut, rcu);
	u32 i;

	/*
	 * A removed destination lives in the IPVS trash until its last
	 * reference is gone; whoever drops that reference frees it.
	 */
	for (i = 0; i < lut->nr; i++)
		ip_vs_dest_put_and_free(lut->dest[i]);
	kvfree(lut);
}

/* Fill @lut's backends from @svc's destinations; return their number. */
static u32 maglev_fill_backends(struct maglev_lut *lut,
				struct ip_vs_service *svc)
{
	struct ip_vs_dest *dest;
	u32 n = 0;

	list_for_each_entry(dest, &svc->destinations, n_list) {
		int weight = atomic_read(&dest->weight);
		struct maglev_backend *b;

		if (WARN_ON_ONCE(n == lut->nr))
			break;
		b = &lut->be[n];
		b->name_len = maglev_addr_name(b->name, sizeof(b->name),
					       dest->af, &dest->addr,
					       dest->port);
		b->weight = max(weight, 0);
		if (!b->weight)
			b->drain_weight = max(atomic_read(&dest->last_weight), 0);
		b->priv = dest;
		n++;
	}
	return n;
}

/**
 * maglev_rebuild() - build and publish a new table for a service
 * @ms: the service's state
 * @svc: the service; its destination list is stable (IPVS config mutex)
 *
 * Builds the table from the destinations of @svc with the current module
 * parameters in new memory and swaps it in.  On failure the published table
 * (if any) is left alone and keeps serving.  Holds the namespace's lock
 * throughout, so /proc readers see the table and its figures change
 * together.
 *
 * Context: process context, IPVS configuration mutex held.
 * Return: 0 or a negative errno.
 */
static int maglev_rebuild(struct maglev_service *ms, struct ip_vs_service *svc)
{
	struct maglev_net *mn = maglev_pernet(svc->ipvs->net);
	char name[MAGLEV_SVC_NAME_MAX];
	struct maglev_lut *lut, *old;
	struct maglev_stats st = {};
	const char *why = NULL;
	void *work;
	u64 seed, t0, ns;
	u32 size, nr, i, churn;
	int ret;

	kernel_param_lock(THIS_MODULE);
	size = maglev_table_size;
	seed = maglev_hash_seed;
	kernel_param_unlock(THIS_MODULE);

	mutex_lock(&mn->lock);
	old = rcu_dereference_protected(ms->lut, lockdep_is_held(&mn->lock));
	nr = svc->num_dests;
	if (nr > MAGLEV_MAX_BACKENDS) {
		why = "too many destinations";
		ret = -E2BIG;
		goto fail;
	}

	ret = -ENOMEM;
	why = "out of memory";
	lut = maglev_lut_alloc(size, nr);
	if (!lut)
		goto fail;
	/* The scratch area serves maglev_build() and then maglev_churn(). */
	work = kvmalloc(maglev_work_bytes(size, max(nr, old ? old->nr : 0)),
			GFP_KERNEL);
	if (!work)
		goto fail_lut;

	lut->seed = seed;
	nr = maglev_fill_backends(lut, svc);
	lut->nr = nr;

	why = NULL;
	t0 = ktime_get_ns();
	ret = maglev_build(lut->table, size, lut->be, nr, work, &st, &why);
	ns = ktime_get_ns() - t0;
	if (ret)
		goto fail_work;

	for (i = 0; i < nr; i++) {
		lut->dest[i] = lut->be[i].priv;
		ip_vs_dest_hold(lut->dest[i]);
	}
	if (old)
		churn = maglev_churn(old->table, old->be, old->nr,
				     lut->table, lut->be, lut->nr, work);
	else
		churn = lut->table->nr_filled;
	kvfree(work);

	rcu_assign_pointer(ms->lut, lut);
	ms->builds++;
	ms->churn = churn;
	ms->build_ns = ns;
	mutex_unlock(&mn->lock);

	if (old)
		call_rcu(&old->rcu, maglev_lut_free_rcu);
	return 0;

fail_work:
	kvfree(work);
fail_lut:
	kvfree(lut);
fail:
	if (ret == -ENOMEM)
		ms->alloc_fail++;
	else
		ms->build_fail++;
	mutex_unlock(&mn->lock);
	maglev_svc_name(name, sizeof(name), svc);
	pr_warn_ratelimited("%s: table rebuild (size %u, %u dests) failed: %s (%d)%s\n",
			    name, size, nr, why ? why : "error", ret,
			    old ? "; the previous table stays in use" : "");
	return ret;
}

/**
 * ip_vs_maglev_init_svc() - set up a service that starts using maglev
 * @svc: the service, possibly with destinations already (ipvsadm -E)
 *
 * Context: process context, IPVS configuration mutex held.
 * Return: 0, or a negative errno if the first table cannot be built (the
 * service then does not use maglev).
 */
static int ip_vs_maglev_init_svc(struct ip_vs_service *svc)
{
	struct maglev_net *mn = maglev_pernet(svc->ipvs->net);
	struct maglev_service *ms;
	int ret;

	ms = kzalloc(sizeof(*ms), GFP_KERNEL);
	if (!ms)
		return -ENOMEM;
	ms->svc = svc;

	ret = maglev_rebuild(ms, svc);
	if (ret) {
		kfree(ms);
		return ret;
	}

	mutex_lock(&mn->lock);
	list_add_tail(&ms->node, &mn->services);
	mutex_unlock(&mn->lock);

	svc->sched_data = ms;
	return 0;
}

/**
 * ip_vs_maglev_done_svc() - release a service's scheduler state
 * @svc: the service, being deleted or switched to another scheduler
 *
 * Schedulers still running on another CPU may use the state until a grace
 * period has passed, so everything is freed through RCU.
 *
 * Context: process context, IPVS configuration mutex held.
 */
static void ip_vs_maglev_done_svc(struct ip_vs_service *svc)
{
	struct maglev_net *mn = maglev_pernet(svc->ipvs->net);
	struct maglev_service *ms = svc->sched_data;
	struct maglev_lut *lut;

	mutex_lock(&mn->lock);
	list_del(&ms->node);
	lut = rcu_dereference_protected(ms->lut, lockdep_is_held(&mn->lock));
	mutex_unlock(&mn->lock);

	if (lut)
		call_rcu(&lut->rcu, maglev_lut_free_rcu);
	kfree_rcu(ms, rcu);
}

/**
 * ip_vs_maglev_dest_changed() - rebuild after a destination change
 * @svc: the service
 * @dest: the destination added, removed or edited
 *
 * Context: process context, IPVS configuration mutex held.
 * Return: 0 or a negative errno (IPVS ignores it; the previous table then
 * stays in use).
 */
static int ip_vs_maglev_dest_changed(struct ip_vs_service *svc,
				     struct ip_vs_dest *dest)
{
	return maglev_rebuild(svc->sched_data, svc);
}

/* Scheduling */

/*
 * Weight 0 or removed: the table is about to drop the destination, or kept
 * it because a rebuild failed.  Its new connections always go elsewhere.
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

	hash = maglev_hash(key, len, lut->seed);
	idx = maglev_lookup(lut->table, hash);
	dest = idx < lut->nr ? lut->dest[idx] : NULL;
	if (dest && maglev_dest_unavailable(dest))
		dest = (svc->flags & MAGLEV_F_FALLBACK) ||
		       maglev_dest_retired(dest) ?
		       maglev_fallback(lut, key, len, hash) : NULL;

	if (!dest) {
		ip_vs_scheduler_err(svc, "no destination available");
		return NULL;
	}
	return dest;
}

/* /proc/net/ip_vs_maglev */

static void maglev_show_service(struct seq_file *seq,
				const struct maglev_service *ms,
				const struct maglev_lut *lut)
{
	char name[MAGLEV_SVC_NAME_MAX];
	u32 i;

	maglev_svc_name(name, sizeof(name), ms->svc);
	seq_printf(seq,
		   "service %s size %u seed %llu flags 0x%x dests %u builds %llu churn %u build_ns %llu alloc_fail %llu build_fail %llu digest %016llx\n",
		   name, lut->table->size, lut->seed,
		   READ_ONCE(ms->svc->flags) & MAGLEV_F_SCHED, lut->nr,
		   ms->builds, ms->churn, ms->build_ns, ms->alloc_fail,
		   ms->build_fail, lut->table->digest);
	for (i = 0; i < lut->nr; i++) {
		const struct maglev_backend *b = &lut->be[i];

		seq_printf(seq, "  dest %.*s weight %u slots %u\n",
			   (int)b->name_len, b->name, b->weight, b->slots);
	}
}

static int maglev_proc_show(struct seq_file *seq, void *v)
{
	struct maglev_net *mn = maglev_pernet(seq_file_single_net(seq));
	const struct maglev_service *ms;

	mutex_lock(&mn->lock);
	list_for_each_entry(ms, &mn->services, node) {
		const struct maglev_lut *lut;

		lut = rcu_dereference_protected(ms->lut,
						lockdep_is_held(&mn->lock));
		if (lut)
			maglev_show_service(seq, ms, lut);
	}
	mutex_unlock(&mn->lock);
	return 0;
}

/* Registration */

static int __net_init maglev_net_init(struct net *net)
{
	struct maglev_net *mn = maglev_pernet(net);

	mutex_init(&mn->lock);
	INIT_LIST_HEAD(&mn->services);
	if (IS_ENABLED(CONFIG_PROC_FS) &&
	    !proc_create_net_single("ip_vs_maglev", 0444, net->proc_net,
				    maglev_proc_show, NULL))
		return -ENOMEM;
	return 0;
}

static void __net_exit maglev_net_exit(struct net *net)
{
	/*
	 * IPVS may flush the namespace's services (done_service) from its own
	 * pernet exit, after this one; the list and its lock live in the
	 * pernet storage, which is freed only after every exit method ran.
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
	.add_dest =		ip_vs_maglev_dest_changed,
	.del_dest =		ip_vs_maglev_dest_changed,
	.upd_dest =		ip_vs_maglev_dest_changed,
	.schedule =		ip_vs_maglev_schedule,
};

static int __init ip_vs_maglev_init(void)
{
	int ret;

	ret = register_pernet_subsys(&maglev_net_ops);
	if (ret)
		return ret;
	ret = register_ip_vs_scheduler(&ip_vs_maglev_scheduler);
	if (ret)
		unregister_pernet_subsys(&maglev_net_ops);
	return ret;
}

static void __exit ip_vs_maglev_exit(void)
{
	unregister_ip_vs_scheduler(&ip_vs_maglev_scheduler);
	unregister_pernet_subsys(&maglev_net_ops);
	/* Wait for maglev_lut_free_rcu() callbacks still queued. */
	rcu_barrier();
}

module_init(ip_vs_maglev_init);
module_exit(ip_vs_maglev_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("IPVS maglev consistent hashing scheduler");
