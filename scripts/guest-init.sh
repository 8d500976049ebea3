#!/bin/busybox sh
# shellcheck shell=dash
# /init of the guest initramfs built by scripts/mkinitramfs.sh (busybox sh).
#
# The kernel command line says what to do:
#   maglev.job=kunit       insmod /maglev/kunit/*.ko (ip_vs_maglev.ko built
#                          with its KUnit suites), dump their KTAP results
#   maglev.job=test:FILE   insmod /maglev/deps/* (in deps.list order) and
#                          /maglev/ip_vs_maglev.ko, run /maglev/tests/FILE
#   maglev.timeout=SECS    limit for one test (default 60)
#   maglev.ko=PATH|none    the module test: loads (default
#                          /maglev/ip_vs_maglev.ko); none: the test loads it
#   maglev.stress=SECS     load duration of the stress tests, exported to
#                          the test as STRESS_SECONDS (default 20)
#   maglev.env=N=V[,N=V]   more variables exported to the tests
#   maglev.boot=X[,X]      what this kernel must show, at the start and at
#                          the end of the boot (tests/manifest's boot line,
#                          check_boot): the detectors kasan, ubsan,
#                          kmemleak, lockdep, prove_rcu, atomic_sleep,
#                          debug_objects, failslab, kcsan; i386; nosysctl
#
# Kernel messages go to the console (ttyS0). Results go to ttyS1, one
# line each, read by scripts/vmlib.sh:
#   @@ BEGIN <name> / <test output> / @@ END <name> <exit status>
#   @@ KTAP <suite> / <debugfs results> / @@ KTAP-END
#   PASS:/FAIL: <text>      the boot's own checks, outside a test
#   @@ TAINT <n> (or "none": no sysctl)  and finally  @@ DONE
# Its last line on the console (through /dev/kmsg) is "maglev-guest:
# console end".
# A guest test that reaches its end (lib.sh's finish) prints "@@ FINISH"
# before its exit; scripts/results.awk fails a test without it.

arg() { sed -n "s/.*maglev\\.$1=\\([^ ]*\\).*/\\1/p" "${BOOT_ROOT:-}"/proc/cmdline; }

# check_boot start|end: every item of maglev.boot shows on (see the top),
# from what the kernel exposes at run time (no /proc/config.gz, and not
# the kernel log, which a test may clear or the ring lose: the host reads
# the console for the boot's messages, scripts/vmlib.sh's console_boot):
# one PASS naming them, or a FAIL for each one that does not. At the end
# only what can turn off while the kernel runs is looked at again
# (kmemleak, lockdep and debug objects turn themselves off after an error
# of their own). kmemleak is alive when it takes a write: a disabled one
# refuses every write but "clear" (EPERM), and "stack=on" is its default.
# BOOT_ROOT (tests/judge.sh) puts /proc and /sys elsewhere, and
# BOOT_UNAME_M, BOOT_UNAME_V stand in for uname -m and -v.
check_boot() {
	want=$(arg boot | tr , ' ')
	[ -n "$want" ] && [ "$want" != none ] || return 0
	R=${BOOT_ROOT:-}
	um=${BOOT_UNAME_M:-$(uname -m)}
	uv=${BOOT_UNAME_V:-$(uname -v)}
	bad=''
	seen=
	for d in $want; do
		case $1:$d in
		end:kasan | end:ubsan | end:prove_rcu | end:atomic_sleep | \
		end:i386 | end:nosysctl | end:debug_list | end:hung_task | \
		end:softlockup | end:preempt) continue ;;
		*:kasan) grep -q ' kasan_report$' "$R"/proc/kallsyms ;;
		*:ubsan) grep -q ' __ubsan_handle_shift_out_of_bounds$' "$R"/proc/kallsyms ;;
		*:kmemleak) echo stack=on 2>/dev/null >"$R"/sys/kernel/debug/kmemleak ;;
		*:lockdep)
			[ "$(awk '$1 == "debug_locks:" { print $2 }' "$R"/proc/lockdep_stats 2>/dev/null)" = 1 ] ;;
		*:prove_rcu) continue ;;	# the console's (console_boot)
		*:atomic_sleep) grep -q ' __might_resched$' "$R"/proc/kallsyms ;;
		*:debug_objects) [ -r "$R"/sys/kernel/debug/debug_objects/stats ] ;;
		*:failslab) [ -w "$R"/sys/kernel/debug/failslab/probability ] ;;
		*:kcsan) grep -q '^enabled: 1$' "$R"/sys/kernel/debug/kcsan 2>/dev/null ;;
		*:debug_list) grep -q ' __list_add_valid_or_report$' "$R"/proc/kallsyms ;;
		*:hung_task) grep -qx khungtaskd "$R"/proc/[0-9]*/comm ;;
		*:softlockup) grep -q ' softlockup_fn$' "$R"/proc/kallsyms ;;
		*:preempt)
			case $uv in
			*PREEMPT_DYNAMIC*) grep -q '(full)' "$R"/sys/kernel/debug/sched/preempt ;;
			*' PREEMPT '*) true ;;
			*) false ;;
			esac ;;
		*:i386)	case $um in i?86) true ;; *) false ;; esac ;;
		*:nosysctl) [ ! -e "$R"/proc/sys ] ;;
		*)	false ;;
		esac || bad="$bad $d"
		seen="$seen $d"
	done
	[ -n "$seen" ] || return 0
	if [ -z "$bad" ]; then
		echo "PASS: boot: on at the $1:$seen" >&3
	else
		for d in $bad; do
			echo "FAIL: boot: $d is not on at the $1 (maglev.boot: $want)" >&3
		done
	fi
}

# taint: the kernel's taint for "@@ TAINT", or "none" where the kernel has
# no sysctl (the i386 kernel): the host reads the console's "Tainted:"
# lines then (scripts/vmlib.sh).
taint() {
	if [ -r "${BOOT_ROOT:-}"/proc/sys/kernel/tainted ]; then
		cat "${BOOT_ROOT:-}"/proc/sys/kernel/tainted
	else
		echo none
	fi
}

# tests/judge.sh sources this file for its functions.
[ -z "${GUEST_INIT_FUNCTIONS_ONLY:-}" ] || return 0

export PATH=/maglev/bin:/maglev:/usr/sbin:/usr/bin:/sbin:/bin
/bin/busybox mkdir -p /proc /sys /dev /tmp /run
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t debugfs debugfs /sys/kernel/debug
ip link set lo up

stty -F /dev/ttyS1 raw -echo 2>/dev/null
exec 3>/dev/ttyS1 </dev/null

job=$(arg job)
tmo=$(arg timeout)
tmo=${tmo:-60}
STRESS_SECONDS=$(arg stress)
export STRESS_SECONDS=${STRESS_SECONDS:-20}
for kv in $(arg env | tr , ' '); do
	case $kv in
	[A-Z]*=*) export "$kv" ;;
	*) echo "FAIL: maglev.env: '$kv' is not NAME=VALUE" >&3 ;;
	esac
done

export MAGLEV_DIR=/maglev
export MAGLEV_KO=/maglev/ip_vs_maglev.ko
[ -n "$(arg ko)" ] && MAGLEV_KO=$(arg ko)
export MAGLEV_SIM=/maglev/maglev-sim
# A 32-bit kernel's client hash is HalfSipHash-1-3 (the kernel's hsiphash
# there): the tests' maglev-sim predicts its choices with -32.
case $(uname -m) in
i?86)	printf '#!/bin/sh\nexec /maglev/maglev-sim -32 "$@"\n' >/run/maglev-sim
	chmod 755 /run/maglev-sim
	MAGLEV_SIM=/run/maglev-sim ;;
esac
export MAGLEV_KERNEL
MAGLEV_KERNEL=$(uname -r)

# load FILE: insmod, reporting a failure on the results port.
load() {
	if ! out=$(insmod "$1" 2>&1); then
		echo "FAIL: insmod ${1##*/}: $out" >&3
		return 1
	fi
}

modname() { n=${1##*/}; n=${n%.ko}; echo "$n" | tr - _; }

loaded() { grep -q "^$1 " /proc/modules; }

# The tests race on two CPUs (qemu-run.sh: -smp 2); checked once per
# vm-test.sh run, in the KUnit boot.
check_cpus() {
	n=$(grep -c '^processor' /proc/cpuinfo)
	if [ "$n" -ge 2 ] && [ "$(nproc)" -ge 2 ]; then
		echo "PASS: guest has $n CPUs online" >&3
	else
		echo "FAIL: guest has $n CPUs in /proc/cpuinfo, nproc $(nproc); want 2" >&3
	fi
}

run_kunit() {
	check_cpus
	mods=
	for m in /maglev/kunit/*.ko; do
		[ -e "$m" ] || { echo "FAIL: no KUnit modules in the initramfs" >&3; return; }
		load "$m" && mods="$(modname "$m") $mods"
	done
	for r in /sys/kernel/debug/kunit/*/results; do
		[ -e "$r" ] || continue
		s=${r%/results}
		echo "@@ KTAP ${s##*/}" >&3
		cat "$r" >&3
		echo "@@ KTAP-END" >&3
	done
	# The suites run inside ip_vs_maglev.ko: one scheduler, not a
	# second live copy beside it.
	n=$(dmesg | grep -c '\[maglev\] scheduler registered')
	if [ "$n" = 1 ]; then
		echo "PASS: one maglev scheduler registered during KUnit" >&3
	else
		echo "FAIL: $n maglev schedulers registered during KUnit, want 1" >&3
	fi
	for m in $mods; do
		rmmod "$m" || echo "FAIL: rmmod $m" >&3
	done
}

run_test() {
	name=$1
	# No KUnit boot with this initramfs (Debian's kernels: KSTOCK, the
	# stock, keepalived and deb steps): each boot asserts the two CPUs.
	[ -n "$(ls /maglev/kunit 2>/dev/null)" ] || check_cpus
	if [ -f /maglev/deps.list ]; then
		while read -r m; do
			load "/maglev/deps/$m" || true
		done </maglev/deps.list
	fi
	[ "$MAGLEV_KO" = none ] || load "$MAGLEV_KO" || true
	echo "@@ BEGIN $name" >&3
	(cd /tmp && timeout "$tmo" sh "/maglev/tests/$name") >&3 2>&1
	echo "@@ END $name $?" >&3
	ipvsadm -C >/dev/null 2>&1
	if loaded ip_vs_maglev && ! rmmod ip_vs_maglev; then
		echo "FAIL: $name: rmmod ip_vs_maglev after the test" >&3
	fi
}

echo "@@ UNAME $MAGLEV_KERNEL" >&3
check_boot start
case $job in
kunit)	run_kunit ;;
test:*)	run_test "${job#test:}" ;;
*)	echo "FAIL: unknown maglev.job '$job'" >&3 ;;
esac

# A kmemleak that is alive (it takes a write) scans; each scan's write is
# checked (a kmemleak that turned itself off refuses it: EPERM).
if echo stack=on 2>/dev/null >/sys/kernel/debug/kmemleak; then
	sleep 6	# kmemleak ignores objects younger than 5 s
	# A new object's checksum starts at ~0 (mm/kmemleak.c): the first scan
	# that finds it unreferenced only records its checksum, the second
	# reports it. Both run after the test's rmmod. But for a lazy-RCU boot
	# (guest 23's rcutree.enable_rcu_lazy=1): there the second scan
	# reports objects that lazy call_rcu() frees have yet to free (the
	# test's processes' creds), with or without a drop_caches flush first,
	# so that boot is scanned once and reports no leak (docs/testing.md).
	scans=2
	case " $(cat /proc/cmdline) " in
	*" rcutree.enable_rcu_lazy=1 "*) scans=1 ;;
	esac
	while [ "$scans" -gt 0 ]; do
		if ! out=$(echo scan 2>&1 >/sys/kernel/debug/kmemleak); then
			echo "FAIL: boot: kmemleak refused a scan: $out" >&3
			break
		fi
		scans=$((scans - 1))
	done
	cat /sys/kernel/debug/kmemleak >/dev/console
fi
# The host takes a console without this line as cut short (vmlib.sh).
echo "maglev-guest: console end" >/dev/kmsg
check_boot end
echo "@@ TAINT $(taint)" >&3
echo "@@ DONE" >&3
exec 3>&-
reboot -f
