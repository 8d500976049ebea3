// SPDX-License-Identifier: GPL-2.0
/*
 * The table core, compiled into the KUnit module so that the suite does not
 * depend on ip_vs_maglev.ko being loaded.
 */
#include "../maglev_table.c"
