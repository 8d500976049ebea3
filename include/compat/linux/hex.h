/* SPDX-License-Identifier: GPL-2.0 */
/*
 * <linux/hex.h> for kernels before it was split out of <linux/kernel.h>
 * (6.1 declares hex2bin() and bin2hex() there). include/kcompat.mk puts
 * this directory on the include path only when the kernel tree has no
 * include/linux/hex.h of its own.
 */
#ifndef _MAGLEV_COMPAT_LINUX_HEX_H
#define _MAGLEV_COMPAT_LINUX_HEX_H

#include <linux/kernel.h>

#endif /* _MAGLEV_COMPAT_LINUX_HEX_H */
