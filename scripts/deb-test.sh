#!/bin/bash
# deb-test.sh: "make deb" builds ip-vs-maglev-dkms and ip-vs-mh-maglev-dkms
# (scripts/mkdeb.sh); each is unpacked into a throwaway root (dpkg-deb -x,
# not installed), its module is built by DKMS from that root's /usr/src in
# a private DKMS tree (build/check/deb/tree, throwaway signing key: the
# system's DKMS state is untouched) for Debian's stock 6.12 cloud kernel,
# whose headers come from the cache (stock_headers in lib.sh), and both
# built modules are loaded and used in that kernel under QEMU
# (scripts/deb-test-guest.sh). Results are named "deb: ...".
# Logs: build/check/deb/.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vmlib.sh"

PATH=$PATH:/usr/sbin:/sbin
need_pkgs "${BUILD_PKGS[@]}" dkms debhelper dh-dkms dpkg-dev busybox-static \
	ipvsadm iproute2 socat qemu-system-x86
w=$(work_dir deb)
label=deb
rm -rf "$w/out" "$w/tree" "$w/root" "$w/unpacked"
mkdir -p "$w/tree" "$w/root/maglev/tests"

if ! "$TOP/scripts/mkdeb.sh" "$w/out" >"$w/mkdeb.log" 2>&1; then
	fail "$label: make deb (see $w/mkdeb.log)"
	tail -n 20 "$w/mkdeb.log"
	summary
	exit
fi
if ! stock_kernel 6.12 || ! stock_headers 6.12; then
	fail "$label: get Debian's stock 6.12 cloud kernel and its headers"
	summary
	exit
fi
ver=$STOCK_VER
pkgver=$(sed -n 's/^PACKAGE_VERSION="\?\([^"]*\)"\?$/\1/p' "$TOP/dkms.conf")

# Sign with a throwaway key instead of creating /var/lib/dkms/mok.key.
export mok_signing_key=$w/mok.key mok_certificate=$w/mok.pub

# dkms_pkg PACKAGE DKMS_NAME MODULE: unpack PACKAGE's .deb, build DKMS_NAME
# from it in the private tree, copy MODULE.ko into the guest's /maglev/.
dkms_pkg() {
	local pkg=$1 name=$2 mod=$3 deb root ko
	deb=$(find "$w/out" -maxdepth 1 -name "${pkg}_*_all.deb" | head -n 1)
	if [ -z "$deb" ]; then
		fail "$label: make deb built no $pkg"
		return 1
	fi
	pass "$label: make deb built ${deb##*/}"
	root=$w/unpacked/$pkg
	mkdir -p "$root"
	if ! dpkg-deb -x "$deb" "$root"; then
		fail "$label: dpkg-deb -x ${deb##*/}"
		return 1
	fi
	if dpkg-deb -f "$deb" Depends | grep -q dkms &&
	   dpkg-deb --ctrl-tarfile "$deb" | tar -xOf - ./postinst |
		grep -q "DKMS_NAME=$name\$"; then
		pass "$label: $pkg depends on dkms and its postinst registers $name"
	else
		fail "$label: $pkg lacks the dkms dependency or postinst"
	fi
	local dkms=(dkms --dkmstree "$w/tree" --sourcetree "$root/usr/src")
	if "${dkms[@]}" add -m "$name" -v "$pkgver" >>"$w/dkms.log" 2>&1 &&
	   "${dkms[@]}" build -m "$name" -v "$pkgver" -k "$ver" \
		--kernelsourcedir "$STOCK_KDIR" >>"$w/dkms.log" 2>&1; then
		ko=$(find "$w/tree/$name/$pkgver/$ver" -name "$mod.ko*" |
			head -n 1)
	else
		ko=
	fi
	if [ -z "$ko" ]; then
		fail "$label: dkms build of $pkg for $ver (see $w/dkms.log)"
		tail -n 20 "$w/dkms.log"
		find "$w/tree" -name make.log -exec tail -n 20 {} \;
		return 1
	fi
	pass "$label: dkms builds $mod.ko from $pkg for $ver"
	case $ko in
	*.xz) xz -dc "$ko" ;;
	*.zst) zstd -dcq "$ko" ;;
	*) cat "$ko" ;;
	esac >"$w/root/maglev/$mod.ko"
	"${dkms[@]}" remove -m "$name" -v "$pkgver" --all >>"$w/dkms.log" 2>&1 ||
		fail "$label: dkms remove $name"
}

ok=1
dkms_pkg ip-vs-maglev-dkms ip_vs_maglev ip_vs_maglev || ok=0
dkms_pkg ip-vs-mh-maglev-dkms ip-vs-mh-maglev ip_vs_mh || ok=0
if [ "$ok" -eq 1 ] &&
   stock_modules "$STOCK_ROOT" "$ver" "$w/root/maglev" ip_vs; then
	cp "$TOP/scripts/deb-test-guest.sh" "$w/root/maglev/tests/deb.sh"
	cp "$TOP/scripts/stock-smoke-guest.sh" "$w/root/maglev/tests/stock-smoke.sh"
	"$TOP/scripts/mkinitramfs.sh" "$w/initramfs.cpio" "$w/root"
	vm_boot "$label" "$STOCK_ROOT/boot/vmlinuz-$ver" "$w/initramfs.cpio" \
		"$w" "" maglev.job=test:deb.sh
else
	fail "$label: nothing to boot"
fi
summary
