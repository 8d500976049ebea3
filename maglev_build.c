// SPDX-License-Identifier: GPL-2.0
/*
 * maglev_build.c - building and publishing a service's table: the backend
 * names, the snapshot of the IPVS service's destinations, the build work
 * with its hold-off and retries, the RCU publish and the table's release.
 * The design (locking, lifetimes, timing) is in maglev_main.c's opening
 * comment.
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
#include <linux/types.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include <asm/byteorder.h>
#include <asm/page.h>

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

/**
 * maglev_mem_alloc() - allocate a part of a table
 * @bytes: its size
 * @mem: the table's memory in bytes, to which this part is added
 *
 * Charged to the active memory cgroup, and allowed to fail (%MAGLEV_GFP):
 * kmalloc() up to a page, vmalloc() above.  kvmalloc() would try kmalloc()
 * first, and a kmalloc() above the largest slab cache takes the next power
 * of two in pages: 256 KiB for the 128 KiB of 65537 slots.  *@mem grows by
 * the size allocated: @bytes rounded up to its kmalloc() bucket, the whole
 * pages of vmalloc().
 *
 * Return: the memory, not zeroed, to be freed with kvfree(); or NULL.
 */
void *maglev_mem_alloc(size_t bytes, size_t *mem)
{
	void *p;

	if (bytes <= PAGE_SIZE) {
		bytes = kmalloc_size_roundup(bytes);
		p = kmalloc(bytes, MAGLEV_GFP_SMALL);
		if (p)
			*mem += bytes;
	} else {
		p = __vmalloc(bytes, MAGLEV_GFP);
		if (p)
			*mem += PAGE_ALIGN(bytes);
	}
	return p;
}

/*
 * Scratch memory of a build or of a churn count, allocated as a table is
 * (maglev_mem_alloc()): kmalloc() with __GFP_NORETRY up to a page,
 * vmalloc() above.  Not kvmalloc(), whose contiguous first try keeps
 * __GFP_RETRY_MAYFAIL: from about 262139 slots up it would reclaim and
 * compact for an order-8 to order-10 block in the build work before it
 * falls back to vmalloc().  Freed with kvfree().
 */
static void *maglev_scratch_alloc(size_t bytes)
{
	size_t mem = 0;

	return maglev_test_scratch(maglev_mem_alloc(bytes, &mem), bytes);
}

/*
 * A service's table descriptor with room for @nr destinations, and the
 * array of @nr backends its snapshot fills in; no table yet.
 */
static struct maglev_lut *maglev_lut_alloc(u32 nr)
{
	struct maglev_lut *lut;
	size_t mem = 0;

	lut = maglev_mem_alloc(struct_size(lut, dest, nr), &mem);
	if (!lut)
		return NULL;
	lut->mem = mem;
	lut->be_mem = 0;
	lut->nr = 0;
	lut->shared = NULL;
	lut->table = NULL;
	lut->be = maglev_mem_alloc(array_size(nr, sizeof(*lut->be)),
				   &lut->be_mem);
	if (!lut->be) {
		kvfree(lut);
		return NULL;
	}
	return lut;
}

/*
 * Free a descriptor that holds references on its first lut->nr
 * destinations, and on its shared table if it has one (else the table
 * and backends are its own).
 */
VISIBLE_IF_KUNIT void maglev_lut_free(struct maglev_lut *lut)
{
	u32 i;

	/*
	 * A removed destination lives in the IPVS trash until its last
	 * reference is gone; whoever drops that reference frees it.
	 */
	for (i = 0; i < lut->nr; i++)
		ip_vs_dest_put_and_free(lut->dest[i]);
	if (lut->shared) {
		maglev_shared_put(lut->shared);
	} else {
		kvfree(lut->table);
		kvfree(lut->be);
	}
	kvfree(lut);
}

static void maglev_lut_free_rcu(struct rcu_head *head)
{
	maglev_lut_free(container_of(head, struct maglev_lut, rcu));
}

/* Retire @ms's published table @lut: it stops counting as a user. */
static void maglev_lut_retire(struct maglev_lut *lut)
{
	atomic_dec(&lut->shared->users);
	call_rcu(&lut->rcu, maglev_lut_free_rcu);
}

void maglev_put(struct maglev_service *ms)
{
	struct maglev_lut *lut;

	if (!refcount_dec_and_test(&ms->ref))
		return;
	/* Last reference: no build runs and none is queued. */
	lut = rcu_dereference_protected(ms->lut, true);
	if (lut)
		maglev_lut_retire(lut);
	mem_cgroup_put(ms->memcg);
	if (ms->cache)
		maglev_cache_put(ms->cache);
	kfree_rcu(ms, rcu);
}

/**
 * maglev_delay() - jiffies from @now until @when, within the hold-off's range
 * @now: the current jiffies
 * @when: jiffies at which something is due
 *
 * Return: 0 if @when has passed, else the time left, but never more than
 * %MAGLEV_HOLDOFF_MAX_MS: a time recorded long ago (jiffies wrap after
 * LONG_MAX, 24.8 days at HZ=1000) must not make anything wait that long.
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
 * Bumps its generation and queues its build, which is charged to the
 * memory cgroup of the calling task: the one that made the change.  That
 * reference replaces the one of an earlier change no build consumed yet.
 * A dead service takes no change: a sysctl write walks the namespace's
 * services under RCU without a reference, and may reach one after
 * done_service, whose last maglev_put() may already have put @ms->memcg.
 *
 * Context: process context (an IPVS callback or a sysctl write), may be
 * inside an RCU read-side section; takes @ms->lock.
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
 * The memory cgroup the next build is charged to, now owned by the caller
 * (NULL: the build work's own, the root).  Context: takes @ms->lock.
 */
static struct mem_cgroup *maglev_take_memcg(struct maglev_service *ms)
{
	struct mem_cgroup *memcg;

	spin_lock(&ms->lock);
	memcg = ms->memcg;
	ms->memcg = NULL;
	spin_unlock(&ms->lock);
	return memcg;
}

/*
 * A build that ran out of memory gives its memory cgroup back for the
 * retry, unless a change meanwhile brought a newer one.
 */
static void maglev_return_memcg(struct maglev_service *ms,
				struct mem_cgroup *memcg)
{
	spin_lock(&ms->lock);
	if (!ms->memcg)
		swap(ms->memcg, memcg);
	spin_unlock(&ms->lock);
	mem_cgroup_put(memcg);
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

/*
 * maglev_snapshot() - copy @ms's destinations into a new table descriptor
 *
 * Notes the generation and the namespace's table size under @ms->lock,
 * while the service is not dead, then walks the IPVS service's destination
 * list under RCU alone and takes a reference on each destination: IPVS's
 * configuration path, whose callbacks take @ms->lock, never spins while a
 * service of up to 65535 destinations is walked.  IPVS changes the list
 * under RCU, each change followed by its callback, which bumps @ms->gen
 * under @ms->lock: every change whose callback ran before the generation
 * was read is in the snapshot, and one that races the walk, in it or not,
 * is followed by another build.  The IPVS service outlives the walk: it
 * is freed a grace period after its deletion, but for ip_vs_add_service's
 * error path, which frees a service that has no destinations yet without
 * one (then nothing is walked).
 * Returns NULL with *@err set: -ENOMEM, -E2BIG for more than
 * MAGLEV_MAX_BACKENDS destinations (no reference taken), or -ESHUTDOWN for
 * a dead service.  *@size is the namespace's table size at that instant.
 */
VISIBLE_IF_KUNIT struct maglev_lut *
maglev_snapshot(struct maglev_service *ms, u64 *gen, u32 *size, int *err)
{
	struct maglev_lut *lut = NULL;
	struct ip_vs_dest *dest;
	u32 room = 0, n, i;

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
		if (lut)
			maglev_lut_free(lut);
		/* Destinations added meanwhile make it try again. */
		room = n;
		lut = maglev_lut_alloc(room);
		if (!lut) {
			*err = -ENOMEM;
			return NULL;
		}
	}

	*gen = ms->gen;
	/* The namespace outlives its services' callbacks, not their builds. */
	*size = READ_ONCE(ms->mn->table_size);
	/* Not dead: the IPVS service is freed after a grace period, if at all. */
	rcu_read_lock();
	spin_unlock(&ms->lock);
	if (!n)
		room = 0;
	n = 0;
	if (room) {
		list_for_each_entry_rcu(dest, &ms->svc->destinations, n_list) {
			struct maglev_backend *b = &lut->be[n];
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
		struct maglev_backend *b = &lut->be[i];
		const struct ip_vs_dest *d = lut->dest[i];

		b->name_len = maglev_addr_name(b->name, sizeof(b->name),
					       d->af, &d->addr, d->port);
		if (!(i % 1024))
			cond_resched();
	}
	return lut;

fail_unlock:
	spin_unlock(&ms->lock);
	if (lut)
		maglev_lut_free(lut);
	return NULL;
}

/**
 * maglev_build_table() - build or find a service's new table and publish it
 * @ms: the service's state; the caller holds a reference
 *
 * Snapshots the destinations, sorts them by name and looks the inputs up
 * in the namespace's cache; only if no table there has them, fills a new
 * one.  Then publishes a new descriptor with the service's own
 * destinations on that table.  The memory is charged to the memory cgroup
 * of the task whose change queued the build (maglev_changed()), and may
 * fail rather than wake the OOM killer; the reference to that cgroup ends
 * with the build, but for one that ran out of memory, whose retry keeps
 * it.  A table found in the cache stays charged to the cgroup of the build
 * that filled it.  On failure the published table (if any) is left alone
 * and keeps serving.
 *
 * Context: the namespace's build work (maglev_cache_work()), no locks
 * held; sleeps.
 * Return: 0, -ESHUTDOWN for a dead service, or the build's negative errno.
 */
VISIBLE_IF_KUNIT int maglev_build_table(struct maglev_service *ms)
{
	struct maglev_cache *c = ms->cache;
	struct mem_cgroup *memcg, *old_memcg;
	struct maglev_lut *lut, *old;
	char name[MAGLEV_SVC_NAME_MAX];
	struct maglev_shared *t, *ot;
	const char *why = NULL;
	void *work = NULL;
	u32 size, nr = 0, onr, i;
	u64 gen = 0, hash;
	int ret;

	memcg = maglev_take_memcg(ms);
	old_memcg = set_active_memcg(memcg);
	lut = maglev_snapshot(ms, &gen, &size, &ret);
	if (!lut) {
		why = ret == -E2BIG ? "more than 65535 destinations" : NULL;
		goto fail;
	}
	nr = lut->nr;

	/*
	 * Only this namespace's build work replaces the table, one service
	 * at a time.
	 */
	old = rcu_dereference_protected(ms->lut, true);
	ot = old ? old->shared : NULL;
	onr = old ? old->nr : 0;

	size = maglev_fit_size(size, nr);
	maglev_sort_backends(lut->be, nr);
	/*
	 * The references follow the backends' order.  Only the sort needs
	 * priv: the backends may become a shared table, which outlives this
	 * service's references, so it keeps no pointer to them.
	 */
	for (i = 0; i < nr; i++) {
		lut->dest[i] = lut->be[i].priv;
		lut->be[i].priv = NULL;
	}
	hash = maglev_inputs_hash(size, lut->be, nr);

	t = maglev_cache_find(c, size, lut->be, nr, hash);
	if (!t) {
		/* The scratch area serves maglev_build() and maglev_churn(). */
		work = maglev_scratch_alloc(maglev_work_bytes(size,
							      max(nr, onr)));
		if (!work) {
			ret = -ENOMEM;
			why = "out of memory";
			goto fail_lut;
		}
		t = maglev_shared_fill(c, size, lut->be, nr, hash, work, &why,
				       &ret);
		if (!t)
			goto fail_lut;
	}
	/* The table keeps its own copy of the backends. */
	kvfree(lut->be);
	lut->shared = t;
	lut->table = t->table;
	lut->be = t->be;

	if (!ot) {
		lut->churn = t->table->nr_filled;
	} else if (ot == t) {
		lut->churn = 0;
	} else if (t->churn_from == ot->id) {
		/* Another service made the same move: same churn. */
		lut->churn = t->churn;
	} else {
		/*
		 * A table from the cache needs scratch only for the churn: a
		 * u16 per old backend.  Without it the table is published
		 * with the churn unknown: a statistic never keeps a ready
		 * table from serving.
		 */
		if (!work)
			work = maglev_scratch_alloc(maglev_churn_bytes(onr));
		if (work) {
			lut->churn = maglev_churn(ot->table, ot->be, ot->nr,
						  t->table, t->be, t->nr, work);
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
	maglev_lut_free(lut);
fail:
	set_active_memcg(old_memcg);
	if (ret == -ENOMEM)
		maglev_return_memcg(ms, memcg);
	else
		mem_cgroup_put(memcg);
	if (ret == -ESHUTDOWN)
		return ret;
	if (ret == -ENOMEM)
		WRITE_ONCE(ms->alloc_fail, ms->alloc_fail + 1);
	else
		WRITE_ONCE(ms->build_fail, ms->build_fail + 1);
	/* The IPVS service is named only while it lives (maglev_snapshot()). */
	spin_lock(&ms->lock);
	if (ms->dead) {
		spin_unlock(&ms->lock);
		return -ESHUTDOWN;
	}
	maglev_svc_name(name, sizeof(name), ms->svc);
	spin_unlock(&ms->lock);
	pr_warn_ratelimited("%s: maglev table build (%u dests) failed: %s (%d)%s\n",
			    name, nr, why ? why : "out of memory", ret,
			    ret == -ENOMEM ? "; retrying" : "");
	return ret;
}

/**
 * maglev_next_build() - when a service's next build may start
 * @end: jiffies at the end of the attempt that just finished
 * @took: its duration in jiffies
 * @holdoff: the namespace's hold-off in jiffies
 *
 * Return: @end plus the hold-off, or plus the attempt's duration when that
 * is longer (up to %MAGLEV_HOLDOFF_LONG): builds take at most about half
 * of a CPU per service.
 */
VISIBLE_IF_KUNIT unsigned long
maglev_next_build(unsigned long end, unsigned long took, unsigned long holdoff)
{
	return end + max(min(took, MAGLEV_HOLDOFF_LONG), holdoff);
}

/**
 * maglev_build_wait() - how long a build that is due now must still wait
 * @now: the current jiffies
 * @next_build: end of the hold-off after the last attempt
 * @retry: the current retry delay, 0 if the last attempt did not run out
 *	of memory
 *
 * A retry does not wait for the hold-off (its own delay, 10 ms doubling to
 * 1 s, has passed when it runs); anything else does, bounded by
 * maglev_delay().
 *
 * Return: jiffies to wait, 0 to build now.
 */
VISIBLE_IF_KUNIT unsigned long
maglev_build_wait(unsigned long now, unsigned long next_build,
		  unsigned long retry)
{
	return retry ? 0 : maglev_delay(now, next_build);
}

/**
 * maglev_retry_delay() - the delay before retrying a build that ran out of memory
 * @prev: the previous retry delay, 0 after a build that did not
 *
 * Return: %MAGLEV_RETRY_MIN, then twice @prev up to %MAGLEV_RETRY_MAX.
 */
VISIBLE_IF_KUNIT unsigned long maglev_retry_delay(unsigned long prev)
{
	return prev ? min(prev * 2, MAGLEV_RETRY_MAX) : MAGLEV_RETRY_MIN;
}

/**
 * maglev_build_work() - a service's build is due
 * @work: the service's delayed work
 *
 * Unless the hold-off still runs, the service joins its namespace's ready
 * list (maglev_cache_ready()) with this work's reference.
 */
void maglev_build_work(struct work_struct *work)
{
	struct maglev_service *ms = container_of(to_delayed_work(work),
						 struct maglev_service, work);
	unsigned long now = jiffies, wait;

	spin_lock(&ms->lock);
	wait = maglev_build_wait(now, ms->next_build, ms->retry);
	if (wait || ms->dead) {
		maglev_queue(ms, now, wait);
		spin_unlock(&ms->lock);
		maglev_put(ms);
		return;
	}
	spin_unlock(&ms->lock);
	maglev_cache_ready(ms);
}

/**
 * maglev_build_service() - build a service's table, its turn having come
 * @ms: the service, taken off its namespace's ready list; the caller
 *	holds a reference
 *
 * Builds unless the hold-off started again meanwhile (then the service's
 * work is queued for its end), sets the next hold-off, and queues a retry
 * after a build that ran out of memory.
 *
 * Context: the namespace's build work, no locks held; sleeps.
 */
void maglev_build_service(struct maglev_service *ms)
{
	unsigned long start = jiffies, wait, end;
	unsigned int holdoff;
	int ret;

	spin_lock(&ms->lock);
	wait = maglev_build_wait(start, ms->next_build, ms->retry);
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
