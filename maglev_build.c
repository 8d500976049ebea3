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

#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/overflow.h>
#include <linux/ktime.h>
#include <linux/jiffies.h>
#include <linux/memcontrol.h>
#include <linux/sched/mm.h>

#include "maglev_sched.h"

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
int maglev_addr_name(char *buf, size_t len, int af,
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
 * the size requested: @bytes from kmalloc(), the whole pages of vmalloc().
 *
 * Return: the memory, not zeroed, to be freed with kvfree(); or NULL.
 */
void *maglev_mem_alloc(size_t bytes, size_t *mem)
{
	void *p;

	if (bytes <= PAGE_SIZE) {
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

/* A table descriptor with room for @nr destinations; no table yet. */
struct maglev_lut *maglev_lut_alloc(u32 nr)
{
	struct maglev_lut *lut;
	size_t bytes;

	lut = kmalloc(sizeof(*lut), MAGLEV_GFP_SMALL);
	if (!lut)
		return NULL;
	lut->mem = sizeof(*lut);
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
void maglev_lut_free(struct maglev_lut *lut)
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

void maglev_put(struct maglev_service *ms)
{
	struct maglev_lut *lut;

	if (!refcount_dec_and_test(&ms->ref))
		return;
	/* Last reference: no build runs and none is queued. */
	lut = rcu_dereference_protected(ms->lut, true);
	if (lut)
		call_rcu(&lut->rcu, maglev_lut_free_rcu);
	mem_cgroup_put(ms->memcg);
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
unsigned long maglev_delay(unsigned long now, unsigned long when)
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
 *
 * Context: process context (an IPVS callback or a sysctl write), may be
 * inside an RCU read-side section; takes @ms->lock.
 */
void maglev_changed(struct maglev_service *ms)
{
	struct mem_cgroup *memcg = get_mem_cgroup_from_mm(current->mm);
	unsigned long now = jiffies;

	spin_lock(&ms->lock);
	ms->gen++;
	swap(ms->memcg, memcg);
	maglev_queue(ms, now, maglev_delay(now, ms->next_build));
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
 * Walks the IPVS service's destination list and takes a reference on each
 * destination under @ms->lock, so the backends are the service's
 * destinations at one instant (IPVS changes the list under RCU, each change
 * followed by its callback, which bumps @ms->gen under @ms->lock).
 * Returns NULL with *@err set: -ENOMEM, -E2BIG for more than
 * MAGLEV_MAX_BACKENDS destinations (no reference taken), or -ESHUTDOWN for
 * a dead service.  *@size is the namespace's table size at that instant.
 */
struct maglev_lut *maglev_snapshot(struct maglev_service *ms,
				   u64 *gen, u32 *size, int *err)
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
	n = 0;
	rcu_read_lock();
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
	rcu_read_unlock();
	lut->nr = n;
	spin_unlock(&ms->lock);

	for (i = 0; i < lut->nr; i++) {
		struct maglev_backend *b = &lut->be[i];
		const struct ip_vs_dest *d = lut->dest[i];

		b->name_len = maglev_addr_name(b->name, sizeof(b->name),
					       d->af, &d->addr, d->port);
	}
	return lut;

fail_unlock:
	spin_unlock(&ms->lock);
	if (lut)
		maglev_lut_free(lut);
	return NULL;
}

/**
 * maglev_build_table() - build and publish a new table for a service
 * @ms: the service's state; the caller holds a reference
 *
 * Snapshots the destinations, builds the table with the namespace's table
 * size in new memory and swaps it in.  The memory is charged to the memory
 * cgroup of the task whose change queued the build (maglev_changed()), and
 * may fail rather than wake the OOM killer; the reference to that cgroup
 * ends with the build, but for one that ran out of memory, whose retry
 * keeps it.  On failure the published table (if any) is left alone and
 * keeps serving.
 *
 * Context: process context (the build work), no locks held; sleeps.
 * Return: 0, -ESHUTDOWN for a dead service, or the build's negative errno.
 */
int maglev_build_table(struct maglev_service *ms)
{
	struct mem_cgroup *memcg, *old_memcg;
	struct maglev_lut *lut, *old;
	const char *why = NULL;
	void *work = NULL;
	u64 t0, gen = 0;
	u32 size, nr = 0, i;
	int ret;

	memcg = maglev_take_memcg(ms);
	old_memcg = set_active_memcg(memcg);
	lut = maglev_snapshot(ms, &gen, &size, &ret);
	if (!lut) {
		why = ret == -E2BIG ? "more than 65535 destinations" : NULL;
		goto fail;
	}
	nr = lut->nr;

	/* Only this work replaces the table, and it never runs twice at once. */
	old = rcu_dereference_protected(ms->lut, true);

	size = maglev_fit_size(size, nr);

	ret = -ENOMEM;
	why = "out of memory";
	lut->table = maglev_mem_alloc(maglev_table_bytes(size), &lut->mem);
	if (!lut->table)
		goto fail_lut;
	/* The scratch area serves maglev_build() and then maglev_churn(). */
	work = kvmalloc(maglev_work_bytes(size, max(nr, old ? old->nr : 0)),
			MAGLEV_GFP);
	if (!work)
		goto fail_lut;

	why = NULL;
	t0 = ktime_get_ns();
	ret = maglev_build(lut->table, size, lut->be, nr, work, NULL, &why);
	lut->build_ns = ktime_get_ns() - t0;
	if (ret)
		goto fail_lut;

	/* maglev_build() sorted the backends; the references follow them. */
	for (i = 0; i < nr; i++)
		lut->dest[i] = lut->be[i].priv;
	lut->gen = gen;
	lut->builds = old ? old->builds + 1 : 1;
	if (old)
		lut->churn = maglev_churn(old->table, old->be, old->nr,
					  lut->table, lut->be, lut->nr, work);
	else
		lut->churn = lut->table->nr_filled;
	kvfree(work);
	set_active_memcg(old_memcg);
	mem_cgroup_put(memcg);

	spin_lock(&ms->lock);
	if (ms->dead) {
		spin_unlock(&ms->lock);
		maglev_lut_free(lut);
		return -ESHUTDOWN;
	}
	rcu_assign_pointer(ms->lut, lut);
	spin_unlock(&ms->lock);

	if (old)
		call_rcu(&old->rcu, maglev_lut_free_rcu);
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
	pr_warn_ratelimited("%s: maglev table build (%u dests) failed: %s (%d)%s\n",
			    ms->name, nr, why ? why : "out of memory", ret,
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
unsigned long maglev_next_build(unsigned long end, unsigned long took,
				unsigned long holdoff)
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
unsigned long maglev_build_wait(unsigned long now, unsigned long next_build,
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
unsigned long maglev_retry_delay(unsigned long prev)
{
	return prev ? min(prev * 2, MAGLEV_RETRY_MAX) : MAGLEV_RETRY_MIN;
}

void maglev_build_work(struct work_struct *work)
{
	struct maglev_service *ms = container_of(to_delayed_work(work),
						 struct maglev_service, work);
	unsigned long start = jiffies, wait, end;
	unsigned int holdoff;
	int ret;

	spin_lock(&ms->lock);
	wait = maglev_build_wait(start, ms->next_build, ms->retry);
	if (wait) {
		maglev_queue(ms, start, wait);
		spin_unlock(&ms->lock);
		maglev_put(ms);
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
	maglev_put(ms);
}
