/* SPDX-License-Identifier: GPL-2.0 */
/*
 * <linux/unaligned.h> for kernels before 6.12, which have
 * <asm/unaligned.h> instead (get_unaligned_le32() and its siblings).
 * include/kcompat.mk puts this directory on the include path when the
 * kernel tree lacks one of the headers here; the tree's own include
 * directories are searched first.
 */
#ifndef _MAGLEV_COMPAT_LINUX_UNALIGNED_H
#define _MAGLEV_COMPAT_LINUX_UNALIGNED_H

#include <asm/unaligned.h>

#endif /* _MAGLEV_COMPAT_LINUX_UNALIGNED_H */
