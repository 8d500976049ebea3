// SPDX-License-Identifier: GPL-2.0
/*
 * Makes ip_vs_maglev.ko and ip_vs_mh.ko (the same scheduler, built with
 * MH_COMPAT=1) mutually exclusive: see include/maglev_excl.h.
 */
#include <linux/export.h>

#include "maglev_excl.h"

const int maglev_exclusive;
EXPORT_SYMBOL_GPL(maglev_exclusive);
