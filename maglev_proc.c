// SPDX-License-Identifier: GPL-2.0
/*
 * maglev_proc.c - /proc/net/ip_vs_maglev: each maglev service of the
 * reader's network namespace with its published table, read under RCU so
 * that readers never hold up a change or a build.  The fields are
 * described in docs/reference.md.
 */

#define KMSG_COMPONENT "IPVS"
#define pr_fmt(fmt) KMSG_COMPONENT ": " fmt

#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/proc_fs.h>
#include <linux/rculist.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/seq_file_net.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/sprintf.h>
#include <linux/string.h>
#include <linux/types.h>

#include <kunit/visibility.h>

#include <net/ip_vs.h>
#include <net/net_namespace.h>

#include "maglev_sched.h"
#include "maglev_table.h"

/* A service's state as allocated (ip_vs_maglev_init_svc()), in its mem. */
static size_t maglev_state_mem(void)
{
	return kmalloc_size_roundup(sizeof(struct maglev_service));
}

/**
 * maglev_show_service() - one service's record in /proc/net/ip_vs_maglev
 * @seq: the file
 * @ms: the service's state
 *
 * Every table field comes from the table published when @ms->gen was read.
 *
 * Context: RCU read lock held; takes @ms->lock.
 */
VISIBLE_IF_KUNIT void maglev_show_service(struct seq_file *seq,
					  struct maglev_service *ms)
{
	static const struct maglev_table none = {};
	const struct maglev_table *t = &none;
	const struct maglev_shared *sh = NULL;
	const struct maglev_lut *lut;
	char churn[12] = "0", name[MAGLEV_SVC_NAME_MAX];
	u64 gen, table_gen = 0;
	u32 i, nr = 0, flags = 0, users = 0;
	size_t mem = maglev_state_mem();

	/*
	 * IPVS may free the service without a grace period after done_service
	 * (ip_vs_add_service's error path): read it under the lock while not
	 * dead.  A dead one has no record.
	 */
	spin_lock(&ms->lock);
	if (ms->dead) {
		spin_unlock(&ms->lock);
		return;
	}
	flags = READ_ONCE(ms->svc->flags) & MAGLEV_F_SCHED;
	maglev_svc_name(name, sizeof(name), ms->svc);
	gen = ms->gen;
	lut = rcu_dereference(ms->lut);
	spin_unlock(&ms->lock);
	if (lut) {
		t = lut->table;
		nr = lut->nr;
		table_gen = lut->gen;
		sh = lut->shared;
		mem += lut->mem;
		if (lut->churn == MAGLEV_CHURN_UNKNOWN)
			strscpy(churn, "-", sizeof(churn));
		else
			snprintf(churn, sizeof(churn), "%u", lut->churn);
	}
	if (sh) {
		/* Its users share the table's bytes: counted once in all. */
		users = atomic_read(&sh->users);
		mem += sh->mem / max(users, 1U);
	}
	seq_printf(seq,
		   "service %s size %u key %08x flags 0x%x dests %u builds %llu churn %s build_ns %llu alloc_fail %llu build_fail %llu digest %016llx pending %u gen %llu table_gen %llu mem %zu table %llu shared %u table_mem %zu\n",
		   name, t->size, rcu_dereference(ms->mn->key)->fp, flags,
		   nr, lut ? lut->builds : 0, churn,
		   sh ? sh->build_ns : 0, READ_ONCE(ms->alloc_fail),
		   READ_ONCE(ms->build_fail), t->digest, gen != table_gen,
		   gen, table_gen, mem, sh ? sh->id : 0, users,
		   sh ? sh->mem : 0);
	for (i = 0; i < nr; i++) {
		const struct maglev_backend *b = &sh->be[i];

		seq_printf(seq, "  dest %.*s weight %u slots %u\n",
			   (int)b->name_len, b->name, b->weight, b->slots);
	}
}

/* The namespace's line: its services and tables, each table's bytes once. */
static void maglev_show_net(struct seq_file *seq, struct maglev_net *mn)
{
	struct maglev_cache *c = mn->builder->cache;
	const struct maglev_service *ms;
	const struct maglev_lut *lut;
	u32 services = 0, tables;
	u64 fills;
	size_t mem = 0;

	list_for_each_entry_rcu(ms, &mn->services, node) {
		services++;
		mem += maglev_state_mem();
		lut = rcu_dereference(ms->lut);
		if (lut)
			mem += lut->mem;
	}
	spin_lock_bh(&c->lock);
	tables = c->tables;
	fills = c->next_id;
	mem += c->mem;
	spin_unlock_bh(&c->lock);
	seq_printf(seq,
		   "namespace services %u tables %u fills %llu found %llu mem %zu\n",
		   services, tables, fills, READ_ONCE(mn->builder->found), mem);
}

/* The namespace's line, then one record per service; nothing without one. */
static void *maglev_seq_start(struct seq_file *seq, loff_t *pos)
	__acquires(RCU)
{
	struct maglev_net *mn = maglev_pernet(seq_file_net(seq));

	rcu_read_lock();
	if (list_empty(&mn->services))
		return NULL;
	return seq_list_start_head_rcu(&mn->services, *pos);
}

static void *maglev_seq_next(struct seq_file *seq, void *v, loff_t *pos)
{
	struct maglev_net *mn = maglev_pernet(seq_file_net(seq));

	return seq_list_next_rcu(v, &mn->services, pos);
}

static void maglev_seq_stop(struct seq_file *seq, void *v)
	__releases(RCU)
{
	rcu_read_unlock();
}

static int maglev_seq_show(struct seq_file *seq, void *v)
{
	struct maglev_net *mn = maglev_pernet(seq_file_net(seq));

	if (v == &mn->services)
		maglev_show_net(seq, mn);
	else
		maglev_show_service(seq, list_entry(v, struct maglev_service,
						    node));
	return 0;
}

static const struct seq_operations maglev_seq_ops = {
	.start = maglev_seq_start,
	.next = maglev_seq_next,
	.stop = maglev_seq_stop,
	.show = maglev_seq_show,
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
	    !proc_create_net("ip_vs_maglev", 0444, net->proc_net,
			     &maglev_seq_ops, sizeof(struct seq_net_private)))
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
