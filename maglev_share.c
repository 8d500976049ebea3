// SPDX-License-Identifier: GPL-2.0
/*
 * maglev_share.c - a network namespace's shared tables and build queue.
 *
 * Services of one namespace whose tables have the same inputs (the table
 * size M, and the backends' names, weights and drain weights) share one
 * immutable table (struct maglev_shared).  Each service keeps its own
 * descriptor (struct maglev_lut) with its own destination references in
 * the table's backend order and one reference on the shared table; the
 * lookup reads the table and the destinations from that descriptor as
 * before.  A build looks its inputs up in the namespace's cache (a hash of
 * the inputs finds the candidates, which are then compared exactly) and
 * fills a new table only when none matches.
 *
 * Builds are due per service (hold-off and retries as before, see
 * maglev_main.c); a due service joins its namespace's ready list, and one
 * work item per namespace builds them one at a time, one per run, then
 * queues itself behind the other namespaces' work.  So two builds of one
 * namespace never race into the same table, a burst of identical changes
 * fills each distinct table once, and a namespace with a long queue holds
 * one worker of the shared workqueue while the others serve the other
 * namespaces in turn.
 *
 * Lifetimes: a shared table holds a reference on its cache, and each
 * service descriptor built on it one on the table.  The descriptor's RCU
 * callback drops it: the last one unlinks the table from the cache (under
 * the cache's lock, where lookups also run) and frees it, a grace period
 * after the last lookup could see it.  The cache is freed with its last
 * reference: the namespace's, its services', its tables' and its queued
 * work's.
 */

#define KMSG_COMPONENT "IPVS"
#define pr_fmt(fmt) KMSG_COMPONENT ": " fmt

#include <linux/array_size.h>
#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/container_of.h>
#include <linux/errno.h>
#include <linux/gfp.h>
#include <linux/hash.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "maglev_sched.h"
#include "maglev_table.h"

/**
 * maglev_cache_alloc() - a namespace's empty table cache
 *
 * Return: the cache with one reference (the namespace's), or NULL.
 */
struct maglev_cache *maglev_cache_alloc(void)
{
	struct maglev_cache *c;
	u32 i;

	c = kzalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);
	if (!c)
		return NULL;
	refcount_set(&c->ref, 1);
	spin_lock_init(&c->lock);
	INIT_LIST_HEAD(&c->ready);
	INIT_WORK(&c->work, maglev_cache_work);
	for (i = 0; i < ARRAY_SIZE(c->bucket); i++)
		INIT_HLIST_HEAD(&c->bucket[i]);
	return c;
}

/**
 * maglev_cache_put() - drop a reference on a namespace's table cache
 * @c: the cache
 *
 * The last reference frees it: by then no table, service or build uses it.
 *
 * Context: any context but hard interrupt; it may be an RCU callback.
 */
void maglev_cache_put(struct maglev_cache *c)
{
	if (!refcount_dec_and_test(&c->ref))
		return;
	WARN_ON_ONCE(c->tables || !list_empty(&c->ready));
	kfree(c);
}

/**
 * maglev_inputs_hash() - hash of a table's inputs, to find candidates
 * @size: table size M
 * @be: the backends in name order
 * @nr: their number
 *
 * Return: a hash of M and each backend's name, weight and drain weight.
 * Equal inputs give equal hashes; candidates are compared exactly.
 */
u64 maglev_inputs_hash(u32 size, const struct maglev_backend *be, u32 nr)
{
	u64 h = maglev_hash(&size, sizeof(size), nr);
	u32 i;

	for (i = 0; i < nr; i++)
		h = maglev_hash(be[i].name, be[i].name_len,
				h ^ ((u64)be[i].weight << 32 |
				     be[i].drain_weight));
	return h;
}

static bool maglev_same_inputs(const struct maglev_backend *a,
			       const struct maglev_backend *b, u32 nr)
{
	u32 i;

	for (i = 0; i < nr; i++) {
		if (a[i].name_len != b[i].name_len ||
		    a[i].weight != b[i].weight ||
		    a[i].drain_weight != b[i].drain_weight ||
		    memcmp(a[i].name, b[i].name, a[i].name_len))
			return false;
		if (!(i % 1024))
			cond_resched();
	}
	return true;
}

static struct hlist_head *maglev_bucket(struct maglev_cache *c, u64 hash)
{
	return &c->bucket[hash_64(hash, MAGLEV_CACHE_BITS)];
}

/**
 * maglev_cache_find() - a shared table with exactly these inputs
 * @c: the namespace's cache
 * @size: table size M
 * @be: the backends in name order
 * @nr: their number
 * @hash: maglev_inputs_hash() of them
 *
 * The cache's lock (which softirqs take too, when an RCU callback drops a
 * table's last reference) is held only to pick the candidate, by hash, size
 * and number of backends, and take a reference on it; its up to 65535
 * backend names are compared after, outside the lock, while the reference
 * keeps it.  A candidate of the same hash but other inputs (inputs that
 * collide in 64 bits) is not looked past: the build fills its own table.
 *
 * Context: process context, no lock held (the build work).
 * Return: the table with a new reference, or NULL if the cache has none
 * (a table whose last reference is dropping does not count).
 */
struct maglev_shared *maglev_cache_find(struct maglev_cache *c, u32 size,
					const struct maglev_backend *be,
					u32 nr, u64 hash)
{
	struct maglev_shared *t, *found = NULL;

	spin_lock_bh(&c->lock);
	hlist_for_each_entry(t, maglev_bucket(c, hash), node) {
		if (t->hash == hash && t->size == size && t->nr == nr &&
		    refcount_inc_not_zero(&t->ref)) {
			found = t;
			break;
		}
	}
	spin_unlock_bh(&c->lock);
	if (!found)
		return NULL;
	/* Immutable once in the cache: no lock needed to compare. */
	if (!maglev_same_inputs(found->be, be, nr)) {
		maglev_shared_put(found);
		return NULL;
	}
	spin_lock_bh(&c->lock);
	c->found++;
	spin_unlock_bh(&c->lock);
	return found;
}

/**
 * maglev_shared_fill() - fill a new table and add it to the cache
 * @c: the namespace's cache
 * @size: table size M
 * @be: the backends in name order; the table keeps a copy (with the slot
 *	counts maglev_build() sets), @be stays the caller's
 * @nr: their number
 * @hash: maglev_inputs_hash() of the inputs
 * @work: scratch area of maglev_work_bytes(@size, @nr) bytes
 * @why: set to a reason on failure
 * @err: set to the negative errno on failure
 *
 * The structure, the backends and the slots are one allocation, so that
 * the page a table's slots round up to holds the rest of the table rather
 * than nothing (65537 slots of 2 bits end 4 bytes into a fifth page).
 *
 * Context: the namespace's build work (no other fill of @c runs); sleeps.
 * Return: the table with one reference, or NULL.
 */
struct maglev_shared *maglev_shared_fill(struct maglev_cache *c, u32 size,
					 const struct maglev_backend *be,
					 u32 nr, u64 hash, void *work,
					 const char **why, int *err)
{
	size_t be_bytes = array_size(nr, sizeof(*be)), mem = 0;
	struct maglev_shared *t;
	u64 t0;

	t = maglev_mem_alloc(size_add(size_add(sizeof(*t), be_bytes),
				      maglev_table_bytes(size, nr)), &mem);
	if (!t) {
		*why = "out of memory";
		*err = -ENOMEM;
		return NULL;
	}
	memset(t, 0, sizeof(*t));
	t->mem = mem;
	t->be = (struct maglev_backend *)(t + 1);
	t->table = (struct maglev_table *)((u8 *)t->be + be_bytes);
	memcpy(t->be, be, be_bytes);

	t0 = ktime_get_ns();
	*err = maglev_build(t->table, size, t->be, nr, work, NULL, why);
	t->build_ns = ktime_get_ns() - t0;
	if (*err) {
		kvfree(t);
		return NULL;
	}
	t->size = size;
	t->nr = nr;
	t->hash = hash;
	refcount_set(&t->ref, 1);
	atomic_set(&t->users, 0);
	refcount_inc(&c->ref);
	t->cache = c;

	spin_lock_bh(&c->lock);
	t->id = ++c->next_id;
	c->fills++;
	c->tables++;
	c->mem += t->mem;
	hlist_add_head(&t->node, maglev_bucket(c, hash));
	spin_unlock_bh(&c->lock);
	return t;
}

/**
 * maglev_shared_put() - drop a reference on a shared table
 * @t: the table
 *
 * The last reference unlinks it from its cache and frees it.  Lookups
 * take their reference under the cache's lock, and no service table
 * refers to it any more, so nothing can see it.
 *
 * Context: any context but hard interrupt; it may be an RCU callback.
 */
void maglev_shared_put(struct maglev_shared *t)
{
	struct maglev_cache *c = t->cache;

	if (!refcount_dec_and_test(&t->ref))
		return;
	spin_lock_bh(&c->lock);
	hlist_del(&t->node);
	c->tables--;
	c->mem -= t->mem;
	spin_unlock_bh(&c->lock);
	kvfree(t);
	maglev_cache_put(c);
}

/* Queue the namespace's build work if it is not queued.  @c->lock held. */
static void maglev_cache_kick(struct maglev_cache *c)
{
	lockdep_assert_held(&c->lock);
	if (list_empty(&c->ready))
		return;
	/* The caller holds a reference too: this one is never the last. */
	refcount_inc(&c->ref);
	if (!queue_work(maglev_wq, &c->work))
		refcount_dec(&c->ref);
}

/**
 * maglev_cache_ready() - a service's build is due: queue it
 * @ms: the service; the caller's reference passes to the ready list, or
 *	is dropped if the service is on it already
 *
 * Context: process context, no lock held.
 */
void maglev_cache_ready(struct maglev_service *ms)
{
	struct maglev_cache *c = ms->cache;
	bool listed;

	spin_lock_bh(&c->lock);
	listed = !list_empty(&ms->ready_node);
	if (!listed)
		list_add_tail(&ms->ready_node, &c->ready);
	maglev_cache_kick(c);
	spin_unlock_bh(&c->lock);
	if (listed)
		maglev_put(ms);
}

/**
 * maglev_cache_cancel() - take a dead service off its namespace's ready list
 * @ms: the service
 *
 * Context: process context, no lock held.
 */
void maglev_cache_cancel(struct maglev_service *ms)
{
	struct maglev_cache *c = ms->cache;
	bool listed;

	spin_lock_bh(&c->lock);
	listed = !list_empty(&ms->ready_node);
	if (listed)
		list_del_init(&ms->ready_node);
	spin_unlock_bh(&c->lock);
	if (listed)
		maglev_put(ms);
}

/**
 * maglev_cache_work() - build the next due service of a namespace
 * @work: the namespace's build work
 *
 * One service per run, then the work queues itself again behind whatever
 * the workqueue holds, other namespaces' builds included.
 */
void maglev_cache_work(struct work_struct *work)
{
	struct maglev_cache *c = container_of(work, struct maglev_cache, work);
	struct maglev_service *ms;

	spin_lock_bh(&c->lock);
	ms = list_first_entry_or_null(&c->ready, struct maglev_service,
				      ready_node);
	if (ms)
		list_del_init(&ms->ready_node);
	spin_unlock_bh(&c->lock);

	if (ms) {
		maglev_build_service(ms);
		maglev_put(ms);
	}

	spin_lock_bh(&c->lock);
	maglev_cache_kick(c);
	spin_unlock_bh(&c->lock);
	maglev_cache_put(c);
}
