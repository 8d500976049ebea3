#!/bin/bash
# vm-test.sh: KUnit and guest end-to-end tests under QEMU with the test
# kernel (scripts/build-kernel.sh, KFLAVOUR=default, debug or nosysctl).
# KSTOCK=SERIES boots Debian's stock SERIES cloud kernel instead
# (scripts/newest-test.sh: KSTOCK=newest): the module is built W=1 against
# its headers (stock_build in lib.sh), ip_vs and the modules the guest
# tests use are loaded from its package (stock_modules), and there is no
# KUnit (Debian's kernels have no CONFIG_KUNIT, which the suites need).
#
# KARCH=i386 builds and boots a 32-bit x86 kernel (qemu-system-i386), with
# Debian's i386 busybox, ipvsadm and ip (i386_userland in lib.sh) and the
# guest tools built with gcc -m32 -static.
#
# One boot runs ip_vs_maglev.ko built with its KUnit suites (kunit/,
# MAGLEV_KUNIT=1) and reads their KTAP from debugfs. Then one boot per
# tests/guest/NN-name.sh runs it with ip_vs_maglev.ko loaded (on the debug
# kernel only the tests marked "# debug-kernel: yes", on the kcsan kernel
# those marked "# kcsan-kernel: yes", on the nosysctl kernel, built
# without CONFIG_SYSCTL, those marked "# nosysctl-kernel: yes").
# tests/manifest says which guest tests and KUnit suites each kernel must
# run and what every boot of it must show (its detectors on): a test or
# suite missing from the run, or run but not listed there, fails. The
# guest side and the PASS:/FAIL: convention are described in
# docs/testing.md.
# Logs: build/check/vm-$KFLAVOUR/ (vm-$KFLAVOUR-newest/ for KSOURCE=newest,
# -i386 for KARCH=i386, vm-stock-SERIES/ for KSTOCK).
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vmlib.sh"

KFLAVOUR=${KFLAVOUR:-default}
export KFLAVOUR
# The timeouts of a checking kernel: KASAN and lockdep under TCG are six
# times slower, KCSAN's watchpoints three.
case $KFLAVOUR in
debug)	SLOW=6 ;;
kcsan)	SLOW=3 ;;
*)	SLOW=1 ;;
esac
# Seconds for one guest test.
GUEST_TIMEOUT=${GUEST_TIMEOUT:-60}
GUEST_TIMEOUT=$((GUEST_TIMEOUT * SLOW))
# The debug kernel's guests are the longest chain of "make check": they
# take the next free guest slot first (qemu-run.sh).
[ "$KFLAVOUR" = debug ] && export QEMU_PRIORITY=2
QEMU_TIMEOUT_SET=${QEMU_TIMEOUT:-}
export QEMU_TIMEOUT=${QEMU_TIMEOUT:-$((GUEST_TIMEOUT * 2 + 30))}

# guest_timeout TEST: seconds for one guest test: GUEST_TIMEOUT, or more if
# the test has a header line "# guest-timeout: N" or "# timeout: N" (N seconds on the default
# flavour, scaled like GUEST_TIMEOUT on the debug one) or
# "# guest-timeout: N+stress" (the same plus STRESS_SECONDS, unscaled).
# (Scaled by SLOW on the checking kernels.)
guest_timeout() {
	local h n
	h=$(sed -n 's/^# \(guest-\)\{0,1\}timeout: *\([0-9][0-9]*\)\(+stress\)\{0,1\} *$/\2 \3/p' \
		"$1" | head -n 1)
	n=${h% *}
	[ -n "$n" ] || n=0
	n=$((n * SLOW))
	[ "${h#* }" = +stress ] && n=$((n + STRESS_SECONDS))
	[ "$n" -gt "$GUEST_TIMEOUT" ] || n=$GUEST_TIMEOUT
	echo "$n"
}
# guest_kargs TEST: the kernel arguments of its header line
# "# KFLAVOUR-kernel-args: ARGS" for this run's flavour (23 boots the debug
# kernel with lazy RCU callbacks, which the others must not see).
guest_kargs() {
	sed -n "s/^# $KFLAVOUR-kernel-args: *//p" "$1" | head -n 1
}
# GUEST_ENV="NAME=VALUE,...": more variables for the guest tests
# (scripts/bench-sync.sh: SYNC_COST=1).
# Guest seconds of load for the stress tests (maglev.stress, STRESS_SECONDS
# in the guest); "make stress" sets 600. (With 10 s the debug kernel's
# stress test opened only two TCP connections, too few to check.)
STRESS_SECONDS=${STRESS_SECONDS:-20}
# The modules a stock kernel loads before each test (the test kernels
# have them built in): IPVS and the schedulers the tests compare with,
# and the links the tests' namespaces use.
STOCK_MODS=(ip_vs ip_vs_rr ip_vs_wrr ip_vs_sh ip_vs_mh veth dummy bridge)
# karch: make's ARCH= for the module builds of a 32-bit kernel.
karch=()
case ${KARCH:-x86_64} in
x86_64)	;;
i386)	karch=(ARCH=i386)
	[ -z "${KSTOCK:-}" ] || die "KARCH=i386 is for the test kernel, not KSTOCK"
	export QEMU_ARCH=i386
	# Below the 896 MB a kernel without HIGHMEM maps.
	export QEMU_MEM=${QEMU_MEM:-768M}
	# gcc -m32 -static for the guest tools (gcc-multilib, in CHECK_PKGS:
	# installed before the steps start, so that none installs a package
	# while the newest step checks that this machine's apt is unchanged).
	need_pkgs gcc-multilib
	I386_TOOLS=(HOSTCC="gcc -m32 -static")
	USERLAND=$(i386_userland) || die "no 32-bit userspace for the i386 guest"
	export USERLAND ;;
*)	die "unknown KARCH '$KARCH' (x86_64 or i386)" ;;
esac
if [ -n "${KSTOCK:-}" ]; then
	# Debian's kernel is the default flavour: no debug timeouts or
	# arguments, no nosysctl checks.
	KFLAVOUR=default
	SLOW=1
	kname="Debian's kernel"
	mkernel=stock-$KSTOCK
	stock_kernel "$KSTOCK" || die "no Debian $KSTOCK cloud kernel"
	kver=$STOCK_VER
	if ! stock_headers "$KSTOCK" || [ "$STOCK_VER" != "$kver" ]; then
		die "no headers of Debian's $kver kernel"
	fi
	kdir=$STOCK_KDIR
	bzimage=$STOCK_ROOT/boot/vmlinuz-$kver
	vmw=vm-stock-$KSTOCK
else
	kname="test kernel"
	# stock_build makes the module here, on this machine.
	STOCK_SUITE=
	kdir=$("$TOP/scripts/build-kernel.sh")
	bzimage=$kdir/arch/x86/boot/bzImage
	# KSOURCE=newest (a test kernel of the newest Linux) has its own logs.
	vmw=vm-$KFLAVOUR
	[ "${KSOURCE:-6.12}" = 6.12 ] || vmw+=-$KSOURCE
	mkernel=$KFLAVOUR
	[ "${KARCH:-x86_64}" = x86_64 ] || { vmw+=-$KARCH; mkernel+=-$KARCH; }
fi
# What tests/manifest says this kernel runs. KUNIT_SUITES and GUEST_TESTS
# (by hand) choose a subset instead: the manifest check is then one SKIP.
m_guest=$(manifest "$mkernel" guest) || [ -n "${GUEST_TESTS:-}" ] ||
	die "tests/manifest lists no guest tests for the kernel '$mkernel' (GUEST_TESTS names them by hand)"
m_kunit=
m_boot=
if [ -z "${KSTOCK:-}" ]; then
	m_kunit=$(manifest "$mkernel" kunit) ||
		die "tests/manifest lists no KUnit suites for the kernel '$mkernel'"
	m_boot=$(manifest "$mkernel" boot) ||
		die "tests/manifest has no boot line for the kernel '$mkernel'"
fi
KUNIT_SUITES=${KUNIT_SUITES:-$m_kunit}
kunit_exact=
[ "$KUNIT_SUITES" = "$m_kunit" ] && kunit_exact=exact=1
w=$(work_dir "$vmw")
rm -rf "$w/root" "$w/tools"
mkdir -p "$w/root/maglev/kunit" "$w/root/maglev/tests" "$w/root/maglev/bin"
stage_sources "$w/src"

built=1
if [ ! -f "$w/src/Kbuild" ]; then
	fail "$kname: no Kbuild, module sources missing"
	built=0
elif stock_build "$kdir" "$w/src" "${karch[@]}" W=1 modules >"$w/module.log" 2>&1; then
	pass "$kname: build ip_vs_maglev.ko"
	cp "$w/src/ip_vs_maglev.ko" "$w/root/maglev/"
	if w1_warnings "$w/module.log" "$w/src"; then
		fail "$kname: ip_vs_maglev.ko: W=1 warnings (see $w/module.log)"
	else
		pass "$kname: ip_vs_maglev.ko builds W=1 clean"
	fi
else
	fail "$kname: build ip_vs_maglev.ko (see $w/module.log)"
	tail -n 30 "$w/module.log"
	built=0
fi

# The module is built with the sanitizers this kernel's boots must show
# (tests/manifest's boot line): their calls are in it (nm -u), so the
# module's own code is checked, not only the kernel's.
if [ -f "$w/root/maglev/ip_vs_maglev.ko" ]; then
	undef=$(nm -u "$w/root/maglev/ip_vs_maglev.ko" 2>/dev/null || true)
	for d in $m_boot; do
		case $d in
		kasan) sym=__asan_ ;;
		ubsan) sym=__ubsan_handle_ ;;
		kcsan) sym=__tsan_ ;;
		*) continue ;;
		esac
		if grep -q "^ *U $sym" <<<"$undef"; then
			pass "$kname: ip_vs_maglev.ko is built with $d (it calls $sym*)"
		else
			fail "$kname: ip_vs_maglev.ko is not built with $d (no $sym* call in it)"
		fi
	done
fi

# The kernel without sysctl support (kconfig/nosysctl.config): the sysctl
# code is left out, and the module builds W=1 clean there (above and
# below, with KUnit), as the compile step checks on the other trees.
if [ "$KFLAVOUR" = nosysctl ] &&
   grep -q '^CONFIG_SYSCTL=' "$kdir/include/config/auto.conf"; then
	fail "$kname: the nosysctl kernel has CONFIG_SYSCTL"
fi

# The KUnit suites are built into the module itself (MAGLEV_KUNIT=1, see
# Kbuild): the KUnit boot loads that one module, so exactly one "maglev"
# scheduler is registered while they run.
stage_sources "$w/src-kunit"
if [ ! -f "$w/src-kunit/kunit/maglev_glue_test.c" ]; then
	fail "$kname: kunit/ missing, no KUnit suites"
elif [ -n "${KSTOCK:-}" ]; then
	: # no CONFIG_KUNIT: the suites neither build nor run there
elif stock_build "$kdir" "$w/src-kunit" "${karch[@]}" W=1 MAGLEV_KUNIT=1 modules \
	>"$w/kunit.log" 2>&1; then
	pass "$kname: build ip_vs_maglev.ko with its KUnit suites"
	cp "$w/src-kunit/ip_vs_maglev.ko" "$w/root/maglev/kunit/"
	if w1_warnings "$w/kunit.log" "$w/src-kunit"; then
		fail "$kname: ip_vs_maglev.ko with KUnit: W=1 warnings (see $w/kunit.log)"
	else
		pass "$kname: ip_vs_maglev.ko with its KUnit suites builds W=1 clean"
	fi
else
	fail "$kname: build ip_vs_maglev.ko with its KUnit suites (see $w/kunit.log)"
	tail -n 30 "$w/kunit.log"
fi

if make -C "$TOP" BUILD="$w/tools" ${I386_TOOLS:+"${I386_TOOLS[@]}"} tools guest-tools \
	>"$w/tools.log" 2>&1; then
	find "$w/tools" -maxdepth 1 -type f -perm -u+x \
		-exec cp {} "$w/root/maglev/bin/" \;
	[ -f "$w/tools/maglev-sim" ] && cp "$w/tools/maglev-sim" "$w/root/maglev/"
else
	fail "$kname: make tools guest-tools (see $w/tools.log)"
	tail -n 30 "$w/tools.log"
fi

# All of tests/guest/ goes in (helpers too); NN-name.sh are the tests.
tests=()
if [ -d "$TOP/tests/guest" ]; then
	cp -r "$TOP/tests/guest/." "$w/root/maglev/tests/"
fi
# GUEST_TESTS="08-*" runs only the matching tests (globs, without .sh,
# separated by spaces: "01-* 02-*").
# Without it, the debug kernel runs the tests whose header says
# "# debug-kernel: yes" (the stress, failure-injection, teardown, unload,
# hardening and shared-table tests; docs/testing.md), the default
# kernel all of them.
# On Debian's kernels (KSTOCK) the tests are tests/manifest's alone.
globs_in=${GUEST_TESTS:-[0-9]*}
[ -n "${KSTOCK:-}" ] && [ -z "${GUEST_TESTS:-}" ] && globs_in=$m_guest
read -ra globs <<<"$globs_in"
for g in "${globs[@]}"; do
for t in "$TOP"/tests/guest/$g.sh; do
	[ -f "$t" ] || continue
	if [ "$KFLAVOUR" != default ] && [ -z "${GUEST_TESTS:-}" ] &&
	   ! grep -q "^# $KFLAVOUR-kernel: yes\$" "$t"; then
		continue
	fi
	tests+=("${t##*/}")
done
done

# The run against tests/manifest: every test it lists for this kernel is
# among those chosen, and every one chosen is listed.
if [ -n "${GUEST_TESTS:-}" ] || [ "$KUNIT_SUITES" != "$m_kunit" ]; then
	skip "$kname: tests/manifest's $mkernel tests and suites not all run (GUEST_TESTS='${GUEST_TESTS:-}' KUNIT_SUITES='$KUNIT_SUITES' chose a subset)"
else
	chosen=" ${tests[*]%.sh} "
	bad=
	for t in $m_guest; do
		case $chosen in
		*" $t "*) ;;
		*) fail "$kname: $t: tests/manifest lists it for $mkernel, but no such test was chosen (renamed, deleted, or its header lost?)"; bad=1 ;;
		esac
	done
	for t in "${tests[@]}"; do
		case " $m_guest " in
		*" ${t%.sh} "*) ;;
		*) fail "$kname: ${t%.sh}: chosen for $mkernel, but tests/manifest does not list it"; bad=1 ;;
		esac
	done
	[ -n "$bad" ] ||
		pass "$kname: the $(wc -w <<<"$m_guest") guest tests tests/manifest lists for $mkernel are the ones chosen"
fi

# The MH_COMPAT build (ip_vs_mh.ko) in /maglev/mh/, for the tests marked
# "# mh-compat: yes" (23: its load fails on this kernel, whose mh is built
# in, and must leave nothing behind).
for t in "${tests[@]}"; do
	grep -q '^# mh-compat: yes$' "$TOP/tests/guest/$t" || continue
	stage_sources "$w/src-mh"
	mkdir -p "$w/root/maglev/mh"
	if stock_build "$kdir" "$w/src-mh" "${karch[@]}" MH_COMPAT=1 modules >"$w/mh.log" 2>&1; then
		cp "$w/src-mh/ip_vs_mh.ko" "$w/root/maglev/mh/"
	else
		fail "$kname: build ip_vs_mh.ko with MH_COMPAT=1 (see $w/mh.log)"
		tail -n 30 "$w/mh.log"
	fi
	break
done

# Test builds of the module, for the tests with a header line
# "# module-build: NAME=VALUE ..." (27: MAGLEV_RACE=1, see
# Kbuild): built W=1 with those make variables, into
# /maglev/build/NN-name/ip_vs_maglev.ko, which that test's boot loads (and
# the test reloads: MAGLEV_KO) instead of the plain build.
declare -A test_ko=()
for t in "${tests[@]}"; do
	margs=$(sed -n 's/^# module-build: *//p' "$TOP/tests/guest/$t" | head -n 1)
	[ -n "$margs" ] || continue
	n=${t%.sh}
	read -ra mvars <<<"$margs"
	for v in "${mvars[@]}"; do
		[[ $v =~ ^[A-Z][A-Z0-9_]*=[A-Za-z0-9_.-]*$ ]] ||
			die "$t: module-build: '$v' is not NAME=VALUE"
	done
	stage_sources "$w/src-$n"
	if stock_build "$kdir" "$w/src-$n" "${karch[@]}" W=1 "${mvars[@]}" modules \
		>"$w/build-$n.log" 2>&1 &&
	   ! w1_warnings "$w/build-$n.log" "$w/src-$n"; then
		mkdir -p "$w/root/maglev/build/$n"
		cp "$w/src-$n/ip_vs_maglev.ko" "$w/root/maglev/build/$n/"
		test_ko[$t]=/maglev/build/$n/ip_vs_maglev.ko
	else
		fail "$kname: build ip_vs_maglev.ko with $margs for $t, W=1 clean (see $w/build-$n.log)"
		tail -n 30 "$w/build-$n.log"
	fi
done

# Builds of an older tree of this repository, for the tests with a header
# line "# old-module-build: COMMIT..." (31: 0.1, commit c749cec, to upgrade
# from): "git archive COMMIT" built against this kernel into
# /maglev/old/COMMIT/ip_vs_maglev.ko. Cached by commit and kernel tree in
# $MAGLEV_CACHE/old-module-COMMIT-HASH/ (HASH: of the tree's path, which
# names the kernel's version and configuration). Without the commit (no
# git history) that is a FAIL and the test does not run.
declare -A test_old_ok=()
for t in "${tests[@]}"; do
	olds=$(sed -n 's/^# old-module-build: *//p' "$TOP/tests/guest/$t" | head -n 1)
	[ -n "$olds" ] || continue
	test_old_ok[$t]=1
	for c in $olds; do
		[[ $c =~ ^[0-9a-f]{7,40}$ ]] ||
			die "$t: old-module-build: '$c' is not a commit id"
		od="$(cache_root)/old-module-$c-$(printf '%s' "$kdir" | sha256sum | cut -c1-12)"
		if [ ! -f "$od/ip_vs_maglev.ko" ]; then
			rm -rf "$od"
			mkdir -p "$od/src"
			if ! git -C "$TOP" rev-parse -q --verify "$c^{commit}" >/dev/null ||
			   ! git -C "$TOP" archive --format=tar "$c" | tar -C "$od/src" -xf - ||
			   ! stock_build "$kdir" "$od/src" "${karch[@]}" modules >"$od/build.log" 2>&1 ||
			   [ ! -f "$od/src/ip_vs_maglev.ko" ]; then
				fail "$kname: build ip_vs_maglev.ko of commit $c for $t (see $od/build.log; git history needed)"
				tail -n 20 "$od/build.log" 2>/dev/null || true
				test_old_ok[$t]=0
				continue
			fi
			cp "$od/src/ip_vs_maglev.ko" "$od/"
		fi
		mkdir -p "$w/root/maglev/old/$c"
		cp "$od/ip_vs_maglev.ko" "$w/root/maglev/old/$c/"
	done
done

# nft (Debian's nftables, its libraries copied by mkinitramfs.sh) marks
# packets for the fwmark services (28); the test kernel has nf_tables
# (kconfig/default.config). Not in the 32-bit guest: this machine's nft
# is a 64-bit program.
if [ -z "${karch[*]}" ]; then
	need_pkgs nftables
	mkdir -p "$w/root/usr/sbin"
	cp /usr/sbin/nft "$w/root/usr/sbin/"
fi

if [ -n "${KSTOCK:-}" ] &&
   ! stock_modules "$STOCK_ROOT" "$kver" "$w/root/maglev" "${STOCK_MODS[@]}"; then
	fail "$kname: gather ${STOCK_MODS[*]} from Debian's $kver"
	built=0
fi
"$TOP/scripts/mkinitramfs.sh" "$w/initramfs.cpio" "$w/root"

# The boots run GUEST_LANES at a time (default 1; qemu-run.sh's guest
# slots decide how many of all make check's guests run at once; make
# check gives the default kernel's step two, scripts/check.sh), and are
# judged in order when all have ended. Each boot is its
# own guest: the lanes share nothing but the host.
GUEST_LANES=${GUEST_LANES:-1}
case $GUEST_LANES in ''|*[!0-9]*|0) die "GUEST_LANES must be a positive number" ;; esac
# run_boot LABEL [KERNEL ARGS...]: vm_run of the test kernel, in a lane.
run_boot() {
	local label=$1
	shift
	while [ "$(jobs -rp | wc -l)" -ge "$GUEST_LANES" ]; do
		wait -n || true
	done
	vm_run "$label" "$bzimage" "$w/initramfs.cpio" "$w" "" "$@" &
}

labels=()
# What every boot must show (guest-init.sh, check_boot).
bootarg=()
[ -z "$m_boot" ] || bootarg=("maglev.boot=${m_boot// /,}")
[ -n "${KSTOCK:-}" ] || run_boot kunit maglev.job=kunit "${bootarg[@]}"
if [ ${#tests[@]} -eq 0 ]; then
	fail "guest: no tests in tests/guest/"
elif [ "$built" -eq 0 ]; then
	fail "guest: ${#tests[@]} tests not run, ip_vs_maglev.ko did not build"
else
	for t in "${tests[@]}"; do
		tmo=$(guest_timeout "$TOP/tests/guest/$t")
		read -ra kargs <<<"$(guest_kargs "$TOP/tests/guest/$t")"
		# Its test build failed (a FAIL above): not run with another.
		if grep -q '^# module-build: ' "$TOP/tests/guest/$t"; then
			[ -n "${test_ko[$t]:-}" ] || continue
			kargs+=("maglev.ko=${test_ko[$t]}")
		fi
		# Its build of an older tree failed (a FAIL above): not run.
		[ "${test_old_ok[$t]:-1}" = 1 ] || continue
		labels+=("guest/${t%.sh}")
		QEMU_TIMEOUT=${QEMU_TIMEOUT_SET:-$((tmo * 2 + 30))} \
			run_boot "guest/${t%.sh}" "maglev.job=test:$t" \
			"maglev.timeout=$tmo" "maglev.stress=$STRESS_SECONDS" \
			${GUEST_ENV:+"maglev.env=$GUEST_ENV"} "${bootarg[@]}" "${kargs[@]}"
	done
fi
wait
if [ -z "${KSTOCK:-}" ]; then
	before=$PASSED
	vm_judge kunit "$w" "$KUNIT_SUITES" $kunit_exact
	# Which Linux KUnit ran on, for check.sh's list of the platforms.
	if [ "${KSOURCE:-6.12}" != 6.12 ] || [ -n "${karch[*]}" ] &&
	   [ "$PASSED" -gt "$before" ]; then
		kver=$(make -s -C "$kdir" kernelversion)
		arch=${KARCH:-x86_64}
		echo "TESTED: linux-$kver${karch[*]:+-$arch}: KUnit on Linux $kver ($KFLAVOUR test kernel, $arch): $((PASSED - before)) passed"
	fi
fi
for l in "${labels[@]}"; do
	vm_judge "$l" "$w" "" finish=1
	# The guest ran the kernel meant: Debian's package, not another.
	if [ -n "${KSTOCK:-}" ] &&
	   ! tr -d '\r' <"$w/${l//\//-}.results" | grep -qxF "@@ UNAME $kver"; then
		fail "$l: the guest did not report running Debian's $kver"
	fi
done
summary
