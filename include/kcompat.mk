# SPDX-License-Identifier: GPL-2.0
# Kernel interfaces that changed between the kernels this module builds on
# (6.1 and later, stable updates included), detected in the headers; used
# by Kbuild.
maglev-has = $(shell grep -qs -E '$(2)' $(srctree)/$(1) && echo y)
ifeq ($(call maglev-has,include/net/ip_vs.h,IP_VS_DEST_CF_AVAILABLE),y)
ccflags-y += -DMAGLEV_HAVE_DEST_CFLAGS
endif
maglev-ctl-const := typedef int proc_handler.const struct ctl_table
ifeq ($(call maglev-has,include/linux/sysctl.h,$(maglev-ctl-const)),y)
ccflags-y += -DMAGLEV_HAVE_CTL_CONST
endif
ifeq ($(call maglev-has,include/net/net_namespace.h,register_net_sysctl_sz),y)
ccflags-y += -DMAGLEV_HAVE_SYSCTL_SZ
endif
# Headers split out of <linux/kernel.h> after 6.1, which the sources include
# for what they use rather than counting on <linux/kernel.h> (7.x's no
# longer includes <linux/hex.h>): <linux/hex.h> (hex2bin, bin2hex) and
# <linux/sprintf.h> (snprintf, scnprintf), missing on 6.1, and
# <linux/array_size.h> (ARRAY_SIZE), missing on 6.1.y before 6.1.159;
# <linux/unaligned.h> (get_unaligned_le32()), <asm/unaligned.h> before
# 6.12; and <kunit/visibility.h> (VISIBLE_IF_KUNIT), new in 6.2 and
# backported to later 6.1.y. A tree without one of them gets
# include/compat/ on the include path, whose linux/NAME.h includes
# <linux/kernel.h> (or <asm/unaligned.h>) and whose kunit/visibility.h
# defines VISIBLE_IF_KUNIT; Kbuild searches the tree's own include
# directories first, so the headers the tree has are its own.
maglev-split-h := linux/hex.h linux/sprintf.h linux/array_size.h \
		  linux/unaligned.h kunit/visibility.h
ifneq ($(strip $(foreach h,$(maglev-split-h),$(if $(wildcard $(srctree)/include/$(h)),,$(h)))),)
ccflags-y += -I$(src)/include/compat
endif
