/* SPDX-License-Identifier: GPL-2.0 */
/*
 * <linux/hex.h> for kernels before it was split out of <linux/kernel.h>
 * (6.1 declares hex2bin() and bin2hex() there).  include/kcompat.mk puts
 * this directory on the include path when the kernel tree lacks one of the
 * headers here; the tree's own include directories are searched first, so
 * a tree with its own include/linux/hex.h never reads this one.
 */
#ifndef _MAGLEV_COMPAT_LINUX_HEX_H
#define _MAGLEV_COMPAT_LINUX_HEX_H

#include <linux/kernel.h>

#endif /* _MAGLEV_COMPAT_LINUX_HEX_H */
