// SPDX-License-Identifier: GPL-2.0
/*
 * ip_vs_maglev - IPVS scheduler "maglev": Maglev consistent hashing
 * (Eisenbud et al., NSDI 2016) with a table that userspace can reproduce.
 *
 * The IPVS glue: parameters and sysctls, each service's own set of
 * destinations (kept by the callbacks under IPVS's configuration mutex),
 * a namespace's builds and store of shared tables, the RCU publish, the
 * lookup and /proc/net/ip_vs_maglev; maglev_table.c is the algorithm.
 * docs/design.md gives the reasons (its sections named here in quotes).
 */

#define KMSG_COMPONENT "IPVS"
#define pr_fmt(fmt) KMSG_COMPONENT ": " fmt

#include <linux/array_size.h>
#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/capability.h>
#include <linux/compiler.h>
#include <linux/container_of.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/gfp.h>
#include <linux/hashtable.h>
#include <linux/hex.h>
#include <linux/in.h>
#include <linux/init.h>
#include <linux/jiffies.h>
#include <linux/kstrtox.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/math.h>
#include <linux/memcontrol.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/printk.h>
#include <linux/proc_fs.h>
#include <linux/ratelimit.h>
#include <linux/rbtree.h>
#include <linux/rculist.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/seq_file_net.h>
#include <linux/siphash.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/sprintf.h>
#include <linux/string.h>
#include <linux/sysctl.h>
#include <linux/sysfs.h>
#include <linux/tcp.h>
#include <linux/timekeeping.h>
#include <linux/types.h>
#include <linux/unaligned.h>
#include <linux/user_namespace.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include <net/ip_vs.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include "compat/maglev_kcompat.h"
#include "maglev_table.h"

/* "make MH_COMPAT=1" registers the same scheduler as "mh" (Kbuild). */
#ifndef MAGLEV_SCHED_NAME
#define MAGLEV_SCHED_NAME	"maglev"
#endif

#define MAGLEV_F_FALLBACK	IP_VS_SVC_F_SCHED1
#define MAGLEV_F_PORT		IP_VS_SVC_F_SCHED2
#define MAGLEV_F_SCHED		(IP_VS_SVC_F_SCHED1 | IP_VS_SVC_F_SCHED2 | \
				 IP_VS_SVC_F_SCHED3)

/* Longest service description, "FWM6 4294967295" or "SCTP [v6]:65535". */
#define MAGLEV_SVC_NAME_MAX	(8 + MAGLEV_ADDR_NAME_MAX + 1)

#define MAGLEV_HOLDOFF_DEFAULT	50
#define MAGLEV_HOLDOFF_MAX_MS	10000
/* A build's duration lengthens its service's hold-off up to this. */
#define MAGLEV_HOLDOFF_LONG	msecs_to_jiffies(1000)
/* Retry delays of a build that ran out of memory. */
#define MAGLEV_RETRY_MIN	msecs_to_jiffies(10)
#define MAGLEV_RETRY_MAX	msecs_to_jiffies(1000)

/* Destinations a loop handles between two reschedule points (~0.1 ms). */
#define MAGLEV_RESCHED_ENTRIES	128
/* Rehashes tried when the table's choice is unavailable ("Lookup"). */
#define MAGLEV_FALLBACK_TRIES	8
/* Builds running at once, of different namespaces ("Work items"). */
#define MAGLEV_WQ_MAX_ACTIVE	4

/*
 * Build memory may fail, never waking the OOM killer: kmalloc() up to a
 * page with __GFP_NORETRY, vmalloc() (which ignores it) above with
 * __GFP_RETRY_MAYFAIL ("Builds").
 */
#define MAGLEV_GFP_SMALL	(GFP_KERNEL_ACCOUNT | __GFP_NORETRY | __GFP_NOWARN)
#define MAGLEV_GFP		(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | \
				 __GFP_NOWARN)

/**
 * struct maglev_key - a published client hash key
 * @hkey: the client hash's key (maglev_hkey_from_bytes())
 * @bytes: the whole key, for the sysctl's read
 * @fp: its fingerprint, shown in /proc
 * @rcu: frees a replaced key after a grace period
 */
struct maglev_key {
	hsiphash_key_t hkey;
	u8 bytes[MAGLEV_KEY_BYTES];
	u32 fp;
	struct rcu_head rcu;
};

/**
 * struct maglev_net - a network namespace's state, builds and table store
 * @ref: one for the namespace, each service, the queued @work and each
 *	stored table; it outlives the namespace while they do ("Lifetimes")
 * @lock: protects @pending, @due, the store, and each service's build
 *	state (the fields of struct maglev_service marked (*)); innermost
 * @pending: services with a build to run, in the order of their changes
 * @work: builds one due service a run, then queues itself for the next
 * @due: when @work runs (valid while it is queued)
 * @table_size: sysctl maglev_table_size
 * @holdoff_ms: sysctl maglev_holdoff_ms
 * @found: builds that found their table in the store
 * @next_id: the id of the last table stored, the number of fills
 * @tables: tables in the store
 * @mem: bytes of those tables
 * @hash: the stored tables by maglev_inputs_hash()
 * @services: the maglev services; written by init_service and
 *	done_service under IPVS's mutex, read under RCU
 * @key: the client hash key (RCU)
 * @net: the namespace, while it lives
 * @ctl: this namespace's copy of the sysctl table
 * @sysctl: its registration
 */
struct maglev_net {
	refcount_t ref;
	spinlock_t lock;	/* see above */
	struct list_head pending;
	struct delayed_work work;
	unsigned long due;
	unsigned int table_size;
	unsigned int holdoff_ms;
	u64 found;
	u64 next_id;
	u32 tables;
	size_t mem;
	DECLARE_HASHTABLE(hash, 8);
	struct list_head services;
	struct maglev_key __rcu *key;
	struct net *net;
	struct ctl_table *ctl;
	struct ctl_table_header *sysctl;
};

/**
 * struct maglev_shared - an immutable table that services share
 * @node: entry in its namespace's store
 * @mn: the namespace's state (one reference)
 * @ref: one for each descriptor (struct maglev_lut) built on it, and for
 *	each /proc reader printing its destination lines
 * @users: services whose published table it is
 * @hash: maglev_inputs_hash() of M and the backends
 * @id: the table's number in its namespace (1, 2, ...)
 * @build_ns: duration of its maglev_build()
 * @mem: bytes of its one allocation: this structure, @be, then @table
 * @churn_from: @id of the table @churn was counted against, 0 for none
 * @churn: slots whose owner differs from those of table @churn_from
 * @table: the slots, with M and the number of backends
 * @be: the backends in name order, with their slot counts
 *
 * Immutable once stored, but for @users and the churn memo (build work).
 */
struct maglev_shared {
	struct hlist_node node;
	struct maglev_net *mn;
	refcount_t ref;
	atomic_t users;
	u64 hash;
	u64 id;
	u64 build_ns;
	size_t mem;
	u64 churn_from;
	u32 churn;
	struct maglev_table *table;
	struct maglev_backend *be;
};

/**
 * struct maglev_lut - a service's published table, with its destinations
 * @table: @shared's slots, read by the lookup without loading @shared
 * @nr: number of destinations (backends)
 * @churn: slots whose owner changed against the previous table
 * @builds: tables published for the service, this one included
 * @gen: the service's @gen that it was built from
 * @mem: bytes of this descriptor
 * @shared: the shared table, one reference
 * @free: puts the references a grace period after it is replaced
 * @dest: the destinations in @shared's backend order, one reference each
 *
 * Immutable once published.  What the lookup reads comes first.
 */
struct maglev_lut {
	struct maglev_table *table;
	u32 nr;
	u32 churn;
	u64 builds;
	u64 gen;
	size_t mem;
	struct maglev_shared *shared;
	struct rcu_work free;
	struct ip_vs_dest *dest[];
};

/**
 * struct maglev_dest - a destination in its service's set
 * @node: entry in the set, in backend name order
 * @dest: the IPVS destination, alive while in the set
 * @weight: its weight, 0..INT_MAX
 * @drain_weight: with @weight 0, its last weight (draining), else 0
 * @name_len: length of @name
 * @pos: with a weight, its index in the service's @spares
 * @name: its backend name, "A.B.C.D:port" or "[v6]:port"
 */
struct maglev_dest {
	struct rb_node node;
	struct ip_vs_dest *dest;
	u32 weight;
	u32 drain_weight;
	u32 name_len;
	u32 pos;
	char name[MAGLEV_ADDR_NAME_MAX + 1];
};

/**
 * struct maglev_spares - the destinations of a set that have a weight
 * @nr: how many (read by the lookup with smp_load_acquire())
 * @room: entries allocated, at least the set's size
 * @rcu: frees a replaced array after a grace period
 * @dest: the destinations, in no order
 */
struct maglev_spares {
	u32 nr;
	u32 room;
	struct rcu_head rcu;
	struct ip_vs_dest *dest[];
};

/**
 * struct maglev_service - per-service scheduler state (svc->sched_data)
 * @node: entry in the namespace's service list
 * @mn: the namespace's state (one reference)
 * @svc: the IPVS service, read by the callbacks, the lookup, /proc (under
 *	the namespace's lock, not @dead) and a repair (under @set_lock)
 * @lut: the published table, or NULL before the first one (RCU; written
 *	by the namespace's work alone, which never runs twice at once)
 * @spares: the destinations of the set with a weight: the lookup's last
 *	resort, one by the client hash (RCU; written under @set_lock)
 * @ref: one for the IPVS service, one while pending or being built
 * @set_lock: protects @set, @nr, @spares and @incomplete: the callbacks
 *	change them, a build copies them; taken under IPVS's mutex, if any
 * @set: the destinations (struct maglev_dest) by name
 * @nr: number of destinations in @set
 * @incomplete: a destination could not be recorded; a build repairs the
 *	set before it copies it
 * @dead: set by done_service; nothing is published after it (*)
 * @pending_node: entry in the namespace's pending list (*)
 * @gen: changes recorded (*)
 * @due: when the pending build may start (*)
 * @next_build: when the next build may start, by the hold-off (*)
 * @retry: retry delay after a build ran out of memory, else 0 (*)
 * @memcg: memory cgroup of the latest change, charged with the next build;
 *	NULL once a build took it (*)
 * @alloc_fail: builds that failed for lack of memory
 * @build_fail: builds that failed for any other reason
 * @name: the service's description, "TCP 10.0.0.1:80", "FWM 42", ...
 * @rcu: frees this structure after a grace period
 *
 * (*): under the namespace's lock, struct maglev_net.lock.
 */
struct maglev_service {
	struct list_head node;
	struct maglev_net *mn;
	struct ip_vs_service *svc;
	struct maglev_lut __rcu *lut;
	struct maglev_spares __rcu *spares;
	refcount_t ref;
	struct mutex set_lock;	/* see above */
	struct rb_root set;
	u32 nr;
	bool incomplete;
	bool dead;
	struct list_head pending_node;
	u64 gen;
	unsigned long due;
	unsigned long next_build;
	unsigned long retry;
	struct mem_cgroup *memcg;
	u64 alloc_fail;
	u64 build_fail;
	char name[MAGLEV_SVC_NAME_MAX];
	struct rcu_head rcu;
};

/*
 * Exported by both ip_vs_maglev.ko and its mh build, which both create
 * /proc/net/ip_vs_maglev: the loader refuses the second one ("exports
 * duplicate symbol maglev_build").
 */
EXPORT_SYMBOL_GPL(maglev_build);

/* What a new network namespace starts with (module parameters). */
static unsigned int maglev_table_size = MAGLEV_SIZE_DEFAULT;
static unsigned int maglev_holdoff_ms = MAGLEV_HOLDOFF_DEFAULT;
static u8 maglev_hash_key[MAGLEV_KEY_BYTES];
/* The documented default key: public, all zero. */
static const u8 maglev_public_key[MAGLEV_KEY_BYTES];

static unsigned int maglev_net_id __read_mostly;
static struct workqueue_struct *maglev_wq;

static struct maglev_net *maglev_pernet(struct net *net)
{
	return *(struct maglev_net **)net_generic(net, maglev_net_id);
}

/* Settings */

#define MAGLEV_AUTO_GONE	"auto is no longer a table size: the size is fixed, 65537 by default, or a prime in 251..5000011"

/*
 * A table size (@size) or a hold-off written as text, with at most one
 * trailing newline.  Return: 0, or -EINVAL with *@why set to the reason.
 */
static int maglev_parse(const char *text, bool size, unsigned int *v,
			const char **why)
{
	*why = size && sysfs_streq(text, "auto") ? MAGLEV_AUTO_GONE :
						   "not a number";
	if (kstrtouint(text, 0, v))
		return -EINVAL;
	if (size)
		return maglev_check_size(*v, why);
	*why = "more than 10000";
	return *v > MAGLEV_HOLDOFF_MAX_MS ? -EINVAL : 0;
}

/* A hash key: 32 hex digits, one trailing newline at most; else wiped. */
static int maglev_parse_key(const char *s, size_t len, u8 *b)
{
	if (len && s[len - 1] == '\n')
		len--;
	if (len == 2 * MAGLEV_KEY_BYTES && !hex2bin(b, s, MAGLEV_KEY_BYTES))
		return 0;
	memzero_explicit(b, MAGLEV_KEY_BYTES);
	return -EINVAL;
}

/*
 * The parameters.  table_size=auto, left in a modprobe.d file by an
 * earlier version, does not keep the module from loading: it is ignored,
 * with one warning.  No key is ever printed.
 */
static int maglev_param_set(const char *val, const struct kernel_param *kp)
{
	bool size = kp->arg == &maglev_table_size;
	const char *why = "not 32 hex digits";
	u8 b[MAGLEV_KEY_BYTES];
	unsigned int v;

	if (size && sysfs_streq(val, "auto")) {
		pr_warn(KBUILD_MODNAME ".table_size=auto ignored, the size stays %u: %s\n",
			maglev_table_size, MAGLEV_AUTO_GONE);
		return 0;
	}
	if (kp->arg == maglev_hash_key) {
		if (!maglev_parse_key(val, strlen(val), b)) {
			memcpy(kp->arg, b, sizeof(b));
			memzero_explicit(b, sizeof(b));
			return 0;
		}
	} else if (!maglev_parse(val, size, &v, &why)) {
		*(unsigned int *)kp->arg = v;
		return 0;
	}
	pr_info(KBUILD_MODNAME ".%s rejected: %s\n", kp->name, why);
	return -EINVAL;
}

/* The key's file is 0600, sysfs checks no more: it needs CAP_NET_ADMIN. */
static int maglev_param_get(char *buf, const struct kernel_param *kp)
{
	if (kp->arg != maglev_hash_key)
		return param_get_uint(buf, kp);
	if (!capable(CAP_NET_ADMIN))
		return -EPERM;
	return sysfs_emit(buf, "%*phN\n", MAGLEV_KEY_BYTES, kp->arg);
}

static const struct kernel_param_ops maglev_param_ops = {
	.set = maglev_param_set,
	.get = maglev_param_get,
};

module_param_cb(table_size, &maglev_param_ops, &maglev_table_size, 0644);
MODULE_PARM_DESC(table_size,
		 "table size a new network namespace starts with (net.ipv4.vs.maglev_table_size): a prime in 251..5000011 (default 65537)");
module_param_cb(holdoff_ms, &maglev_param_ops, &maglev_holdoff_ms, 0644);
MODULE_PARM_DESC(holdoff_ms,
		 "hold-off a new network namespace starts with (net.ipv4.vs.maglev_holdoff_ms), 0..10000 ms (default 50)");
module_param_cb(hash_key, &maglev_param_ops, maglev_hash_key, 0600);
MODULE_PARM_DESC(hash_key,
		 "client hash key the initial network namespace starts with (net.ipv4.vs.maglev_hash_key; every other one starts with the public all-zero key), 32 hex digits (default all zero)");

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
	memcpy(k->bytes, b, sizeof(k->bytes));
	maglev_hkey_from_bytes(&k->hkey, b);
	k->fp = maglev_key_fingerprint(b);
	old = unrcu_pointer(xchg(&mn->key, RCU_INITIALIZER(k)));
	if (old)
		call_rcu(&old->rcu, maglev_key_free_rcu);
	return 0;
}

/* A service's set of destinations ("The module's own destination set") */

/*
 * Weight 0, removed, or no longer @svc's (the trash hands a fwmark's
 * destination to FWM6 of the same mark): the next table drops it, and its
 * new connections go elsewhere at once.
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

/* A destination's backend name, "A.B.C.D:port" or "[v6]:port". */
static u32 maglev_dest_name(char *buf, const struct ip_vs_dest *dest)
{
	int n = maglev_format_name(buf, MAGLEV_ADDR_NAME_MAX + 1, &dest->addr,
				   dest->af == AF_INET6 ? 16 : 4,
				   ntohs(dest->port));

	return WARN_ON_ONCE(n <= 0) ? 0 : n;
}

/*
 * A service's description for messages and /proc: "TCP 10.0.0.1:80" (IPVS
 * takes TCP, UDP and SCTP services), or "FWM 42".
 */
static void maglev_svc_name(char *buf, size_t len,
			    const struct ip_vs_service *svc)
{
	int n;

	if (svc->fwmark) {
		scnprintf(buf, len, "%s %u",
			  svc->af == AF_INET6 ? "FWM6" : "FWM", svc->fwmark);
		return;
	}
	n = scnprintf(buf, len, "%s ", ip_vs_proto_name(svc->protocol));
	maglev_format_name(buf + n, len - n, &svc->addr,
			   svc->af == AF_INET6 ? 16 : 4, ntohs(svc->port));
}

/* The set's order: rb_find() with an entry as the key, and rb_add(). */
static int maglev_set_cmp(const void *key, const struct rb_node *node)
{
	const struct maglev_dest *k = key;
	const struct maglev_dest *d = rb_entry(node, struct maglev_dest, node);

	return maglev_name_cmp(k->name, k->name_len, d->name, d->name_len);
}

static bool maglev_set_less(struct rb_node *a, const struct rb_node *b)
{
	return maglev_set_cmp(rb_entry(a, struct maglev_dest, node), b) < 0;
}

/* The entry of @dest's name, with the name in @key. */
static struct maglev_dest *maglev_set_find(struct maglev_service *ms,
					   struct maglev_dest *key,
					   const struct ip_vs_dest *dest)
{
	key->name_len = maglev_dest_name(key->name, dest);
	return rb_entry_safe(rb_find(key, &ms->set, maglev_set_cmp),
			     struct maglev_dest, node);
}

/* Room for one more spare: a copy twice the size; the old one RCU-freed. */
static int maglev_spares_grow(struct maglev_service *ms, gfp_t gfp)
{
	struct maglev_spares *a = rcu_dereference_protected(ms->spares,
				lockdep_is_held(&ms->set_lock)), *n;
	u32 room = a ? a->room : 0;

	if (ms->nr < room)
		return 0;
	room = max(2 * room, 8U);
	n = kvmalloc(struct_size(n, dest, room), gfp | __GFP_ACCOUNT |
		     __GFP_NOWARN);
	if (!n)
		return -ENOMEM;
	n->room = room;
	n->nr = a ? a->nr : 0;
	if (a)
		memcpy(n->dest, a->dest, array_size(a->nr, sizeof(*a->dest)));
	rcu_assign_pointer(ms->spares, n);
	kvfree_rcu(a, rcu);
	return 0;
}

/* Put @d into @ms->spares (@on), or the last one into its place instead. */
static void maglev_spares_set(struct maglev_service *ms, struct maglev_dest *d,
			      bool on)
{
	struct maglev_spares *a = rcu_dereference_protected(ms->spares,
				lockdep_is_held(&ms->set_lock));
	struct maglev_dest key, *last;

	if (on) {
		d->pos = a->nr;
		WRITE_ONCE(a->dest[d->pos], d->dest);
		/* The entry before the count (the lookup's acquire). */
		smp_store_release(&a->nr, a->nr + 1);
		return;
	}
	last = maglev_set_find(ms, &key, a->dest[a->nr - 1]);
	last->pos = d->pos;
	WRITE_ONCE(a->dest[d->pos], last->dest);
	WRITE_ONCE(a->nr, a->nr - 1);
}

/*
 * Add @dest to the set, or record its new weight.  IPVS allows weights up
 * to INT_MAX; a weight of 0 keeps the last one as the drain weight.
 * Return: 0, or -ENOMEM (the set is then incomplete).
 */
static int maglev_set_add(struct maglev_service *ms, struct ip_vs_dest *dest,
			  gfp_t gfp)
{
	struct maglev_dest *d, key = {};
	bool had;

	d = maglev_set_find(ms, &key, dest);
	if (!d) {
		if (!maglev_spares_grow(ms, gfp))
			d = kmalloc(sizeof(*d), gfp | __GFP_ACCOUNT |
				    __GFP_NOWARN);
		if (!d) {
			ms->incomplete = true;
			return -ENOMEM;
		}
		memcpy(d, &key, sizeof(key));
		d->dest = dest;
		rb_add(&d->node, &ms->set, maglev_set_less);
		ms->nr++;
	}
	had = d->weight;
	d->weight = max(atomic_read(&dest->weight), 0);
	d->drain_weight = d->weight ? 0 :
			  max(atomic_read(&dest->last_weight), 0);
	if (had != !!d->weight)
		maglev_spares_set(ms, d, d->weight);
	return 0;
}

/*
 * Add what the set lacks of @svc's destinations: init_service under IPVS's
 * mutex, or a build's repair under RCU (@gfp may not sleep then), where
 * @set_lock keeps every unlink from @svc out ("The module's own
 * destination set").  Context: @ms->set_lock held.
 */
static void maglev_set_add_all(struct maglev_service *ms,
			       struct ip_vs_service *svc, gfp_t gfp)
{
	struct maglev_dest key;
	struct ip_vs_dest *dest;
	u32 i = 0;

	ms->incomplete = false;
	list_for_each_entry_rcu(dest, &svc->destinations, n_list,
				lockdep_is_held(&ms->set_lock)) {
		if (!maglev_set_find(ms, &key, dest) &&
		    maglev_set_add(ms, dest, gfp))
			return;
		if (gfpflags_allow_blocking(gfp))
			maglev_resched(i++, MAGLEV_RESCHED_ENTRIES);
	}
}

/* Empty the set, at the service's end. */
static void maglev_set_clear(struct maglev_service *ms)
{
	struct maglev_dest *d, *n;
	struct maglev_spares *a;
	u32 i = 0;

	rbtree_postorder_for_each_entry_safe(d, n, &ms->set, node) {
		kfree(d);
		maglev_resched(i++, MAGLEV_RESCHED_ENTRIES);
	}
	ms->set = RB_ROOT;
	ms->nr = 0;
	ms->incomplete = false;	/* nothing to repair: @svc may be gone */
	a = rcu_replace_pointer(ms->spares, NULL, true);
	kvfree_rcu(a, rcu);
}

/* Builds and the table store ("Builds", "Sharing", "Lifetimes") */

/*
 * Build memory charged to the active memory cgroup and allowed to fail
 * (MAGLEV_GFP): kmalloc() up to a page, vmalloc() above, not kvmalloc(),
 * whose kmalloc() attempt of a large block keeps __GFP_RETRY_MAYFAIL's
 * reclaim and takes the next power of two.  *@mem, if given, grows by the
 * bytes allocated.  Freed with kvfree().
 */
static void *maglev_mem_alloc(size_t bytes, size_t *mem)
{
	void *p;

	if (bytes <= PAGE_SIZE) {
		bytes = kmalloc_size_roundup(bytes);
		p = kmalloc(bytes, MAGLEV_GFP_SMALL);
	} else {
		bytes = PAGE_ALIGN(bytes);
		p = __vmalloc(bytes, MAGLEV_GFP);
	}
	if (p && mem)
		*mem += bytes;
	return p;
}

static void maglev_net_put(struct maglev_net *mn)
{
	if (!refcount_dec_and_test(&mn->ref))
		return;
	WARN_ON_ONCE(!list_empty(&mn->pending) || mn->tables);
	kfree(mn);
}

/* The last reference removes the table from its store and frees it. */
static void maglev_shared_put(struct maglev_shared *t)
{
	struct maglev_net *mn = t ? t->mn : NULL;

	if (!t || !refcount_dec_and_test(&t->ref))
		return;
	spin_lock(&mn->lock);
	hash_del(&t->node);
	mn->tables--;
	mn->mem -= t->mem;
	spin_unlock(&mn->lock);
	kvfree(t);
	maglev_net_put(mn);
}

/* A hash of M and each backend's name and weights, to find candidates. */
static u64 maglev_inputs_hash(u32 size, const struct maglev_backend *be,
			      u32 nr)
{
	u64 h = maglev_hash(&size, sizeof(size), nr);
	u32 i;

	for (i = 0; i < nr; i++) {
		h = maglev_hash(be[i].name, be[i].name_len,
				h ^ ((u64)be[i].weight << 32 |
				     be[i].drain_weight));
		maglev_resched(i, MAGLEV_RESCHED_ENTRIES);
	}
	return h;
}

/*
 * A stored table with exactly these inputs, with a new reference: the
 * candidate is picked under the lock, its backends compared while the
 * reference keeps it.
 */
static struct maglev_shared *maglev_store_find(struct maglev_net *mn,
					       u32 size,
					       const struct maglev_backend *be,
					       u32 nr, u64 hash)
{
	struct maglev_shared *t, *found = NULL;
	u32 i;

	spin_lock(&mn->lock);
	hash_for_each_possible(mn->hash, t, node, hash) {
		if (t->hash == hash && t->table->size == size &&
		    t->table->nr_backends == nr &&
		    refcount_inc_not_zero(&t->ref)) {
			found = t;
			break;
		}
	}
	spin_unlock(&mn->lock);
	for (i = 0; found && i < nr; i++) {
		if (found->be[i].weight != be[i].weight ||
		    found->be[i].drain_weight != be[i].drain_weight ||
		    maglev_backend_cmp(&found->be[i], &be[i])) {
			maglev_shared_put(found);
			found = NULL;
		}
		maglev_resched(i, MAGLEV_RESCHED_ENTRIES);
	}
	return found;
}

/*
 * Fill a new table of @be and store it: one allocation for the structure,
 * a copy of @be and the slots, so that the page the slots round up to
 * holds the rest.  Return: the table, or an ERR_PTR() with *@why set.
 */
static struct maglev_shared *maglev_fill_new(struct maglev_net *mn,
					     u32 size,
					     const struct maglev_backend *be,
					     u32 nr, u64 hash,
					     const char **why)
{
	size_t be_bytes = array_size(nr, sizeof(*be)), mem = 0;
	void *work = maglev_mem_alloc(maglev_work_bytes(size, nr), NULL);
	struct maglev_shared *t = NULL;
	int ret = -ENOMEM;
	u32 i;

	if (work)
		t = maglev_mem_alloc(size_add(size_add(sizeof(*t), be_bytes),
					      maglev_table_bytes(size, nr)),
				     &mem);
	if (t) {
		memset(t, 0, sizeof(*t));
		t->be = (struct maglev_backend *)(t + 1);
		t->table = (struct maglev_table *)((u8 *)t->be + be_bytes);
		for (i = 0; i < nr; i++) {
			t->be[i] = be[i];
			maglev_resched(i, MAGLEV_RESCHED_BACKENDS);
		}
		t->build_ns = ktime_get_ns();
		ret = maglev_build(t->table, size, t->be, nr, work, NULL, why);
		t->build_ns = ktime_get_ns() - t->build_ns;
	}
	kvfree(work);
	if (ret) {
		kvfree(t);
		return ERR_PTR(ret);
	}
	refcount_set(&t->ref, 1);
	t->mem = mem;
	t->hash = hash;
	refcount_inc(&mn->ref);
	t->mn = mn;
	spin_lock(&mn->lock);
	t->id = ++mn->next_id;
	mn->tables++;
	mn->mem += t->mem;
	hash_add(mn->hash, &t->node, hash);
	spin_unlock(&mn->lock);
	return t;
}

/* Put a descriptor's destinations and shared table, and free it. */
static void maglev_lut_free(struct maglev_lut *lut)
{
	u32 i;

	/* A removed destination lives in IPVS's trash until its last put. */
	for (i = 0; i < lut->nr; i++) {
		ip_vs_dest_put_and_free(lut->dest[i]);
		maglev_resched(i, MAGLEV_RESCHED_ENTRIES);
	}
	maglev_shared_put(lut->shared);
	kvfree(lut);
}

static void maglev_lut_free_work(struct work_struct *work)
{
	maglev_lut_free(container_of(to_rcu_work(work), struct maglev_lut,
				     free));
}

/* A replaced table stops counting as a user; freed after a grace period. */
static void maglev_lut_retire(struct maglev_lut *lut)
{
	if (!lut)
		return;
	atomic_dec(&lut->shared->users);
	INIT_RCU_WORK(&lut->free, maglev_lut_free_work);
	queue_rcu_work(maglev_wq, &lut->free);
}

/* The last reference retires the service's table and frees its state. */
static void maglev_svc_put(struct maglev_service *ms)
{
	if (!ms || !refcount_dec_and_test(&ms->ref))
		return;
	maglev_lut_retire(rcu_dereference_protected(ms->lut, true));
	mem_cgroup_put(ms->memcg);
	maglev_net_put(ms->mn);
	mutex_destroy(&ms->set_lock);
	kfree_rcu(ms, rcu);
}

/*
 * Jiffies from @now until @when: 0 if it has passed, and never more than
 * MAGLEV_HOLDOFF_MAX_MS, whatever jiffies did meanwhile.
 */
static unsigned long maglev_delay(unsigned long now, unsigned long when)
{
	if (!time_before(now, when))
		return 0;
	return min(when - now, msecs_to_jiffies(MAGLEV_HOLDOFF_MAX_MS));
}

/*
 * Make the namespace's build work run at @when, or earlier if it is queued for
 * earlier.  A queued work holds a reference.  Context: @mn->lock held.
 */
static void maglev_arm(struct maglev_net *mn, unsigned long when)
{
	unsigned long now = jiffies, delay = maglev_delay(now, when);

	lockdep_assert_held(&mn->lock);
	if (queue_delayed_work(maglev_wq, &mn->work, delay)) {
		refcount_inc(&mn->ref);
	} else if (time_before(now + delay, mn->due)) {
		if (!mod_delayed_work(maglev_wq, &mn->work, delay))
			refcount_inc(&mn->ref);
	} else {
		return;
	}
	mn->due = now + delay;
}

/*
 * Put @ms on the pending list with a build due at @when, or pull an
 * earlier @when in.  The list holds a reference.  Context: namespace's lock.
 */
static void maglev_pend(struct maglev_service *ms, unsigned long when)
{
	lockdep_assert_held(&ms->mn->lock);
	if (ms->dead)
		return;
	if (list_empty(&ms->pending_node)) {
		refcount_inc(&ms->ref);
		list_add_tail(&ms->pending_node, &ms->mn->pending);
		ms->due = when;
	} else if (time_before(when, ms->due)) {
		ms->due = when;
	}
	maglev_arm(ms->mn, ms->due);
}

/*
 * Record a change of @ms and queue its build for the end of its hold-off,
 * charged to the memory cgroup of the calling task.
 */
static void maglev_changed(struct maglev_service *ms)
{
	struct mem_cgroup *memcg = get_mem_cgroup_from_mm(current->mm);
	struct maglev_net *mn = ms->mn;
	unsigned long now = jiffies;

	spin_lock(&mn->lock);
	if (!ms->dead) {
		ms->gen++;
		swap(ms->memcg, memcg);
		maglev_pend(ms, now + maglev_delay(now, ms->next_build));
	}
	spin_unlock(&mn->lock);
	mem_cgroup_put(memcg);
}

/*
 * The service after @prev (whose reference it puts), with a reference: O(1)
 * while @prev is not dead (its removal and its successor's need IPVS's
 * mutex), else the one at ordinal @k.  NULL past the last one.
 */
static struct maglev_service *maglev_svc_next(struct maglev_net *mn,
					      struct maglev_service *prev,
					      loff_t k)
{
	struct maglev_service *ms;

	rcu_read_lock();
	spin_lock(&mn->lock);
	ms = prev && !prev->dead ? prev : NULL;
	spin_unlock(&mn->lock);
	k = ms ? 0 : k;
	ms = list_prepare_entry(ms, &mn->services, node);
	list_for_each_entry_continue_rcu(ms, &mn->services, node) {
		if (k-- <= 0 && refcount_inc_not_zero(&ms->ref))
			break;
	}
	rcu_read_unlock();
	maglev_svc_put(prev);
	return list_entry_is_head(ms, &mn->services, node) ? NULL : ms;
}

/* A sysctl changed the table size: rebuild the namespace's services. */
static void maglev_rebuild_net(struct maglev_net *mn)
{
	struct maglev_service *ms = NULL;
	u32 i = 0;

	while ((ms = maglev_svc_next(mn, ms, i++))) {
		maglev_changed(ms);
		maglev_resched(i, MAGLEV_RESCHED_ENTRIES);
	}
}

/*
 * A new descriptor with a reference on each destination of @ms's set, and
 * in *@be their backends in name order, followed by at least
 * maglev_churn_bytes(@onr) bytes for maglev_churn() (freed with *@be).
 * The memory is allocated before the set's mutex, which the callbacks
 * wait for; an incomplete set is repaired first.
 * NULL with *@err: -ENOMEM (the repair's too) or -E2BIG.
 */
static struct maglev_lut *maglev_copy_set(struct maglev_service *ms, u32 onr,
					  struct maglev_backend **be,
					  int *err)
{
	struct maglev_lut *lut;
	struct rb_node *node;
	size_t mem;
	u32 room, n = 0;

	for (;;) {
		room = READ_ONCE(ms->nr);
		*err = room > MAGLEV_MAX_BACKENDS ? -E2BIG : -ENOMEM;
		if (room > MAGLEV_MAX_BACKENDS)
			return NULL;
		mem = 0;
		lut = maglev_mem_alloc(struct_size(lut, dest, room), &mem);
		*be = maglev_mem_alloc(size_add(array_size(room, sizeof(**be)),
						maglev_churn_bytes(onr)), NULL);
		if (!lut || !*be)
			goto fail;
		MAGLEV_RACE_WINDOW(ms, 1);	/* test builds only: Kbuild */
		mutex_lock(&ms->set_lock);
		if (ms->incomplete) {
			rcu_read_lock();
			maglev_set_add_all(ms, ms->svc, GFP_NOWAIT);
			rcu_read_unlock();
		}
		/* Destinations added meanwhile make it allocate again. */
		if (ms->nr <= room || ms->incomplete)
			break;
		mutex_unlock(&ms->set_lock);
		kvfree(lut);
		kvfree(*be);
	}
	if (ms->incomplete) {
		mutex_unlock(&ms->set_lock);
		goto fail;
	}
	for (node = rb_first(&ms->set); node; node = rb_next(node)) {
		const struct maglev_dest *d = rb_entry(node, struct maglev_dest,
						       node);
		struct maglev_backend *bk = &(*be)[n];

		memcpy(bk->name, d->name, d->name_len);
		bk->name_len = d->name_len;
		bk->weight = d->weight;
		bk->drain_weight = d->drain_weight;
		ip_vs_dest_hold(d->dest);
		lut->dest[n++] = d->dest;
		maglev_resched(n, MAGLEV_RESCHED_ENTRIES);
	}
	mutex_unlock(&ms->set_lock);
	lut->nr = n;
	lut->mem = mem;
	lut->shared = NULL;
	return lut;

fail:
	kvfree(lut);
	kvfree(*be);
	*be = NULL;
	return NULL;
}

/*
 * Slots whose owner changed from @old's table to @t, counted once for each
 * pair of tables (services that make the same move share the count).
 */
static u32 maglev_lut_churn(const struct maglev_lut *old,
			    struct maglev_shared *t, void *map)
{
	struct maglev_shared *ot = old ? old->shared : NULL;

	if (!ot)
		return t->table->nr_filled;
	if (ot == t)
		return 0;
	if (t->churn_from != ot->id) {
		t->churn = maglev_churn(ot->table, ot->be, old->nr, t->table,
					t->be, t->table->nr_backends, map);
		t->churn_from = ot->id;
	}
	return t->churn;
}

/*
 * Find or fill @ms's table from a copy of its set, charged to the memory
 * cgroup of the latest change, and publish it.  Return: 0, -ESHUTDOWN for
 * a dead service, or the build's negative errno (the old table serves).
 */
static int maglev_build_table(struct maglev_service *ms)
{
	struct maglev_net *mn = ms->mn;
	struct maglev_lut *lut, *old = rcu_dereference_protected(ms->lut,
				current_work() == &mn->work.work);
	struct mem_cgroup *memcg, *old_memcg;
	struct maglev_backend *be = NULL;
	struct maglev_shared *t = NULL;
	const char *why = NULL;
	u32 size, nr = 0;
	u64 gen, hash;
	int ret;

	spin_lock(&mn->lock);
	memcg = ms->memcg;
	ms->memcg = NULL;
	gen = ms->gen;
	spin_unlock(&mn->lock);
	old_memcg = set_active_memcg(memcg);
	lut = maglev_copy_set(ms, old ? old->nr : 0, &be, &ret);
	if (lut) {
		nr = lut->nr;
		size = maglev_fit_size(READ_ONCE(mn->table_size), nr);
		hash = maglev_inputs_hash(size, be, nr);
		t = maglev_store_find(mn, size, be, nr, hash);
		if (t)
			WRITE_ONCE(mn->found, mn->found + 1);
		else
			t = maglev_fill_new(mn, size, be, nr, hash, &why);
		ret = PTR_ERR_OR_ZERO(t);
	}
	if (lut && !ret) {
		lut->shared = t;
		lut->table = t->table;
		lut->churn = maglev_lut_churn(old, t, be + nr);
		lut->gen = gen;
		lut->builds = old ? old->builds + 1 : 1;
	} else if (lut) {
		maglev_lut_free(lut);
	}
	kvfree(be);
	set_active_memcg(old_memcg);
	if (ret)
		goto fail;
	mem_cgroup_put(memcg);

	MAGLEV_RACE_WINDOW(ms, 2);	/* test builds only: Kbuild */
	spin_lock(&mn->lock);
	if (ms->dead) {
		spin_unlock(&mn->lock);
		maglev_lut_free(lut);
		return -ESHUTDOWN;
	}
	atomic_inc(&t->users);
	rcu_assign_pointer(ms->lut, lut);
	spin_unlock(&mn->lock);
	maglev_lut_retire(old);
	return 0;

fail:
	spin_lock(&mn->lock);
	/* The retry is charged to it too, unless a change brought another. */
	if (ret == -ENOMEM && !ms->memcg)
		swap(ms->memcg, memcg);
	spin_unlock(&mn->lock);
	mem_cgroup_put(memcg);
	if (ret == -ENOMEM)
		WRITE_ONCE(ms->alloc_fail, ms->alloc_fail + 1);
	else
		WRITE_ONCE(ms->build_fail, ms->build_fail + 1);
	if (ret == -E2BIG) {
		nr = READ_ONCE(ms->nr);
		why = "more than 65535 destinations";
	}
	pr_warn_ratelimited("%s: maglev table build (%u dests) failed: %s (%d)%s\n",
			    ms->name, nr, why ? why : "out of memory", ret,
			    ret == -ENOMEM ? "; retrying" : "");
	return ret;
}

/*
 * Build @ms, taken off the pending list.  Its next build waits for the
 * hold-off, or for this build's duration when that is longer (up to
 * MAGLEV_HOLDOFF_LONG); a build that ran out of memory is retried after
 * its own delay instead ("Timing").
 */
static void maglev_build_service(struct maglev_service *ms)
{
	struct maglev_net *mn = ms->mn;
	unsigned long start = jiffies, end;
	int ret = maglev_build_table(ms);

	spin_lock(&mn->lock);
	end = jiffies;
	ms->next_build = end + max(min(end - start, MAGLEV_HOLDOFF_LONG),
				   msecs_to_jiffies(READ_ONCE(mn->holdoff_ms)));
	if (ret == -ENOMEM) {
		ms->retry = ms->retry ? min(ms->retry * 2, MAGLEV_RETRY_MAX) :
					MAGLEV_RETRY_MIN;
		maglev_pend(ms, end + ms->retry);
	} else {
		ms->retry = 0;
		/* A change during the build waits for the hold-off. */
		if (!list_empty(&ms->pending_node) &&
		    time_before(ms->due, ms->next_build))
			ms->due = ms->next_build;
	}
	spin_unlock(&mn->lock);
}

/*
 * The namespace's build work: build the first pending service that is due, then
 * queue itself again behind whatever the workqueue holds (other
 * namespaces' builds too), or for the earliest due time.
 */
static void maglev_net_work(struct work_struct *work)
{
	struct maglev_net *mn = container_of(to_delayed_work(work),
					     struct maglev_net, work);
	struct maglev_service *ms, *due = NULL;
	unsigned long now = jiffies, next = now;

	spin_lock(&mn->lock);
	list_for_each_entry(ms, &mn->pending, pending_node) {
		if (!time_after(ms->due, now)) {
			due = ms;
			break;
		}
		if (next == now || time_before(ms->due, next))
			next = ms->due;
	}
	if (due)
		list_del_init(&due->pending_node);
	spin_unlock(&mn->lock);

	if (due) {
		maglev_build_service(due);
		maglev_svc_put(due);
		next = jiffies;
	}
	spin_lock(&mn->lock);
	if (!list_empty(&mn->pending))
		maglev_arm(mn, next);
	spin_unlock(&mn->lock);
	maglev_net_put(mn);
}

/* Sysctls: net.ipv4.vs.maglev_* of each network namespace ("Namespaces") */

/* One budget for the three sysctls' messages, ten a second. */
static DEFINE_RATELIMIT_STATE(maglev_ratelimit, 5 * HZ, 50);

/*
 * maglev_table_size, maglev_holdoff_ms and maglev_hash_key (.data NULL),
 * read and written as text so that a rejected value is logged with its
 * reason (never the text written).  A new table size rebuilds the namespace's
 * services.  The key is read and written only with CAP_NET_ADMIN (0600).
 */
static int maglev_sysctl(maglev_ctl_table *table, int write, void *buffer,
			 size_t *lenp, loff_t *ppos)
{
	struct maglev_net *mn = table->extra2;
	unsigned int *data = table->data, v;
	char text[2 * MAGLEV_KEY_BYTES + 2] = "";
	struct ctl_table tmp = {
		.data = text,
		.maxlen = sizeof(text),
		.mode = table->mode,
	};
	const char *why = "not 32 hex digits";
	u8 b[MAGLEV_KEY_BYTES];
	int ret;

	if (!data && !ns_capable(mn->net->user_ns, CAP_NET_ADMIN))
		return -EPERM;
	rcu_read_lock();
	if (data)
		snprintf(text, sizeof(text), "%u", READ_ONCE(*data));
	else if (!write)
		bin2hex(text, rcu_dereference(mn->key)->bytes, sizeof(b));
	rcu_read_unlock();
	ret = proc_dostring(&tmp, write, buffer, lenp, ppos);
	if (!write || ret)
		goto out;
	ret = data ? maglev_parse(text, data == &mn->table_size, &v, &why) :
		     maglev_parse_key(text, strlen(text), b);
	if (ret) {
		if (__ratelimit(&maglev_ratelimit))
			pr_info("%s rejected: %s\n", table->procname, why);
	} else if (!data) {
		ret = maglev_set_key(mn, b);
	} else if (xchg(data, v) != v && data == &mn->table_size) {
		maglev_rebuild_net(mn);
	}
out:
	memzero_explicit(b, sizeof(b));
	memzero_explicit(text, sizeof(text));
	return ret;
}

/* Each namespace's copy points .data at its own, .extra2 at its state. */
static struct ctl_table maglev_ctl_template[] = {
	{
		.procname	= "maglev_table_size",
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= maglev_sysctl,
	},
	{
		.procname	= "maglev_holdoff_ms",
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= maglev_sysctl,
	},
	{
		.procname	= "maglev_hash_key",
		.maxlen		= 2 * MAGLEV_KEY_BYTES + 2,
		.mode		= 0600,
		.proc_handler	= maglev_sysctl,
	},
	MAGLEV_CTL_END
};

static int maglev_sysctl_register(struct net *net, struct maglev_net *mn)
{
	struct ctl_table *tbl;
	int i;

	tbl = kmemdup(maglev_ctl_template, sizeof(maglev_ctl_template),
		      GFP_KERNEL_ACCOUNT);
	if (!tbl)
		return -ENOMEM;
	tbl[0].data = &mn->table_size;
	tbl[1].data = &mn->holdoff_ms;
	for (i = 0; i < 3; i++)
		tbl[i].extra2 = mn;
	/*
	 * As IPVS does for what a namespace may cost the others: read-only
	 * in a namespace owned by another user namespace.  The key stays its
	 * own to set.
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

/* Scheduler ops */

/**
 * ip_vs_maglev_init_svc() - set up a service that starts using maglev
 * @svc: the service, possibly with destinations already (ipvsadm -E)
 *
 * Records the service's destinations and queues the first build at once,
 * charged to the calling task's memory cgroup; until it publishes, new
 * connections spread over the destinations with a weight.
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
	refcount_inc(&mn->ref);
	ms->mn = mn;
	ms->svc = svc;
	refcount_set(&ms->ref, 1);
	mutex_init(&ms->set_lock);
	INIT_LIST_HEAD(&ms->pending_node);
	ms->next_build = jiffies;
	maglev_svc_name(ms->name, sizeof(ms->name), svc);

	mutex_lock(&ms->set_lock);
	maglev_set_add_all(ms, svc, GFP_KERNEL);
	mutex_unlock(&ms->set_lock);
	if (ms->incomplete) {
		ms->dead = true;
		maglev_set_clear(ms);
		maglev_svc_put(ms);
		return -ENOMEM;
	}
	svc->sched_data = ms;
	list_add_tail_rcu(&ms->node, &mn->services);
	maglev_changed(ms);
	return 0;
}

/**
 * ip_vs_maglev_done_svc() - release a service's scheduler state
 * @svc: the service, being deleted or switched to another scheduler
 *
 * Nothing is built or published for it any more; a running build
 * discards its table.  Lookups and /proc readers may still hold the state:
 * it is freed after a grace period.  IPVS may free @svc at once.
 *
 * Context: process context, IPVS configuration mutex held.
 */
static void ip_vs_maglev_done_svc(struct ip_vs_service *svc)
{
	struct maglev_service *ms = svc->sched_data;
	struct maglev_net *mn = ms->mn;
	bool listed, idle;

	list_del_rcu(&ms->node);
	spin_lock(&mn->lock);
	ms->dead = true;
	listed = !list_empty(&ms->pending_node);
	list_del_init(&ms->pending_node);
	/* No timer outlives the last pending service (module unload). */
	idle = list_empty(&mn->pending) && cancel_delayed_work(&mn->work);
	spin_unlock(&mn->lock);
	if (idle)
		maglev_net_put(mn);
	if (listed)
		maglev_svc_put(ms);
	mutex_lock(&ms->set_lock);
	maglev_set_clear(ms);
	mutex_unlock(&ms->set_lock);
	maglev_svc_put(ms);
}

/*
 * add_dest and upd_dest: IPVS has linked @dest into the service, or changed
 * its weight.  IPVS ignores the return: a destination that cannot be
 * recorded leaves the set incomplete, logged and shown in /proc, and the
 * published table serving until the build repairs the set.
 */
static int ip_vs_maglev_add_dest(struct ip_vs_service *svc,
				 struct ip_vs_dest *dest)
{
	struct maglev_service *ms = svc->sched_data;

	mutex_lock(&ms->set_lock);
	if (maglev_set_add(ms, dest, GFP_KERNEL))
		pr_warn_ratelimited("%s: no memory to record a maglev destination: the build repairs the set\n",
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
	struct maglev_dest *d, key;

	mutex_lock(&ms->set_lock);
	d = maglev_set_find(ms, &key, dest);
	if (d) {
		if (d->weight)
			maglev_spares_set(ms, d, false);
		ms->nr--;
		rb_erase(&d->node, &ms->set);
		kfree(d);
	}
	mutex_unlock(&ms->set_lock);
	maglev_changed(ms);
	return 0;
}

/* The lookup ("Lookup: O(1), and no window without a server") */

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
 * The table's choice is unavailable: a few rehashes of the client hash in
 * the table, then as many among the service's destinations with a weight,
 * for a table that lags its service (none yet, or all retired).  O(1).
 */
static struct ip_vs_dest *maglev_fallback(const struct ip_vs_service *svc,
					  const struct maglev_service *ms,
					  const struct maglev_lut *lut,
					  u32 hash)
{
	const struct maglev_spares *a = rcu_dereference(ms->spares);
	/* The entries below the count (maglev_spares_set()'s release). */
	u32 i, h, nr = a ? smp_load_acquire(&a->nr) : 0;
	struct ip_vs_dest *dest;

	for (i = 1; i <= 2 * MAGLEV_FALLBACK_TRIES; i++) {
		h = maglev_rehash(hash, i);
		if (i <= MAGLEV_FALLBACK_TRIES)
			dest = maglev_table_dest(lut, h);
		else
			dest = nr ? READ_ONCE(a->dest[reciprocal_scale(h, nr)]) : NULL;
		if (dest && !maglev_dest_unavailable(svc, dest))
			return dest;
	}
	return NULL;
}

/**
 * ip_vs_maglev_schedule() - pick the destination of a new connection
 * @svc: the service
 * @skb: the packet
 * @iph: its parsed IP header
 *
 * One keyed hash and one table load; a retired choice, or with flag-1 an
 * overloaded one, falls back.  Context: RCU read lock held.
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

/* /proc/net/ip_vs_maglev: one record a line (docs/reference.md) */

/* A service's state as allocated (ip_vs_maglev_init_svc()), in its mem. */
static size_t maglev_state_mem(const struct maglev_service *ms)
{
	return kmalloc_size_roundup(sizeof(*ms)) +
	       READ_ONCE(ms->nr) * kmalloc_size_roundup(sizeof(struct maglev_dest));
}

/* A service's lines: one record, in the reader's buffer; no table kept. */
static void maglev_show_service(struct seq_file *seq, struct maglev_service *ms)
{
	static const struct maglev_table none = {};
	struct maglev_net *mn = ms->mn;
	const struct maglev_table *t = &none;
	struct maglev_shared *sh = NULL;
	const struct maglev_lut *lut;
	u32 i, flags = 0, users = 0;
	size_t mem = maglev_state_mem(ms);
	u64 gen, table_gen = 0;
	bool dead;

	/*
	 * IPVS may free the service without a grace period after done_service
	 * (ip_vs_add_service()'s error path): read it while not dead.
	 */
	rcu_read_lock();
	spin_lock(&mn->lock);
	dead = ms->dead;
	if (!dead)
		flags = READ_ONCE(ms->svc->flags) & MAGLEV_F_SCHED;
	gen = ms->gen;
	lut = rcu_dereference(ms->lut);
	spin_unlock(&mn->lock);
	if (dead)
		goto out;
	if (lut) {
		sh = lut->shared;
		t = lut->table;
		table_gen = lut->gen;
		mem += lut->mem;
		/* Its users share the table's bytes: counted once in all. */
		users = atomic_read(&sh->users);
		mem += sh->mem / max(users, 1U);
		refcount_inc(&sh->ref);
	}
	seq_printf(seq,
		   "service %s size %u key %08x flags 0x%x dests %u builds %llu churn %u build_ns %llu alloc_fail %llu build_fail %llu digest %016llx pending %u gen %llu table_gen %llu mem %zu table %llu shared %u table_mem %zu servers %u incomplete %u\n",
		   ms->name, t->size, rcu_dereference(ms->mn->key)->fp, flags,
		   lut ? lut->nr : 0, lut ? lut->builds : 0,
		   lut ? lut->churn : 0, sh ? sh->build_ns : 0,
		   READ_ONCE(ms->alloc_fail), READ_ONCE(ms->build_fail),
		   t->digest, gen != table_gen, gen, table_gen, mem,
		   sh ? sh->id : 0, users, sh ? sh->mem : 0,
		   READ_ONCE(ms->nr), READ_ONCE(ms->incomplete));
out:
	rcu_read_unlock();
	for (i = 0; i < t->nr_backends && !seq_has_overflowed(seq); i++) {
		seq_printf(seq, "  dest %.*s weight %u slots %u drain %u\n",
			   (int)sh->be[i].name_len, sh->be[i].name,
			   sh->be[i].weight, sh->be[i].slots,
			   sh->be[i].drain_weight);
		maglev_resched(i + 1, MAGLEV_RESCHED_ENTRIES);
	}
	maglev_shared_put(sh);
}

/* The namespace's line: its services and tables, each table's bytes once. */
static void maglev_show_net(struct seq_file *seq, struct maglev_net *mn)
{
	const struct maglev_service *ms;
	const struct maglev_lut *lut;
	u32 services = 0;
	size_t mem = 0;

	rcu_read_lock();
	list_for_each_entry_rcu(ms, &mn->services, node) {
		services++;
		mem += maglev_state_mem(ms);
		lut = rcu_dereference(ms->lut);
		if (lut)
			mem += lut->mem;
	}
	rcu_read_unlock();
	spin_lock(&mn->lock);
	seq_printf(seq,
		   "namespace services %u tables %u fills %llu found %llu mem %zu\n",
		   services, mn->tables, mn->next_id, READ_ONCE(mn->found),
		   mem + mn->mem);
	spin_unlock(&mn->lock);
}

/*
 * Records: the namespace's line (0), then each service (a reference, which
 * next() or stop() puts): start() walks to its ordinal once a read(), and
 * next() steps in O(1).
 */
static void *maglev_seq_start(struct seq_file *seq, loff_t *pos)
{
	struct maglev_net *mn = maglev_pernet(seq_file_net(seq));

	/* Without a service the file is empty. */
	if (!*pos)
		return list_empty(&mn->services) ? NULL : SEQ_START_TOKEN;
	return maglev_svc_next(mn, NULL, *pos - 1);
}

static void *maglev_seq_next(struct seq_file *seq, void *v, loff_t *pos)
{
	return maglev_svc_next(maglev_pernet(seq_file_net(seq)),
			       v == SEQ_START_TOKEN ? NULL : v, (*pos)++);
}

static void maglev_seq_stop(struct seq_file *seq, void *v)
{
	if (v != SEQ_START_TOKEN)
		maglev_svc_put(v);
}

static int maglev_seq_show(struct seq_file *seq, void *v)
{
	if (v == SEQ_START_TOKEN)
		maglev_show_net(seq, maglev_pernet(seq_file_net(seq)));
	else
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
	struct maglev_net *mn = kzalloc(sizeof(*mn), GFP_KERNEL_ACCOUNT);
	int ret;

	if (!mn)
		return -ENOMEM;
	refcount_set(&mn->ref, 1);
	spin_lock_init(&mn->lock);
	INIT_LIST_HEAD(&mn->pending);
	INIT_DELAYED_WORK(&mn->work, maglev_net_work);
	hash_init(mn->hash);
	INIT_LIST_HEAD(&mn->services);
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
		goto fail;
	ret = maglev_sysctl_register(net, mn);
	if (ret)
		goto fail_key;
	ret = -ENOMEM;
	if (IS_ENABLED(CONFIG_PROC_FS) &&
	    !proc_create_net("ip_vs_maglev", 0444, net->proc_net,
			     &maglev_seq_ops, sizeof(struct seq_net_private)))
		goto fail_sysctl;
	*(struct maglev_net **)net_generic(net, maglev_net_id) = mn;
	return 0;

fail_sysctl:
	unregister_net_sysctl_table(mn->sysctl);
	kfree(mn->ctl);
fail_key:
	kfree_sensitive(rcu_dereference_protected(mn->key, true));
fail:
	kfree(mn);
	return ret;
}

static void __net_exit maglev_net_exit(struct net *net)
{
	struct maglev_net *mn = maglev_pernet(net);

	/*
	 * IPVS flushes the services after this ("Namespace exit"); a lookup
	 * may still hold the key under RCU.
	 */
	remove_proc_entry("ip_vs_maglev", net->proc_net);
	unregister_net_sysctl_table(mn->sysctl);
	kfree(mn->ctl);
	call_rcu(&rcu_dereference_protected(mn->key, true)->rcu,
		 maglev_key_free_rcu);
	maglev_net_put(mn);
}

static struct pernet_operations maglev_net_ops = {
	.init = maglev_net_init,
	.exit = maglev_net_exit,
	.id = &maglev_net_id,
	.size = sizeof(struct maglev_net *),
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
