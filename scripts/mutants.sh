#!/bin/bash
# mutants.sh: the planted defects of tests/mutants/, each of which a test
# must catch. A mutant is a small patch against the module's sources
# (maglev_main.c, maglev_table.c, ...) whose header names the guest test
# that must catch it, the test kernel it runs on and what the failure must
# say:
#
#   Mutant: one line: the defect planted
#   Kernel: default | debug | kcsan       (the test kernel, vm-test.sh's)
#   Test: NN-name                         (tests/guest/NN-name.sh)
#   Env: NAME=VALUE[,NAME=VALUE]          (optional: only the part of the
#                                          test that catches it)
#   Expect: ERE                           (a FAIL line of the boot must
#                                          match it: the check meant)
#
# For each kernel, every mutant is applied to a fresh copy of the sources
# (patch, no fuzz: a mutant that no longer applies fails this step, so
# whoever changes the code under one updates it in the same commit), built
# with its test's "# module-build:" variables, and booted with its test,
# several at once (GUEST_LANES, default 2; qemu-run.sh's guest slots bound
# them with the other steps' guests). A mutant is caught when its boot
# has a FAIL line matching its Expect (the test's own, or the harness's:
# a kernel report on the console, a timeout); a mutant whose boot passes,
# or fails only otherwise, is missed: one FAIL.
#
#   scripts/mutants.sh                    # every mutant
#   MUTANTS="tests/mutants/02-*" scripts/mutants.sh
#
# Ends with "mutants: N caught, N missed in S s" and the step's summary
# line. Logs: build/check/mutants-KERNEL/.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vmlib.sh"

start=$(date +%s)
need_pkgs "${BUILD_PKGS[@]}" qemu-system-x86 busybox-static ipvsadm iproute2 patch
# shellcheck disable=SC2206 # globs, by design
patches=(${MUTANTS:-$TOP/tests/mutants/*.patch})
GUEST_LANES=${GUEST_LANES:-2}
caught=0
missed=0

# field PATCH NAME: the value of its header line "NAME: value".
field() {
	sed -n "/^\(---\|diff\) /q; s/^$2: *//p" "$1" | head -n 1
}

# mutant_build PATCH SRC KDIR MAKEVARS...: the sources with PATCH applied
# in SRC, built against KDIR (no W=1: a mutant may well warn).
mutant_build() {
	local p=$1 src=$2 kdir=$3 out
	shift 3
	stage_sources "$src"
	if ! out=$(patch -d "$src" -p1 -F0 -s --no-backup-if-mismatch -r - <"$p" 2>&1); then
		echo "$out" | sed 's/^/  /' >&2
		return 2
	fi
	stock_build "$kdir" "$src" "$@" modules >"$src.log" 2>&1 || return 3
}

# judge NAME TEST EXPECT W: the boot of NAME with vm_judge's counters of
# its own; caught if a FAIL line matches EXPECT.
judge() {
	local name=$1 test=$2 expect=$3 w=$4 out first
	out=$(PASSED=0 FAILED=0 SKIPPED=0; vm_judge "mutant/$name" "$w" "" finish=1 2>&1) || true
	printf '%s\n' "$out" >"$w/$name.judged"
	first=$(grep -E '^FAIL: ' <<<"$out" | grep -E -m 1 -- "$expect" || true)
	if [ -n "$first" ]; then
		pass "mutant $name: caught by $test: ${first#FAIL: mutant/"$name": }"
		caught=$((caught + 1))
	else
		fail "mutant $name: missed: $test did not fail with /$expect/ (logs: $w/$name.judged)"
		grep -E '^FAIL: ' <<<"$out" | sed 's/^FAIL: /  its FAIL: /' | head -n 5
		missed=$((missed + 1))
	fi
}

declare -A by_kernel=()
for p in "${patches[@]}"; do
	[ -f "$p" ] || die "no mutant $p"
	k=$(field "$p" Kernel)
	t=$(field "$p" Test)
	e=$(field "$p" Expect)
	case $k in
	default|debug|kcsan) ;;
	*) fail "mutant ${p##*/}: Kernel: '$k' is not default, debug or kcsan"; continue ;;
	esac
	if [ ! -f "$TOP/tests/guest/$t.sh" ] || [ -z "$e" ] ||
	   [ -z "$(field "$p" Mutant)" ]; then
		fail "mutant ${p##*/}: its header needs Mutant:, an existing Test: and Expect:"
		continue
	fi
	by_kernel[$k]+="$p "
done

for k in default debug kcsan; do
	[ -n "${by_kernel[$k]:-}" ] || continue
	ksource=6.12
	[ "$k" = kcsan ] && ksource=newest
	kdir=$(KFLAVOUR=$k KSOURCE=$ksource "$TOP/scripts/build-kernel.sh") ||
		die "no $k test kernel"
	w=$(work_dir "mutants-$k")
	rm -rf "$w/root" "$w/tools" "$w"/*.status
	mkdir -p "$w/root/maglev/tests" "$w/root/maglev/bin" "$w/root/maglev/mutants" \
		"$w/root/usr/sbin"
	if ! make -C "$TOP" BUILD="$w/tools" tools guest-tools >"$w/tools.log" 2>&1; then
		fail "mutants on $k: make tools guest-tools (see $w/tools.log)"
		continue
	fi
	find "$w/tools" -maxdepth 1 -type f -perm -u+x -exec cp {} "$w/root/maglev/bin/" \;
	cp "$w/tools/maglev-sim" "$w/root/maglev/"
	cp -r "$TOP/tests/guest/." "$w/root/maglev/tests/"
	cp /usr/sbin/nft "$w/root/usr/sbin/"

	boots=()
	for p in ${by_kernel[$k]}; do
		n=${p##*/}
		n=${n%.patch}
		t=$(field "$p" Test)
		read -ra mvars <<<"$(sed -n 's/^# module-build: *//p' "$TOP/tests/guest/$t.sh" | head -n 1)"
		rc=0
		mutant_build "$p" "$w/src-$n" "$kdir" "${mvars[@]}" || rc=$?
		case $rc in
		0)	mkdir -p "$w/root/maglev/mutants/$n"
			cp "$w/src-$n/ip_vs_maglev.ko" "$w/root/maglev/mutants/$n/"
			boots+=("$p") ;;
		2)	fail "mutant $n: no longer applies to the sources: update ${p#"$TOP/"} with the code it plants its defect in" ;;
		*)	fail "mutant $n: does not build (see $w/src-$n.log)"
			tail -n 10 "$w/src-$n.log" ;;
		esac
	done
	"$TOP/scripts/mkinitramfs.sh" "$w/initramfs.cpio" "$w/root"

	m_boot=$(manifest "$k" boot) || die "tests/manifest has no boot line for $k"
	SLOW=1
	case $k in debug) SLOW=6 ;; kcsan) SLOW=3 ;; esac
	[ "$k" = debug ] && export QEMU_PRIORITY=2
	for p in "${boots[@]}"; do
		n=${p##*/}
		n=${n%.patch}
		t=$(field "$p" Test)
		env=$(field "$p" Env)
		# The test's own time limit (vm-test.sh's guest_timeout).
		tmo=$(sed -n 's/^# \(guest-\)\{0,1\}timeout: *\([0-9][0-9]*\).*/\2/p' \
			"$TOP/tests/guest/$t.sh" | head -n 1)
		[ "${tmo:-0}" -ge 60 ] || tmo=60
		tmo=$((tmo * SLOW))
		# A mutant's test fails early and may then wait out every
		# timeout after (11 part 4's incomplete set: 13 minutes on the
		# debug kernel): what failed by then is on its results port.
		[ "$tmo" -le 600 ] || tmo=600
		read -ra kargs <<<"$(sed -n "s/^# $k-kernel-args: *//p" "$TOP/tests/guest/$t.sh" | head -n 1)"
		# A planted defect may wreck the kernel after its report (a
		# KASAN write past an object, then a general protection
		# fault and a hung guest): the first report, an oops, a hung
		# task or a soft lockup panics, and the guest ends at once
		# (panic=-1, qemu -no-reboot) with the report on its console.
		# Not at every warning on the kcsan kernel: a race of the
		# kernel's own (a NOTE, scripts/kcsan-split.awk) would end it.
		kargs+=(oops=panic hung_task_panic=1 softlockup_panic=1)
		[ "$k" = kcsan ] || kargs+=(panic_on_warn=1)
		while [ "$(jobs -rp | wc -l)" -ge "$GUEST_LANES" ]; do
			wait -n || true
		done
		QEMU_TIMEOUT=$((tmo * 2 + 30)) vm_run "mutant/$n" "$kdir/arch/x86/boot/bzImage" \
			"$w/initramfs.cpio" "$w" "" "maglev.job=test:$t.sh" \
			"maglev.timeout=$tmo" "maglev.ko=/maglev/mutants/$n/ip_vs_maglev.ko" \
			"maglev.boot=${m_boot// /,}" ${env:+"maglev.env=$env"} "${kargs[@]}" &
	done
	wait
	for p in "${boots[@]}"; do
		n=${p##*/}
		n=${n%.patch}
		judge "$n" "$(field "$p" Test)" "$(field "$p" Expect)" "$w"
	done
done

echo "mutants: $caught caught, $missed missed in $(( $(date +%s) - start )) s"
summary
