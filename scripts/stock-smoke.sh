#!/bin/bash
# stock-smoke.sh: boot Debian's stock 6.12 cloud kernel under QEMU, load its
# ip_vs (and dependencies, from /lib/modules) and our module built against
# the stock headers, then add a maglev service with three real servers,
# list, delete and unload (scripts/stock-smoke-guest.sh).
# Logs: build/check/stock/.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vmlib.sh"

need_pkgs "${BUILD_PKGS[@]}" linux-image-6.12-cloud-amd64 \
	linux-headers-6.12-cloud-amd64
ver=$(stock_kver) || die "no Debian 6.12 cloud kernel with image, modules and headers"
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
: >"$w/root/maglev/deps.list"
modprobe -S "$ver" --show-depends ip_vs | awk '$1 == "insmod" { print $2 }' |
	while read -r ko; do
		name=${ko##*/}
		name=${name%.xz}
		name=${name%.zst}
		grep -qx "$name" "$w/root/maglev/deps.list" && continue
		case $ko in
		*.xz) xz -dc "$ko" ;;
		*.zst) zstd -dcq "$ko" ;;
		*) cat "$ko" ;;
		esac >"$w/root/maglev/deps/$name"
		echo "$name" >>"$w/root/maglev/deps.list"
	done
cp "$TOP/scripts/stock-smoke-guest.sh" "$w/root/maglev/tests/stock-smoke.sh"

"$TOP/scripts/mkinitramfs.sh" "$w/initramfs.cpio" "$w/root"
vm_boot stock-smoke "/boot/vmlinuz-$ver" "$w/initramfs.cpio" "$w" "" \
	maglev.job=test:stock-smoke.sh
summary
