#!/bin/bash
# mkinitramfs.sh OUT DIR...
#
# Write an uncompressed initramfs to OUT: busybox (static), ipvsadm, ip,
# socat, scripts/guest-init.sh as /init, and the contents of each DIR copied
# to /. Shared libraries of every dynamic executable (found with ldd) are
# copied along.
# USERLAND=DIR (a 32-bit guest, KARCH=i386): busybox, ipvsadm and ip come
# from DIR (lib.sh i386_userland: Debian's i386 packages, their libraries
# in DIR too), not from this machine, and there is no socat; the programs
# of the DIRs must then be static (ldd is not run on them).
set -eu
. "$(dirname "$0")/lib.sh"

[ $# -ge 1 ] || die "usage: $0 OUT [DIR...]"
out=$1
shift
if [ -z "${USERLAND:-}" ]; then
	need_pkgs busybox-static ipvsadm iproute2 socat cpio
else
	need_pkgs cpio
fi

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,run,maglev}
if [ -z "${USERLAND:-}" ]; then
	cp /bin/busybox "$root/bin/busybox"
	cp /usr/sbin/ipvsadm /usr/sbin/ip "$root/usr/sbin/"
	cp /usr/bin/socat "$root/usr/bin/"
else
	for f in bin/busybox usr/sbin/ipvsadm usr/sbin/ip; do
		[ -x "$USERLAND/$f" ] || die "USERLAND=$USERLAND lacks $f"
	done
	cp -a "$USERLAND/." "$root/"
fi
ln -s busybox "$root/bin/sh"
ln -s ../bin/busybox "$root/sbin/modprobe"
install -m 0755 "$TOP/scripts/guest-init.sh" "$root/init"
echo 'root:x:0:0:root:/tmp:/bin/sh' >"$root/etc/passwd"
echo 'root:x:0:' >"$root/etc/group"
printf '127.0.0.1\tlocalhost\n::1\tlocalhost\n' >"$root/etc/hosts"

for d in "$@"; do
	cp -a "$d/." "$root/"
done

# Copy the libraries of every dynamic ELF executable (this machine's).
[ -n "${USERLAND:-}" ] ||
find "$root" -type f -perm -u+x ! -name '*.ko' | while read -r f; do
	[ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
	ldd "$f" 2>/dev/null | grep -o '/[^ ]*' || true
done | sort -u | while read -r lib; do
	[ -e "$root$lib" ] && continue
	mkdir -p "$root${lib%/*}"
	cp -L "$lib" "$root$lib"
done

(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$out"
