# shellcheck shell=bash
# Booting a guest and judging the result. Source after lib.sh.

# Console lines that mean the kernel found a bug.
KERNEL_BUG_RE='WARNING:|BUG:|Oops|Kernel panic|general protection fault|KASAN|UBSAN|kmemleak: [0-9]+ new suspected|unreferenced object|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|Call Trace:|INFO: task .* blocked'
# Result lines not worth repeating when something failed.
QUIET_RE='^(@@ |PASS: )|^ *(ok [0-9]|KTAP version|1\.\.[0-9]|# Subtest:|# .*: pass:[0-9]+ fail:0 |# Totals:)'
# Taint flags that mean the same: B (bad page), D (died), W (warning),
# L (soft lockup).
TAINT_BAD=$(( (1 << 5) | (1 << 7) | (1 << 9) | (1 << 14) ))

# vm_boot LABEL KERNEL INITRD LOGDIR WANT_SUITES [KERNEL ARGS...]
# Boot once, print PASS/FAIL lines for everything the guest reported and
# for kernel problems on the console, and add them to the totals.
vm_boot() {
	local label=$1 kernel=$2 initrd=$3 logs=$4 want=$5
	shift 5
	local con="$logs/${label//\//-}.console" res="$logs/${label//\//-}.results"
	local before=$FAILED start rc=0 taint bad
	start=$(date +%s)
	"$TOP/scripts/qemu-run.sh" "$kernel" "$initrd" "$con" "$res" "$@" ||
		rc=$?
	[ "$rc" -eq 124 ] && fail "$label: QEMU timed out after ${QEMU_TIMEOUT:-120}s"
	tally < <(awk -v label="$label" -v want="$want" \
		-f "$TOP/scripts/results.awk" "$res")

	bad=$(tr -d '\r' <"$con" | grep -E -m 1 -- "$KERNEL_BUG_RE" || true)
	[ -n "$bad" ] && fail "$label: kernel reported: $bad"
	taint=$(tr -d '\r' <"$res" | sed -n 's/^@@ TAINT //p')
	if [ -z "$bad" ] && [ -n "$taint" ] &&
	   [ $(( taint & TAINT_BAD )) -ne 0 ]; then
		fail "$label: kernel tainted ($taint) by a warning or oops"
	fi
	log "$label: guest ran in $(( $(date +%s) - start ))s (logs: $logs)"

	[ "$FAILED" -ne "$before" ] || return 0
	echo "---- $label: guest output, passes left out ($res) ----"
	tr -d '\r' <"$res" | grep -Ev "$QUIET_RE" |
		awk 'NR <= 150 { print "| " $0 } END { if (NR > 150)
			print "| ... " NR - 150 " more lines" }'
	if [ -n "$bad" ]; then
		echo "---- $label: console from the first kernel report ----"
		tr -d '\r' <"$con" | grep -E -m 1 -A 40 -- "$KERNEL_BUG_RE" |
			sed 's/^/| /'
	elif ! grep -q '^@@ DONE' "$res"; then
		echo "---- $label: console tail ----"
		tr -d '\r' <"$con" | tail -n 30 | sed 's/^/| /'
	fi
	echo "----"
}
