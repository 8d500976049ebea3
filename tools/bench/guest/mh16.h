/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mh16.h - forced in (-include) when scripts/bench-guest.sh builds the
 * test kernel's own, unmodified net/netfilter/ipvs/ip_vs_mh.c as a module:
 * CONFIG_IP_VS_MH_TAB_INDEX 16 (65521 slots) instead of the kernel's 12,
 * and the scheduler registered as "mh65521", since the built-in "mh" (4093
 * slots) already holds the name "mh".
 */
#include <linux/kconfig.h>
#include <net/ip_vs.h>

#undef CONFIG_IP_VS_MH_TAB_INDEX
#define CONFIG_IP_VS_MH_TAB_INDEX 16

static inline int mh16_register(struct ip_vs_scheduler *s)
{
	s->name = "mh65521";
	return register_ip_vs_scheduler(s);
}

#define register_ip_vs_scheduler(s) mh16_register(s)
