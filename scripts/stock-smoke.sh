#!/bin/bash
# stock-smoke.sh: boot Debian's stock 6.12 cloud kernel under QEMU, load its
# ip_vs (and dependencies) and our module built against the stock headers,
# then add a maglev service with three real servers, list, delete and
# unload (scripts/stock-smoke-guest.sh). The kernel and its modules come
# from the linux-image .deb matching the installed headers, unpacked into
# the cache (stock_kernel in lib.sh); nothing is installed.
# Logs: build/check/stock/.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vmlib.sh"

need_pkgs "${BUILD_PKGS[@]}" linux-headers-6.12-cloud-amd64
stock_kernel || die "cannot get Debian's stock 6.12 cloud kernel"
ver=$STOCK_VER
w=$(work_dir stock)
rm -rf "$w/root"
mkdir -p "$w/root/maglev/deps" "$w/root/maglev/tests"
stage_sources "$w/src"

if [ ! -f "$w/src/Kbuild" ]; then
	fail "stock $ver: no Kbuild, module sources missing"
	summary
	exit
fi
if ! make -C "/usr/src/linux-headers-$ver" M="$w/src" modules \
	>"$w/module.log" 2>&1; then
	fail "stock $ver: build ip_vs_maglev.ko (see $w/module.log)"
	tail -n 30 "$w/module.log"
	summary
	exit
fi
cp "$w/src/ip_vs_maglev.ko" "$w/root/maglev/"

# ip_vs and what it needs, in load order, decompressed for busybox insmod.
if ! stock_modules "$STOCK_ROOT" "$ver" "$w/root/maglev" ip_vs; then
	fail "stock $ver: gather ip_vs and its dependencies"
	summary
	exit
fi
cp "$TOP/scripts/stock-smoke-guest.sh" "$w/root/maglev/tests/stock-smoke.sh"

"$TOP/scripts/mkinitramfs.sh" "$w/initramfs.cpio" "$w/root"
vm_boot stock-smoke "$STOCK_ROOT/boot/vmlinuz-$ver" "$w/initramfs.cpio" "$w" "" \
	maglev.job=test:stock-smoke.sh
summary
