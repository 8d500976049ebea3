/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One scheduler module at a time: ip_vs_maglev.ko and its mh-compatible
 * build ip_vs_mh.ko (make MH_COMPAT=1) both create /proc/net/ip_vs_maglev.
 * Both export maglev_exclusive, so the module loader refuses the second
 * one ("exports duplicate symbol maglev_exclusive (owned by ...)") before
 * its init runs, instead of its init failing on the second /proc entry
 * with a kernel warning.
 */
#ifndef _MAGLEV_EXCL_H
#define _MAGLEV_EXCL_H

extern const int maglev_exclusive;

#endif /* _MAGLEV_EXCL_H */
