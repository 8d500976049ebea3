/* SPDX-License-Identifier: GPL-2.0 */
/*
 * <kunit/visibility.h> for kernels before it (6.2, backported to later
 * 6.1.y updates): VISIBLE_IF_KUNIT makes a function static unless the
 * kernel has CONFIG_KUNIT.  include/kcompat.mk puts this directory on the
 * include path when the kernel tree lacks one of the headers here; the
 * tree's own include directories are searched first.
 */
#ifndef _MAGLEV_COMPAT_KUNIT_VISIBILITY_H
#define _MAGLEV_COMPAT_KUNIT_VISIBILITY_H

#if IS_ENABLED(CONFIG_KUNIT)
#define VISIBLE_IF_KUNIT
#else
#define VISIBLE_IF_KUNIT static
#endif

#endif /* _MAGLEV_COMPAT_KUNIT_VISIBILITY_H */
