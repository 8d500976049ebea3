// SPDX-License-Identifier: GPL-2.0
/*
 * The table core for the maglev_glue KUnit module (maglev_main.c itself is
 * included by maglev_glue_test.c, so that its static helpers are in reach).
 */
#include "../maglev_table.c"
