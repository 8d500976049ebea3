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
# <linux/hex.h> (hex2bin, bin2hex) was split out of <linux/kernel.h> after
# 6.1; 7.x's <linux/kernel.h> no longer includes it. Older trees get
# include/compat/linux/hex.h, which includes <linux/kernel.h>.
ifeq ($(wildcard $(srctree)/include/linux/hex.h),)
ccflags-y += -I$(src)/include/compat
endif
