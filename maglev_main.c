// SPDX-License-Identifier: GPL-2.0
/*
 * ip_vs_maglev - IPVS scheduler "maglev": Maglev consistent hashing
 * (Eisenbud et al., NSDI 2016) with a table that userspace can reproduce.
 *
 *	ipvsadm -A -t 10.0.0.1:80 -s maglev [-b flag-1,flag-2]
 *
 * This file is the module's entry: its parameters and per-namespace
 * sysctls, the scheduler's callbacks and lookup, and registration.  The
 * callbacks keep each service's own set of destinations, under IPVS's
 * configuration mutex, and queue a build (maglev_build.c), which reads
 * only that set; the lookup reads the service's published table under
 * RCU.  docs/design.md describes the design; docs/specification.md the
 * table and the client hash.
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
#include <linux/export.h>
#include <linux/gfp.h>
#include <linux/hex.h>
#include <linux/in.h>
#include <linux/init.h>
#include <linux/jiffies.h>
#include <linux/kstrtox.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/printk.h>
#include <linux/rbtree.h>
#include <linux/rculist.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/siphash.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/sprintf.h>
#include <linux/string.h>
#include <linux/sysctl.h>
#include <linux/sysfs.h>
#include <linux/tcp.h>
#include <linux/types.h>
#include <linux/unaligned.h>
#include <linux/user_namespace.h>
#include <linux/workqueue.h>

#include <net/ip_vs.h>
#include <net/net_namespace.h>

#include "compat/maglev_kcompat.h"
#include "maglev_sched.h"
#include "maglev_table.h"

/*
 * Rehashes of the client hash tried when the table's choice is unavailable,
 * before the service's spare destination.
 */
#define MAGLEV_FALLBACK_TRIES	8

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
 * Exported by both ip_vs_maglev.ko and its mh build ip_vs_mh.ko, which both
 * create /proc/net/ip_vs_maglev: the module loader refuses the second one
 * ("exports duplicate symbol") before its init fails on the /proc entry.
 */
const int maglev_exclusive;
EXPORT_SYMBOL_GPL(maglev_exclusive);

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

/* Publish @b as @mn's key; the next lookup uses it. */
static int maglev_set_key(struct maglev_net *mn, const u8 *b)
{
	struct maglev_key *k, *old;

	k = kzalloc(sizeof(*k), GFP_KERNEL_ACCOUNT);
	if (!k)
		return -ENOMEM;
	maglev_key_from_bytes(&k->key, b);
	maglev_hkey_from_bytes(&k->hkey, b);
	k->fp = maglev_key_fingerprint(&k->key);
	old = unrcu_pointer(xchg(&mn->key, RCU_INITIALIZER(k)));
	if (old)
		call_rcu(&old->rcu, maglev_key_free_rcu);
	return 0;
}

/*
 * Sysctls: net.ipv4.vs.maglev_* of each network namespace.  Without
 * CONFIG_SYSCTL there are none (the kernel's stubs register nothing), and
 * the module parameters alone set what a namespace starts with.
 */

static unsigned int maglev_holdoff_max = MAGLEV_HOLDOFF_MAX_MS;

/*
 * maglev_table_size: a prime in 251..5000011, read and written as text so
 * that a rejected value is logged with its reason; a change rebuilds the
 * namespace's services.
 */
static int maglev_sysctl_size(maglev_ctl_table *table, int write,
			      void *buffer, size_t *lenp, loff_t *ppos)
{
	struct maglev_net *mn = table->extra2;
	unsigned int *data = table->data, size = READ_ONCE(*data);
	char text[24];
	struct ctl_table tmp = {
		.data = text,
		.maxlen = sizeof(text),
		.mode = table->mode,
	};
	const char *why;
	int ret;

	snprintf(text, sizeof(text), "%u", size);
	ret = proc_dostring(&tmp, write, buffer, lenp, ppos);
	if (!write || ret)
		return ret;
	if (maglev_parse_size(text, &size, &why)) {
		/* The reason, unless the text is not a number at all. */
		if (why)
			pr_info_ratelimited("maglev_table_size %s rejected: %s\n",
					    text, why);
		return -EINVAL;
	}
	if (xchg(data, size) != size)
		maglev_rebuild_net(mn);
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

/* Each namespace's copy points .data at its builder, .extra2 at itself. */
static struct ctl_table maglev_ctl_template[] = {
	{
		.procname	= "maglev_table_size",
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= maglev_sysctl_size,
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
	MAGLEV_CTL_END
};

static int maglev_sysctl_register(struct net *net, struct maglev_net *mn)
{
	struct ctl_table *tbl;

	tbl = kmemdup(maglev_ctl_template, sizeof(maglev_ctl_template),
		      GFP_KERNEL_ACCOUNT);
	if (!tbl)
		return -ENOMEM;
	tbl[0].data = &mn->builder->table_size;
	tbl[0].extra2 = mn;
	tbl[1].data = &mn->builder->holdoff_ms;
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
	mn->sysctl = maglev_register_sysctl(net, "net/ipv4/vs", tbl,
					    ARRAY_SIZE(maglev_ctl_template));
	if (IS_ENABLED(CONFIG_SYSCTL) && !mn->sysctl) {
		kfree(tbl);
		return -ENOMEM;
	}
	mn->ctl = tbl;
	return 0;
}

/* A service's set of destinations */

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
static bool maglev_dest_retired(const struct ip_vs_service *svc,
				const struct ip_vs_dest *dest)
{
	return atomic_read(&dest->weight) <= 0 ||
	       !maglev_dest_available(dest) ||
	       rcu_access_pointer(dest->svc) != svc;
}

static bool maglev_dest_unavailable(const struct ip_vs_service *svc,
				    const struct ip_vs_dest *dest)
{
	return maglev_dest_retired(svc, dest) ||
	       dest->flags & IP_VS_DEST_F_OVERLOAD;
}

/* A destination's backend name, "A.B.C.D:port" or "[v6]:port", no NUL. */
static u32 maglev_dest_name(char *buf, const struct ip_vs_dest *dest)
{
	char name[MAGLEV_ADDR_NAME_MAX + 1];
	int n = maglev_format_name(name, sizeof(name), &dest->addr,
				   dest->af == AF_INET6 ? 16 : 4,
				   ntohs(dest->port));

	if (WARN_ON_ONCE(n <= 0))
		return 0;
	memcpy(buf, name, n);
	return n;
}

/* A service's description for messages and /proc: "TCP 10.0.0.1:80". */
static void maglev_svc_name(char *buf, size_t len,
			    const struct ip_vs_service *svc)
{
	u16 p = svc->protocol;
	const char *proto = p == IPPROTO_TCP ? "TCP" :
			    p == IPPROTO_UDP ? "UDP" :
			    p == IPPROTO_SCTP ? "SCTP" : NULL;
	int n;

	if (svc->fwmark) {
		scnprintf(buf, len, "%s %u",
			  svc->af == AF_INET6 ? "FWM6" : "FWM", svc->fwmark);
		return;
	}
	if (proto)
		n = scnprintf(buf, len, "%s ", proto);
	else
		n = scnprintf(buf, len, "P%u ", svc->protocol);
	maglev_format_name(buf + n, len - n, &svc->addr,
			   svc->af == AF_INET6 ? 16 : 4, ntohs(svc->port));
}

/*
 * The entry of the set named as @dest, or NULL with *@link and *@parent
 * where it would go.
 */
static struct maglev_dest *maglev_set_find(struct maglev_service *ms,
					   const char *name, u32 len,
					   struct rb_node ***link,
					   struct rb_node **parent)
{
	struct rb_node **p = &ms->set.rb_node;
	struct maglev_dest *d;
	int r;

	*parent = NULL;
	while (*p) {
		d = rb_entry(*p, struct maglev_dest, node);
		r = maglev_name_cmp(name, len, d->name, d->name_len);
		if (!r)
			return d;
		*parent = *p;
		p = r < 0 ? &(*p)->rb_left : &(*p)->rb_right;
	}
	*link = p;
	return NULL;
}

/* Record @dest's weights in its entry, and count it as live or not. */
static void maglev_set_weights(struct maglev_service *ms, struct maglev_dest *d,
			       const struct ip_vs_dest *dest)
{
	int weight = atomic_read(&dest->weight);

	ms->live -= !!d->weight;
	/* IPVS allows weights up to INT_MAX; draining keeps the last one. */
	d->weight = max(weight, 0);
	d->drain_weight = d->weight ? 0 :
			  max(atomic_read(&dest->last_weight), 0);
	ms->live += !!d->weight;
}

/*
 * Make the spare a destination with a weight, starting at @from (the first
 * if NULL) and going round the set, or none if no destination has one.
 */
static void maglev_set_spare(struct maglev_service *ms, struct rb_node *from)
{
	struct rb_node *node = from ? from : rb_first(&ms->set);
	struct maglev_dest *d = NULL;
	u32 i;

	for (i = 0; ms->live && i < ms->nr; i++) {
		d = rb_entry(node, struct maglev_dest, node);
		if (d->weight)
			break;
		node = rb_next(node) ?: rb_first(&ms->set);
		if (!(i % MAGLEV_RESCHED_ENTRIES))
			cond_resched();
	}
	rcu_assign_pointer(ms->spare, ms->live ? d->dest : NULL);
}

/*
 * Add @dest to the set, or update its entry.  Return: 0, or -ENOMEM (the
 * set is then incomplete).
 */
static int maglev_set_add(struct maglev_service *ms, struct ip_vs_dest *dest)
{
	struct rb_node **link, *parent;
	struct maglev_dest *d, key;

	key.name_len = maglev_dest_name(key.name, dest);
	d = maglev_set_find(ms, key.name, key.name_len, &link, &parent);
	if (!d) {
		/* Charged to the caller's memory cgroup, as IPVS's own. */
		d = kmalloc(sizeof(*d), GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
		if (!d) {
			ms->incomplete = true;
			return -ENOMEM;
		}
		memcpy(d, &key, sizeof(key));
		d->dest = dest;
		d->weight = 0;
		rb_link_node(&d->node, parent, link);
		rb_insert_color(&d->node, &ms->set);
		ms->nr++;
	}
	maglev_set_weights(ms, d, dest);
	if (d->weight)
		rcu_assign_pointer(ms->spare, dest);
	else if (rcu_access_pointer(ms->spare) == dest)
		maglev_set_spare(ms, rb_next(&d->node));
	return 0;
}

static void maglev_set_erase(struct maglev_service *ms, struct maglev_dest *d)
{
	struct rb_node *next = rb_next(&d->node);

	ms->live -= !!d->weight;
	ms->nr--;
	rb_erase(&d->node, &ms->set);
	if (rcu_access_pointer(ms->spare) == d->dest)
		maglev_set_spare(ms, next);
	kfree(d);
}

/*
 * After a destination could not be recorded: add each of the service's
 * destinations that the set lacks.  IPVS's list is walked under IPVS's
 * mutex, as every callback runs.
 */
static void maglev_set_repair(struct maglev_service *ms,
			      struct ip_vs_service *svc)
{
	struct ip_vs_dest *dest;
	u32 i = 0;

	ms->incomplete = false;
	list_for_each_entry(dest, &svc->destinations, n_list) {
		if (maglev_set_add(ms, dest))
			break;
		if (!(++i % MAGLEV_RESCHED_ENTRIES))
			cond_resched();
	}
	if (!ms->incomplete)
		pr_info("%s: maglev destinations recorded again\n", ms->name);
}

/* Empty the set, at the service's end. */
static void maglev_set_clear(struct maglev_service *ms)
{
	struct maglev_dest *d, *n;
	u32 i = 0;

	rbtree_postorder_for_each_entry_safe(d, n, &ms->set, node) {
		kfree(d);
		if (!(++i % MAGLEV_RESCHED_ENTRIES))
			cond_resched();
	}
	ms->set = RB_ROOT;
	ms->nr = 0;
	ms->live = 0;
	RCU_INIT_POINTER(ms->spare, NULL);
}

/* Scheduler ops */

/**
 * ip_vs_maglev_init_svc() - set up a service that starts using maglev
 * @svc: the service, possibly with destinations already (ipvsadm -E)
 *
 * Records the service's destinations and queues the first build at once;
 * until it publishes, schedule() sends new connections to the spare
 * destination.  The first build is charged to the memory cgroup of the
 * calling task, each later one to that of the task whose change queued it.
 *
 * Context: process context, IPVS configuration mutex held.
 * Return: 0, or -ENOMEM.
 */
static int ip_vs_maglev_init_svc(struct ip_vs_service *svc)
{
	struct maglev_net *mn = maglev_pernet(svc->ipvs->net);
	struct maglev_service *ms;
	struct ip_vs_dest *dest;

	ms = kzalloc(sizeof(*ms), GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!ms)
		return -ENOMEM;
	ms->mn = mn;
	ms->svc = svc;
	refcount_set(&ms->ref, 1);
	mutex_init(&ms->set_lock);
	ms->set = RB_ROOT;
	INIT_LIST_HEAD(&ms->pending_node);
	ms->next_build = jiffies;
	maglev_svc_name(ms->name, sizeof(ms->name), svc);
	refcount_inc(&mn->builder->ref);
	ms->builder = mn->builder;

	mutex_lock(&ms->set_lock);
	list_for_each_entry(dest, &svc->destinations, n_list) {
		if (maglev_set_add(ms, dest))
			break;
		if (!(ms->nr % MAGLEV_RESCHED_ENTRIES))
			cond_resched();
	}
	mutex_unlock(&ms->set_lock);
	if (ms->incomplete) {
		ms->dead = true;
		maglev_set_clear(ms);
		maglev_svc_put(ms);
		return -ENOMEM;
	}

	svc->sched_data = ms;
	/* Writers of the list hold IPVS's configuration mutex; readers RCU. */
	list_add_tail_rcu(&ms->node, &mn->services);
	maglev_changed(ms);
	return 0;
}

/**
 * ip_vs_maglev_done_svc() - release a service's scheduler state
 * @svc: the service, being deleted or switched to another scheduler
 *
 * Does not wait for a running build, which discards its table.  Lookups
 * still running on another CPU and /proc readers may use the state until a
 * grace period has passed, so it is freed through RCU.  IPVS may free @svc
 * right after this returns.
 *
 * Context: process context, IPVS configuration mutex held.
 */
static void ip_vs_maglev_done_svc(struct ip_vs_service *svc)
{
	struct maglev_service *ms = svc->sched_data;

	list_del_rcu(&ms->node);
	maglev_svc_kill(ms);
	mutex_lock(&ms->set_lock);
	maglev_set_clear(ms);
	mutex_unlock(&ms->set_lock);
	maglev_svc_put(ms);
}

/*
 * add_dest, upd_dest: IPVS has linked @dest into the service, or changed
 * its weight.  The callbacks cannot refuse: a destination that cannot be
 * recorded leaves the set incomplete, logged and shown in /proc, and the
 * published table serving until a later callback repairs the set.
 */
static int ip_vs_maglev_add_dest(struct ip_vs_service *svc,
				 struct ip_vs_dest *dest)
{
	struct maglev_service *ms = svc->sched_data;

	mutex_lock(&ms->set_lock);
	if (ms->incomplete)
		maglev_set_repair(ms, svc);
	else if (maglev_set_add(ms, dest))
		pr_warn_ratelimited("%s: no memory to record a maglev destination: the table is kept until the next change\n",
				    ms->name);
	mutex_unlock(&ms->set_lock);
	maglev_changed(ms);
	return 0;
}

/* del_dest: IPVS has unlinked @dest, which goes to its trash. */
static int ip_vs_maglev_del_dest(struct ip_vs_service *svc,
				 struct ip_vs_dest *dest)
{
	struct maglev_service *ms = svc->sched_data;
	struct rb_node **link, *parent;
	struct maglev_dest *d;
	char name[MAGLEV_ADDR_NAME_MAX];
	u32 len = maglev_dest_name(name, dest);

	mutex_lock(&ms->set_lock);
	d = maglev_set_find(ms, name, len, &link, &parent);
	if (d)
		maglev_set_erase(ms, d);
	if (ms->incomplete)
		maglev_set_repair(ms, svc);
	mutex_unlock(&ms->set_lock);
	maglev_changed(ms);
	return 0;
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

/* The client hash: the whole address, and with flag-2 the port. */
static u32 maglev_client_hash(const struct ip_vs_service *svc,
			      const struct maglev_service *ms,
			      const struct sk_buff *skb,
			      const struct ip_vs_iphdr *iph)
{
	const union nf_inet_addr *addr;
	const hsiphash_key_t *key = &rcu_dereference(ms->mn->key)->hkey;
	__be16 port;

	addr = ip_vs_iph_inverse(iph) ? &iph->daddr : &iph->saddr;
	if (!(svc->flags & MAGLEV_F_PORT))
		return svc->af == AF_INET6 ? maglev_hash_ip6(&addr->in6, key) :
					     maglev_hash_ip4(&addr->ip, key);
	port = maglev_client_port(skb, iph);
	return svc->af == AF_INET6 ?
	       maglev_hash_ip6_port(&addr->in6, port, key) :
	       maglev_hash_ip4_port(&addr->ip, port, key);
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

/* The table's owner of @hash, or NULL for no table or an empty one. */
static struct ip_vs_dest *maglev_table_dest(const struct maglev_lut *lut,
					    u32 hash)
{
	u32 idx = lut ? maglev_lookup(lut->table, hash) : MAGLEV_NONE;

	return idx < (lut ? lut->nr : 0) ? lut->dest[idx] : NULL;
}

/*
 * The table's choice is unavailable: a few rehashes of the client hash,
 * then the service's spare, which has a weight whenever any destination of
 * the service has one (a table that lags its service: none yet, or one
 * whose destinations are all retired).  O(1) per connection.
 */
static struct ip_vs_dest *maglev_fallback(const struct ip_vs_service *svc,
					  const struct maglev_service *ms,
					  const struct maglev_lut *lut,
					  u32 hash)
{
	struct ip_vs_dest *dest;
	u32 i;

	for (i = 1; i <= MAGLEV_FALLBACK_TRIES; i++) {
		dest = maglev_table_dest(lut, maglev_rehash(hash, i));
		if (dest && !maglev_dest_unavailable(svc, dest))
			return dest;
	}
	dest = rcu_dereference(ms->spare);
	return dest && !maglev_dest_unavailable(svc, dest) ? dest : NULL;
}

/**
 * ip_vs_maglev_schedule() - pick the destination of a new connection
 * @svc: the service
 * @skb: the packet
 * @iph: its parsed IP header
 *
 * One keyed hash and one table load.  A retired choice, or with flag-1 an
 * overloaded one, falls back (maglev_fallback()); an overloaded one still
 * gets a TCP packet without SYN, whose connection lives there already.
 *
 * Context: softirq or process context, RCU read lock held.
 * Return: the destination, or NULL (after ip_vs_scheduler_err()).
 */
static struct ip_vs_dest *ip_vs_maglev_schedule(struct ip_vs_service *svc,
						const struct sk_buff *skb,
						struct ip_vs_iphdr *iph)
{
	struct maglev_service *ms = svc->sched_data;
	const struct maglev_lut *lut = rcu_dereference(ms->lut);
	u32 hash = maglev_client_hash(svc, ms, skb, iph);
	struct ip_vs_dest *dest = maglev_table_dest(lut, hash);

	if (likely(dest && !maglev_dest_unavailable(svc, dest)))
		return dest;
	/* Overloaded: a taken-over connection stays; no flag-1, refused. */
	if (dest && !maglev_dest_retired(svc, dest)) {
		if (maglev_tcp_takeover(skb, iph))
			return dest;
		if (!(svc->flags & MAGLEV_F_FALLBACK))
			goto refuse;
	}
	dest = maglev_fallback(svc, ms, lut, hash);
	if (dest)
		return dest;
refuse:
	ip_vs_scheduler_err(svc, "no destination available");
	return NULL;
}

/* Registration */

static int __net_init maglev_net_init(struct net *net)
{
	struct maglev_net *mn = maglev_pernet(net);
	int ret;

	INIT_LIST_HEAD(&mn->services);
	mn->net = net;
	mn->builder = maglev_builder_alloc();
	if (!mn->builder)
		return -ENOMEM;
	/*
	 * Whoever has CAP_NET_ADMIN in a namespace reads its key, a pod's
	 * CNI plugin too: only the initial namespace starts with hash_key.
	 */
	kernel_param_lock(THIS_MODULE);
	mn->builder->table_size = maglev_table_size;
	mn->builder->holdoff_ms = maglev_holdoff_ms;
	ret = maglev_set_key(mn, net_eq(net, &init_net) ?
			     maglev_hash_key : maglev_public_key);
	kernel_param_unlock(THIS_MODULE);
	if (ret)
		goto fail_builder;
	ret = maglev_sysctl_register(net, mn);
	if (ret)
		goto fail_key;
	ret = maglev_proc_init(net);
	if (ret)
		goto fail_sysctl;
	return 0;

fail_sysctl:
	unregister_net_sysctl_table(mn->sysctl);
	kfree(mn->ctl);
fail_key:
	kfree_sensitive(rcu_dereference_protected(mn->key, true));
fail_builder:
	maglev_builder_put(mn->builder);
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
	unregister_net_sysctl_table(mn->sysctl);
	kfree(mn->ctl);
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
	.add_dest =		ip_vs_maglev_add_dest,
	.del_dest =		ip_vs_maglev_del_dest,
	.upd_dest =		ip_vs_maglev_add_dest,
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
	/* It runs rcu_barrier() after the exits' call_rcu() (guest test 23). */
	unregister_pernet_subsys(&maglev_net_ops);
fail_wq:
	destroy_workqueue(maglev_wq);
	return ret;
}

static void __exit ip_vs_maglev_exit(void)
{
	unregister_ip_vs_scheduler(&ip_vs_maglev_scheduler);
	unregister_pernet_subsys(&maglev_net_ops);
	/*
	 * No service is left, but builds of deleted ones may run: wait for
	 * them, then for the grace periods of the tables they retired, whose
	 * frees queue on the workqueue that destroy_workqueue() drains.
	 */
	flush_workqueue(maglev_wq);
	rcu_barrier();
	destroy_workqueue(maglev_wq);
}

#ifdef MAGLEV_KUNIT
#include "kunit/maglev_glue_test.c"
#endif

module_init(ip_vs_maglev_init);
module_exit(ip_vs_maglev_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("IPVS maglev consistent hashing scheduler");
MODULE_VERSION("0.2");
