// SPDX-License-Identifier: GPL-2.0
/*
 * maglev_share.c - a network namespace's store of shared tables.
 *
 * An immutable table (struct maglev_shared) is keyed by its inputs: the
 * table size M and the backends' names, weights and drain weights.  The
 * store finds a table by a hash of the inputs and an exact compare under
 * RCU, inserts filled ones, and frees a table a grace period after its
 * last put.  It knows nothing of services or builds.  Its allocator serves
 * the builds too.
 */

#define KMSG_COMPONENT "IPVS"
#define pr_fmt(fmt) KMSG_COMPONENT ": " fmt

#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/gfp.h>
#include <linux/hashtable.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/rculist.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/types.h>
#include <linux/vmalloc.h>

#include <asm/page.h>

#include "maglev_sched.h"
#include "maglev_table.h"

/**
 * maglev_mem_alloc() - allocate a table, its descriptor or build scratch
 * @bytes: the size
 * @mem: if not NULL, grows by the bytes allocated: @bytes rounded up to
 *	its kmalloc() bucket, or to whole pages
 *
 * Charged to the active memory cgroup, and allowed to fail (%MAGLEV_GFP):
 * kmalloc() up to a page, vmalloc() above.  Not kvmalloc(): above a page
 * it tries kmalloc() first, with __GFP_RETRY_MAYFAIL kept (reclaim and
 * compaction for an order-8 to order-10 block from 262139 slots up), and
 * a kmalloc() that large takes the next power of two in pages: KUnit's
 * maglev_mem_test measured 131072 bytes for the 81956 of 65537 slots of
 * 1000 backends, which take 86016 here.
 *
 * Return: the memory, not zeroed, to be freed with kvfree(); or NULL.
 */
void *maglev_mem_alloc(size_t bytes, size_t *mem)
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

/**
 * maglev_cache_alloc() - a namespace's empty table store
 *
 * Return: the store with one reference, or NULL.
 */
struct maglev_cache *maglev_cache_alloc(void)
{
	struct maglev_cache *c = kzalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);

	if (!c)
		return NULL;
	refcount_set(&c->ref, 1);
	spin_lock_init(&c->lock);
	hash_init(c->hash);
	return c;
}

/**
 * maglev_cache_put() - drop a reference on a table store
 * @c: the store; the last reference frees it, by then without tables
 *
 * Context: any context but hard interrupt; it may be an RCU callback.
 */
void maglev_cache_put(struct maglev_cache *c)
{
	if (!refcount_dec_and_test(&c->ref))
		return;
	WARN_ON_ONCE(c->tables);
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
		if (a[i].weight != b[i].weight ||
		    a[i].drain_weight != b[i].drain_weight ||
		    maglev_backend_cmp(&a[i], &b[i]))
			return false;
		if (!(i % 1024))
			cond_resched();
	}
	return true;
}

/**
 * maglev_shared_alloc() - a table not yet filled, with a copy of @be
 * @size: table size M
 * @be: the backends in name order
 * @nr: their number
 *
 * The structure, the backends and the slots are one allocation, so that
 * the page a table's slots round up to holds the rest of the table rather
 * than nothing (65537 slots of 2 bits end 4 bytes into a fifth page).
 *
 * Return: the table, to be filled, then inserted or freed with kvfree();
 * or NULL.
 */
struct maglev_shared *maglev_shared_alloc(u32 size,
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

/**
 * maglev_cache_find() - a table with exactly these inputs
 * @c: the store
 * @size: table size M
 * @be: the backends in name order
 * @nr: their number
 * @hash: maglev_inputs_hash() of them
 *
 * Picks the candidate by hash, size and number of backends under RCU and
 * takes a reference on it, then compares its up to 65535 backends while
 * the reference keeps it.  A candidate whose inputs only collide in 64
 * bits is not looked past: the caller fills its own table.
 *
 * Context: process context, no lock held; sleeps.
 * Return: the table with a new reference, or NULL.
 */
struct maglev_shared *maglev_cache_find(struct maglev_cache *c, u32 size,
					const struct maglev_backend *be,
					u32 nr, u64 hash)
{
	struct maglev_shared *t, *found = NULL;

	rcu_read_lock();
	hash_for_each_possible_rcu(c->hash, t, node, hash) {
		if (t->hash == hash && t->table->size == size &&
		    t->table->nr_backends == nr &&
		    refcount_inc_not_zero(&t->ref)) {
			found = t;
			break;
		}
	}
	rcu_read_unlock();
	if (found && !maglev_same_inputs(found->be, be, nr)) {
		maglev_shared_put(found);
		found = NULL;
	}
	return found;
}

/**
 * maglev_cache_insert() - add a filled table to the store
 * @c: the store, which the table holds a reference on from now
 * @t: the table from maglev_shared_alloc(), filled; its one reference
 *	stays the caller's
 * @hash: maglev_inputs_hash() of its inputs
 *
 * Context: process context.
 */
void maglev_cache_insert(struct maglev_cache *c, struct maglev_shared *t,
			 u64 hash)
{
	t->hash = hash;
	refcount_inc(&c->ref);
	t->cache = c;
	spin_lock_bh(&c->lock);
	t->id = ++c->next_id;
	c->tables++;
	c->mem += t->mem;
	hash_add_rcu(c->hash, &t->node, hash);
	spin_unlock_bh(&c->lock);
}

/**
 * maglev_shared_put() - drop a reference on a shared table
 * @t: the table
 *
 * The last reference unlinks it from its store and frees it after a
 * grace period, when no lookup can still see it.
 *
 * Context: any context but hard interrupt; it may be an RCU callback.
 */
void maglev_shared_put(struct maglev_shared *t)
{
	struct maglev_cache *c = t->cache;

	if (!refcount_dec_and_test(&t->ref))
		return;
	spin_lock_bh(&c->lock);
	hash_del_rcu(&t->node);
	c->tables--;
	c->mem -= t->mem;
	spin_unlock_bh(&c->lock);
	kvfree_rcu(t, rcu);
	maglev_cache_put(c);
}
