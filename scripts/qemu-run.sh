#!/bin/bash
# qemu-run.sh KERNEL INITRD CONSOLE_LOG RESULTS_LOG [KERNEL ARGS...]
#
# Boot KERNEL with INITRD under QEMU (TCG, never a network device) and wait
# for the guest to "reboot -f". The kernel console (ttyS0) is written to
# CONSOLE_LOG, the guest's second serial port (ttyS1) to RESULTS_LOG.
# Environment: QEMU_TIMEOUT (seconds, default 120; the wait for a guest
# slot, below, is not counted), QEMU_SLOTS (guests at once on this
# machine, default its CPUs; 0: no limit), QEMU_PRIORITY (which waiter
# gets a free slot first, below),
# QEMU_MEM (default 1G), QEMU_ARCH (x86_64, the default, or i386: a
# 32-bit kernel, booted with qemu-system-i386),
# QEMU_SMP (default 2; one CPU per socket, since without ACPI the guest
# finds only one CPU of a multi-core socket). Exit status is QEMU's, or 124 on timeout.
# tsc=reliable: under TCG the TSC follows the host clock, but the jiffies
# watchdog sees emulation jitter and would demote it, leaving the guest on
# 4 ms jiffies, too coarse for the build_ns figures.  Without HPET or ACPI
# PM timer the guest cannot calibrate the TSC either, so its frequency (the
# host's, under TCG) is given with tsc_early_khz.
# la57=off: with LA57 the kernel runs 5-level paging, and while the boot
# CPU's feature bits are re-read (identify_cpu) an interrupt sees 4-level
# bounds with 5-level addresses; on the KASAN kernel that was a false
# "wild-memory-access" in the interrupt's spin lock once. Four-level
# paging has no such window.
# A kernel oops before /init starts is retried once (see the end).
set -eu
. "$(dirname "$0")/lib.sh"

[ $# -ge 4 ] || die "usage: $0 KERNEL INITRD CONSOLE_LOG RESULTS_LOG [ARGS...]"
kernel=$1 initrd=$2 console=$3 results=$4
shift 4
need_pkgs qemu-system-x86
# The 32-bit guest's CPU says it is Intel's: TCG's "max" is an AMD one
# of family 6 to a 32-bit kernel, whose K7 check then warns that such
# CPUs are not fit for SMP (arch/x86/kernel/cpu/amd.c).
case ${QEMU_ARCH:-x86_64} in
x86_64) cpu=max,la57=off ;;
i386)	cpu=max,vendor=GenuineIntel ;;
*) die "QEMU_ARCH must be x86_64 or i386" ;;
esac
tsc_khz=$(awk -F: '/^cpu MHz/ { printf "%d", $2 * 1000; exit }' /proc/cpuinfo)
tsc_arg=${tsc_khz:+tsc_early_khz=$tsc_khz}

boot() {
	: >"$console"
	: >"$results"
	timeout -k 5 "${QEMU_TIMEOUT:-120}" \
		"qemu-system-${QEMU_ARCH:-x86_64}" -nodefaults -no-user-config \
		-machine pc -accel tcg -cpu "$cpu" \
		-m "${QEMU_MEM:-1G}" \
		-smp "${QEMU_SMP:-2},sockets=${QEMU_SMP:-2},cores=1" \
		-nic none -no-reboot -display none -monitor none \
		-serial "file:$console" -serial "file:$results" \
		-kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 tsc=reliable $tsc_arg $*" \
		</dev/null
}

# take_slot: wait for one of QEMU_SLOTS (default: the host's CPUs) guest
# slots of this machine and hold it until this script ends (the lock is on
# an fd QEMU inherits). Each guest has two vCPU threads that spin on each
# other's locks: with more guests than CPUs the emulator burns time on
# descheduled vCPUs, and timing windows in the tests close. A free slot
# goes to the waiter of the highest QEMU_PRIORITY (a number, default 0);
# make check gives the chain with the least slack the highest: the debug
# kernel's guests 2, the foreground steps' 1.
take_slot() {
	local d n i fd me=$$ p l lvl=${QEMU_PRIORITY:-0} behind halfsecs=0
	case $lvl in ''|*[!0-9]*) die "QEMU_PRIORITY must be a number" ;; esac
	n=${QEMU_SLOTS:-$(nproc)}
	d=${TMPDIR:-/tmp}/ip_vs_maglev-qemu-slots.$(id -u)
	mkdir -p "$d"
	[ "$lvl" -eq 0 ] || : >"$d/prio.$lvl.$me"
	while :; do
		behind=0
		for p in "$d"/prio.*.*; do
			[ -e "$p" ] || continue
			l=${p#"$d/prio."}
			l=${l%.*}
			if ! kill -0 "${p##*.}" 2>/dev/null; then
				rm -f "$p"
			elif [ "$l" -gt "$lvl" ]; then
				behind=1
			fi
		done
		for ((i = 0; i < n && !behind; i++)); do
			exec {fd}>"$d/slot.$i"
			if flock -n "$fd"; then
				rm -f "$d/prio.$lvl.$me"
				[ "$halfsecs" -eq 0 ] ||
					log "waited $((halfsecs / 2)) s for a guest slot"
				return 0
			fi
			exec {fd}>&-
		done
		sleep 0.5
		halfsecs=$((halfsecs + 1))
	done
}
[ "${QEMU_SLOTS:-}" = 0 ] || take_slot

rc=0
boot "$@" || rc=$?
# A kernel that oopses before the guest's /init wrote its first line (no
# module of ours is loaded then) failed in the emulator: once, on a busy
# host, multi-threaded TCG ran a stale int3 of the kernel's own text
# patching (sched_clock_cpu, 1.4 s into boot of Debian's stock kernel).
# Boot again, once; the first console is kept beside the second, and the
# retry is said on stderr.
if ! grep -q '^@@ UNAME' "$results" &&
   grep -qE 'Oops|BUG:|Kernel panic|general protection fault' "$console"; then
	cp "$console" "$console.first-boot"
	log "the guest kernel failed before /init ran: $(grep -m 1 -E 'Oops|BUG:|Kernel panic|general protection fault' "$console" | tr -d '\r'); booting again (first console: $console.first-boot)"
	rc=0
	boot "$@" || rc=$?
fi
exit "$rc"
