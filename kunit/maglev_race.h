/* SPDX-License-Identifier: GPL-2.0 */
/*
 * maglev_race.h - the windows of guest test 27 (tests/guest/27-race.sh),
 * in its test build only: Kbuild includes this file ahead of maglev_main.c
 * with MAGLEV_RACE=1, and defines MAGLEV_RACE_WINDOW() empty otherwise.
 *
 * MAGLEV_RACE_WINDOW(ms, w) marks where a build of @ms may sit in window
 * @w: 1, between the copy's allocation and its taking the set's mutex
 * (maglev_copy_set()); 2, between the end of the copy and the publish
 * (maglev_build_table()).  Writing 1 or 2 to the parameter race_window
 * arms that window for the next build that reaches it, which disarms it
 * and sleeps race_ms there.  What the test reads back:
 *  race_in: 1 while a build sits in a window;
 *  race_windows: the windows sat in;
 *  race_overlaps: those during which the service changed, that is, a
 *	callback recorded a change (its gen: add_dest, del_dest, upd_dest,
 *	a table size written) or done_service marked it dead (the service
 *	deleted, its namespace torn down).  A round whose batch did not
 *	meet the window leaves it as it was.
 * The parameters are read and written under kernel_param_lock(), as sysfs
 * reads and writes them.
 */
#ifndef _MAGLEV_RACE_H
#define _MAGLEV_RACE_H

#include <linux/delay.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/spinlock.h>
#include <linux/types.h>

/* maglev_main.c, included after this file, defines its own. */
#undef pr_fmt

static int maglev_race_window;
module_param_named(race_window, maglev_race_window, int, 0644);
MODULE_PARM_DESC(race_window, "test build: the window the next build sits in (1: before the copy's lock, 2: between the copy and the publish; 0: none)");
static unsigned int maglev_race_ms = 1000;
module_param_named(race_ms, maglev_race_ms, uint, 0644);
MODULE_PARM_DESC(race_ms, "test build: ms a build sits in the window");
static unsigned int maglev_race_in;
module_param_named(race_in, maglev_race_in, uint, 0444);
MODULE_PARM_DESC(race_in, "test build: 1 while a build sits in a window");
static unsigned int maglev_race_windows;
module_param_named(race_windows, maglev_race_windows, uint, 0444);
MODULE_PARM_DESC(race_windows, "test build: windows sat in");
static unsigned int maglev_race_overlaps;
module_param_named(race_overlaps, maglev_race_overlaps, uint, 0444);
MODULE_PARM_DESC(race_overlaps, "test build: windows during which the service changed");

/* What the callbacks change: the service's gen, plus one once it is dead. */
static u64 maglev_race_state(spinlock_t *lock, const u64 *gen,
			     const bool *dead)
{
	u64 state;

	spin_lock(lock);
	state = *gen + *dead;
	spin_unlock(lock);
	return state;
}

/* Sit in window @w if it is armed; @lock guards @gen and @dead. */
static void maglev_race_sit(int w, spinlock_t *lock, const u64 *gen,
			    const bool *dead)
{
	unsigned int ms;
	u64 before;
	bool changed;

	kernel_param_lock(THIS_MODULE);
	if (maglev_race_window != w) {
		kernel_param_unlock(THIS_MODULE);
		return;
	}
	maglev_race_window = 0;
	ms = maglev_race_ms;
	before = maglev_race_state(lock, gen, dead);
	maglev_race_in = 1;
	kernel_param_unlock(THIS_MODULE);

	msleep(ms);

	kernel_param_lock(THIS_MODULE);
	changed = maglev_race_state(lock, gen, dead) != before;
	maglev_race_in = 0;
	maglev_race_windows++;
	maglev_race_overlaps += changed;
	kernel_param_unlock(THIS_MODULE);
}

#define MAGLEV_RACE_WINDOW(ms, w) do {					\
	typeof(ms) _ms = (ms);						\
									\
	maglev_race_sit(w, &_ms->mn->lock, &_ms->gen, &_ms->dead);	\
} while (0)

#endif /* _MAGLEV_RACE_H */
