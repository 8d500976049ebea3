# shellcheck shell=bash
# Booting a guest and judging the result. Source after lib.sh.

# Console lines that mean the kernel found a bug (KCSAN's reports start
# "BUG: KCSAN: data-race in"; its boot line names CONFIG_KCSAN_STRICT).
# KCSAN's reports of races with no frame of IPVS or the module are taken
# out first (scripts/kcsan-split.awk) and listed as NOTE lines.
# RCU's stall warnings ("rcu: INFO: rcu_sched detected stalls on
# CPUs/tasks", "self-detected stall") and DEBUG_LIST's reports ("list_add
# corruption.") are named, whatever follows them; tests/judge.sh feeds it
# one console of each kind.
KERNEL_BUG_RE='WARNING:|BUG:|Oops|Kernel panic|general protection fault|KASAN|UBSAN|kmemleak: [0-9]+ new suspected|unreferenced object|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|Call Trace:|INFO: task .* blocked|rcu: INFO: .*stall|detected stalls|self-detected stall|soft lockup|hard LOCKUP|list_(add|del) corruption|kernel BUG at|Tainted: [A-Z ]*[BDLW][A-Z ]* [0-9]'
# Result lines not worth repeating when something failed.
QUIET_RE='^(@@ |PASS: )|^ *(ok [0-9]|KTAP version|1\.\.[0-9]|# Subtest:|# .*: pass:[0-9]+ fail:0 |# Totals:)'
# Taint flags that mean the same: B (bad page), D (died), W (warning),
# L (soft lockup).
TAINT_BAD=$(( (1 << 5) | (1 << 7) | (1 << 9) | (1 << 14) ))

# vm_boot LABEL KERNEL INITRD LOGDIR WANT_SUITES [KERNEL ARGS...]
# Boot once, print PASS/FAIL lines for everything the guest reported and
# for kernel problems on the console, and add them to the totals.
vm_boot() {
	local label=$1 logs=$4 want=$5
	vm_run "$@"
	vm_judge "$label" "$logs" "$want"
}

# vm_run LABEL KERNEL INITRD LOGDIR WANT_SUITES [KERNEL ARGS...]: boot
# once, leaving the console, the results and LABEL's QEMU status, wall
# and CPU seconds in LOGDIR for vm_judge. Prints nothing: several may run
# at once.
vm_run() {
	local label=$1 kernel=$2 initrd=$3 logs=$4
	shift 5
	local base="$logs/${label//\//-}" start rc=0 cpu
	rm -f "$base.status"
	start=$(date +%s)
	cpu=$(cpu_seconds "$TOP/scripts/qemu-run.sh" "$kernel" "$initrd" \
		"$base.console" "$base.results" "$@" 2>"$base.harness") || rc=$?
	echo "$rc $(( $(date +%s) - start )) $cpu ${QEMU_TIMEOUT:-120}" \
		>"$base.status"
}

# CONSOLE_BOOT_RE: what the console of a boot whose command line has
# maglev.boot=ITEM (guest-init.sh's check_boot) must show, for the items
# the kernel says only in its log: "ITEM present-pattern [absent-pattern]".
CONSOLE_BOOT=(
	"kasan|KernelAddressSanitizer initialized|"
	"kmemleak|kmemleak: Kernel memory leak detector initialized|kmemleak: Kernel memory leak detector disabled"
	"prove_rcu|RCU lockdep checking is enabled|"
	"debug_objects||ODEBUG: Out of memory"
)

# console_boot LABEL CONSOLE: PASS/FAIL lines for the boot items of
# CONSOLE_BOOT the console's command line names, and a FAIL for a console
# cut short (no "maglev-guest: console end", guest-init.sh's last line)
# when the results reached "@@ DONE" (RESULTS, the third argument).
console_boot() {
	local label=$1 con=$2 res=$3 want item on off e seen='' bad=0
	want=$(tr -d '\r' <"$con" | sed -n 's/^.*Command line: .*maglev\.boot=\([^ ]*\).*$/\1/p' | head -n 1)
	for e in "${CONSOLE_BOOT[@]}"; do
		IFS='|' read -r item on off <<<"$e"
		case ",$want," in *",$item,"*) ;; *) continue ;; esac
		if [ -n "$on" ] && ! grep -q -- "$on" "$con"; then
			fail "$label: boot: $item: the console never says '$on'"
			bad=1
		elif [ -n "$off" ] && grep -q -- "$off" "$con"; then
			fail "$label: boot: $item: the console says '$off'"
			bad=1
		fi
		seen="$seen $item"
	done
	[ -n "$seen" ] && [ "$bad" = 0 ] && pass "$label: boot: the console shows on:$seen"
	if grep -q '^@@ DONE' "$res" && ! grep -q 'maglev-guest: console end' "$con"; then
		fail "$label: the console ends before the guest's last line (cut short: $(wc -c <"$con") bytes)"
	fi
	return 0
}

# vm_judge LABEL LOGDIR WANT_SUITES [VAR=VALUE...]: the PASS/FAIL lines of
# vm_run's boot; VAR=VALUE... are results.awk's (finish=1, exact=1).
vm_judge() {
	local label=$1 logs=$2 want=$3 v vars=()
	shift 3
	for v in "$@"; do vars+=(-v "$v"); done
	local base="$logs/${label//\//-}" before=$FAILED rc=1 secs=0 cpu=0 tmo=0
	local con="$base.console" res="$base.results" taint bad
	[ -f "$base.status" ] && read -r rc secs cpu tmo <"$base.status"
	[ -s "$base.harness" ] && cat "$base.harness" >&2
	[ "$rc" -eq 124 ] && fail "$label: QEMU timed out after ${tmo}s"
	touch "$con" "$res"
	local judged st=0
	judged=$(awk -v label="$label" -v want="$want" "${vars[@]}" \
		-f "$TOP/scripts/results.awk" "$res") || st=$?
	tally <<<"$judged"
	[ "$st" -eq 0 ] || fail "$label: scripts/results.awk failed on $res (exit status $st)"

	local ours="$base.console-ours" theirs="$base.kcsan-kernel" t
	rm -f "$theirs"
	awk -v foreign="$theirs" -f "$TOP/scripts/kcsan-split.awk" "$con" >"$ours" ||
		{ fail "$label: scripts/kcsan-split.awk failed on $con"; cp "$con" "$ours"; }
	console_boot "$label" "$con" "$res"
	if [ -s "$theirs" ]; then
		while IFS= read -r t; do
			echo "NOTE: $label: KCSAN: the kernel's own, no frame of IPVS or the module: $t"
		done <"$theirs"
	fi
	bad=$(grep -E -m 1 -- "$KERNEL_BUG_RE" "$ours" || true)
	[ -n "$bad" ] && fail "$label: kernel reported: $bad"
	# The taint: a number; "none" from a kernel without sysctl (the
	# console's "Tainted:" lines, in KERNEL_BUG_RE, stand for it there);
	# nothing at all only from a guest that did not finish.
	taint=$(tr -d '\r' <"$res" | sed -n 's/^@@ TAINT //p' | tail -n 1)
	if [ -z "$bad" ] && [[ $taint =~ ^[0-9]+$ ]] &&
	   [ $(( taint & TAINT_BAD )) -ne 0 ]; then
		fail "$label: kernel tainted ($taint) by a warning or oops"
	elif ! [[ $taint =~ ^([0-9]+|none)$ ]] && grep -q '^@@ DONE' "$res"; then
		fail "$label: the guest reported no taint ('@@ TAINT $taint')"
	fi
	log "$label: guest ran in ${secs}s, ${cpu}s of CPU (logs: $logs)"

	[ "$FAILED" -ne "$before" ] || return 0
	echo "---- $label: guest output, passes left out ($res) ----"
	tr -d '\r' <"$res" | grep -Ev "$QUIET_RE" |
		awk 'NR <= 150 { print "| " $0 } END { if (NR > 150)
			print "| ... " NR - 150 " more lines" }'
	if [ -n "$bad" ]; then
		echo "---- $label: console from the first kernel report ----"
		grep -E -m 1 -A 40 -- "$KERNEL_BUG_RE" "$ours" |
			sed 's/^/| /'
	elif ! grep -q '^@@ DONE' "$res"; then
		echo "---- $label: console tail ----"
		tr -d '\r' <"$con" | tail -n 30 | sed 's/^/| /'
	fi
	echo "----"
}

# manifest KERNEL WHAT: the names tests/manifest lists for KERNEL and WHAT
# (kunit, guest, boot), one line, space-separated; fails if it lists none.
manifest() {
	local f=$TOP/tests/manifest
	[ -f "$f" ] || { log "no $f"; return 1; }
	awk -v k="$1" -v w="$2" '!/^#/ && $1 == k && $2 == w {
		for (i = 3; i <= NF; i++) { printf "%s%s", sep, $i; sep = " " } }
		END { if (sep != "") print ""; else exit 1 }' "$f"
}

# bench_boot W KDIR JOB [KERNEL ARGS...]: boot the test kernel in KDIR once
# with W/initramfs.cpio to run the guest script JOB, for a benchmark:
# console and results in W, no PASS/FAIL of its own (bench_report judges).
bench_boot() {
	local w=$1 kdir=$2 job=$3 rc=0
	shift 3
	"$TOP/scripts/qemu-run.sh" "$kdir/arch/x86/boot/bzImage" \
		"$w/initramfs.cpio" "$w/console.log" "$w/results.log" \
		"maglev.job=test:$job" "maglev.timeout=$((QEMU_TIMEOUT - 60))" \
		"$@" || rc=$?
	[ "$rc" -eq 124 ] && log "QEMU timed out after ${QEMU_TIMEOUT}s"
	return 0
}

# bench_report NAME W DONE_RE: print the host's CPU and the figures the
# guest wrote between its @@ BEGIN and @@ END lines (PASS lines left out);
# unless a result line matches DONE_RE, print the failures and the
# console's end and die.
bench_report() {
	local name=$1 w=$2 done_re=$3
	echo "$name: host cpu:$(sed -n 's/^model name[^:]*:/ /p' /proc/cpuinfo | head -n 1)"
	tr -d '\r' <"$w/results.log" |
		sed -n '/^@@ BEGIN/,/^@@ END/{/^@@ /d;/^PASS: /d;p}'
	if ! tr -d '\r' <"$w/results.log" | grep -q -- "$done_re"; then
		tr -d '\r' <"$w/results.log" | grep '^FAIL' || true
		tr -d '\r' <"$w/console.log" | tail -n 20
		die "the guest did not finish (logs: $w)"
	fi
}
