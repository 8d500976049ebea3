/* SPDX-License-Identifier: GPL-2.0 */
/*
 * maglev_sched.h - the IPVS glue's shared state: one namespace's settings,
 * one service's state and its published table, and the functions the glue's
 * files (maglev_main.c, maglev_build.c, maglev_proc.c) call across.
 * Kernel only; the table algorithm's interface is maglev_table.h.
 */
#ifndef _MAGLEV_SCHED_H
#define _MAGLEV_SCHED_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/refcount.h>
#include <linux/rcupdate.h>
#include <linux/workqueue.h>
#include <linux/siphash.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/ip_vs.h>

#include "maglev_table.h"

#define MAGLEV_F_FALLBACK	IP_VS_SVC_F_SCHED1
#define MAGLEV_F_PORT		IP_VS_SVC_F_SCHED2
#define MAGLEV_F_SCHED		(IP_VS_SVC_F_SCHED1 | IP_VS_SVC_F_SCHED2 | \
				 IP_VS_SVC_F_SCHED3)

/* Longest service description, "FWM6 4294967295" or "SCTP [v6]:65535". */
#define MAGLEV_SVC_NAME_MAX	(8 + MAGLEV_NAME_MAX)

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
 * @lock: serialises changes of @services (readers use RCU)
 * @services: the namespace's maglev services (struct maglev_service)
 * @key: the client hash key lookups use now (RCU)
 * @table_size: sysctl maglev_table_size
 * @holdoff_ms: sysctl maglev_holdoff_ms
 * @cfg_lock: serialises sysctl writes
 * @net: the namespace
 * @ctl: this namespace's copy of the sysctl table
 * @sysctl: its registration
 */
struct maglev_net {
	spinlock_t lock;	/* protects services (writers) */
	struct list_head services;
	struct maglev_key __rcu *key;
	unsigned int table_size;
	unsigned int holdoff_ms;
	struct mutex cfg_lock;	/* serialises sysctl writes */
	struct net *net;
	struct ctl_table *ctl;
	struct ctl_table_header *sysctl;
};

/**
 * struct maglev_lut - a published lookup table with its destinations
 * @rcu: frees the table (and drops the destination references) after a
 *	grace period
 * @nr: number of destinations (backends)
 * @churn: slots whose owner changed against the previous table
 * @builds: tables published for the service, this one included
 * @build_ns: duration of maglev_build() for this table
 * @gen: generation of the configuration snapshot it was built from
 * @mem: bytes allocated for this table (descriptor, backends, slots)
 * @table: the slot table; entries index @dest and @be
 * @dest: the destinations in backend (name) order, one reference each
 * @be: the backends the table was built from, for /proc and churn
 *
 * Immutable once published.
 */
struct maglev_lut {
	struct rcu_head rcu;
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
 * @mn: the namespace's state
 * @svc: the IPVS service; read only by the callbacks, and by the build and
 *	/proc under @lock while not @dead
 * @lut: the published table, or NULL before the first build; written by
 *	the build work under @lock, read under RCU
 * @lock: protects @gen, @table_gen, @dead, @retry, @next_build, @due and
 *	publishing, and keeps @svc alive while not @dead
 * @gen: configuration changes seen
 * @table_gen: @gen of the snapshot the published table was built from
 * @dead: set by done_service; no build is queued or published after it
 * @ref: one for the IPVS service, one for each queued build work
 * @work: the build work
 * @retry: current retry delay in jiffies after a failed allocation, 0 when
 *	the last build did not run out of memory
 * @next_build: jiffies before which no build starts, but for a retry
 * @due: jiffies at which the queued work runs (valid while it is queued)
 * @alloc_fail: builds that failed for lack of memory
 * @build_fail: builds that failed for any other reason
 * @memcg: memory cgroup the service's tables are charged to (may be NULL)
 * @name: service description for messages, "TCP 10.0.0.1:80"
 * @rcu: frees this structure after a grace period
 */
struct maglev_service {
	struct list_head node;
	struct maglev_net *mn;
	struct ip_vs_service *svc;
	struct maglev_lut __rcu *lut;
	spinlock_t lock;	/* see above */
	u64 gen;
	u64 table_gen;
	bool dead;
	refcount_t ref;
	struct delayed_work work;
	unsigned long retry;
	unsigned long next_build;
	unsigned long due;
	u64 alloc_fail;
	u64 build_fail;
	struct mem_cgroup *memcg;
	char name[MAGLEV_SVC_NAME_MAX];
	struct rcu_head rcu;
};

extern unsigned int maglev_net_id;
extern struct workqueue_struct *maglev_wq;

static inline struct maglev_net *maglev_pernet(struct net *net)
{
	return net_generic(net, maglev_net_id);
}

/* maglev_build.c: names, table life cycle, builds */
int maglev_addr_name(char *buf, size_t len, int af,
		     const union nf_inet_addr *addr, __be16 port);
void maglev_svc_name(char *buf, size_t len, const struct ip_vs_service *svc);
void *maglev_mem_alloc(size_t bytes, size_t *acct);
struct maglev_lut *maglev_lut_alloc(u32 nr);
void maglev_lut_free(struct maglev_lut *lut);
void maglev_put(struct maglev_service *ms);
unsigned long maglev_delay(unsigned long now, unsigned long when);
void maglev_queue(struct maglev_service *ms, unsigned long now,
		  unsigned long delay);
void maglev_changed(struct maglev_service *ms);
void maglev_rebuild_net(struct maglev_net *mn);
struct maglev_lut *maglev_snapshot(struct maglev_service *ms, u64 *gen,
				   u32 *size, int *err);
int maglev_build_table(struct maglev_service *ms);
unsigned long maglev_next_build(unsigned long end, unsigned long took,
				unsigned long holdoff);
unsigned long maglev_retry_delay(unsigned long prev);
unsigned long maglev_build_wait(unsigned long now, unsigned long next_build,
				unsigned long retry);
void maglev_build_work(struct work_struct *work);

/* maglev_proc.c: /proc/net/ip_vs_maglev */
void maglev_show_service(struct seq_file *seq, struct maglev_service *ms);
int maglev_proc_init(struct net *net);
void maglev_proc_exit(struct net *net);

#endif /* _MAGLEV_SCHED_H */
