#!/bin/bash
# newest-test.sh: the newest Linux that Debian ships, found at run time.
#
# Looks up the newest cloud kernel of trixie-backports and sid through the
# private apt configurations in the cache (stock_resolve_newest in lib.sh;
# this machine's own /etc/apt and /var/lib/apt are checksummed before and
# after and must not change), builds ip_vs_maglev.ko against its headers
# with W=1, also with MH_COMPAT=1 (any warning in our files or of modpost
# fails; built in a root of that suite, stock_build), then runs the guest
# tests on that kernel, Debian's own
# package as users run it, with ip_vs and the modules the tests use loaded
# from it (scripts/vm-test.sh with KSTOCK=newest). Debian's kernels have no
# CONFIG_KUNIT: the KUnit suites build and run on the 6.12 test kernels.
#
# Environment: NEWEST_GUEST_TESTS, the guest tests to run on it (globs as
# GUEST_TESTS takes them; "all" for every one: a subset of tests/manifest
# or more, one SKIP); the default is tests/manifest's stock-newest line,
# the tests that exercise IPVS itself (lifecycle, traffic, order, drain,
# params, unload, netns, failure, teardown, fleet, sync, hardening), and
# the operating procedures (26) and the scheduler switched under traffic
# (30), which run the mh build only on a kernel whose own ip_vs_mh is a
# module, as Debian's is.
# Every result names the kernel: "linux-7.3.4: ...".
# Logs: build/check/newest/ and build/check/vm-stock-newest/.
set -eu
. "$(dirname "$0")/lib.sh"

[ "${NEWEST_GUEST_TESTS:-}" = all ] && NEWEST_GUEST_TESTS='[0-9]*'

need_pkgs "${BUILD_PKGS[@]}"
w=$(work_dir newest)
apt_before=$(host_apt_state)

if stock_kernel newest && kver=$STOCK_VER && stock_headers newest &&
   [ "$STOCK_VER" = "$kver" ]; then
	pass "newest: linux-image-$kver $STOCK_PKGVER ($STOCK_DIST) is the newest cloud kernel of ${NEWEST_SUITES[*]#*:}"
else
	fail "newest: find and download the newest cloud kernel and its headers in ${NEWEST_SUITES[*]#*:}"
	summary
	exit
fi
if [ "$(host_apt_state)" = "$apt_before" ]; then
	pass "newest: this machine's /etc/apt, /var/lib/apt and apt caches unchanged (private apt configuration in $(papt_dir trixie), $(papt_dir sid))"
else
	fail "newest: this machine's apt configuration or state changed"
	diff <(echo "$apt_before") <(host_apt_state) | sed 's/^/  /'
fi
kdir=$STOCK_KDIR
label=linux-${kver%%[+-]*}

# compile_w1 VARIANT: build against the headers with W=1 and VARIANT
# (empty or MH_COMPAT=1); any warning in our files fails.
compile_w1() {
	local v=$1 name=${1:-plain} src log
	src=$w/src-${name%%=*}
	log=$w/compile-${name%%=*}.log
	stage_sources "$src"
	# shellcheck disable=SC2086 # v is one word or none
	if ! stock_build "$kdir" "$src" W=1 $v modules >"$log" 2>&1; then
		fail "$label: W=1 build${v:+ with $v} failed (see $log)"
		grep -E 'error|warning' "$log" | sed "s|$src/||g" | head -n 20
		return
	fi
	if w1_warnings "$log" "$src"; then
		fail "$label: W=1 warnings${v:+ with $v} (see $log)"
	else
		pass "$label: ip_vs_maglev builds W=1 clean${v:+ with $v}"
	fi
}
# The plain build is vm-test.sh's below (W=1 there).
compile_w1 MH_COMPAT=1

# The guest tests, every result named after the kernel.
vrc=0
env KSTOCK=newest ${NEWEST_GUEST_TESTS:+"GUEST_TESTS=$NEWEST_GUEST_TESTS"} \
	"$TOP/scripts/vm-test.sh" </dev/null >"$w/vm.log" 2>&1 || vrc=$?
tally < <(sed -E "s/^(PASS|FAIL|SKIP): /\\1: $label: /" "$w/vm.log")
# A failure it counted is one failure, not two.
[ "$vrc" -eq 0 ] || grep -q '^FAIL: ' "$w/vm.log" ||
	fail "$label: vm-test.sh exited with status $vrc"
# One line for the guest tests, naming the kernel, for check.sh's list
# of the platforms tested: not a result of its own (the results above are
# counted once), but a kernel that gave no result at all fails.
gp=$(grep -c '^PASS: guest/' "$w/vm.log" || true)
gf=$(grep -c '^FAIL: guest/' "$w/vm.log" || true)
gt=$(grep -o '^PASS: guest/[0-9][0-9]-[a-z]*' "$w/vm.log" | sort -u |
	sed 's|.*/||' | paste -sd' ' -)
if [ "$gp" -eq 0 ]; then
	fail "$label: guest tests on Debian's Linux $kver: no guest check passed"
elif [ "$gf" -eq 0 ]; then
	echo "TESTED: $label: guest tests on Debian's Linux $kver ($gt): $gp passed"
fi
summary
