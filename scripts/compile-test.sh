#!/bin/bash
# compile-test.sh: build ip_vs_maglev.ko with W=1 against Debian's stock
# 6.1 and 6.12 cloud headers, and it and the KUnit module against the test
# kernel (the stock kernels lack CONFIG_KUNIT).
# Any compiler or modpost warning about our files is a failure. The stock
# headers come from the cache (stock_headers in lib.sh), not /usr/src.
# Logs: build/check/compile/.
set -eu
. "$(dirname "$0")/lib.sh"

need_pkgs "${BUILD_PKGS[@]}"
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

# The stock headers are downloaded into the cache, not installed
# (stock_headers in lib.sh).
for series in 6.1 6.12; do
	if stock_headers "$series"; then
		compile "$STOCK_VER" "$STOCK_KDIR"
	else
		fail "compile: get the headers of Debian's $series cloud kernel"
	fi
done
compile test-kernel "$("$TOP/scripts/build-kernel.sh")"
summary
