#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The judging code under test, on made-up input: scripts/results.awk,
# scripts/kcsan-split.awk, vmlib.sh's vm_judge (KERNEL_BUG_RE, the
# console's boot lines, the taint, a console cut short), guest-init.sh's
# check_boot (on a stub /proc and /sys), tests/guest/lib.sh's check_shares
# and check.sh's step_result (lib.sh). Each bad input must turn into a
# FAIL, each good one into none. Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/.." || exit 1
TOP=$PWD
REPO=$PWD
np=0
nf=0
ok() { echo "PASS: $*"; np=$((np + 1)); }
ko() { echo "FAIL: $*"; nf=$((nf + 1)); }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

# --- vm_judge: a boot's results and console -------------------------------------
CLEAN_RES='@@ UNAME 6.12.118
PASS: boot: on at the start: kasan kmemleak
@@ BEGIN 01-x.sh
PASS: a thing works
@@ FINISH
@@ END 01-x.sh 0
PASS: boot: on at the end: kmemleak
@@ TAINT 4096
@@ DONE'
CLEAN_CON='[    0.000000] Linux version 6.12.118 (gcc)
[    0.000000] Command line: console=ttyS0 panic=-1 maglev.job=test:01-x.sh maglev.boot=kasan,kmemleak,lockdep
[    0.100000] KernelAddressSanitizer initialized (generic)
[    1.000000] kmemleak: Kernel memory leak detector initialized (mem pool available: 15000)
[    2.000000] ip_vs_maglev: loading out-of-tree module taints kernel.
[    3.000000] IPVS: [maglev] scheduler registered.
[   20.000000] maglev-guest: console end
[   20.100000] reboot: Restarting system'

# judge CONSOLE RESULTS [VAR=VALUE...]: vm_judge's output on them.
judge() {
	rm -rf "$d/j"
	mkdir -p "$d/j"
	printf '%s\n' "$1" >"$d/j/b.console"
	printf '%s\n' "$2" >"$d/j/b.results"
	echo "0 20 10 120" >"$d/j/b.status"
	shift 2
	(
		# shellcheck disable=SC1091 # scripts/lib.sh
		. "$REPO/scripts/lib.sh"
		# shellcheck disable=SC1091 # scripts/vmlib.sh
		. "$REPO/scripts/vmlib.sh"
		FAILED=0 PASSED=0 SKIPPED=0
		TOP=${JTOP:-$REPO}
		vm_judge b "$d/j" "" finish=1 "$@" 2>&1
	)
}

# judge_fails WHAT CONSOLE RESULTS PATTERN: vm_judge fails with a FAIL
# line matching PATTERN (grep -E, after "FAIL: b: ").
judge_fails() {
	local out
	out=$(judge "$2" "$3")
	if grep -Eq "^FAIL: b: $4" <<<"$out"; then
		ok "vm_judge fails $1"
	else
		ko "vm_judge does not fail $1:"
		grep -E '^(PASS|FAIL)' <<<"$out" | sed 's/^/  /'
	fi
}

out=$(judge "$CLEAN_CON" "$CLEAN_RES")
if ! grep -q '^FAIL' <<<"$out" && grep -q '^PASS: b: a thing works' <<<"$out" &&
   grep -q '^PASS: b: boot: the console shows on: kasan kmemleak' <<<"$out"; then
	ok "vm_judge passes a clean boot and reads the console's boot lines"
else
	ko "vm_judge on a clean boot:"
	sed 's/^/  /' <<<"$out"
fi

# A kernel report at the console's end (before its last lines).
with() { printf '%s\n' "$CLEAN_CON" | sed "\$i $1"; }
judge_fails "a panic" "$(with '[ 9.0] Kernel panic - not syncing: Fatal exception')" "$CLEAN_RES" 'kernel reported: .*Kernel panic'
judge_fails "an oops" "$(with '[ 9.0] Oops: general protection fault, probably for non-canonical address 0xdffffc0000000001: 0000 [#1] PREEMPT SMP KASAN')" "$CLEAN_RES" 'kernel reported: .*Oops'
judge_fails "a hung task" "$(with '[ 9.0] INFO: task kworker/u4:1:42 blocked for more than 122 seconds.')" "$CLEAN_RES" 'kernel reported: .*blocked for more'
judge_fails "an RCU stall" "$(with '[ 9.0] rcu: INFO: rcu_sched detected stalls on CPUs/tasks:')" "$CLEAN_RES" 'kernel reported: .*detected stalls'
judge_fails "an RCU self-detected stall" "$(with '[ 9.0] rcu: INFO: rcu_preempt self-detected stall on CPU')" "$CLEAN_RES" 'kernel reported: .*self-detected stall'
judge_fails "a KASAN report" "$(with '[ 9.0] BUG: KASAN: slab-use-after-free in maglev_build+0x1a/0x200 [ip_vs_maglev]')" "$CLEAN_RES" 'kernel reported: .*KASAN'
judge_fails "a UBSAN report" "$(with '[ 9.0] UBSAN: shift-out-of-bounds in /maglev/maglev_table.c:42:13')" "$CLEAN_RES" 'kernel reported: .*UBSAN'
judge_fails "a kmemleak report" "$(with '[ 9.0] kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)')" "$CLEAN_RES" 'kernel reported: .*kmemleak'
judge_fails "a soft lockup" "$(with '[ 9.0] watchdog: BUG: soft lockup - CPU#0 stuck for 26s! [kworker/0:1:12]')" "$CLEAN_RES" 'kernel reported: .*soft lockup'
judge_fails "a list corruption (DEBUG_LIST)" "$(with '[ 9.0] list_add corruption. prev->next should be next (ffff8880), but was ffff8881. (prev=ffff8882).')" "$CLEAN_RES" 'kernel reported: .*list_add corruption'
judge_fails "a taint W on the console only" "$(with '[ 9.0] CPU: 1 UID: 0 PID: 7 Comm: kworker Tainted: G        W  O       6.12.118 #1')" "$CLEAN_RES" 'kernel reported: .*Tainted'
# KCSAN: a race with a frame of ours fails; the kernel's own is a NOTE.
KC_OURS='[ 9.0] ==================================================================
[ 9.0] BUG: KCSAN: data-race in maglev_rebuild / maglev_add_dest
[ 9.0] write to 0xffff888 of 4 bytes by task 12 on cpu 0:
[ 9.0]  maglev_add_dest+0x4e/0x120 [ip_vs_maglev]
[ 9.0] ==================================================================
'
KC_THEIRS='[ 9.0] ==================================================================
[ 9.0] BUG: KCSAN: data-race in __synchronize_hardirq / handle_irq_event
[ 9.0]  handle_irq_event+0x1e/0x80
[ 9.0] =================================================================='
judge_fails "a KCSAN report naming the module" "$(printf '%s\n' "$CLEAN_CON" | sed '$d'; printf '%s\n' "$KC_OURS" '[ 20.1] reboot: Restarting system')" "$CLEAN_RES" 'kernel reported: .*KCSAN'
out=$(judge "$(printf '%s\n' "$CLEAN_CON" | sed '$d'; printf '%s\n' "$KC_THEIRS" '[ 20.1] reboot: Restarting system')" "$CLEAN_RES")
if ! grep -q '^FAIL' <<<"$out" && grep -q '^NOTE: b: KCSAN: the kernel.s own.*__synchronize_hardirq' <<<"$out"; then
	ok "vm_judge notes, not fails, a KCSAN race of the kernel's own"
else
	ko "vm_judge on a KCSAN race of the kernel's own:"
	sed 's/^/  /' <<<"$out"
fi
# A report cut off by the console's end (no closing line) still fails.
judge_fails "a KCSAN report cut off" "$(printf '%s\n' "$CLEAN_CON" | sed '$d'; printf '%s\n' "$KC_THEIRS" | head -n 3)" \
	"$(sed '/^@@ DONE/d' <<<"$CLEAN_RES")" 'kernel reported: .*KCSAN'
# A report far back: 200 KiB of console after it (a guest's 128 KiB ring
# would have lost it; the host's console file has it).
big=$( (printf '%s\n' "$CLEAN_CON" | sed '$d'
	echo '[ 9.0] BUG: KASAN: use-after-free in maglev_free+0x1/0x2'
	for i in $(seq 4000); do echo "[ 9.$i] IPVS: a long line of console output, number $i of four thousand"; done
	echo '[ 20.0] maglev-guest: console end'))
judge_fails "a report 200 KiB before the console's end (a wrapped ring)" "$big" "$CLEAN_RES" 'kernel reported: .*KASAN'
# The boot's lines: KASAN's and kmemleak's must be on the console.
judge_fails "a console without KASAN's boot line" "$(grep -v KernelAddressSanitizer <<<"$CLEAN_CON")" "$CLEAN_RES" "boot: kasan: the console never says"
judge_fails "a kmemleak that turned itself off" "$(with '[ 9.0] kmemleak: Kernel memory leak detector disabled')" "$CLEAN_RES" "boot: kmemleak: the console says 'kmemleak: Kernel memory leak detector disabled'"
# A console cut short: the results reached @@ DONE, the console did not
# reach the guest's last line.
judge_fails "a truncated console" "$(head -n 5 <<<"$CLEAN_CON")" "$CLEAN_RES" 'the console ends before the guest.s last line'
# The results: a taint, none, a dying guest.
judge_fails "a taint W in the results" "$CLEAN_CON" "$(sed 's/^@@ TAINT .*/@@ TAINT 4608/' <<<"$CLEAN_RES")" 'kernel tainted \(4608\)'
judge_fails "a guest that reported no taint" "$CLEAN_CON" "$(sed 's/^@@ TAINT .*/@@ TAINT /' <<<"$CLEAN_RES")" "the guest reported no taint"
out=$(judge "$CLEAN_CON" "$(sed 's/^@@ TAINT .*/@@ TAINT none/' <<<"$CLEAN_RES")")
if ! grep -q '^FAIL' <<<"$out"; then
	ok "vm_judge passes a kernel without sysctl ('@@ TAINT none') whose console has no taint"
else
	ko "vm_judge on '@@ TAINT none':"
	sed 's/^/  /' <<<"$out"
fi
judge_fails "a guest that died in its test (crash)" "$(with '[ 9.0] Kernel panic - not syncing: Fatal exception' | sed '/console end/,$d')" \
	"$(sed '/^@@ FINISH/,$d' <<<"$CLEAN_RES")" 'guest did not finish'
judge_fails "a QEMU timeout" "$CLEAN_CON" "$(sed '/^@@ END/,$d' <<<"$CLEAN_RES")" 'did not finish'
# results.awk's own failure is a failure (a results.awk that cannot run).
mkdir -p "$d/top/scripts"
cp "$TOP"/scripts/*.awk "$d/top/scripts/"
echo 'BEGIN { exit 3 }' >"$d/top/scripts/results.awk"
out=$(JTOP=$d/top judge "$CLEAN_CON" "$CLEAN_RES")
if grep -q '^FAIL: b: scripts/results.awk failed .*exit status 3' <<<"$out"; then
	ok "vm_judge fails when results.awk fails"
else
	ko "vm_judge ignores results.awk's exit status:"
	sed 's/^/  /' <<<"$out"
fi

# --- results.awk on its own ----------------------------------------------------
# awk_fails WHAT RESULTS PATTERN [VAR=VALUE...]
awk_fails() {
	local what=$1 res=$2 pat=$3 out v vars=()
	shift 3
	for v in "$@"; do vars+=(-v "$v"); done
	out=$(printf '%s\n' "$res" | awk -v label=t "${vars[@]}" -f scripts/results.awk)
	if grep -Eq "^FAIL: $pat" <<<"$out"; then
		ok "results.awk fails $what"
	else
		ko "results.awk does not fail $what:"
		sed 's/^/  /' <<<"$out"
	fi
}
awk_fails "a test that exits 1 without a FAIL line" $'@@ BEGIN x\nPASS: a\n@@ FINISH\n@@ END x 1\n@@ DONE' 't: exited with status 1'
awk_fails "a test without finish" $'@@ BEGIN x\nPASS: a\n@@ END x 0\n@@ DONE' 't: did not reach its end' finish=1
awk_fails "a test that prints nothing" $'@@ BEGIN x\n@@ FINISH\n@@ END x 0\n@@ DONE' 't: printed no PASS or FAIL'
awk_fails "a guest without @@ DONE" $'@@ BEGIN x\nPASS: a\n@@ FINISH\n@@ END x 0' 't: guest did not finish'
awk_fails "a KTAP plan not met" $'@@ KTAP s\nKTAP version 1\n1..1\n    # Subtest: s\n    1..3\n    ok 1 a\n    ok 2 b\nok 1 s\n@@ KTAP-END\n@@ DONE' 'kunit/s: KTAP plan 1..3, 2 results' want=s
awk_fails "a suite that is missing" $'@@ DONE' 'kunit/s: suite missing' want=s
awk_fails "a suite whose every case skipped" $'@@ KTAP s\n1..1\n    1..1\n    ok 1 a # SKIP no\nok 1 s\n@@ KTAP-END\n@@ DONE' 'kunit/s: every one of its 1 cases skipped' want=s

# --- check_boot on a stub /proc and /sys ------------------------------------------
# boot ITEMS WHEN [SETUP]: check_boot's lines for maglev.boot=ITEMS on
# $d/root, under sh; SETUP runs first in $d/root.
mkroot() {
	rm -rf "$d/root"
	mkdir -p "$d/root/proc/sys/kernel" "$d/root/proc/42" "$d/root/sys/kernel/debug/kcsan.d"
	printf 'ffffffff81000000 T kasan_report\nffffffff81000010 T __ubsan_handle_shift_out_of_bounds\nffffffff81000020 T __list_add_valid_or_report\nffffffff81000030 T softlockup_fn\n' \
		>"$d/root/proc/kallsyms"
	echo khungtaskd >"$d/root/proc/42/comm"
	: >"$d/root/sys/kernel/debug/kmemleak"
	printf ' debug_locks:                         1\n' >"$d/root/proc/lockdep_stats"
}
boot() {
	echo "console=ttyS0 maglev.boot=$1" >"$d/root/proc/cmdline"
	(
		GUEST_INIT_FUNCTIONS_ONLY=1 BOOT_ROOT=$d/root BOOT_UNAME_M=x86_64 \
			BOOT_UNAME_V='#1 SMP PREEMPT_DYNAMIC' sh -c \
			'. ./scripts/guest-init.sh; exec 3>&1; check_boot "$0"' "$2"
	)
}
boot_is() {
	local what=$1 want=$2 out
	out=$(boot "$3" "$4")
	if grep -Eq "^$want" <<<"$out"; then
		ok "check_boot $what"
	else
		ko "check_boot $what: got:"
		sed 's/^/  /' <<<"$out"
	fi
}
mkroot
boot_is "passes a kernel with what it names" "PASS: boot: on at the start: kasan ubsan kmemleak lockdep debug_list hung_task softlockup$" \
	kasan,ubsan,kmemleak,lockdep,debug_list,hung_task,softlockup start
rm "$d/root/sys/kernel/debug/kmemleak"
mkdir "$d/root/sys/kernel/debug/kmemleak"	# a write fails
boot_is "fails a kmemleak that refuses a write" "FAIL: boot: kmemleak is not on at the end" kmemleak,lockdep end
mkroot
printf ' debug_locks:                         0\n' >"$d/root/proc/lockdep_stats"
boot_is "fails a lockdep that turned itself off" "FAIL: boot: lockdep is not on at the end" kmemleak,lockdep end
mkroot
: >"$d/root/proc/kallsyms"
boot_is "fails a kernel without KASAN, UBSAN and DEBUG_LIST" "FAIL: boot: kasan is not on at the start" kasan,ubsan,debug_list start
boot_is "fails a kernel with /proc/sys for nosysctl" "FAIL: boot: nosysctl is not on" nosysctl start
echo 512 >"$d/root/proc/sys/kernel/tainted"
out=$(GUEST_INIT_FUNCTIONS_ONLY=1 BOOT_ROOT=$d/root sh -c '. ./scripts/guest-init.sh; taint')
rm -r "$d/root/proc/sys"
out2=$(GUEST_INIT_FUNCTIONS_ONLY=1 BOOT_ROOT=$d/root sh -c '. ./scripts/guest-init.sh; taint')
if [ "$out" = 512 ] && [ "$out2" = none ]; then
	ok "taint reads /proc/sys/kernel/tainted, and says none without /proc/sys"
else
	ko "taint: '$out' with /proc/sys/kernel/tainted 512, '$out2' without /proc/sys"
fi

# --- check_shares --------------------------------------------------------------
# shares WHAT CONNS SHARES: check_shares's line for the flows CONNS ("ADDR
# PORT DEST" lines) against /proc's shares SHARES ("DEST WEIGHT SLOTS").
shares() {
	printf '%s' "$2" >"$d/conns"
	printf '%s' "$3" >"$d/shares"
	(
		# shellcheck disable=SC1091 # tests/guest/lib.sh
		. tests/guest/lib.sh
		svc_dests() { cat "$d/shares"; }
		check_shares s "TCP 10.0.0.1:80" "$d/conns"
		rm -rf "$T"
	)
}
flows() {	# flows N DEST...: N flows spread evenly over DEST...
	local n=$1 i
	shift
	for ((i = 0; i < n; i++)); do
		local a=("$@")
		echo "10.9.$((i / 250)).$((i % 250)) 1000 ${a[i % $#]}"
	done
}
S3=$'10.1.1.1:80 1 21845\n10.1.2.1:80 1 21846\n10.1.3.1:80 1 21846\n'
shares_is() {
	local out
	out=$(shares "$5" "$2" "$3")
	if grep -Eq "^$1" <<<"$out"; then
		ok "check_shares: $5"
	else
		ko "check_shares: $5: got:"
		sed 's/^/  /' <<<"$out"
	fi
}
shares_is PASS "$(flows 600 10.1.1.1:80 10.1.2.1:80 10.1.3.1:80)" "$S3" "" "600 flows evenly on 3 equal dests pass"
shares_is FAIL "$(flows 600 10.1.1.1:80)" "$S3" "" "600 flows on one of 3 equal dests fail"
shares_is "FAIL: s: .*no flows or no share: 0 flows" "" "$S3" "" "no flows fail"
shares_is "FAIL: s: .*no flows or no share: 600 flows, total share 0" "$(flows 600 10.1.1.1:80 10.1.2.1:80 10.1.3.1:80)" "" "" "an empty share list fails"
shares_is "FAIL: s: .*too few flows: 30" "$(flows 30 10.1.1.1:80 10.1.2.1:80 10.1.3.1:80)" "$S3" "" "30 flows on 3 equal dests are too few to tell"
shares_is FAIL "$(flows 600 10.1.1.1:80 10.1.2.1:80 10.1.9.1:80)" "$S3" "" "flows to a dest that is not listed fail"

# --- check.sh's step_result ----------------------------------------------------
# result_is WHAT LOG "P F S"
result_is() {
	local got
	printf '%s\n' "$2" >"$d/step.log"
	got=$(. scripts/lib.sh && step_result "$d/step.log" 2>/dev/null)
	if [ "$got" = "$3" ]; then
		ok "step_result: $1 ($got)"
	else
		ko "step_result: $1: got '$got', want '$3'"
	fi
}
result_is "a summary" $'PASS: a\nPASS: b\n2 passed, 0 failed' "2 0 0"
result_is "more FAIL lines than the summary counts" $'FAIL: a\nFAIL: b\nPASS: c\n1 passed, 1 failed, 2 skipped' "1 2 2"
result_is "a step that died (no summary)" $'PASS: a\nFAIL: b\nTraceback' "0 2 0"
result_is "an empty log" '' "0 1 0"

echo "$np passed, $nf failed"
[ "$nf" -eq 0 ]
