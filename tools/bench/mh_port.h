/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mh_port.h - a userspace port of Linux 6.12's ip_vs_mh table build, the
 * baseline of make bench-host (see mh_port.c).
 */
#ifndef _MH_PORT_H
#define _MH_PORT_H

#include "maglev_compat.h"

#ifndef __always_inline
#define __always_inline	inline __attribute__((__always_inline__))
#endif

/* hsiphash_key_t on a 64-bit kernel */
struct mhp_hkey {
	unsigned long key[2];
};

u32 mhp_hsiphash(const void *data, size_t len, const struct mhp_hkey *key);
u32 mhp_hsiphash_1u32(u32 first, const struct mhp_hkey *key);

struct mhp_list {
	struct mhp_list *next, *prev;
};

/*
 * struct ip_vs_dest up to its refcount with the same field order; @pad
 * stands for the rest (struct ip_vs_stats and the connection counters), so
 * that each dest spans several cache lines as in the kernel.
 */
struct mhp_dest {
	struct mhp_list n_list;
	void *d_list[2];
	u16 af;
	u16 port;		/* network byte order */
	u32 addr[4];		/* network byte order, IPv4 in addr[0] */
	unsigned int flags;
	int conn_flags;
	int weight;
	unsigned long cflags;
	int last_weight;
	u16 tun_type, tun_port, tun_flags;
	int refcnt;
	char pad[256];
};

struct mhp_service {
	struct mhp_list destinations;	/* newest first, as IPVS keeps it */
	u32 num_dests;
};

struct mhp_lookup {
	struct mhp_dest *dest;
};

struct mhp_dest_setup {
	unsigned int offset;
	unsigned int skip;
	unsigned int perm;
	int turns;
};

struct mhp_state {
	struct mhp_lookup *lookup;
	struct mhp_dest_setup *dest_setup;
	struct mhp_hkey hash1, hash2;
	int gcd;
	int rshift;
	unsigned int tab_size;	/* 4093 or 65521 */
};

/* Table sizes the port is built for (CONFIG_IP_VS_MH_TAB_INDEX 12, 16). */
#define MHP_SIZE_SMALL	4093U
#define MHP_SIZE_LARGE	65521U

void mhp_service_init(struct mhp_service *svc);
/* IPVS adds a dest at the head of the list: list_add_rcu(). */
void mhp_service_add(struct mhp_service *svc, struct mhp_dest *dest);
int mhp_init_svc(struct mhp_state *s, struct mhp_service *svc,
		 unsigned int tab_size);
int mhp_dest_changed(struct mhp_state *s, struct mhp_service *svc);
void mhp_done_svc(struct mhp_state *s);

/* The setup of ip_vs_mh_permutate(), for checking the port's table. */
unsigned int mhp_offset(const struct mhp_state *s, const struct mhp_dest *d);
unsigned int mhp_skip(const struct mhp_state *s, const struct mhp_dest *d);
int mhp_turns(const struct mhp_state *s, const struct mhp_dest *d);

#endif /* _MH_PORT_H */
