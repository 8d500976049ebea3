#!/bin/bash
# compile-test.sh: build ip_vs_maglev.ko with W=1 against Debian's stock
# 6.1 and 6.12 cloud headers, and it and the KUnit module against the test
# kernel (the stock kernels lack CONFIG_KUNIT).
# Any compiler or modpost warning about our files is a failure.
# Logs: build/check/compile/.
set -eu
. "$(dirname "$0")/lib.sh"

need_pkgs "${BUILD_PKGS[@]}" linux-headers-cloud-amd64 \
	linux-headers-6.12-cloud-amd64
w=$(work_dir compile)

# compile NAME KDIR
compile() {
	local name=$1 kdir=$2 src="$w/src-$1" log="$w/$1.log" m
	stage_sources "$src"
	if [ ! -f "$src/Kbuild" ]; then
		fail "compile $name: module sources missing (no Kbuild)"
		return
	fi
	: >"$log"
	for m in "$src" "$src/kunit"; do
		[ -f "$m/Kbuild" ] || continue
		# The KUnit module needs a kernel with CONFIG_KUNIT.
		[ "$m" = "$src/kunit" ] &&
			! grep -q '^CONFIG_KUNIT=' "$kdir/include/config/auto.conf" &&
			continue
		if ! make -C "$kdir" M="$m" W=1 modules >>"$log" 2>&1; then
			fail "compile $name: build failed in ${m#"$src"/} (see $log)"
			grep -E 'error|warning' "$log" | head -n 20
			return
		fi
	done
	if { grep -E ': (warning|error):' "$log" | grep -F "$src/";
	     grep 'WARNING: modpost:' "$log"; } | sed "s|$src/||g" | grep .; then
		fail "compile $name: W=1 warnings (see $log)"
	else
		pass "compile $name: W=1 clean"
	fi
}

found=0
for kdir in /usr/src/linux-headers-6.1.*-cloud-amd64 \
	    /usr/src/linux-headers-6.12.*-cloud-amd64; do
	[ -d "$kdir" ] || continue
	found=$((found + 1))
	compile "${kdir#/usr/src/linux-headers-}" "$kdir"
done
[ "$found" -ge 2 ] || fail "compile: Debian 6.1 and 6.12 cloud headers not both found"
compile test-kernel "$("$TOP/scripts/build-kernel.sh")"
summary
