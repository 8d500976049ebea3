/* SPDX-License-Identifier: GPL-2.0 */
/*
 * maglev_sched.h - the IPVS glue's shared state: a namespace's, its
 * builder's (build queue and table store), a service's with its own set of
 * destinations, and a published table's; and the functions the glue's
 * files call across.  Kernel only; the algorithm's interface is
 * maglev_table.h.  docs/design.md describes the design.
 */
#ifndef _MAGLEV_SCHED_H
#define _MAGLEV_SCHED_H

#include <linux/hashtable.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/refcount.h>
#include <linux/siphash.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include <net/ip_vs.h>
#include <net/netns/generic.h>

#include "maglev_table.h"

struct ctl_table_header;
struct mem_cgroup;
struct seq_file;

#define MAGLEV_F_FALLBACK	IP_VS_SVC_F_SCHED1
#define MAGLEV_F_PORT		IP_VS_SVC_F_SCHED2
#define MAGLEV_F_SCHED		(IP_VS_SVC_F_SCHED1 | IP_VS_SVC_F_SCHED2 | \
				 IP_VS_SVC_F_SCHED3)

/* Longest service description, "FWM6 4294967295" or "SCTP [v6]:65535". */
#define MAGLEV_SVC_NAME_MAX	(8 + MAGLEV_ADDR_NAME_MAX + 1)

#define MAGLEV_HOLDOFF_DEFAULT	50
#define MAGLEV_HOLDOFF_MAX_MS	10000

/* Entries handled between two reschedule points in the glue's loops. */
#define MAGLEV_RESCHED_ENTRIES	1024

/**
 * struct maglev_key - a published client hash key
 * @hkey: the key of the client hash (hsiphash, maglev_hkey_from_bytes())
 * @key: the whole 128-bit key, for the sysctl's read and the fingerprint
 * @fp: its fingerprint (maglev_key_fingerprint()), shown in /proc
 * @rcu: frees a replaced key after a grace period
 */
struct maglev_key {
	hsiphash_key_t hkey;
	siphash_key_t key;
	u32 fp;
	struct rcu_head rcu;
};

/**
 * struct maglev_builder - a namespace's builds: queue, settings, table store
 * @ref: one for the namespace, one for each service, the queued @work and
 *	each stored table
 * @lock: protects @pending, @due, the store, and each service's build
 *	state (struct maglev_service, "under the builder's lock")
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
 *
 * It outlives the namespace while services, queued work or tables hold it.
 */
struct maglev_builder {
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
};

/**
 * struct maglev_net - per network namespace state
 * @services: the namespace's maglev services; changed by init_service and
 *	done_service under IPVS's configuration mutex, read under RCU
 * @key: the client hash key lookups use now (RCU)
 * @builder: the namespace's builder (one reference)
 * @net: the namespace
 * @ctl: this namespace's copy of the sysctl table
 * @sysctl: its registration
 */
struct maglev_net {
	struct list_head services;
	struct maglev_key __rcu *key;
	struct maglev_builder *builder;
	struct net *net;
	struct ctl_table *ctl;
	struct ctl_table_header *sysctl;
};

/**
 * struct maglev_shared - an immutable table that services share
 * @node: entry in its builder's store
 * @builder: the builder (one reference)
 * @ref: one for each published table (struct maglev_lut) built on it, and
 *	for each /proc reader in the middle of its records
 * @users: services whose published table it is, shown in /proc
 * @hash: maglev_inputs_hash() of M and the backends
 * @id: the table's number in its namespace (1, 2, ...), shown in /proc
 * @build_ns: duration of its maglev_build()
 * @mem: bytes of its one allocation: this structure, @be, then @table
 * @churn_from: @id of the table @churn was counted against, 0 for none
 * @churn: slots whose owner differs from those of table @churn_from
 * @table: the slots, with M and the number of backends
 * @be: the backends in name order: the inputs and their slot counts
 *
 * Immutable once stored, but for @users and the churn memo, which only the
 * builder's work writes.
 */
struct maglev_shared {
	struct hlist_node node;
	struct maglev_builder *builder;
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
 * struct maglev_lut - a service's published table with its destinations
 * @table: @shared's slots, read by the lookup without loading @shared
 * @nr: number of destinations (backends)
 * @churn: slots whose owner changed against the previous table
 * @builds: tables published for the service, this one included
 * @gen: generation (maglev_service.gen) of the set it was built from
 * @mem: bytes of this descriptor
 * @shared: the shared table, one reference
 * @free: puts the destinations and @shared a grace period after it is
 *	replaced, in process context
 * @dest: the service's destinations in @shared's backend order, one
 *	reference each
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
 * @dest: the IPVS destination, alive while in the set (the callbacks
 *	remove it before IPVS unlinks it)
 * @weight: its weight, 0..INT_MAX
 * @drain_weight: with @weight 0, its last weight (draining), else 0
 * @name_len: length of @name
 * @name: its backend name, "A.B.C.D:port" or "[v6]:port", no NUL
 */
struct maglev_dest {
	struct rb_node node;
	struct ip_vs_dest *dest;
	u32 weight;
	u32 drain_weight;
	u32 name_len;
	char name[MAGLEV_ADDR_NAME_MAX];
};

/**
 * struct maglev_service - per-service scheduler state (svc->sched_data)
 * @node: entry in the namespace's service list
 * @mn: the namespace's state, for the lookup's key
 * @builder: the namespace's builder (one reference)
 * @svc: the IPVS service; read only by the callbacks and the lookup, and
 *	by /proc under the builder's lock while not @dead
 * @lut: the published table, or NULL before the first one (RCU)
 * @spare: a destination of the set with a weight, if any: the lookup's
 *	choice when the table has none available (RCU; written under
 *	IPVS's mutex and @set_lock)
 * @ref: one for the IPVS service, one while pending or being built
 * @set_lock: protects @set, @nr, @live and @incomplete; IPVS's callbacks
 *	hold it to change them, a build to copy them
 * @set: the destinations (struct maglev_dest) by name
 * @nr: number of destinations in @set
 * @live: those with a weight
 * @incomplete: a destination could not be recorded for lack of memory;
 *	the next callback walks IPVS's list to repair the set, and no
 *	build publishes meanwhile
 * @dead: set by done_service; nothing is published after it (builder's lock)
 * @pending_node: entry in the builder's pending list (builder's lock)
 * @gen: changes recorded; the published table's is @lut->gen (builder's lock)
 * @due: when the pending build may start (builder's lock)
 * @next_build: when the next build may start, by the hold-off (builder's lock)
 * @retry: retry delay after a build ran out of memory, else 0 (builder's lock)
 * @memcg: memory cgroup of the latest change, which the next build is
 *	charged to; NULL once a build took it (builder's lock)
 * @alloc_fail: builds that failed for lack of memory
 * @build_fail: builds that failed for any other reason
 * @name: the service's description, "TCP 10.0.0.1:80", "FWM 42", ...
 * @rcu: frees this structure after a grace period
 */
struct maglev_service {
	struct list_head node;
	struct maglev_net *mn;
	struct maglev_builder *builder;
	struct ip_vs_service *svc;
	struct maglev_lut __rcu *lut;
	struct ip_vs_dest __rcu *spare;
	refcount_t ref;
	struct mutex set_lock;	/* see above */
	struct rb_root set;
	u32 nr;
	u32 live;
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

/* Exported by both module builds, so that only one of them loads. */
extern const int maglev_exclusive;
extern unsigned int maglev_net_id;
extern struct workqueue_struct *maglev_wq;

static inline struct maglev_net *maglev_pernet(struct net *net)
{
	return net_generic(net, maglev_net_id);
}

/* maglev_build.c: the builder, builds, the table store, publishing */
struct maglev_builder *maglev_builder_alloc(void);
void maglev_builder_put(struct maglev_builder *b);
void maglev_changed(struct maglev_service *ms);
void maglev_svc_kill(struct maglev_service *ms);
void maglev_svc_put(struct maglev_service *ms);
void maglev_shared_put(struct maglev_shared *t);
void maglev_rebuild_net(struct maglev_net *mn);

/* maglev_proc.c: /proc/net/ip_vs_maglev */
int maglev_proc_init(struct net *net);
void maglev_proc_exit(struct net *net);

#endif /* _MAGLEV_SCHED_H */
