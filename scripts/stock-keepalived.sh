#!/bin/bash
# stock-keepalived.sh: keepalived and kube-proxy's IPVS sequences drive the
# mh-compatible build (make MH_COMPAT=1: ip_vs_mh.ko, scheduler "mh")
# unchanged, on Debian's stock 6.12 cloud kernel under QEMU, where the
# in-tree ip_vs_mh is a module (the test kernel has it built in, so ours
# could not register "mh" there).
#
# Host side: builds ip_vs_mh.ko against the stock headers, lays out
# lib/modules/VER/ in the initramfs as an install leaves it (the in-tree
# kernel/.../ip_vs_mh.ko and ours in updates/, depmod run) and checks that
# modprobe resolves ip_vs_mh to ours; takes keepalived from Debian's
# package (apt-get download, unpacked into the cache: nothing is
# installed, no service starts on this machine) with the libraries it
# links; boots the guest, which runs scripts/stock-keepalived-guest.sh.
# Results are named "keepalived ..." and "kube-proxy ...".
# Logs: build/check/keepalived/.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vmlib.sh"

PATH=$PATH:/usr/sbin:/sbin
# keepalived's shared libraries must be on this machine for mkinitramfs.sh
# (ldd) to copy them: keepalived_pkg installs its Depends (libraries, no
# daemon), read from the package itself.
need_pkgs "${BUILD_PKGS[@]}" busybox-static ipvsadm iproute2 socat \
	qemu-system-x86
w=$(work_dir keepalived)
label=keepalived
rm -rf "$w/root" "$w/src" "$w/tools"
mkdir -p "$w/root/maglev/tests" "$w/root/maglev/bin" "$w/root/usr/sbin"

# keepalived_pkg: Debian's keepalived unpacked into the cache; sets KA_ROOT.
keepalived_pkg() {
	local ver dir
	ver=$(apt-cache policy keepalived 2>/dev/null |
		sed -n 's/^ *Candidate: //p')
	if [ -z "$ver" ] || [ "$ver" = '(none)' ]; then
		log "apt-cache knows no keepalived package"
		return 1
	fi
	dir="$(cache_root)/keepalived-${ver//[^A-Za-z0-9.-]/_}-r$STOCK_RECIPE"
	if [ ! -f "$dir/.ready" ]; then
		mkdir -p "$dir"
		( flock 9
		  [ -f "$dir/.ready" ] && exit 0
		  rm -rf "$dir/dl" "$dir/root"
		  mkdir -p "$dir/dl"
		  log "downloading keepalived=$ver into $dir"
		  (cd "$dir/dl" && apt-get -q download "keepalived=$ver") \
			>"$dir/download.log" 2>&1 || exit 1
		  deb_depends "$dir"/dl/*.deb >"$dir/depends" || exit 1
		  dpkg-deb -x "$dir"/dl/*.deb "$dir/root" || exit 1
		  rm -rf "$dir/dl"
		  touch "$dir/.ready" ) 9>"$dir.lock" || {
			log "cannot download keepalived $ver (see $dir/download.log)"
			return 1
		}
	fi
	( need_deb_depends "$dir/depends" ) || return 1
	KA_ROOT=$dir/root
}

if ! stock_kernel 6.12 || ! stock_headers 6.12; then
	fail "$label: get Debian's stock 6.12 cloud kernel and its headers"
	summary
	exit
fi
ver=$STOCK_VER
if ! keepalived_pkg; then
	fail "$label: get Debian's keepalived package"
	summary
	exit
fi
cp "$KA_ROOT/usr/sbin/keepalived" "$w/root/usr/sbin/"

stage_sources "$w/src"
if ! make -C "$STOCK_KDIR" M="$w/src" MH_COMPAT=1 modules \
	>"$w/module.log" 2>&1 || [ ! -f "$w/src/ip_vs_mh.ko" ]; then
	fail "$label: make MH_COMPAT=1 against $ver (see $w/module.log)"
	tail -n 30 "$w/module.log"
	summary
	exit
fi
if [ "$(modinfo -F name "$w/src/ip_vs_mh.ko")" = ip_vs_mh ]; then
	pass "$label: make MH_COMPAT=1 builds ip_vs_mh.ko"
else
	fail "$label: make MH_COMPAT=1 built a module not named ip_vs_mh"
fi

if ! make -C "$TOP" BUILD="$w/tools" tools guest-tools >"$w/tools.log" 2>&1; then
	fail "$label: make tools guest-tools (see $w/tools.log)"
	tail -n 30 "$w/tools.log"
	summary
	exit
fi
cp "$w/tools/maglev-sim" "$w/root/maglev/"
cp "$w/tools/udpflows" "$w/root/maglev/bin/"

# ip_vs and veth preloaded by guest-init.sh (deps.list); lib/modules/VER
# as an install leaves it: ip_vs and its dependencies, the in-tree ip_vs_mh
# (and ip_vs_wlc, keepalived's fallback) under kernel/, ours under
# updates/.
if ! stock_modules "$STOCK_ROOT" "$ver" "$w/root/maglev" ip_vs veth ||
   ! stock_modules "$STOCK_ROOT" "$ver" "$w/mh" ip_vs_mh ip_vs_wlc; then
	fail "$label: gather ip_vs, veth and ip_vs_mh from $ver"
	summary
	exit
fi
md=$w/root/lib/modules/$ver
mkdir -p "$md/kernel/net/netfilter/ipvs" "$md/updates"
cp "$STOCK_ROOT/lib/modules/$ver"/modules.{order,builtin,builtin.modinfo} "$md/"
cp "$w"/root/maglev/deps/*.ko "$md/kernel/"
cp "$w/mh/deps/ip_vs_mh.ko" "$w/mh/deps/ip_vs_wlc.ko" \
	"$md/kernel/net/netfilter/ipvs/"
cp "$w/src/ip_vs_mh.ko" "$md/updates/"
depmod -C /dev/null -b "$w/root" "$ver" 2>"$w/depmod.log"
# -C /dev/null: none of this machine's depmod.d; the built-in search order
# ("updates built-in") still puts updates/ first.
got=$(modprobe -C /dev/null -d "$w/root" -S "$ver" --show-depends ip_vs_mh |
	awk '$1 == "insmod" { f = $2 } END { print f }')
if [ "$got" = "$md/updates/ip_vs_mh.ko" ]; then
	pass "$label: with ours in updates/, modprobe ip_vs_mh resolves to ours, not the in-tree one"
else
	fail "$label: modprobe ip_vs_mh resolves to '${got#"$w"/root}', not updates/ip_vs_mh.ko"
fi

cp "$TOP/scripts/stock-keepalived-guest.sh" "$w/root/maglev/tests/keepalived.sh"
cp "$TOP/tests/guest/lib.sh" "$w/root/maglev/tests/lib.sh"
"$TOP/scripts/mkinitramfs.sh" "$w/initramfs.cpio" "$w/root"
export QEMU_TIMEOUT=${QEMU_TIMEOUT:-360}
vm_boot "$label" "$STOCK_ROOT/boot/vmlinuz-$ver" "$w/initramfs.cpio" "$w" \
	"" maglev.job=test:keepalived.sh maglev.ko=none \
	maglev.timeout=$((QEMU_TIMEOUT - 40))
summary
