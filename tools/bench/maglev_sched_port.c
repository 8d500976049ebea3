// SPDX-License-Identifier: GPL-2.0
/*
 * maglev_sched_port.c - ip_vs_maglev_schedule() (maglev_main.c) from the
 * client address and port on, in userspace, as make bench-host's
 * counterpart of mh_port.c's mhp_schedule_small(): the same pointer walk
 * (service state, namespace, key; service state, table), the client hash
 * through maglev_table.h's maglev_hash_ip4() and siblings (tools/siphash.c
 * standing in for lib/siphash.c's out-of-line typed helpers), maglev_lookup(),
 * the destination pointer and maglev_dest_unavailable().  Destinations are
 * the mh port's struct mhp_dest, so both schedulers test the same fields.
 * The fallback for an unavailable destination and the table-lags path are
 * left out, as in the mh port: the benchmark times an available server.
 */
#include "maglev_sched_port.h"

#define MSP_DEST_CF_AVAILABLE	0x0001	/* IP_VS_DEST_CF_AVAILABLE */

/* maglev_dest_unavailable(): retired (weight 0, removed) or overloaded */
static inline bool msp_dest_unavailable(const struct mhp_dest *dest)
{
	return __atomic_load_n(&dest->weight, __ATOMIC_RELAXED) <= 0 ||
	       !(dest->cflags & MSP_DEST_CF_AVAILABLE) ||
	       dest->flags & MHP_DEST_F_OVERLOAD;
}

struct mhp_dest *msp_schedule(const struct msp_service *ms,
			      const union mhp_addr *addr, u16 port)
{
	const struct mhp_service *svc = ms->svc;
	const struct msp_lut *lut;
	const hsiphash_key_t *key;
	struct mhp_dest *dest = NULL;
	u32 hash, idx;

	key = &__atomic_load_n(&ms->mn->key, __ATOMIC_CONSUME)->hkey;
	if (svc->flags & MHP_SVC_F_PORT) {
		if (svc->af == MHP_AF_INET6)
			hash = maglev_hash_ip6_port(addr->ip6, port, key);
		else
			hash = maglev_hash_ip4_port(&addr->ip, port, key);
	} else if (svc->af == MHP_AF_INET6) {
		hash = maglev_hash_ip6(addr->ip6, key);
	} else {
		hash = maglev_hash_ip4(&addr->ip, key);
	}

	lut = __atomic_load_n(&ms->lut, __ATOMIC_CONSUME);
	if (likely(lut)) {
		idx = maglev_lookup(lut->table, hash);
		if (likely(idx < lut->nr)) {
			dest = lut->dest[idx];
			if (unlikely(msp_dest_unavailable(dest)))
				dest = NULL;
		}
	}
	return dest;
}
