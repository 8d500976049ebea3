// SPDX-License-Identifier: GPL-2.0
/*
 * maglev_build.c - a service's builds: when they run, what they read, and
 * what they publish.  A change queues the service's work, which waits out
 * the hold-off (or a retry delay) and puts the service on its namespace's
 * ready list; the namespace's one build work takes the services from it
 * one per run, snapshots the destinations, finds the table in the
 * namespace's store (maglev_share.c) or fills and inserts one, and
 * publishes the service's descriptor with RCU.  The design is in
 * docs/design.md.
 */

#define KMSG_COMPONENT "IPVS"
#define pr_fmt(fmt) KMSG_COMPONENT ": " fmt

#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/compiler.h>
#include <linux/container_of.h>
#include <linux/errno.h>
#include <linux/in.h>
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/memcontrol.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/printk.h>
#include <linux/rculist.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/sprintf.h>
#include <linux/timekeeping.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include <asm/byteorder.h>

#include <kunit/visibility.h>

#include <net/ip_vs.h>

#include "maglev_sched.h"
#include "maglev_table.h"

/* Names */

/**
 * maglev_addr_name() - a destination's backend name, "A.B.C.D:port" or "[v6]:port"
 * @buf: where to write it
 * @len: room in @buf
 * @af: AF_INET or AF_INET6
 * @addr: the address
 * @port: the port, network byte order
 *
 * Return: the name's length, without a NUL.
 */
VISIBLE_IF_KUNIT int maglev_addr_name(char *buf, size_t len, int af,
				      const union nf_inet_addr *addr, __be16 port)
{
	/* The one formatter maglev-sim uses too: inet_ntop()'s text. */
	int n = maglev_format_name(buf, len, addr, af == AF_INET6 ? 16 : 4,
				   ntohs(port));

	return WARN_ON_ONCE(n < 0) ? 0 : n;
}

/**
 * maglev_svc_name() - a service's description for messages and /proc
 * @buf: where to write it, NUL-terminated
 * @len: room in @buf
 * @svc: the service: "TCP 10.0.0.1:80", "FWM 42", "FWM6 43"
 */
void maglev_svc_name(char *buf, size_t len,
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
	maglev_addr_name(buf + n, len - n, svc->af, &svc->addr, svc->port);
}

/* Descriptors and services */

/*
 * Free a descriptor: put its first lut->nr destinations, and its shared
 * table if it has one.
 */
VISIBLE_IF_KUNIT void maglev_lut_free(struct maglev_lut *lut)
{
	u32 i;

	/* A removed destination lives in the IPVS trash until its last put. */
	for (i = 0; i < lut->nr; i++)
		ip_vs_dest_put_and_free(lut->dest[i]);
	if (lut->shared)
		maglev_shared_put(lut->shared);
	kvfree(lut);
}

static void maglev_lut_free_rcu(struct rcu_head *head)
{
	maglev_lut_free(container_of(head, struct maglev_lut, rcu));
}

/* Retire a published descriptor: it stops counting as a user. */
static void maglev_lut_retire(struct maglev_lut *lut)
{
	atomic_dec(&lut->shared->users);
	call_rcu(&lut->rcu, maglev_lut_free_rcu);
}

/**
 * maglev_svc_put() - drop a reference on a service's state
 * @ms: the state; the last reference retires its table and frees it
 *
 * Context: process context.
 */
void maglev_svc_put(struct maglev_service *ms)
{
	struct maglev_lut *lut;

	if (!refcount_dec_and_test(&ms->ref))
		return;
	/* Last reference: no build runs and none is queued. */
	lut = rcu_dereference_protected(ms->lut, true);
	if (lut)
		maglev_lut_retire(lut);
	mem_cgroup_put(ms->memcg);
	if (ms->builder)
		maglev_builder_put(ms->builder);
	kfree_rcu(ms, rcu);
}

/* Timing */

/*
 * Jiffies from @now until @when: 0 if it has passed, and never more than
 * %MAGLEV_HOLDOFF_MAX_MS, so that a time recorded before jiffies wrapped
 * (LONG_MAX, 24.8 days at HZ=1000) makes nothing wait that long.
 */
VISIBLE_IF_KUNIT unsigned long maglev_delay(unsigned long now,
					    unsigned long when)
{
	if (!time_before(now, when))
		return 0;
	return min(when - now, msecs_to_jiffies(MAGLEV_HOLDOFF_MAX_MS));
}

/*
 * Make @ms's build work run @delay jiffies from @now, or earlier if it is
 * already due earlier.  Takes a reference for work it queues.
 * Context: @ms->lock held.
 */
void maglev_queue(struct maglev_service *ms, unsigned long now,
		  unsigned long delay)
{
	lockdep_assert_held(&ms->lock);
	if (ms->dead)
		return;
	if (queue_delayed_work(maglev_wq, &ms->work, delay)) {
		refcount_inc(&ms->ref);
		ms->due = now + delay;
	} else if (time_before(now + delay, ms->due)) {
		/* Queued for later (a long retry delay): pull it in. */
		if (!mod_delayed_work(maglev_wq, &ms->work, delay))
			refcount_inc(&ms->ref);
		ms->due = now + delay;
	}
}

/**
 * maglev_changed() - record a configuration change of a service
 * @ms: the service's state
 *
 * Bumps its generation and queues its build, charged to the memory cgroup
 * of the calling task (replacing that of a change no build took yet).  A
 * dead service takes no change: a sysctl write walks the services under
 * RCU and may reach one whose last maglev_svc_put() put @ms->memcg.
 *
 * Context: process context, maybe under RCU; takes @ms->lock.
 */
void maglev_changed(struct maglev_service *ms)
{
	struct mem_cgroup *memcg = get_mem_cgroup_from_mm(current->mm);
	unsigned long now = jiffies;

	spin_lock(&ms->lock);
	if (!ms->dead) {
		ms->gen++;
		swap(ms->memcg, memcg);
		maglev_queue(ms, now, maglev_delay(now, ms->next_build));
	}
	spin_unlock(&ms->lock);
	mem_cgroup_put(memcg);
}

/*
 * When a service's next build may start: @end of the last attempt plus
 * the hold-off, or plus the attempt's duration @took when that is longer
 * (up to %MAGLEV_HOLDOFF_LONG), so builds take at most about half a CPU.
 */
VISIBLE_IF_KUNIT unsigned long
maglev_next_build(unsigned long end, unsigned long took, unsigned long holdoff)
{
	return end + max(min(took, MAGLEV_HOLDOFF_LONG), holdoff);
}

/* The next retry delay after a build ran out of memory, from @prev. */
VISIBLE_IF_KUNIT unsigned long maglev_retry_delay(unsigned long prev)
{
	return prev ? min(prev * 2, MAGLEV_RETRY_MAX) : MAGLEV_RETRY_MIN;
}

/* A sysctl changed the table size: rebuild the namespace's services. */
void maglev_rebuild_net(struct maglev_net *mn)
{
	struct maglev_service *ms;

	rcu_read_lock();
	list_for_each_entry_rcu(ms, &mn->services, node)
		maglev_changed(ms);
	rcu_read_unlock();
}

/* Builds */

/* Scratch of a build or a churn count, freed with kvfree(). */
static void *maglev_scratch_alloc(size_t bytes)
{
	return maglev_test_scratch(maglev_mem_alloc(bytes, NULL), bytes);
}

/*
 * A new descriptor holding a reference on each of @ms's destinations, and
 * in *@be their backends (priv: the destination), freed with kvfree().
 * The generation and table size are read under @ms->lock while not dead;
 * the destination list is walked under RCU alone, so IPVS's callbacks
 * never spin on a walk of 65535 destinations: a change that races the
 * walk is followed by another build.  The IPVS service is freed a grace
 * period after its deletion, but on ip_vs_add_service's error path, with
 * no destinations to walk.  NULL with *@err: -ENOMEM, -E2BIG (more than
 * MAGLEV_MAX_BACKENDS) or -ESHUTDOWN (dead).
 */
VISIBLE_IF_KUNIT struct maglev_lut *
maglev_snapshot(struct maglev_service *ms, struct maglev_backend **be,
		u64 *gen, u32 *size, int *err)
{
	struct maglev_lut *lut = NULL;
	struct ip_vs_dest *dest;
	u32 room = 0, n, i;
	size_t mem;

	*be = NULL;
	for (;;) {
		spin_lock(&ms->lock);
		if (ms->dead) {
			*err = -ESHUTDOWN;
			goto fail_unlock;
		}
		n = READ_ONCE(ms->svc->num_dests);
		if (n > MAGLEV_MAX_BACKENDS) {
			*err = -E2BIG;
			goto fail_unlock;
		}
		if (lut && n <= room)
			break;
		spin_unlock(&ms->lock);
		/* Destinations added meanwhile make it try again. */
		kvfree(lut);
		kvfree(*be);
		room = n;
		mem = 0;
		lut = maglev_mem_alloc(struct_size(lut, dest, room), &mem);
		*be = maglev_mem_alloc(array_size(room, sizeof(**be)), NULL);
		if (!lut || !*be) {
			*err = -ENOMEM;
			goto fail;
		}
		lut->mem = mem;
		lut->nr = 0;
		lut->shared = NULL;
		lut->table = NULL;
	}

	*gen = ms->gen;
	/* The namespace outlives its services' callbacks, not their builds. */
	*size = READ_ONCE(ms->mn->table_size);
	/* Not dead: the IPVS service is freed after a grace period, if at all. */
	rcu_read_lock();
	spin_unlock(&ms->lock);
	/* None at the check: an empty table, whatever the list holds now. */
	if (n) {
		n = 0;
		list_for_each_entry_rcu(dest, &ms->svc->destinations, n_list) {
			struct maglev_backend *b = &(*be)[n];
			int weight = atomic_read(&dest->weight);

			if (n == room)
				break;
			ip_vs_dest_hold(dest);
			lut->dest[n] = dest;
			b->priv = dest;
			/* IPVS allows weights up to INT_MAX. */
			b->weight = max(weight, 0);
			b->drain_weight = b->weight ? 0 :
					  max(atomic_read(&dest->last_weight), 0);
			n++;
		}
	}
	rcu_read_unlock();
	lut->nr = n;

	for (i = 0; i < lut->nr; i++) {
		struct maglev_backend *b = &(*be)[i];
		const struct ip_vs_dest *d = lut->dest[i];

		b->name_len = maglev_addr_name(b->name, sizeof(b->name),
					       d->af, &d->addr, d->port);
		if (!(i % 1024))
			cond_resched();
	}
	return lut;

fail_unlock:
	spin_unlock(&ms->lock);
fail:
	kvfree(lut);
	kvfree(*be);
	*be = NULL;
	return NULL;
}

/**
 * maglev_build_table() - find or fill a service's new table and publish it
 * @ms: the service's state; the caller holds a reference
 *
 * Looks the sorted snapshot up in the namespace's store and fills and
 * inserts a table only if none has these inputs, then publishes a
 * descriptor with the service's destinations on it.  The memory is charged
 * to the memory cgroup of the change (maglev_changed()), held until the
 * build ends or, if it ran out of memory, its retry; it may fail, never
 * waking the OOM killer, and the published table keeps serving.
 *
 * Context: the namespace's build work, no locks held; sleeps.
 * Return: 0, -ESHUTDOWN for a dead service, or the build's negative errno.
 */
VISIBLE_IF_KUNIT int maglev_build_table(struct maglev_service *ms)
{
	struct maglev_builder *b = ms->builder;
	struct mem_cgroup *memcg, *old_memcg;
	struct maglev_backend *be = NULL;
	struct maglev_lut *lut, *old;
	char name[MAGLEV_SVC_NAME_MAX];
	struct maglev_shared *t, *ot;
	const char *why = NULL;
	void *work = NULL;
	u32 size, nr = 0, onr, i;
	u64 gen = 0, hash, t0;
	int ret;

	spin_lock(&ms->lock);
	memcg = ms->memcg;
	ms->memcg = NULL;
	spin_unlock(&ms->lock);
	old_memcg = set_active_memcg(memcg);
	lut = maglev_snapshot(ms, &be, &gen, &size, &ret);
	if (!lut) {
		why = ret == -E2BIG ? "more than 65535 destinations" : NULL;
		goto fail;
	}
	nr = lut->nr;

	/* Only this namespace's build work replaces the table. */
	old = rcu_dereference_protected(ms->lut, true);
	ot = old ? old->shared : NULL;
	onr = old ? old->nr : 0;

	size = maglev_fit_size(size, nr);
	maglev_sort_backends(be, nr);
	/*
	 * The references follow the backends' order.  Only the sort needs
	 * priv: a shared table outlives this service's references.
	 */
	for (i = 0; i < nr; i++) {
		lut->dest[i] = be[i].priv;
		be[i].priv = NULL;
	}
	hash = maglev_inputs_hash(size, be, nr);

	t = maglev_cache_find(b->cache, size, be, nr, hash);
	if (t) {
		WRITE_ONCE(b->found, b->found + 1);
	} else {
		/* The scratch area serves maglev_build() and maglev_churn(). */
		work = maglev_scratch_alloc(maglev_work_bytes(size,
							      max(nr, onr)));
		t = work ? maglev_shared_alloc(size, be, nr) : NULL;
		if (!t) {
			ret = -ENOMEM;
			why = "out of memory";
			goto fail_lut;
		}
		t0 = ktime_get_ns();
		ret = maglev_build(t->table, size, t->be, nr, work, NULL, &why);
		t->build_ns = ktime_get_ns() - t0;
		if (ret) {
			kvfree(t);
			goto fail_lut;
		}
		maglev_cache_insert(b->cache, t, hash);
	}
	kvfree(be);
	lut->shared = t;
	lut->table = t->table;

	if (!ot) {
		lut->churn = t->table->nr_filled;
	} else if (ot == t) {
		lut->churn = 0;
	} else if (t->churn_from == ot->id) {
		/* Another service made the same move: same churn. */
		lut->churn = t->churn;
	} else {
		/*
		 * A table from the store needs scratch only for the churn: a
		 * u16 per old backend.  Without it the table is published
		 * with the churn unknown: a statistic never keeps a ready
		 * table from serving.
		 */
		if (!work)
			work = maglev_scratch_alloc(maglev_churn_bytes(onr));
		if (work) {
			lut->churn = maglev_churn(ot->table, ot->be, onr,
						  t->table, t->be, nr, work);
			t->churn_from = ot->id;
			t->churn = lut->churn;
		} else {
			lut->churn = MAGLEV_CHURN_UNKNOWN;
		}
	}
	kvfree(work);
	set_active_memcg(old_memcg);
	mem_cgroup_put(memcg);
	lut->gen = gen;
	lut->builds = old ? old->builds + 1 : 1;

	spin_lock(&ms->lock);
	if (ms->dead) {
		spin_unlock(&ms->lock);
		maglev_lut_free(lut);
		return -ESHUTDOWN;
	}
	atomic_inc(&t->users);
	rcu_assign_pointer(ms->lut, lut);
	spin_unlock(&ms->lock);

	if (old)
		maglev_lut_retire(old);
	return 0;

fail_lut:
	kvfree(work);
	kvfree(be);
	maglev_lut_free(lut);
fail:
	set_active_memcg(old_memcg);
	spin_lock(&ms->lock);
	/* The retry is charged to it too, unless a change brought another. */
	if (ret == -ENOMEM && !ms->memcg)
		swap(ms->memcg, memcg);
	/* The IPVS service is named only while it lives (maglev_snapshot()). */
	if (ms->dead) {
		ret = -ESHUTDOWN;
	} else {
		maglev_svc_name(name, sizeof(name), ms->svc);
		/* Too many: the snapshot refused them before counting. */
		if (ret == -E2BIG)
			nr = READ_ONCE(ms->svc->num_dests);
	}
	spin_unlock(&ms->lock);
	mem_cgroup_put(memcg);
	if (ret == -ESHUTDOWN)
		return ret;
	if (ret == -ENOMEM)
		WRITE_ONCE(ms->alloc_fail, ms->alloc_fail + 1);
	else
		WRITE_ONCE(ms->build_fail, ms->build_fail + 1);
	pr_warn_ratelimited("%s: maglev table build (%u dests) failed: %s (%d)%s\n",
			    name, nr, why ? why : "out of memory", ret,
			    ret == -ENOMEM ? "; retrying" : "");
	return ret;
}

/*
 * Build @ms, taken off its namespace's ready list, unless it is dead or its
 * hold-off still runs (then its work is queued for the end of it); a retry
 * does not wait for it (its own delay has passed when it runs).  Set the
 * next hold-off, and queue a retry after a build that ran out of memory.
 */
VISIBLE_IF_KUNIT void maglev_build_service(struct maglev_service *ms)
{
	unsigned long start = jiffies, wait, end;
	unsigned int holdoff;
	int ret;

	spin_lock(&ms->lock);
	wait = ms->retry ? 0 : maglev_delay(start, ms->next_build);
	if (wait || ms->dead) {
		maglev_queue(ms, start, wait);
		spin_unlock(&ms->lock);
		return;
	}
	spin_unlock(&ms->lock);

	ret = maglev_build_table(ms);

	spin_lock(&ms->lock);
	end = jiffies;
	/* ms->mn is only known to be alive while the service is. */
	holdoff = ms->dead ? 0 : READ_ONCE(ms->mn->holdoff_ms);
	ms->next_build = maglev_next_build(end, end - start,
					   msecs_to_jiffies(holdoff));
	if (ret == -ENOMEM) {
		ms->retry = maglev_retry_delay(ms->retry);
		maglev_queue(ms, end, ms->retry);
	} else {
		ms->retry = 0;
	}
	spin_unlock(&ms->lock);
}

/* The build queue */

/* Queue the namespace's build work if a service is ready.  @b->lock held. */
static void maglev_builder_kick(struct maglev_builder *b)
{
	lockdep_assert_held(&b->lock);
	if (list_empty(&b->ready))
		return;
	/* The caller holds a reference too: this one is never the last. */
	refcount_inc(&b->ref);
	if (!queue_work(maglev_wq, &b->work))
		refcount_dec(&b->ref);
}

/*
 * The namespace's build work: build the first ready service, then queue
 * itself again behind whatever the workqueue holds, other namespaces'
 * builds included.
 */
static void maglev_builder_work(struct work_struct *work)
{
	struct maglev_builder *b = container_of(work, struct maglev_builder,
						work);
	struct maglev_service *ms;

	spin_lock(&b->lock);
	ms = list_first_entry_or_null(&b->ready, struct maglev_service,
				      ready_node);
	if (ms)
		list_del_init(&ms->ready_node);
	spin_unlock(&b->lock);

	if (ms) {
		maglev_build_service(ms);
		maglev_svc_put(ms);
	}

	spin_lock(&b->lock);
	maglev_builder_kick(b);
	spin_unlock(&b->lock);
	maglev_builder_put(b);
}

/**
 * maglev_builder_alloc() - a namespace's empty build queue and table store
 *
 * Return: the builder with one reference (the namespace's), or NULL.
 */
struct maglev_builder *maglev_builder_alloc(void)
{
	struct maglev_builder *b = kzalloc(sizeof(*b), GFP_KERNEL_ACCOUNT);

	if (!b)
		return NULL;
	b->cache = maglev_cache_alloc();
	if (!b->cache) {
		kfree(b);
		return NULL;
	}
	refcount_set(&b->ref, 1);
	spin_lock_init(&b->lock);
	INIT_LIST_HEAD(&b->ready);
	INIT_WORK(&b->work, maglev_builder_work);
	return b;
}

/**
 * maglev_builder_put() - drop a reference on a namespace's builder
 * @b: the builder; the last reference frees it and puts its store
 *
 * Context: process context.
 */
void maglev_builder_put(struct maglev_builder *b)
{
	if (!refcount_dec_and_test(&b->ref))
		return;
	WARN_ON_ONCE(!list_empty(&b->ready));
	maglev_cache_put(b->cache);
	kfree(b);
}

/**
 * maglev_builder_cancel() - take a dead service off the ready list
 * @ms: the service
 *
 * Context: process context, no lock held.
 */
void maglev_builder_cancel(struct maglev_service *ms)
{
	struct maglev_builder *b = ms->builder;
	bool listed;

	spin_lock(&b->lock);
	listed = !list_empty(&ms->ready_node);
	if (listed)
		list_del_init(&ms->ready_node);
	spin_unlock(&b->lock);
	if (listed)
		maglev_svc_put(ms);
}

/**
 * maglev_build_work() - a service's build is due
 * @work: the service's delayed work
 *
 * The service joins its namespace's ready list with this work's reference
 * (or drops it if listed already); maglev_build_service() checks the
 * hold-off, and whether the service died meanwhile, when its turn comes.
 */
void maglev_build_work(struct work_struct *work)
{
	struct maglev_service *ms = container_of(to_delayed_work(work),
						 struct maglev_service, work);
	struct maglev_builder *b = ms->builder;
	bool listed;

	spin_lock(&b->lock);
	listed = !list_empty(&ms->ready_node);
	if (!listed)
		list_add_tail(&ms->ready_node, &b->ready);
	maglev_builder_kick(b);
	spin_unlock(&b->lock);
	if (listed)
		maglev_svc_put(ms);
}
