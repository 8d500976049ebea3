/* SPDX-License-Identifier: GPL-2.0 */
/*
 * maglev_sched.h - the IPVS glue's shared state (a namespace's, its table
 * store's and build queue's, a service's and its published table's) and
 * the functions the glue's files call across.  Kernel only; the table
 * algorithm's interface is maglev_table.h.
 */
#ifndef _MAGLEV_SCHED_H
#define _MAGLEV_SCHED_H

#include <linux/gfp.h>
#include <linux/hashtable.h>
#include <linux/jiffies.h>
#include <linux/limits.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/siphash.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include <net/ip_vs.h>
#include <net/netns/generic.h>

#include "maglev_table.h"

struct ctl_table;
struct ctl_table_header;
struct mem_cgroup;
struct net;
struct seq_file;
struct sk_buff;
union nf_inet_addr;

#define MAGLEV_F_FALLBACK	IP_VS_SVC_F_SCHED1
#define MAGLEV_F_PORT		IP_VS_SVC_F_SCHED2
#define MAGLEV_F_SCHED		(IP_VS_SVC_F_SCHED1 | IP_VS_SVC_F_SCHED2 | \
				 IP_VS_SVC_F_SCHED3)

/* Longest service description, "FWM6 4294967295" or "SCTP [v6]:65535". */
#define MAGLEV_SVC_NAME_MAX	(8 + MAGLEV_ADDR_NAME_MAX + 1)

/*
 * Build allocations may fail: the old table keeps serving and the build is
 * retried.  None may wake the OOM killer, the global one or a memory
 * cgroup's (try_charge_memcg() gives up on __GFP_NORETRY and
 * __GFP_RETRY_MAYFAIL before mem_cgroup_oom()).  kmalloc() up to a page
 * takes __GFP_NORETRY; vmalloc() and kvmalloc(), whose vmalloc fallback
 * does not honour __GFP_NORETRY, take __GFP_RETRY_MAYFAIL.
 */
#define MAGLEV_GFP_SMALL	(GFP_KERNEL_ACCOUNT | __GFP_NORETRY | __GFP_NOWARN)
#define MAGLEV_GFP		(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | \
				 __GFP_NOWARN)

/* maglev_lut.churn when there was no memory to count it: "churn -". */
#define MAGLEV_CHURN_UNKNOWN	U32_MAX

/* Retry delays of a build that ran out of memory. */
#define MAGLEV_RETRY_MIN	msecs_to_jiffies(10)
#define MAGLEV_RETRY_MAX	msecs_to_jiffies(1000)

/*
 * A service's builds start at least maglev_holdoff_ms, and at least the
 * duration of its last build (up to MAGLEV_HOLDOFF_LONG), after the end of
 * the previous one.  No build waits longer than MAGLEV_HOLDOFF_MAX_MS.
 */
#define MAGLEV_HOLDOFF_DEFAULT	50
#define MAGLEV_HOLDOFF_MAX_MS	10000
#define MAGLEV_HOLDOFF_LONG	msecs_to_jiffies(1000)

/* A namespace's table cache has 1 << MAGLEV_CACHE_BITS buckets. */
#define MAGLEV_CACHE_BITS	8

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
 * struct maglev_net - per network namespace state
 * @services: the namespace's maglev services (struct maglev_service);
 *	changed by init_service and done_service, which IPVS calls with its
 *	configuration mutex held; read under RCU
 * @key: the client hash key lookups use now (RCU)
 * @table_size: sysctl maglev_table_size
 * @holdoff_ms: sysctl maglev_holdoff_ms
 * @cfg_lock: serialises the key's publication and table size writes (the
 *	hold-off is one word, stored by proc_douintvec_minmax() alone)
 * @net: the namespace
 * @ctl: this namespace's copy of the sysctl table
 * @sysctl: its registration
 * @builder: the namespace's build queue and table cache (one reference)
 */
struct maglev_net {
	struct list_head services;
	struct maglev_builder *builder;
	struct maglev_key __rcu *key;
	unsigned int table_size;
	unsigned int holdoff_ms;
	struct mutex cfg_lock;	/* see above */
	struct net *net;
	struct ctl_table *ctl;
	struct ctl_table_header *sysctl;
};

/**
 * struct maglev_cache - a namespace's store of shared tables
 * @ref: one for the namespace's builder, one for each table in it
 * @lock: serialises inserts and removals; lookups run under RCU.  Taken
 *	with BH disabled: a table's last put may run in an RCU callback
 * @next_id: the id of the last table inserted, the number of inserts
 * @tables: tables in the store
 * @mem: bytes of those tables
 * @hash: the tables by maglev_inputs_hash()
 */
struct maglev_cache {
	refcount_t ref;
	spinlock_t lock;	/* see above */
	u64 next_id;
	u32 tables;
	size_t mem;
	DECLARE_HASHTABLE(hash, MAGLEV_CACHE_BITS);
};

/**
 * struct maglev_shared - an immutable table that services share
 * @node: entry in its cache (RCU)
 * @cache: the cache (one reference)
 * @ref: one for each service table (struct maglev_lut) built on it
 * @users: services whose published table it is, shown in /proc
 * @hash: maglev_inputs_hash() of M and the backends
 * @id: the table's number in its namespace (1, 2, ...), shown in /proc
 * @build_ns: duration of its maglev_build()
 * @mem: bytes of its one allocation: this structure, @be, then @table
 * @churn_from: @id of the table @churn was counted against, 0 for none
 * @churn: slots whose owner differs from those of table @churn_from
 * @rcu: frees it a grace period after its last put
 * @table: the slots, with M and the number of backends; entries index @be
 *	(and each service's destinations)
 * @be: the backends in name order: the inputs and their slot counts
 *
 * Immutable once in the cache, but for @users and the churn memo, which
 * only the namespace's build work writes.
 */
struct maglev_shared {
	struct hlist_node node;
	struct maglev_cache *cache;
	refcount_t ref;
	atomic_t users;
	u64 hash;
	u64 id;
	u64 build_ns;
	size_t mem;
	u64 churn_from;
	u32 churn;
	struct rcu_head rcu;
	struct maglev_table *table;
	struct maglev_backend *be;
};

/**
 * struct maglev_lut - a service's published table with its destinations
 * @rcu: frees it (and puts the destinations and @shared) after a grace
 *	period
 * @nr: number of destinations (backends)
 * @churn: slots whose owner changed against the previous table, or
 *	%MAGLEV_CHURN_UNKNOWN
 * @builds: tables published for the service, this one included
 * @gen: generation (maglev_service.gen) of the snapshot it was built from
 * @mem: bytes of this descriptor
 * @shared: the shared table, one reference; NULL until the build has one
 * @table: @shared's slots, read by the lookup without loading @shared
 * @dest: the service's destinations in @shared's backend order, one
 *	reference each
 *
 * Immutable once published.
 */
struct maglev_lut {
	struct rcu_head rcu;
	u32 nr;
	u32 churn;
	u64 builds;
	u64 gen;
	size_t mem;
	struct maglev_shared *shared;
	struct maglev_table *table;
	struct ip_vs_dest *dest[];
};

/**
 * struct maglev_builder - a namespace's build queue
 * @ref: one for the namespace, one for each service and the queued @work
 * @lock: protects @ready and the services' @ready_node
 * @ready: services whose build is due, first come first served
 * @work: builds the services of @ready one at a time, one per run
 * @cache: the namespace's shared tables (one reference)
 * @found: builds that found their table in @cache
 *
 * It outlives the namespace while services or queued builds hold it.
 */
struct maglev_builder {
	refcount_t ref;
	spinlock_t lock;	/* see above */
	struct list_head ready;
	struct work_struct work;
	struct maglev_cache *cache;
	u64 found;
};

/**
 * struct maglev_service - per-service scheduler state (svc->sched_data)
 * @node: entry in the namespace's service list (RCU; writers hold IPVS's mutex)
 * @mn: the namespace's state
 * @svc: the IPVS service; read only by the callbacks, and by the build and
 *	/proc under @lock while not @dead
 * @lut: the published table, or NULL before the first build (RCU)
 * @lock: protects @gen, @dead, @retry, @next_build, @due, @memcg and
 *	publishing, and keeps @svc alive while not @dead
 * @gen: configuration changes seen (the published table's is @lut->gen)
 * @dead: set by done_service; no build is queued or published after it
 * @ref: one for the IPVS service, the queued @work and the ready list
 * @work: waits out the hold-off or the retry delay, then joins @builder
 * @retry: current retry delay after a build ran out of memory, else 0
 * @next_build: jiffies before which no build starts, but for a retry
 * @due: jiffies at which the queued @work runs (valid while queued)
 * @alloc_fail: builds that failed for lack of memory
 * @build_fail: builds that failed for any other reason
 * @memcg: memory cgroup of the latest change, which the next build is
 *	charged to; NULL once a build took it
 * @builder: the namespace's builder (one reference)
 * @ready_node: entry in @builder's ready list
 * @rcu: frees this structure after a grace period
 */
struct maglev_service {
	struct list_head node;
	struct maglev_net *mn;
	struct ip_vs_service *svc;
	struct maglev_lut __rcu *lut;
	spinlock_t lock;	/* see above */
	u64 gen;
	bool dead;
	refcount_t ref;
	struct delayed_work work;
	unsigned long retry;
	unsigned long next_build;
	unsigned long due;
	u64 alloc_fail;
	u64 build_fail;
	struct mem_cgroup *memcg;
	struct maglev_builder *builder;
	struct list_head ready_node;
	struct rcu_head rcu;
};

extern unsigned int maglev_net_id;
extern struct workqueue_struct *maglev_wq;

static inline struct maglev_net *maglev_pernet(struct net *net)
{
	return net_generic(net, maglev_net_id);
}

/* maglev_build.c: names, the build queue, builds, publishing */
void maglev_svc_name(char *buf, size_t len, const struct ip_vs_service *svc);
void maglev_svc_put(struct maglev_service *ms);
void maglev_queue(struct maglev_service *ms, unsigned long now,
		  unsigned long delay);
void maglev_changed(struct maglev_service *ms);
void maglev_rebuild_net(struct maglev_net *mn);
void maglev_build_work(struct work_struct *work);
struct maglev_builder *maglev_builder_alloc(void);
void maglev_builder_put(struct maglev_builder *b);
void maglev_builder_cancel(struct maglev_service *ms);

#ifdef MAGLEV_KUNIT
/* kunit/maglev_glue_test.c: sees every build scratch area, may fail it. */
void *maglev_test_scratch(void *p, size_t bytes);
#else
static inline void *maglev_test_scratch(void *p, size_t bytes)
{
	return p;
}
#endif

/* maglev_share.c: a namespace's store of shared tables */
void *maglev_mem_alloc(size_t bytes, size_t *mem);
struct maglev_cache *maglev_cache_alloc(void);
void maglev_cache_put(struct maglev_cache *c);
u64 maglev_inputs_hash(u32 size, const struct maglev_backend *be, u32 nr);
struct maglev_shared *maglev_shared_alloc(u32 size,
					  const struct maglev_backend *be,
					  u32 nr);
struct maglev_shared *maglev_cache_find(struct maglev_cache *c, u32 size,
					const struct maglev_backend *be,
					u32 nr, u64 hash);
void maglev_cache_insert(struct maglev_cache *c, struct maglev_shared *t,
			 u64 hash);
void maglev_shared_put(struct maglev_shared *t);

/* maglev_proc.c: /proc/net/ip_vs_maglev */
int maglev_proc_init(struct net *net);
void maglev_proc_exit(struct net *net);

/*
 * Static without CONFIG_KUNIT (VISIBLE_IF_KUNIT): what the KUnit suite
 * kunit/maglev_glue_test.c calls besides the functions above.
 */
#if IS_ENABLED(CONFIG_KUNIT)
/* maglev_main.c */
bool maglev_dest_retired(const struct ip_vs_service *svc,
			 const struct ip_vs_dest *dest);
bool maglev_dest_unavailable(const struct ip_vs_service *svc,
			     const struct ip_vs_dest *dest);
struct ip_vs_dest *maglev_fallback(const struct ip_vs_service *svc,
				   const struct maglev_lut *lut, u32 hash);
struct ip_vs_dest *ip_vs_maglev_schedule(struct ip_vs_service *svc,
					 const struct sk_buff *skb,
					 struct ip_vs_iphdr *iph);
void ip_vs_maglev_done_svc(struct ip_vs_service *svc);
/* maglev_build.c */
int maglev_addr_name(char *buf, size_t len, int af,
		     const union nf_inet_addr *addr, __be16 port);
void maglev_lut_free(struct maglev_lut *lut);
unsigned long maglev_delay(unsigned long now, unsigned long when);
struct maglev_lut *maglev_snapshot(struct maglev_service *ms,
				   struct maglev_backend **be, u64 *gen,
				   u32 *size, int *err);
int maglev_build_table(struct maglev_service *ms);
unsigned long maglev_next_build(unsigned long end, unsigned long took,
				unsigned long holdoff);
unsigned long maglev_retry_delay(unsigned long prev);
void maglev_build_service(struct maglev_service *ms);
/* maglev_proc.c */
void maglev_show_service(struct seq_file *seq, struct maglev_service *ms);
#endif

#endif /* _MAGLEV_SCHED_H */
