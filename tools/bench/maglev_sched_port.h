/* SPDX-License-Identifier: GPL-2.0 */
/*
 * maglev_sched_port.h - ip_vs_maglev_schedule()'s per-connection path in
 * userspace, for make bench-host (see maglev_sched_port.c).
 */
#ifndef _MAGLEV_SCHED_PORT_H
#define _MAGLEV_SCHED_PORT_H

#include "maglev_table.h"
#include "mh_port.h"

/* struct maglev_key: what a lookup reads of it comes first */
struct msp_key {
	hsiphash_key_t hkey;
	siphash_key_t key;
	u32 fp;
	void *rcu[2];
};

/* struct maglev_net, up to the key pointer */
struct msp_net {
	struct mhp_list services;
	struct msp_key *key;
};

/* struct maglev_lut: the destinations are the mh port's dests */
struct msp_lut {
	struct maglev_table *table;
	u32 nr;
	u32 churn;
	u64 builds;
	u64 gen;
	size_t mem;
	void *shared;
	void *rcu_work[7];
	struct mhp_dest **dest;
	struct maglev_backend *be;
};

/* struct maglev_service, up to the table pointer */
struct msp_service {
	struct mhp_list node;
	struct msp_net *mn;
	void *builder;
	struct mhp_service *svc;	/* af, flags and the dest list */
	struct msp_lut *lut;
};

struct mhp_dest *msp_schedule(const struct msp_service *ms,
			      const union mhp_addr *addr, u16 port);

#endif /* _MAGLEV_SCHED_PORT_H */
