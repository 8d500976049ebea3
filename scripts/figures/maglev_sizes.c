// SPDX-License-Identifier: GPL-2.0
/*
 * maglev_sizes.c - the sizes of the module's structures, for
 * scripts/doc-figures.sh: built as a throwaway module against a kernel
 * tree (never loaded) from the module's own sources, each
 * "char maglev_sizeof_S[sizeof(struct S)]" is a symbol whose size "nm -S"
 * prints.
 */
#include "maglev_main.c"

#define MAGLEV_SIZEOF(s)	char maglev_sizeof_##s[sizeof(struct s)]

MAGLEV_SIZEOF(maglev_service);
MAGLEV_SIZEOF(maglev_dest);
MAGLEV_SIZEOF(maglev_lut);
MAGLEV_SIZEOF(maglev_shared);
MAGLEV_SIZEOF(maglev_backend);
MAGLEV_SIZEOF(maglev_table);
MAGLEV_SIZEOF(maglev_net);
