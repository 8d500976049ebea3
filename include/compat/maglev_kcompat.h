/* SPDX-License-Identifier: GPL-2.0 */
/*
 * maglev_kcompat.h - interfaces that changed between the kernels the module
 * builds on (6.1 and later, with their stable updates); include/kcompat.mk
 * detects them in the kernel's headers.
 */
#ifndef _MAGLEV_KCOMPAT_H
#define _MAGLEV_KCOMPAT_H

#include <linux/sysctl.h>

#include <net/ip_vs.h>
#include <net/net_namespace.h>

/* 6.11 made the sysctl handlers' table const. */
#ifdef MAGLEV_HAVE_CTL_CONST
#define maglev_ctl_table	const struct ctl_table
#else
#define maglev_ctl_table	struct ctl_table
#endif

/*
 * 6.1's register_net_sysctl() ends a table at an empty entry; its
 * successor register_net_sysctl_sz() takes the number of entries.
 */
#ifdef MAGLEV_HAVE_SYSCTL_SZ
#define MAGLEV_CTL_END
#define maglev_register_sysctl(net, path, tbl, n) \
	register_net_sysctl_sz(net, path, tbl, n)
#else
#define MAGLEV_CTL_END		{ }
#define maglev_register_sysctl(net, path, tbl, n) \
	register_net_sysctl(net, path, tbl)
#endif

/* IPVS moved a destination's availability to dest->cflags (6.12.y, 7.x). */
static inline bool maglev_dest_available(const struct ip_vs_dest *dest)
{
#ifdef MAGLEV_HAVE_DEST_CFLAGS
	return dest->cflags & IP_VS_DEST_CF_AVAILABLE;
#else
	return dest->flags & IP_VS_DEST_F_AVAILABLE;
#endif
}

#endif /* _MAGLEV_KCOMPAT_H */
