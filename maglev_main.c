// SPDX-License-Identifier: GPL-2.0
/*
 * ip_vs_maglev - IPVS scheduler "maglev": Maglev consistent hashing
 * (Eisenbud et al., NSDI 2016) with a table that userspace can reproduce.
 *
 *	ipvsadm -A -t 10.0.0.1:80 -s maglev [-b flag-1,flag-2]
 *
 * This file is the module's entry: its parameters and per-namespace
 * sysctls, the scheduler's callbacks and lookup, and registration.  The
 * callbacks only record a change and queue a build (maglev_build.c); the
 * lookup reads the service's published table under RCU.  docs/design.md
 * describes the control path, builds, publishing, lifetimes and locking;
 * docs/specification.md the table and the client hash.
 */

#define KMSG_COMPONENT "IPVS"
#define pr_fmt(fmt) KMSG_COMPONENT ": " fmt

#include <linux/array_size.h>
#include <linux/atomic.h>
#include <linux/cache.h>
#include <linux/capability.h>
#include <linux/compiler.h>
#include <linux/container_of.h>
#include <linux/errno.h>
#include <linux/gfp.h>
#include <linux/hex.h>
#include <linux/in.h>
#include <linux/init.h>
#include <linux/jiffies.h>
#include <linux/kstrtox.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/memcontrol.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/netfilter.h>
#include <linux/printk.h>
#include <linux/rculist.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/siphash.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/sysctl.h>
#include <linux/sysfs.h>
#include <linux/tcp.h>
#include <linux/types.h>
#include <linux/unaligned.h>
#include <linux/user_namespace.h>
#include <linux/workqueue.h>

#include <kunit/visibility.h>

#include <net/ip_vs.h>
#include <net/net_namespace.h>

#include "maglev_sched.h"
#include "maglev_table.h"

/* Rehashes tried by the fallback before it walks the destinations. */
#define MAGLEV_FALLBACK_TRIES	4

/* Builds running at once: of different namespaces (one each at most). */
#define MAGLEV_WQ_MAX_ACTIVE	4

/*
 * Name the scheduler registers with IPVS.  "make MH_COMPAT=1" builds the
 * same scheduler as ip_vs_mh.ko registering "mh", for control planes that
 * accept only the names they know.
 */
#ifndef MAGLEV_SCHED_NAME
#define MAGLEV_SCHED_NAME	"maglev"
#endif

/*
 * Interfaces that changed between the kernels this module builds on (6.1
 * and later, with their stable updates); Kbuild detects them in the
 * headers.
 */
#ifdef MAGLEV_HAVE_CTL_CONST
#define maglev_ctl_table	const struct ctl_table
#else
#define maglev_ctl_table	struct ctl_table
#endif

static bool maglev_dest_available(const struct ip_vs_dest *dest)
{
#ifdef MAGLEV_HAVE_DEST_CFLAGS
	return dest->cflags & IP_VS_DEST_CF_AVAILABLE;
#else
	return dest->flags & IP_VS_DEST_F_AVAILABLE;
#endif
}

/* Defaults of a new network namespace (module parameters). */
static unsigned int maglev_table_size = MAGLEV_SIZE_DEFAULT;
static unsigned int maglev_holdoff_ms = MAGLEV_HOLDOFF_DEFAULT;
static u8 maglev_hash_key[MAGLEV_KEY_BYTES];
/* The documented default key: public, all zero. */
static const u8 maglev_public_key[MAGLEV_KEY_BYTES];

unsigned int maglev_net_id __read_mostly;
struct workqueue_struct *maglev_wq;

/* Module parameters: the values a new network namespace starts with */

/* "auto" is not a size; the message names what to write instead. */
#define MAGLEV_AUTO_GONE	"auto is no longer a table size: the size is fixed, 65537 by default, or a prime in 251..5000011"

/*
 * A table size as written: a valid prime, with at most one trailing
 * newline.  Return: 0, or -EINVAL with *@why set to the reason (NULL for
 * text that is not a number at all).
 */
static int maglev_parse_size(const char *val, unsigned int *size,
			     const char **why)
{
	*why = NULL;
	if (sysfs_streq(val, "auto")) {
		*why = MAGLEV_AUTO_GONE;
		return -EINVAL;
	}
	if (kstrtouint(val, 0, size))
		return -EINVAL;
	return maglev_check_size(*size, why);
}

/*
 * table_size=auto in a modprobe.d file does not keep the module from
 * loading: the size stays what it is, and one warning names the
 * replacement.
 */
static int maglev_size_set(const char *val, const struct kernel_param *kp)
{
	const char *why;
	unsigned int size;

	if (sysfs_streq(val, "auto")) {
		pr_warn(KBUILD_MODNAME ".table_size=auto ignored, the size stays %u: %s\n",
			*(unsigned int *)kp->arg, MAGLEV_AUTO_GONE);
		return 0;
	}
	if (maglev_parse_size(val, &size, &why)) {
		if (why)
			pr_info(KBUILD_MODNAME ".table_size %.*s rejected: %s\n",
				(int)strcspn(val, "\n"), val, why);
		else
			pr_info(KBUILD_MODNAME ".table_size: not an unsigned number\n");
		return -EINVAL;
	}
	*(unsigned int *)kp->arg = size;
	return 0;
}

static const struct kernel_param_ops maglev_size_ops = {
	.set = maglev_size_set,
	.get = param_get_uint,
};

static int maglev_holdoff_set(const char *val, const struct kernel_param *kp)
{
	if (param_set_uint_minmax(val, kp, 0, MAGLEV_HOLDOFF_MAX_MS)) {
		pr_info(KBUILD_MODNAME ".holdoff_ms: not a number of milliseconds in 0..%u\n",
			MAGLEV_HOLDOFF_MAX_MS);
		return -EINVAL;
	}
	return 0;
}

static const struct kernel_param_ops maglev_holdoff_ops = {
	.set = maglev_holdoff_set,
	.get = param_get_uint,
};

/*
 * maglev_parse_key() - read a hash key written as 32 hex digits
 * @s: the text, with at most one trailing newline
 * @len: its length
 * @b: the MAGLEV_KEY_BYTES bytes
 *
 * Return: 0, or -EINVAL for anything else.
 */
static int maglev_parse_key(const char *s, size_t len, u8 *b)
{
	if (len && s[len - 1] == '\n')
		len--;
	if (len != 2 * MAGLEV_KEY_BYTES ||
	    hex2bin(b, s, MAGLEV_KEY_BYTES))
		return -EINVAL;
	return 0;
}

static int maglev_key_param_set(const char *val,
				const struct kernel_param *kp)
{
	u8 b[MAGLEV_KEY_BYTES];

	if (maglev_parse_key(val, strlen(val), b)) {
		pr_info(KBUILD_MODNAME ".hash_key: not 32 hex digits\n");
		return -EINVAL;
	}
	memcpy(kp->arg, b, sizeof(b));
	memzero_explicit(b, sizeof(b));
	return 0;
}

static int maglev_key_param_get(char *buf, const struct kernel_param *kp)
{
	/* The file is 0600: only root reads it. */
	return sysfs_emit(buf, "%*phN\n", MAGLEV_KEY_BYTES, kp->arg);
}

static const struct kernel_param_ops maglev_key_param_ops = {
	.set = maglev_key_param_set,
	.get = maglev_key_param_get,
};

module_param_cb(table_size, &maglev_size_ops, &maglev_table_size, 0644);
MODULE_PARM_DESC(table_size,
		 "table size a new network namespace starts with (net.ipv4.vs.maglev_table_size): a prime in 251..5000011 (default 65537)");
module_param_cb(holdoff_ms, &maglev_holdoff_ops, &maglev_holdoff_ms, 0644);
MODULE_PARM_DESC(holdoff_ms,
		 "hold-off a new network namespace starts with (net.ipv4.vs.maglev_holdoff_ms), 0..10000 ms (default 50)");
module_param_cb(hash_key, &maglev_key_param_ops, maglev_hash_key, 0600);
MODULE_PARM_DESC(hash_key,
		 "client hash key the initial network namespace starts with (net.ipv4.vs.maglev_hash_key; every other one starts with the public all-zero key), 32 hex digits (default all zero)");

/* Keys */

static void maglev_key_free_rcu(struct rcu_head *head)
{
	kfree_sensitive(container_of(head, struct maglev_key, rcu));
}

/* Publish @b as @mn's key; the next lookup uses it.  Takes cfg_lock. */
static int maglev_set_key(struct maglev_net *mn, const u8 *b)
{
	struct maglev_key *k, *old;

	k = kzalloc(sizeof(*k), GFP_KERNEL_ACCOUNT);
	if (!k)
		return -ENOMEM;
	maglev_key_from_bytes(&k->key, b);
	maglev_hkey_from_bytes(&k->hkey, b);
	k->fp = maglev_key_fingerprint(&k->key);
	mutex_lock(&mn->cfg_lock);
	old = rcu_replace_pointer(mn->key, k, lockdep_is_held(&mn->cfg_lock));
	mutex_unlock(&mn->cfg_lock);
	if (old)
		call_rcu(&old->rcu, maglev_key_free_rcu);
	return 0;
}

/*
 * Sysctls: net.ipv4.vs.maglev_* of each network namespace.  Without
 * CONFIG_SYSCTL there are none, and the module parameters alone set what
 * a namespace starts with, as IPVS itself works without sysctls.
 */
#ifdef CONFIG_SYSCTL

static unsigned int maglev_size_min = MAGLEV_SIZE_MIN;
static unsigned int maglev_size_max = MAGLEV_SIZE_MAX;
static unsigned int maglev_holdoff_max = MAGLEV_HOLDOFF_MAX_MS;

/*
 * maglev_table_size: a prime in 251..5000011, stored under cfg_lock, where
 * a change queues a rebuild of the namespace's services.
 */
static int maglev_sysctl_size(maglev_ctl_table *table, int write,
			      void *buffer, size_t *lenp, loff_t *ppos)
{
	struct maglev_net *mn = container_of(table->data, struct maglev_net,
					     table_size);
	unsigned int size = READ_ONCE(mn->table_size);
	struct ctl_table tmp = *table;
	const char *text = buffer, *why;
	int ret;

	tmp.data = &size;
	ret = proc_douintvec_minmax(&tmp, write, buffer, lenp, ppos);
	if (!write)
		return ret;
	if (ret || maglev_check_size(size, NULL)) {
		/* The reason, unless the text is not a number at all. */
		if (maglev_parse_size(text, &size, &why) && why)
			pr_info_ratelimited("maglev_table_size %.*s rejected: %s\n",
					    (int)strcspn(text, "\n"), text, why);
		return -EINVAL;
	}
	mutex_lock(&mn->cfg_lock);
	if (size != mn->table_size) {
		WRITE_ONCE(mn->table_size, size);
		maglev_rebuild_net(mn);
	}
	mutex_unlock(&mn->cfg_lock);
	return 0;
}

static int maglev_sysctl_holdoff(maglev_ctl_table *table, int write,
				 void *buffer, size_t *lenp, loff_t *ppos)
{
	int ret = proc_douintvec_minmax(table, write, buffer, lenp, ppos);
	unsigned int ms;

	/* The reason, unless the text is not a number at all. */
	if (write && ret == -EINVAL && !kstrtouint(buffer, 0, &ms))
		pr_info_ratelimited("maglev_holdoff_ms %u rejected: more than %u\n",
				    ms, MAGLEV_HOLDOFF_MAX_MS);
	return ret;
}

/*
 * The key: 32 hex digits, read and written only with CAP_NET_ADMIN in the
 * namespace's user namespace (the file is 0600 as well).
 */
static int maglev_sysctl_key(maglev_ctl_table *table, int write,
			     void *buffer, size_t *lenp, loff_t *ppos)
{
	struct maglev_net *mn = table->extra2;
	char text[2 * MAGLEV_KEY_BYTES + 2] = "";
	u8 b[MAGLEV_KEY_BYTES];
	struct ctl_table tmp = {
		.data = text,
		.maxlen = sizeof(text),
		.mode = table->mode,
	};
	int ret;

	if (!ns_capable(mn->net->user_ns, CAP_NET_ADMIN))
		return -EPERM;
	if (!write) {
		const struct maglev_key *k;

		rcu_read_lock();
		k = rcu_dereference(mn->key);
		put_unaligned_le64(k->key.key[0], b);
		put_unaligned_le64(k->key.key[1], b + 8);
		rcu_read_unlock();
		bin2hex(text, b, MAGLEV_KEY_BYTES);
		memzero_explicit(b, sizeof(b));
	}
	ret = proc_dostring(&tmp, write, buffer, lenp, ppos);
	if (write && !ret) {
		if (maglev_parse_key(text, strlen(text), b)) {
			pr_info_ratelimited("maglev_hash_key rejected: not 32 hex digits\n");
			ret = -EINVAL;
		} else {
			ret = maglev_set_key(mn, b);
		}
	}
	memzero_explicit(b, sizeof(b));
	memzero_explicit(text, sizeof(text));
	return ret;
}

/* Each namespace's copy points .data (or, for the key, .extra2) at it. */
static struct ctl_table maglev_ctl_template[] = {
	{
		.procname	= "maglev_table_size",
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= maglev_sysctl_size,
		.extra1		= &maglev_size_min,
		.extra2		= &maglev_size_max,
	},
	{
		.procname	= "maglev_holdoff_ms",
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= maglev_sysctl_holdoff,
		.extra1		= SYSCTL_ZERO,
		.extra2		= &maglev_holdoff_max,
	},
	{
		.procname	= "maglev_hash_key",
		.maxlen		= 2 * MAGLEV_KEY_BYTES + 2,
		.mode		= 0600,
		.proc_handler	= maglev_sysctl_key,
	},
#ifndef MAGLEV_HAVE_SYSCTL_SZ
	{ }	/* 6.1's register_net_sysctl() ends the table at a sentinel */
#endif
};

static int maglev_sysctl_register(struct net *net, struct maglev_net *mn)
{
	struct ctl_table *tbl;

	tbl = kmemdup(maglev_ctl_template, sizeof(maglev_ctl_template),
		      GFP_KERNEL_ACCOUNT);
	if (!tbl)
		return -ENOMEM;
	tbl[0].data = &mn->table_size;
	tbl[1].data = &mn->holdoff_ms;
	tbl[2].extra2 = mn;
	/*
	 * As IPVS does for the sysctls that set what a namespace may cost the
	 * others (ip_vs_ctl.c): in a namespace owned by another user
	 * namespace, the table size and the hold-off are read-only and keep
	 * the module parameters' values.  Its key stays its own to set.
	 */
	if (net->user_ns != &init_user_ns) {
		tbl[0].mode = 0444;
		tbl[1].mode = 0444;
	}
#ifdef MAGLEV_HAVE_SYSCTL_SZ
	mn->sysctl = register_net_sysctl_sz(net, "net/ipv4/vs", tbl,
					    ARRAY_SIZE(maglev_ctl_template));
#else
	mn->sysctl = register_net_sysctl(net, "net/ipv4/vs", tbl);
#endif
	if (!mn->sysctl) {
		kfree(tbl);
		return -ENOMEM;
	}
	mn->ctl = tbl;
	return 0;
}

static void maglev_sysctl_unregister(struct maglev_net *mn)
{
	unregister_net_sysctl_table(mn->sysctl);
	kfree(mn->ctl);
}

#else /* !CONFIG_SYSCTL */

static int maglev_sysctl_register(struct net *net, struct maglev_net *mn)
{
	return 0;
}

static void maglev_sysctl_unregister(struct maglev_net *mn)
{
}

#endif /* CONFIG_SYSCTL */

/* Scheduler ops */

/**
 * ip_vs_maglev_init_svc() - set up a service that starts using maglev
 * @svc: the service, possibly with destinations already (ipvsadm -E)
 *
 * Queues the first build at once; until it publishes, schedule() picks
 * from the service's destination list.  The first build is charged to the
 * memory cgroup of the calling task, each later one to that of the task
 * whose change queued it (maglev_changed()).
 *
 * Context: process context, IPVS configuration mutex held.
 * Return: 0, or -ENOMEM.
 */
static int ip_vs_maglev_init_svc(struct ip_vs_service *svc)
{
	struct maglev_net *mn = maglev_pernet(svc->ipvs->net);
	struct maglev_service *ms;

	ms = kzalloc(sizeof(*ms), GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!ms)
		return -ENOMEM;
	ms->mn = mn;
	ms->svc = svc;
	spin_lock_init(&ms->lock);
	refcount_set(&ms->ref, 1);
	INIT_DELAYED_WORK(&ms->work, maglev_build_work);
	ms->next_build = jiffies;
	ms->gen = 1;
	ms->memcg = get_mem_cgroup_from_mm(current->mm);
	INIT_LIST_HEAD(&ms->ready_node);
	refcount_inc(&mn->builder->ref);
	ms->builder = mn->builder;

	svc->sched_data = ms;
	/* Writers of the list hold IPVS's configuration mutex; readers RCU. */
	list_add_tail_rcu(&ms->node, &mn->services);

	spin_lock(&ms->lock);
	maglev_queue(ms, jiffies, 0);
	spin_unlock(&ms->lock);
	return 0;
}

/**
 * ip_vs_maglev_done_svc() - release a service's scheduler state
 * @svc: the service, being deleted or switched to another scheduler
 *
 * Does not wait for a running build (docs/design.md).  Schedulers
 * still running on another CPU and /proc readers may use the state until a
 * grace period has passed, so everything is freed through RCU.  IPVS may
 * free @svc right after this returns.
 *
 * Context: process context, IPVS configuration mutex held.
 */
VISIBLE_IF_KUNIT void ip_vs_maglev_done_svc(struct ip_vs_service *svc)
{
	struct maglev_service *ms = svc->sched_data;

	list_del_rcu(&ms->node);

	spin_lock(&ms->lock);
	ms->dead = true;
	spin_unlock(&ms->lock);
	if (cancel_delayed_work(&ms->work))
		maglev_svc_put(ms);
	maglev_builder_cancel(ms);
	maglev_svc_put(ms);
}

/* add_dest, del_dest, upd_dest: IPVS has changed the destination list. */
static int ip_vs_maglev_dest_changed(struct ip_vs_service *svc,
				     struct ip_vs_dest *dest)
{
	maglev_changed(svc->sched_data);
	return 0;
}

/*
 * Weight 0, removed, or no longer @svc's: the next table drops the
 * destination (or a build failed and the table still names it).  Its new
 * connections always go elsewhere.  A removed destination waits in IPVS's
 * trash, and ip_vs_trash_get_dest() hands it to whichever service adds it
 * again: for a fwmark it does not compare the service's address family, so
 * one removed from FWM 42 and added to FWM6 42 comes back available, but
 * bound to the other service (dest->svc), while FWM 42's table still
 * names it.
 */
VISIBLE_IF_KUNIT bool maglev_dest_retired(const struct ip_vs_service *svc,
					  const struct ip_vs_dest *dest)
{
	return atomic_read(&dest->weight) <= 0 ||
	       !maglev_dest_available(dest) ||
	       rcu_access_pointer(dest->svc) != svc;
}

VISIBLE_IF_KUNIT bool maglev_dest_unavailable(const struct ip_vs_service *svc,
					      const struct ip_vs_dest *dest)
{
	return maglev_dest_retired(svc, dest) ||
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

/*
 * A TCP packet without SYN that IPVS schedules (net.ipv4.vs.sloppy_tcp):
 * a connection that lives on its server already, taken over from a load
 * balancer that died or from which ECMP moved the flow.  Its server's upper
 * threshold does not apply: refusing it, or sending it elsewhere, resets
 * the connection.
 */
static bool maglev_tcp_takeover(const struct sk_buff *skb,
				const struct ip_vs_iphdr *iph)
{
	struct tcphdr buf;
	const struct tcphdr *th;

	if (iph->protocol != IPPROTO_TCP || !skb)
		return false;
	th = skb_header_pointer(skb, iph->len, sizeof(buf), &buf);
	return th && !th->syn;
}

/*
 * The table's choice is unavailable: a few rehashes of the client hash,
 * then a walk over the table's N destinations from a hash-derived index.
 */
VISIBLE_IF_KUNIT struct ip_vs_dest *
maglev_fallback(const struct ip_vs_service *svc, const struct maglev_lut *lut,
		u32 hash)
{
	struct ip_vs_dest *dest;
	u32 i, idx;

	for (i = 1; i <= MAGLEV_FALLBACK_TRIES; i++) {
		idx = maglev_lookup(lut->table, maglev_rehash(hash, i));
		if (idx >= lut->nr)
			return NULL;
		dest = lut->dest[idx];
		if (!maglev_dest_unavailable(svc, dest))
			return dest;
	}

	/* Bounded: one pass over the N destinations, not the M slots. */
	idx = (u32)(((u64)hash * lut->nr) >> 32);
	for (i = 0; i < lut->nr; i++) {
		dest = lut->dest[idx];
		if (!maglev_dest_unavailable(svc, dest))
			return dest;
		if (++idx == lut->nr)
			idx = 0;
	}
	return NULL;
}

/*
 * The table lags the service (none yet, empty, or every destination in it
 * retired while the service has another): an available destination from
 * the service's list, from a hash-derived position.  O(N), only until the
 * next table is published.
 */
static struct ip_vs_dest *maglev_pick_any(struct ip_vs_service *svc, u32 hash)
{
	u32 n = READ_ONCE(svc->num_dests), skip;
	struct ip_vs_dest *dest, *first = NULL;

	skip = (u32)(((u64)hash * n) >> 32);
	list_for_each_entry_rcu(dest, &svc->destinations, n_list) {
		if (maglev_dest_unavailable(svc, dest))
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
 * One keyed hash and one table load; a bounded fallback when the chosen
 * destination is retired, or with flag-1 overloaded; the service's own
 * list while the table lags it.  An overloaded destination (over its upper
 * threshold) still gets a TCP packet without SYN: its connection lives
 * there already (maglev_tcp_takeover()).
 *
 * Context: softirq or process context, RCU read lock held.
 * Return: the destination, or NULL (after ip_vs_scheduler_err()).
 */
VISIBLE_IF_KUNIT struct ip_vs_dest *
ip_vs_maglev_schedule(struct ip_vs_service *svc, const struct sk_buff *skb,
		      struct ip_vs_iphdr *iph)
{
	struct maglev_service *ms = svc->sched_data;
	const struct maglev_lut *lut;
	const union nf_inet_addr *addr;
	const hsiphash_key_t *key;
	struct ip_vs_dest *dest = NULL;
	u32 hash, idx;

	/* The client key, whole, straight into hsiphash's typed helpers. */
	addr = ip_vs_iph_inverse(iph) ? &iph->daddr : &iph->saddr;
	key = &rcu_dereference(ms->mn->key)->hkey;
	if (svc->flags & MAGLEV_F_PORT) {
		__be16 port = maglev_client_port(skb, iph);

		if (svc->af == AF_INET6)
			hash = maglev_hash_ip6_port(&addr->in6, port, key);
		else
			hash = maglev_hash_ip4_port(&addr->ip, port, key);
	} else if (svc->af == AF_INET6) {
		hash = maglev_hash_ip6(&addr->in6, key);
	} else {
		hash = maglev_hash_ip4(&addr->ip, key);
	}

	lut = rcu_dereference(ms->lut);
	if (likely(lut)) {
		idx = maglev_lookup(lut->table, hash);
		if (likely(idx < lut->nr)) {
			dest = lut->dest[idx];
			if (unlikely(maglev_dest_unavailable(svc, dest))) {
				if (!maglev_dest_retired(svc, dest)) {
					/* Overloaded: a taken-over connection stays. */
					if (maglev_tcp_takeover(skb, iph))
						goto out;
					/* No flag-1: refused, as documented. */
					if (!(svc->flags & MAGLEV_F_FALLBACK)) {
						dest = NULL;
						goto out;
					}
				}
				dest = maglev_fallback(svc, lut, hash);
			}
		}
	}
	if (unlikely(!dest))
		dest = maglev_pick_any(svc, hash);
out:
	if (!dest) {
		ip_vs_scheduler_err(svc, "no destination available");
		return NULL;
	}
	return dest;
}

/* Registration */

static int __net_init maglev_net_init(struct net *net)
{
	struct maglev_net *mn = maglev_pernet(net);
	int ret;

	INIT_LIST_HEAD(&mn->services);
	mutex_init(&mn->cfg_lock);
	mn->net = net;
	/*
	 * Whoever has CAP_NET_ADMIN in a namespace reads its key, a pod's
	 * CNI plugin too: only the initial namespace starts with hash_key.
	 */
	kernel_param_lock(THIS_MODULE);
	mn->table_size = maglev_table_size;
	mn->holdoff_ms = maglev_holdoff_ms;
	ret = maglev_set_key(mn, net_eq(net, &init_net) ?
			     maglev_hash_key : maglev_public_key);
	kernel_param_unlock(THIS_MODULE);
	if (ret)
		return ret;
	mn->builder = maglev_builder_alloc();
	if (!mn->builder) {
		ret = -ENOMEM;
		goto fail_key;
	}
	ret = maglev_sysctl_register(net, mn);
	if (ret)
		goto fail_cache;
	ret = maglev_proc_init(net);
	if (ret)
		goto fail_sysctl;
	return 0;

fail_sysctl:
	maglev_sysctl_unregister(mn);
fail_cache:
	maglev_builder_put(mn->builder);
fail_key:
	kfree_sensitive(rcu_dereference_protected(mn->key, true));
	return ret;
}

static void __net_exit maglev_net_exit(struct net *net)
{
	struct maglev_net *mn = maglev_pernet(net);

	/*
	 * IPVS flushes the services after this (docs/design.md, "Namespace
	 * exit"); a lookup may still hold the key under RCU.
	 */
	maglev_proc_exit(net);
	maglev_sysctl_unregister(mn);
	maglev_builder_put(mn->builder);
	call_rcu(&rcu_dereference_protected(mn->key, true)->rcu,
		 maglev_key_free_rcu);
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

	/* Unbound: long builds do not hold up per-CPU work. */
	maglev_wq = alloc_workqueue("ip_vs_maglev", WQ_UNBOUND | WQ_SYSFS,
				    MAGLEV_WQ_MAX_ACTIVE);
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
	/*
	 * Each namespace's exit queues maglev_key_free_rcu();
	 * unregister_pernet_subsys() runs rcu_barrier() after the exits, so
	 * no callback outlives the module's text (guest test 23).
	 */
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
MODULE_VERSION("0.2");
