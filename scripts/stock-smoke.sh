#!/bin/bash
# stock-smoke.sh: boot each of Debian's stock cloud kernels, 6.1 (Debian
# 12's default, linux-headers-cloud-amd64) and 6.12
# (linux-headers-6.12-cloud-amd64), under QEMU, load its ip_vs (and
# dependencies) and our module built against its headers, then add a
# maglev service with three real servers, list it with ipvsadm and in
# /proc/net/ip_vs_maglev, delete it and unload (scripts/stock-smoke-guest.sh).
# Each kernel and its modules come from its linux-image .deb, its headers
# from the linux-headers .debs, unpacked into the cache (stock_kernel and
# stock_headers in lib.sh); nothing is installed. Results are named "stock-6.1: ..." and
# "stock-6.12: ...".
# The third kernel is the newest cloud kernel of trixie-backports and sid
# (series "newest", found at run time through the private apt
# configurations; results "stock-7.3.4: ..."): its kbuild tools need
# trixie's C library and gcc-14, so the module is built in an mmdebstrap
# root of that suite (stock_build, suite_kbuild_root in lib.sh).
# Logs: build/check/stock/<series>/.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vmlib.sh"

# STOCK_SERIES="newest" runs a subset.
read -ra SERIES <<<"${STOCK_SERIES:-6.1 6.12 newest}"
need_pkgs "${BUILD_PKGS[@]}"
w=$(work_dir stock)

# smoke SERIES: the smoke test on Debian's stock SERIES cloud kernel, with
# its own build, initramfs and logs in $w/SERIES/.
smoke() {
	local series=$1 label="stock-$1" d="$w/$1" ver
	rm -rf "$d"
	mkdir -p "$d/root/maglev/deps" "$d/root/maglev/tests"
	if ! stock_kernel "$series"; then
		fail "$label: get Debian's stock $series cloud kernel"
		return
	fi
	ver=$STOCK_VER
	[ "$series" = newest ] && label=stock-${ver%%[+-]*}
	if ! stock_headers "$series" || [ "$STOCK_VER" != "$ver" ]; then
		fail "$label: get the headers of Debian's stock $series cloud kernel"
		return
	fi
	stage_sources "$d/src"
	if [ ! -f "$d/src/Kbuild" ]; then
		fail "$label: no Kbuild, module sources missing"
		return
	fi
	if ! stock_build "$STOCK_KDIR" "$d/src" modules \
		>"$d/module.log" 2>&1; then
		fail "$label: build ip_vs_maglev.ko against $ver (see $d/module.log)"
		tail -n 30 "$d/module.log"
		return
	fi
	cp "$d/src/ip_vs_maglev.ko" "$d/root/maglev/"

	# ip_vs and what it needs (on 6.1 also libcrc32c and its soft
	# dependency crc32c-intel), in load order, decompressed if need be.
	if ! stock_modules "$STOCK_ROOT" "$ver" "$d/root/maglev" ip_vs; then
		fail "$label: gather ip_vs and its dependencies from $ver"
		return
	fi
	cp "$TOP/scripts/stock-smoke-guest.sh" "$d/root/maglev/tests/stock-smoke.sh"

	"$TOP/scripts/mkinitramfs.sh" "$d/initramfs.cpio" "$d/root"
	vm_boot "$label" "$STOCK_ROOT/boot/vmlinuz-$ver" "$d/initramfs.cpio" \
		"$d" "" maglev.job=test:stock-smoke.sh
	if tr -d '\r' <"$d/$label.results" | grep -qxF "@@ UNAME $ver"; then
		pass "$label: guest ran $ver"
	else
		fail "$label: guest did not report running $ver"
	fi
}

for s in "${SERIES[@]}"; do
	smoke "$s"
done
summary
