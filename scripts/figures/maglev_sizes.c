// SPDX-License-Identifier: GPL-2.0
/*
 * maglev_sizes.c - the sizes of the module's structures, for
 * scripts/doc-figures.sh: built as a throwaway module against a kernel
 * tree (never loaded), each "char maglev_sizeof_S[sizeof(struct S)]" is a
 * symbol whose size "nm -S" prints.
 */
#include <linux/module.h>

#include "maglev_sched.h"
#include "maglev_table.h"

#define MAGLEV_SIZEOF(s)	char maglev_sizeof_##s[sizeof(struct s)]

MAGLEV_SIZEOF(maglev_service);
MAGLEV_SIZEOF(maglev_dest);
MAGLEV_SIZEOF(maglev_lut);
MAGLEV_SIZEOF(maglev_shared);
MAGLEV_SIZEOF(maglev_backend);
MAGLEV_SIZEOF(maglev_table);
MAGLEV_SIZEOF(maglev_net);
MAGLEV_SIZEOF(maglev_builder);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("struct sizes of ip_vs_maglev for the docs (never loaded)");
