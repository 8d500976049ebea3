// SPDX-License-Identifier: GPL-2.0
/*
 * maglev_proc.c - /proc/net/ip_vs_maglev: the namespace's line, then each
 * maglev service of the reader's network namespace with its published
 * table, one record a line.  A service's destination lines come from the
 * table its service line was read from, which the reader holds a
 * reference on until it has printed them, or closes the file.  The fields
 * are described in docs/reference.md.
 */

#define KMSG_COMPONENT "IPVS"
#define pr_fmt(fmt) KMSG_COMPONENT ": " fmt

#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/fs.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/proc_fs.h>
#include <linux/rculist.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include <net/net_namespace.h>

#include "maglev_sched.h"
#include "maglev_table.h"

/*
 * Positions: 0 the namespace's line; service k's line (1 + k) << 17, its
 * destination lines that plus 1..N.
 */
#define MAGLEV_POS_SHIFT	17
#define MAGLEV_POS_LINE		((1 << MAGLEV_POS_SHIFT) - 1)

/**
 * struct maglev_iter - a reader of the file
 * @net: the namespace (a reference)
 * @held: the table whose destination lines are printed next (a reference)
 * @held_pos: position of the service line @held was read with
 * @line: the record at the position start() or next() found
 * @ms: the service of that record (a reference until stop())
 */
struct maglev_iter {
	struct net *net;
	struct maglev_shared *held;
	loff_t held_pos;
	u32 line;
	struct maglev_service *ms;
};

/* A service's state as allocated (ip_vs_maglev_init_svc()), in its mem. */
static size_t maglev_state_mem(const struct maglev_service *ms)
{
	return kmalloc_size_roundup(sizeof(*ms)) +
	       READ_ONCE(ms->nr) * kmalloc_size_roundup(sizeof(struct maglev_dest));
}

/* The service line; the destination lines follow from its table. */
static void maglev_show_service(struct seq_file *seq, struct maglev_iter *it)
{
	static const struct maglev_table none = {};
	struct maglev_service *ms = it->ms;
	struct maglev_builder *b = ms->builder;
	const struct maglev_table *t = &none;
	struct maglev_shared *sh = NULL;
	const struct maglev_lut *lut;
	u32 flags = 0, users = 0;
	size_t mem = maglev_state_mem(ms);
	u64 gen, table_gen = 0;
	bool dead;

	/*
	 * IPVS may free the service without a grace period after done_service
	 * (ip_vs_add_service()'s error path): read it while not dead.
	 */
	rcu_read_lock();
	spin_lock(&b->lock);
	dead = ms->dead;
	if (!dead)
		flags = READ_ONCE(ms->svc->flags) & MAGLEV_F_SCHED;
	gen = ms->gen;
	lut = rcu_dereference(ms->lut);
	spin_unlock(&b->lock);
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
	if (it->held)
		maglev_shared_put(it->held);
	it->held = sh;
	it->held_pos = seq->index;
}

/* The namespace's line: its services and tables, each table's bytes once. */
static void maglev_show_net(struct seq_file *seq, struct maglev_net *mn)
{
	struct maglev_builder *b = mn->builder;
	const struct maglev_service *ms;
	const struct maglev_lut *lut;
	u32 services = 0, tables;
	u64 fills;
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
	spin_lock(&b->lock);
	tables = b->tables;
	fills = b->next_id;
	mem += b->mem;
	spin_unlock(&b->lock);
	seq_printf(seq,
		   "namespace services %u tables %u fills %llu found %llu mem %zu\n",
		   services, tables, fills, READ_ONCE(b->found), mem);
}

/* Drop the reference on the service of the last record. */
static void maglev_seq_stop(struct seq_file *seq, void *v)
{
	struct maglev_iter *it = seq->private;

	if (it->ms)
		maglev_svc_put(it->ms);
	it->ms = NULL;
}

/*
 * The record at *@pos: a destination line of the held table, or the line
 * of the service at its ordinal (the next one's when the held table has no
 * more lines), with a reference on the service; NULL past the last one.
 */
static void *maglev_seq_start(struct seq_file *seq, loff_t *pos)
{
	struct maglev_iter *it = seq->private;
	struct maglev_net *mn = maglev_pernet(it->net);
	struct maglev_service *ms, *found = NULL;
	loff_t k;

	maglev_seq_stop(seq, NULL);
	/* Without a service the file is empty. */
	if (!*pos)
		return list_empty(&mn->services) ? NULL : SEQ_START_TOKEN;
	it->line = *pos & MAGLEV_POS_LINE;
	if (it->line) {
		if (it->held && it->held_pos == *pos - it->line &&
		    it->line <= it->held->table->nr_backends)
			return it;
		*pos = (*pos | MAGLEV_POS_LINE) + 1;
		it->line = 0;
	}
	k = (*pos >> MAGLEV_POS_SHIFT) - 1;
	rcu_read_lock();
	list_for_each_entry_rcu(ms, &mn->services, node) {
		if (k) {
			k--;
		} else if (refcount_inc_not_zero(&ms->ref)) {
			/* (One whose last reference is gone has ended.) */
			found = ms;
			break;
		}
	}
	rcu_read_unlock();
	it->ms = found;
	return found ? it : NULL;
}

static void *maglev_seq_next(struct seq_file *seq, void *v, loff_t *pos)
{
	*pos = v == SEQ_START_TOKEN ? 1 << MAGLEV_POS_SHIFT : *pos + 1;
	return maglev_seq_start(seq, pos);
}

static int maglev_seq_show(struct seq_file *seq, void *v)
{
	struct maglev_iter *it = seq->private;
	const struct maglev_backend *b;

	if (v == SEQ_START_TOKEN) {
		maglev_show_net(seq, maglev_pernet(it->net));
	} else if (!it->line) {
		maglev_show_service(seq, it);
	} else {
		b = &it->held->be[it->line - 1];
		seq_printf(seq, "  dest %.*s weight %u slots %u drain %u\n",
			   (int)b->name_len, b->name, b->weight, b->slots,
			   b->drain_weight);
	}
	return 0;
}

static const struct seq_operations maglev_seq_ops = {
	.start = maglev_seq_start,
	.next = maglev_seq_next,
	.stop = maglev_seq_stop,
	.show = maglev_seq_show,
};

static int maglev_proc_open(struct inode *inode, struct file *file)
{
	struct net *net = maybe_get_net(pde_data(inode));
	struct maglev_iter *it;

	if (!net)
		return -ENXIO;
	it = __seq_open_private(file, &maglev_seq_ops, sizeof(*it));
	if (!it) {
		put_net(net);
		return -ENOMEM;
	}
	it->net = net;
	return 0;
}

static int maglev_proc_release(struct inode *inode, struct file *file)
{
	struct seq_file *seq = file->private_data;
	struct maglev_iter *it = seq->private;

	maglev_seq_stop(seq, NULL);
	if (it->held)
		maglev_shared_put(it->held);
	put_net(it->net);
	return seq_release_private(inode, file);
}

static const struct proc_ops maglev_proc_ops = {
	.proc_open = maglev_proc_open,
	.proc_read_iter = seq_read_iter,
	.proc_lseek = seq_lseek,
	.proc_release = maglev_proc_release,
};

/**
 * maglev_proc_init() - create a namespace's /proc/net/ip_vs_maglev
 * @net: the namespace
 *
 * Return: 0, or -ENOMEM.
 */
int maglev_proc_init(struct net *net)
{
	if (IS_ENABLED(CONFIG_PROC_FS) &&
	    !proc_create_data("ip_vs_maglev", 0444, net->proc_net,
			      &maglev_proc_ops, net))
		return -ENOMEM;
	return 0;
}

/**
 * maglev_proc_exit() - remove a namespace's /proc/net/ip_vs_maglev
 * @net: the namespace
 */
void maglev_proc_exit(struct net *net)
{
	remove_proc_entry("ip_vs_maglev", net->proc_net);
}
