/* SPDX-License-Identifier: GPL-2.0 */
/*
 * <linux/array_size.h> for kernels before ARRAY_SIZE() moved out of
 * <linux/kernel.h> (6.7; 6.1.y has the header since 6.1.159).
 * include/kcompat.mk puts this directory on the include path when the
 * kernel tree lacks one of the headers here; the tree's own include
 * directories are searched first, so a tree with its own
 * include/linux/array_size.h never reads this one.
 */
#ifndef _MAGLEV_COMPAT_LINUX_ARRAY_SIZE_H
#define _MAGLEV_COMPAT_LINUX_ARRAY_SIZE_H

#include <linux/kernel.h>

#endif /* _MAGLEV_COMPAT_LINUX_ARRAY_SIZE_H */
