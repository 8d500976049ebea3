/* SPDX-License-Identifier: GPL-2.0 */
/*
 * maglev_compat.h - the kernel facilities maglev_table.c uses.  Userspace
 * builds put tools/include first on the include path, whose maglev_compat.h
 * provides the same names, so that maglev_table.c compiles unchanged on
 * both sides (the model: mm/vma_internal.h and
 * tools/testing/vma/vma_internal.h).
 */
#ifndef _MAGLEV_COMPAT_H
#define _MAGLEV_COMPAT_H

#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/gcd.h>
#include <linux/limits.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/sched.h>
#include <linux/siphash.h>
#include <linux/sprintf.h>
#include <linux/string.h>
#include <linux/types.h>
#include <linux/unaligned.h>

#include <asm/byteorder.h>

#include <kunit/visibility.h>

#endif /* _MAGLEV_COMPAT_H */
