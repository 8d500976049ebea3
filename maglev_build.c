// SPDX-License-Identifier: GPL-2.0
/*
 * maglev_build.c - a namespace's builder: the queue of services with a
 * change to build, the builds themselves, the store of tables that
 * services with equal inputs share, and publishing.  A build reads only
 * the service's own set of destinations (maglev_main.c keeps it under
 * IPVS's mutex), never IPVS's lists.  docs/design.md describes the design.
 */

#define KMSG_COMPONENT "IPVS"
#define pr_fmt(fmt) KMSG_COMPONENT ": " fmt

#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/container_of.h>
#include <linux/delay.h>
#include <linux/errno.h>
#include <linux/hashtable.h>
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/memcontrol.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/printk.h>
#include <linux/rbtree.h>
#include <linux/rculist.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/types.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include <net/ip_vs.h>

#include "maglev_sched.h"
#include "maglev_table.h"

/*
 * Build allocations may fail: the old table keeps serving and the build is
 * retried.  None may wake the OOM killer, the global one or a memory
 * cgroup's (try_charge_memcg() gives up on __GFP_NORETRY and
 * __GFP_RETRY_MAYFAIL before mem_cgroup_oom()).  kmalloc() up to a page
 * takes __GFP_NORETRY; vmalloc(), which does not honour it,
 * __GFP_RETRY_MAYFAIL.
 */
#define MAGLEV_GFP_SMALL	(GFP_KERNEL_ACCOUNT | __GFP_NORETRY | __GFP_NOWARN)
#define MAGLEV_GFP		(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | \
				 __GFP_NOWARN)

/* Retry delays of a build that ran out of memory. */
#define MAGLEV_RETRY_MIN	msecs_to_jiffies(10)
#define MAGLEV_RETRY_MAX	msecs_to_jiffies(1000)
/* A build's duration lengthens its service's hold-off up to this. */
#define MAGLEV_HOLDOFF_LONG	msecs_to_jiffies(1000)

/*
 * A table, its descriptor or build scratch, charged to the active memory
 * cgroup and allowed to fail: kmalloc() up to a page, vmalloc() above (not
 * kvmalloc(), whose kmalloc() attempt of a large block keeps
 * __GFP_RETRY_MAYFAIL's reclaim and compaction and takes the next power of
 * two).  *@mem, if given, grows by the bytes allocated.  Freed with
 * kvfree().
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

/* The table store */

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
		if (!(i % MAGLEV_RESCHED_ENTRIES))
			cond_resched();
	}
	return h;
}

static bool maglev_same_inputs(const struct maglev_backend *a,
			       const struct maglev_backend *b, u32 nr)
{
	u32 i;

	for (i = 0; i < nr; i++) {
		if (a[i].weight != b[i].weight ||
		    a[i].drain_weight != b[i].drain_weight ||
		    maglev_backend_cmp(&a[i], &b[i]))
			return false;
		if (!(i % MAGLEV_RESCHED_ENTRIES))
			cond_resched();
	}
	return true;
}

/*
 * A table to fill, with a copy of @be: one allocation, so that the page
 * its slots round up to holds the rest of the table rather than nothing.
 */
static struct maglev_shared *maglev_shared_alloc(u32 size,
						 const struct maglev_backend *be,
						 u32 nr)
{
	size_t be_bytes = array_size(nr, sizeof(*be)), mem = 0;
	struct maglev_shared *t;

	t = maglev_mem_alloc(size_add(size_add(sizeof(*t), be_bytes),
				      maglev_table_bytes(size, nr)), &mem);
	if (!t)
		return NULL;
	memset(t, 0, sizeof(*t));
	refcount_set(&t->ref, 1);
	t->mem = mem;
	t->be = (struct maglev_backend *)(t + 1);
	t->table = (struct maglev_table *)((u8 *)t->be + be_bytes);
	memcpy(t->be, be, be_bytes);
	return t;
}

/*
 * A stored table with exactly these inputs, with a new reference: the
 * candidate is picked by hash, size and count under the lock, then its
 * backends are compared while the reference keeps it.
 */
static struct maglev_shared *maglev_store_find(struct maglev_builder *b,
					       u32 size,
					       const struct maglev_backend *be,
					       u32 nr, u64 hash)
{
	struct maglev_shared *t, *found = NULL;

	spin_lock(&b->lock);
	hash_for_each_possible(b->hash, t, node, hash) {
		if (t->hash == hash && t->table->size == size &&
		    t->table->nr_backends == nr &&
		    refcount_inc_not_zero(&t->ref)) {
			found = t;
			break;
		}
	}
	spin_unlock(&b->lock);
	if (found && !maglev_same_inputs(found->be, be, nr)) {
		maglev_shared_put(found);
		found = NULL;
	}
	return found;
}

static void maglev_store_insert(struct maglev_builder *b,
				struct maglev_shared *t, u64 hash)
{
	t->hash = hash;
	refcount_inc(&b->ref);
	t->builder = b;
	spin_lock(&b->lock);
	t->id = ++b->next_id;
	b->tables++;
	b->mem += t->mem;
	hash_add(b->hash, &t->node, hash);
	spin_unlock(&b->lock);
}

/**
 * maglev_shared_put() - drop a reference on a stored table
 * @t: the table; the last reference removes it from its store and frees it
 *
 * Context: process context.
 */
void maglev_shared_put(struct maglev_shared *t)
{
	struct maglev_builder *b = t->builder;

	if (!refcount_dec_and_test(&t->ref))
		return;
	spin_lock(&b->lock);
	hash_del(&t->node);
	b->tables--;
	b->mem -= t->mem;
	spin_unlock(&b->lock);
	kvfree(t);
	maglev_builder_put(b);
}

/* Published tables and services */

/* Put a descriptor's destinations and shared table, and free it. */
static void maglev_lut_free(struct maglev_lut *lut)
{
	u32 i;

	/* A removed destination lives in IPVS's trash until its last put. */
	for (i = 0; i < lut->nr; i++) {
		ip_vs_dest_put_and_free(lut->dest[i]);
		if (!(i % MAGLEV_RESCHED_ENTRIES))
			cond_resched();
	}
	if (lut->shared)
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
	atomic_dec(&lut->shared->users);
	INIT_RCU_WORK(&lut->free, maglev_lut_free_work);
	queue_rcu_work(maglev_wq, &lut->free);
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
	lut = rcu_dereference_protected(ms->lut, true);
	if (lut)
		maglev_lut_retire(lut);
	mem_cgroup_put(ms->memcg);
	maglev_builder_put(ms->builder);
	mutex_destroy(&ms->set_lock);
	kfree_rcu(ms, rcu);
}

/* The queue */

/*
 * Jiffies from @now until @when: 0 if it has passed, and never more than
 * MAGLEV_HOLDOFF_MAX_MS, so that a time recorded before jiffies wrapped
 * makes nothing wait that long.
 */
static unsigned long maglev_delay(unsigned long now, unsigned long when)
{
	if (!time_before(now, when))
		return 0;
	return min(when - now, msecs_to_jiffies(MAGLEV_HOLDOFF_MAX_MS));
}

/*
 * Make the builder's work run at @when, or earlier if it is queued for
 * earlier.  A queued work holds a reference.  Context: @b->lock held.
 */
static void maglev_arm(struct maglev_builder *b, unsigned long when)
{
	unsigned long now = jiffies, delay = maglev_delay(now, when);

	lockdep_assert_held(&b->lock);
	if (queue_delayed_work(maglev_wq, &b->work, delay)) {
		refcount_inc(&b->ref);
	} else if (time_before(now + delay, b->due)) {
		if (!mod_delayed_work(maglev_wq, &b->work, delay))
			refcount_inc(&b->ref);
	} else {
		return;
	}
	b->due = now + delay;
}

/*
 * Put @ms on the pending list with a build due at @when, or pull an
 * earlier @when in.  The list holds a reference.  Context: builder's lock.
 */
static void maglev_pend(struct maglev_service *ms, unsigned long when)
{
	struct maglev_builder *b = ms->builder;

	lockdep_assert_held(&b->lock);
	if (ms->dead)
		return;
	if (list_empty(&ms->pending_node)) {
		refcount_inc(&ms->ref);
		list_add_tail(&ms->pending_node, &b->pending);
		ms->due = when;
	} else if (time_before(when, ms->due)) {
		ms->due = when;
	}
	maglev_arm(b, ms->due);
}

/**
 * maglev_changed() - record a change of a service and queue its build
 * @ms: the service's state
 *
 * The build starts when the service's hold-off has passed, and is charged
 * to the memory cgroup of the calling task (replacing that of a change no
 * build took yet).  A dead service takes no change.
 *
 * Context: process context, maybe under RCU; takes the builder's lock.
 */
void maglev_changed(struct maglev_service *ms)
{
	struct mem_cgroup *memcg = get_mem_cgroup_from_mm(current->mm);
	struct maglev_builder *b = ms->builder;
	unsigned long now = jiffies;

	spin_lock(&b->lock);
	if (!ms->dead) {
		ms->gen++;
		swap(ms->memcg, memcg);
		maglev_pend(ms, now + maglev_delay(now, ms->next_build));
	}
	spin_unlock(&b->lock);
	mem_cgroup_put(memcg);
}

/**
 * maglev_svc_kill() - a service's end: no build is queued or published
 * @ms: the service's state
 *
 * A build already running finishes on its own copy and discards it.
 *
 * Context: process context.
 */
void maglev_svc_kill(struct maglev_service *ms)
{
	struct maglev_builder *b = ms->builder;
	bool listed, idle;

	spin_lock(&b->lock);
	ms->dead = true;
	listed = !list_empty(&ms->pending_node);
	list_del_init(&ms->pending_node);
	/* No timer outlives the last pending service (module unload). */
	idle = list_empty(&b->pending) && cancel_delayed_work(&b->work);
	spin_unlock(&b->lock);
	if (idle)
		maglev_builder_put(b);
	if (listed)
		maglev_svc_put(ms);
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

/*
 * A new descriptor with a reference on each destination of @ms's set, and
 * in *@be their backends in name order (the set's order), followed by the
 * room *@map for maglev_churn()'s map of @onr old backends; *@be is freed
 * with kvfree().  The set is copied under its mutex, which IPVS's callbacks
 * wait for, but the memory is allocated before: an allocation that
 * reclaims never holds up IPVS.  NULL with *@err: -ENOMEM, -E2BIG (more
 * than MAGLEV_MAX_BACKENDS) or -ENODATA (the set is incomplete).
 */
static struct maglev_lut *maglev_copy_set(struct maglev_service *ms, u32 onr,
					  struct maglev_backend **be,
					  void **map, int *err)
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
		mutex_lock(&ms->set_lock);
		/* Destinations added meanwhile make it allocate again. */
		if (ms->nr <= room)
			break;
		mutex_unlock(&ms->set_lock);
		kvfree(lut);
		kvfree(*be);
	}
	if (ms->incomplete) {
		mutex_unlock(&ms->set_lock);
		*err = -ENODATA;
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
		if (!(n % MAGLEV_RESCHED_ENTRIES))
			cond_resched();
#ifdef MAGLEV_TEST_DELAY_MS
		msleep(MAGLEV_TEST_DELAY_MS);	/* test builds only */
#endif
	}
	mutex_unlock(&ms->set_lock);
	lut->nr = n;
	lut->mem = mem;
	lut->shared = NULL;
	*map = *be + room;
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
 * Find or fill @ms's table from a copy of its set and publish it.  The
 * memory is charged to the memory cgroup of the latest change (held from
 * that change until the build ends, or its retry), and may fail, never
 * waking the OOM killer: the published table keeps serving.  Return: 0,
 * -ESHUTDOWN for a dead service, or the build's negative errno.
 */
static int maglev_build_table(struct maglev_service *ms)
{
	struct maglev_builder *b = ms->builder;
	struct maglev_lut *lut, *old = rcu_dereference_protected(ms->lut, 1);
	struct mem_cgroup *memcg, *old_memcg;
	struct maglev_backend *be = NULL;
	struct maglev_shared *t;
	const char *why = NULL;
	void *work, *map = NULL;
	u32 size, nr = 0;
	u64 gen, hash, t0;
	int ret;

	spin_lock(&b->lock);
	memcg = ms->memcg;
	ms->memcg = NULL;
	gen = ms->gen;
	spin_unlock(&b->lock);
	old_memcg = set_active_memcg(memcg);

	lut = maglev_copy_set(ms, old ? old->nr : 0, &be, &map, &ret);
	if (!lut)
		goto fail;
	nr = lut->nr;
	size = maglev_fit_size(READ_ONCE(b->table_size), nr);
	hash = maglev_inputs_hash(size, be, nr);
	t = maglev_store_find(b, size, be, nr, hash);
	if (t) {
		WRITE_ONCE(b->found, b->found + 1);
	} else {
		work = maglev_mem_alloc(maglev_work_bytes(size, nr), NULL);
		t = work ? maglev_shared_alloc(size, be, nr) : NULL;
		ret = -ENOMEM;
		if (t) {
			t0 = ktime_get_ns();
			ret = maglev_build(t->table, size, t->be, nr, work,
					   NULL, &why);
			t->build_ns = ktime_get_ns() - t0;
		}
		kvfree(work);
		if (ret) {
			kvfree(t);
			kvfree(be);
			maglev_lut_free(lut);
			goto fail;
		}
		maglev_store_insert(b, t, hash);
	}
	lut->shared = t;
	lut->table = t->table;
	lut->churn = maglev_lut_churn(old, t, map);
	lut->gen = gen;
	lut->builds = old ? old->builds + 1 : 1;
	kvfree(be);
	set_active_memcg(old_memcg);
	mem_cgroup_put(memcg);

	spin_lock(&b->lock);
	if (ms->dead) {
		spin_unlock(&b->lock);
		maglev_lut_free(lut);
		return -ESHUTDOWN;
	}
	atomic_inc(&t->users);
	rcu_assign_pointer(ms->lut, lut);
	spin_unlock(&b->lock);
	if (old)
		maglev_lut_retire(old);
	return 0;

fail:
	set_active_memcg(old_memcg);
	spin_lock(&b->lock);
	/* The retry is charged to it too, unless a change brought another. */
	if (ret == -ENOMEM && !ms->memcg)
		swap(ms->memcg, memcg);
	spin_unlock(&b->lock);
	mem_cgroup_put(memcg);
	/* An incomplete set was logged when a callback could not record. */
	if (ret == -ENODATA)
		return ret;
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
 * MAGLEV_HOLDOFF_LONG), so that builds take at most about half a CPU; a
 * build that ran out of memory is retried after its own delay instead.
 */
static void maglev_build_service(struct maglev_service *ms)
{
	struct maglev_builder *b = ms->builder;
	unsigned long start = jiffies, end;
	int ret = maglev_build_table(ms);

	spin_lock(&b->lock);
	end = jiffies;
	ms->next_build = end + max(min(end - start, MAGLEV_HOLDOFF_LONG),
				   msecs_to_jiffies(READ_ONCE(b->holdoff_ms)));
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
	spin_unlock(&b->lock);
}

/*
 * The builder's work: build the first pending service that is due, then
 * queue itself again behind whatever the workqueue holds, other
 * namespaces' builds included; or, if none is due, for the earliest.
 */
static void maglev_builder_work(struct work_struct *work)
{
	struct maglev_builder *b = container_of(to_delayed_work(work),
						struct maglev_builder, work);
	struct maglev_service *ms, *due = NULL;
	unsigned long now = jiffies, next = now;

	spin_lock(&b->lock);
	list_for_each_entry(ms, &b->pending, pending_node) {
		if (!time_after(ms->due, now)) {
			due = ms;
			break;
		}
		if (next == now || time_before(ms->due, next))
			next = ms->due;
	}
	if (due)
		list_del_init(&due->pending_node);
	spin_unlock(&b->lock);

	if (due) {
		maglev_build_service(due);
		maglev_svc_put(due);
		next = jiffies;
	}
	spin_lock(&b->lock);
	if (!list_empty(&b->pending))
		maglev_arm(b, next);
	spin_unlock(&b->lock);
	maglev_builder_put(b);
}

/**
 * maglev_builder_alloc() - a namespace's builder, with no service or table
 *
 * Return: the builder with one reference (the namespace's), or NULL.
 */
struct maglev_builder *maglev_builder_alloc(void)
{
	struct maglev_builder *b = kzalloc(sizeof(*b), GFP_KERNEL_ACCOUNT);

	if (!b)
		return NULL;
	refcount_set(&b->ref, 1);
	spin_lock_init(&b->lock);
	INIT_LIST_HEAD(&b->pending);
	INIT_DELAYED_WORK(&b->work, maglev_builder_work);
	hash_init(b->hash);
	return b;
}

/**
 * maglev_builder_put() - drop a reference on a namespace's builder
 * @b: the builder; the last reference frees it
 *
 * Context: process context.
 */
void maglev_builder_put(struct maglev_builder *b)
{
	if (!refcount_dec_and_test(&b->ref))
		return;
	WARN_ON_ONCE(!list_empty(&b->pending) || b->tables);
	kfree(b);
}
