#!/bin/bash
# check.sh: "make check". Runs every test step, then prints the failures
# and, as the very last line, "N passed, N failed, N skipped" over all of
# them. Exit status is non-zero if anything failed.
#
# Steps (each ends with its own "N passed, N failed" line, followed by
# ", N skipped" if it skipped checks it could not run; a step whose last
# line is not that fails):
#   host     tests/run.sh                host unit tests
#   compile  scripts/compile-test.sh     W=1 against stock 6.1/6.12 headers, i386
#   static   scripts/static-check.sh     scripts/doc-check.sh (links, make
#                                        targets, paths in README.md and
#                                        docs/), checkpatch --strict, sparse
#   fuzz     tests/fuzz/run.sh           libFuzzer targets, corpus replay
#   vm       scripts/vm-test.sh          KUnit and tests/guest/ in QEMU
#   vm-i386  scripts/vm-test.sh          W=1 build, KUnit and the guest
#                                        tests marked "# nosysctl-kernel:
#                                        yes" on a 32-bit x86 kernel
#                                        (KARCH=i386) without sysctl
#                                        (KFLAVOUR=nosysctl)
#   vm-kcsan scripts/vm-test.sh          the same on KFLAVOUR=kcsan (KCSAN,
#                                        UBSAN) of the newest Linux
#                                        (KSOURCE=newest), the guest tests
#                                        marked "# kcsan-kernel: yes"
#   vm-debug scripts/vm-test.sh          the same on KFLAVOUR=debug (KASAN,
#                                        UBSAN, lockdep, kmemleak, failslab)
# (tests/manifest: what each of their kernels must run.)
#   stock    scripts/stock-smoke.sh      Debian's stock 6.1, 6.12 kernels and
#                                        the newest (trixie-backports, sid)
#                                        in QEMU
#   dkms     scripts/dkms-test.sh        dkms build for stock 6.12
#   keepalived scripts/stock-keepalived.sh keepalived (bookworm's, trixie's),
#                                        kube-proxy sequences
#                                        on the mh build, stock 6.12 in QEMU
#   deb      scripts/deb-test.sh         make deb, DKMS build from the
#                                        packages, load in stock 6.12
#   fresh    scripts/fresh-test.sh       "make demo" from a clean clone of
#                                        HEAD in a minimal Debian 12 root
#                                        and a Debian 13 root (mmdebstrap,
#                                        cached), chroot; the .debs in the
#                                        Debian 13 root
#   newest   scripts/newest-test.sh      Debian's newest cloud kernel of
#                                        trixie-backports and sid (found at
#                                        run time): W=1 builds, guest tests
#   mutants  scripts/mutants.sh          the planted defects of
#                                        tests/mutants/: each must make its
#                                        guest test fail on its kernel
# Always, at the end: the run installed no linux-image package and left
# /boot (and /vmlinuz, /initrd.img) as it found them, and loaded nothing
# into this machine's kernel (kernel_state_check in lib.sh: no ip_vs*
# module appeared in /proc/modules, no module taint flag was set).
# vm-debug, vm, newest, vm-kcsan and vm-i386 run beside the other steps
# (CHECK_SERIAL=1: in their turn; CHECK_BG="vm-debug newest" picks the
# steps that do).
# CHECK_STEPS="host static" runs a subset. Logs: build/check/.
# docs/testing.md says what each step proves.
set -eu
. "$(dirname "$0")/lib.sh"

# compile and static need the default test kernel's tree: last, so that
# from nothing the steps before them run while that kernel builds.
STEPS=${CHECK_STEPS:-host fuzz stock dkms keepalived deb fresh compile static vm vm-i386 vm-kcsan vm-debug newest mutants}

run_start=$(date +%s)
declare -A took=() cpu_took=()
boot_before=$(boot_state)
kernel_before=$(kernel_state)

need_pkgs "${CHECK_PKGS[@]}"
w=$(work_dir .)
: >"$w/failures"
: >"$w/skips"
: >"$w/notes"
total_pass=0
total_fail=0
total_skip=0

step_cmd() {
	case $1 in
	host)	echo "$TOP/tests/run.sh" ;;
	compile) echo "$TOP/scripts/compile-test.sh" ;;
	static)	echo "$TOP/scripts/static-check.sh" ;;
	fuzz)	echo "$TOP/tests/fuzz/run.sh" ;;
	vm)	echo "$TOP/scripts/vm-test.sh" ;;
	vm-i386) echo "$TOP/scripts/vm-test.sh" ;;
	vm-kcsan) echo "$TOP/scripts/vm-test.sh" ;;
	vm-debug) echo "$TOP/scripts/vm-test.sh" ;;
	stock)	echo "$TOP/scripts/stock-smoke.sh" ;;
	dkms)	echo "$TOP/scripts/dkms-test.sh" ;;
	keepalived) echo "$TOP/scripts/stock-keepalived.sh" ;;
	deb)	echo "$TOP/scripts/deb-test.sh" ;;
	fresh)	echo "$TOP/scripts/fresh-test.sh" ;;
	newest)	echo "$TOP/scripts/newest-test.sh" ;;
	mutants) echo "$TOP/scripts/mutants.sh" ;;
	*)	return 1 ;;
	esac
}

# step_source STEP: the Linux source of a step's test kernel (KSOURCE in
# lib.sh): the KCSAN kernel is the newest Linux's, so that KUnit also runs
# on the newest Linux (the newest step boots Debian's own kernel, which
# has no KUnit).
step_source() {
	case $1 in
	vm-kcsan) echo newest ;;
	*)	echo "${KSOURCE:-6.12}" ;;
	esac
}

# step_flavour STEP: the test kernel flavour of a step.
step_flavour() {
	case $1 in
	vm-debug) echo debug ;;
	vm-kcsan) echo kcsan ;;
	vm-i386) echo nosysctl ;;
	*)	echo "${KFLAVOUR:-default}" ;;
	esac
}

# step_arch STEP: the architecture of a step's test kernel (KARCH).
step_arch() {
	case $1 in
	vm-i386) echo i386 ;;
	*)	echo "${KARCH:-x86_64}" ;;
	esac
}

# step_lanes STEP: its guests at once (GUEST_LANES in vm-test.sh). The
# default kernel's step has the most guest time (about 740 s of guests
# cached, against 730 s of the debug kernel's, which get a free slot
# first, and 390 s of the kcsan's): one at a time it ran alone for the last
# 8 minutes of the run, with a slot idle; two lanes share that time out.
step_lanes() {
	case $1 in
	vm | mutants) echo "${GUEST_LANES:-2}" ;;
	*)	echo "${GUEST_LANES:-1}" ;;
	esac
}

# run_step STEP: run it with its output in $w/STEP.log (and on stdout
# unless BG), then record its exit status and wall time in $w/STEP.time.
# Both files are emptied first: a step that dies before the end has no
# STEP.time and fails (count_step), never judged by an earlier run's.
run_step() {
	local step=$1 cmd log=$w/$1.log start rc=0 cpu end
	rm -f "$w/$step.time"
	: >"$log"
	cmd=$(step_cmd "$step")
	start=$(date +%s)
	children_cpu cpu
	if [ ! -x "$cmd" ]; then
		echo "FAIL: $step: ${cmd#"$TOP/"} missing" >"$log"
		rc=1
	elif [ -n "${BG:-}" ]; then
		KFLAVOUR=$(step_flavour "$step") KSOURCE=$(step_source "$step") \
			KARCH=$(step_arch "$step") GUEST_LANES=$(step_lanes "$step") \
			"$cmd" </dev/null >"$log" 2>&1 || rc=$?
	else
		# The foreground chain's guests (stock, keepalived, deb,
		# fresh) wait only for the debug kernel's
		# (scripts/qemu-run.sh, take_slot).
		QEMU_PRIORITY=${QEMU_PRIORITY:-1} KFLAVOUR=$(step_flavour "$step") \
			KSOURCE=$(step_source "$step") KARCH=$(step_arch "$step") \
			"$cmd" </dev/null 2>&1 | tee "$log"
		rc=${PIPESTATUS[0]}
	fi
	children_cpu end
	echo "$rc $(( $(date +%s) - start )) $(( end - cpu ))" >"$w/$step.time"
}

# count_step STEP: add its result lines to the totals. The step's last
# line must be its summary (SUMMARY_RE in lib.sh): without one it fails,
# with as many failures as it printed FAIL lines and one more, whatever
# its exit status; with one, its failures are the larger of the summary's
# and its FAIL lines (step_result in lib.sh); a step that did not record
# its end (no STEP.time) fails once more.
count_step() {
	local step=$1 log=$w/$1.log p=0 f=0 s=0 rc=1 t=0 c=0 nf why
	touch "$log"
	why=$(mktemp)
	read -r p nf s < <(step_result "$log" 2>"$why")
	sed "s/^FAIL: /FAIL: $step: /" "$why" | tee -a "$log"
	rm -f "$why"
	f=$nf
	if [ -f "$w/$step.time" ]; then
		read -r rc t c <"$w/$step.time"
	else
		echo "FAIL: $step: did not finish (no $step.time)" | tee -a "$log"
		f=$((f + 1))
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL: $step: exited with status $rc" | tee -a "$log"
		f=1
	fi
	grep '^FAIL' "$log" | sed "s/^/[$step] /" >>"$w/failures" || true
	grep '^SKIP' "$log" | sed "s/^/[$step] /" >>"$w/skips" || true
	grep '^NOTE' "$log" | sed "s/^/[$step] /" >>"$w/notes" || true
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	total_skip=$((total_skip + s))
	took[$step]=$t
	cpu_took[$step]=$c
	echo "=== $step: $p passed, $f failed, $s skipped in ${t}s, ${c}s of CPU"
}

for step in $STEPS; do
	step_cmd "$step" >/dev/null || die "unknown step '$step'"
done

# vm-debug (the debug kernel's guests, the longest step), vm (the test
# kernel's), newest (Debian's newest kernel's guests), vm-kcsan and vm-i386
# (kernels of their own) run beside the others, started first: from nothing
# the test kernels build while the other steps run, and their guests wait on
# timers and hold-offs much of the time, when the other steps use the
# CPUs. CHECK_SERIAL=1 runs them in their turn instead. Their output is
# shown when they end.
bg=' '
declare -A bgpid=()
for step in ${CHECK_BG:-vm-debug vm newest vm-kcsan vm-i386 mutants}; do
	if [ -n "${CHECK_SERIAL:-}" ] || [[ " $STEPS " != *" $step "* ]]; then
		continue
	fi
	bg+="$step "
	echo "=== $step: $(step_cmd "$step" | sed "s|^$TOP/||"), beside the other steps; log: $w/$step.log"
	BG=1 run_step "$step" &
	bgpid[$step]=$!
done

for step in $STEPS; do
	[[ "$bg" == *" $step "* ]] && continue
	echo "=== $step: $(step_cmd "$step" | sed "s|^$TOP/||")"
	# In a subshell: its children's CPU time is the step's alone (the
	# steps beside are reaped by this shell whenever they end).
	( run_step "$step" )
	count_step "$step"
done

for step in $bg; do
	echo "=== $step: waiting for it"
	wait "${bgpid[$step]}" || true
	cat "$w/$step.log"
	count_step "$step"
done

echo "=== boot: the run left the boot kernel alone"
boot_after=$(boot_state)
if [ "$boot_after" = "$boot_before" ]; then
	echo "PASS: boot: no linux-image package installed or removed, /boot unchanged"
	total_pass=$((total_pass + 1))
else
	echo "FAIL: boot: linux-image packages or /boot changed during the run:" |
		tee -a "$w/failures"
	diff <(echo "$boot_before") <(echo "$boot_after") | sed 's/^/  /' |
		tee -a "$w/failures"
	total_fail=$((total_fail + 1))
fi

echo "=== kernel: the run loaded nothing into this machine's kernel"
while IFS= read -r line; do
	echo "$line"
	case $line in
	'PASS: '*) total_pass=$((total_pass + 1)) ;;
	'FAIL: '*) total_fail=$((total_fail + 1)); echo "$line" >>"$w/failures" ;;
	'SKIP: '*) total_skip=$((total_skip + 1)); echo "$line" >>"$w/skips" ;;
	esac
done < <(kernel_state_check kernel "$kernel_before" "$(kernel_state)")

# Wall time of each step and its share of the run.
run_secs=$(( $(date +%s) - run_start ))
allcpu=0
children_cpu allcpu
echo "=== times: $((run_secs / 60)) min $((run_secs % 60)) s in all, ${allcpu}s of CPU on $(nproc) CPUs"
echo "===   step        wall  share   CPU"
for step in $STEPS; do
	[ -n "${took[$step]:-}" ] || continue
	printf '===   %-10s %5ds %4d%% %5ds\n' "$step" "${took[$step]}" \
		$(( run_secs ? took[$step] * 100 / run_secs : 0 )) "${cpu_took[$step]}"
done

# The kernels and distributions this run tested, by the PASS lines that
# name their versions (docs/installing.md lists them).
echo "=== platforms tested:"
grep -h -E '^(PASS|TESTED): (newest: linux-(source|image)|linux-[0-9][^:]*: (test kernel|ip_vs_maglev builds|KUnit on|guest tests on)|stock-[0-9.]*: guest ran|fresh(-[a-z]+)?: make (demo exited|KDIR=)|fresh(-[a-z]+)?: apt-get installs|keepalived[^:]*: make MH_COMPAT|keepalived: [a-z]+.s keepalived )' \
	"$w"/*.log 2>/dev/null | LC_ALL=C sort -u | sed -E 's/^(PASS|TESTED): /  /' || true

if [ -s "$w/skips" ]; then
	echo "=== skipped (not run here, not failures):"
	cat "$w/skips"
fi
if [ -s "$w/notes" ]; then
	echo "=== noted (the kernel's own, not failures):"
	sort -u "$w/notes"
fi
if [ -s "$w/failures" ]; then
	echo "=== failures:"
	cat "$w/failures"
fi
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ]
