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

/* The message must be followed by 7 readable bytes (see mh_port.c). */
u32 mhp_hsiphash(const void *data, size_t len, const struct mhp_hkey *key);
u32 mhp_hsiphash_1u32(u32 first, const struct mhp_hkey *key);

/* union nf_inet_addr: network byte order, IPv4 in ip */
union mhp_addr {
	u32 ip;
	u32 ip6[4];
};

/* IPVS's service flags and address families, as ip_vs_mh reads them */
#define MHP_AF_INET		2
#define MHP_AF_INET6		10
#define MHP_SVC_F_FALLBACK	0x0008	/* IP_VS_SVC_F_SCHED1 */
#define MHP_SVC_F_PORT		0x0010	/* IP_VS_SVC_F_SCHED2 */
#define MHP_DEST_F_AVAILABLE	0x0001	/* IP_VS_DEST_F_AVAILABLE */
#define MHP_DEST_F_OVERLOAD	0x0002	/* IP_VS_DEST_F_OVERLOAD */

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
	union mhp_addr addr;	/* network byte order */
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
	u16 af;				/* MHP_AF_INET or MHP_AF_INET6 */
	unsigned int flags;		/* MHP_SVC_F_* */
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

/*
 * ip_vs_mh_schedule() without flag-1 (ip_vs_mh_get()) from the client
 * address and port on: ip_vs_mh_hashkey() (IPv6 folded to 4 bytes), the
 * table load, is_unavailable().  One function per compile-time table size.
 */
struct mhp_dest *mhp_schedule_small(const struct mhp_service *svc,
				    const struct mhp_state *s,
				    const union mhp_addr *addr, u16 port);
struct mhp_dest *mhp_schedule_large(const struct mhp_service *svc,
				    const struct mhp_state *s,
				    const union mhp_addr *addr, u16 port);
/* Not ip_vs_mh: the same with hsiphash_1u32(v) for hsiphash(&v, 4). */
struct mhp_dest *mhp_schedule_small_1u32(const struct mhp_service *svc,
					 const struct mhp_state *s,
					 const union mhp_addr *addr, u16 port);

#endif /* _MH_PORT_H */
