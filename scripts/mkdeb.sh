#!/bin/bash
# mkdeb.sh OUTDIR ("make deb"): build the Debian packages
#   ip-vs-maglev-dkms     DKMS module ip_vs_maglev, scheduler "maglev"
#   ip-vs-mh-maglev-dkms  DKMS module ip-vs-mh-maglev: the same sources built
#                         with MH_COMPAT=1 as ip_vs_mh.ko, scheduler "mh",
#                         for keepalived and kube-proxy; DKMS installs it
#                         under updates/, which modprobe prefers to the
#                         in-tree ip_vs_mh; removing the package gives the
#                         in-tree module back
# with debhelper and dh-dkms from the Debian archive (installed with
# apt-get if missing), into OUTDIR (default build/deb). The two packages
# conflict: both create /proc/net/ip_vs_maglev, so only one of them can be
# loaded at a time. The version is dkms.conf's PACKAGE_VERSION.
set -eu
. "$(dirname "$0")/lib.sh"

out=${1:-$TOP/build/deb}
need_pkgs debhelper dh-dkms dpkg-dev dkms
mkdir -p "$out"
out=$(cd "$out" && pwd)
ver=$(sed -n 's/^PACKAGE_VERSION="\?\([^"]*\)"\?$/\1/p' "$TOP/dkms.conf")
[ -n "$ver" ] || die "no PACKAGE_VERSION in dkms.conf"

src=$out/src/ip-vs-maglev-$ver
rm -rf "$out/src"
stage_sources "$src"
rm -rf "$src/kunit"
d=$src/debian
mkdir -p "$d/source"
echo '3.0 (native)' >"$d/source/format"

cat >"$d/control" <<'EOF'
Source: ip-vs-maglev
Section: kernel
Priority: optional
Maintainer: ip_vs_maglev developers <ip-vs-maglev@localhost>
Build-Depends: debhelper-compat (= 13), dh-sequence-dkms
Rules-Requires-Root: no
Standards-Version: 4.6.2

Package: ip-vs-maglev-dkms
Architecture: all
Depends: ${misc:Depends}
Recommends: ipvsadm
Conflicts: ip-vs-mh-maglev-dkms
Description: IPVS Maglev-hashing scheduler "maglev" (DKMS)
 The ip_vs_maglev kernel module adds the scheduler "maglev" to IPVS:
 Maglev consistent hashing with an order-independent table, exact
 weights, IPv6 and port hashing, built off to the side and published
 atomically. DKMS builds it for each installed kernel.

Package: ip-vs-mh-maglev-dkms
Architecture: all
Depends: ${misc:Depends}
Recommends: ipvsadm
Conflicts: ip-vs-maglev-dkms
Description: IPVS Maglev-hashing scheduler registered as "mh" (DKMS)
 The same scheduler as ip-vs-maglev-dkms, built as ip_vs_mh.ko under the
 name "mh", so that control planes that accept only the names they know
 (keepalived's lb_algo mh, kube-proxy's IPVS mode with mh) use it
 unchanged. DKMS installs it under updates/, ahead of the kernel's own
 ip_vs_mh; removing the package gives the kernel's module back. Kernels
 with CONFIG_IP_VS_MH=y (built in) cannot switch.
EOF

cat >"$d/changelog" <<EOF
ip-vs-maglev ($ver) unstable; urgency=medium

  * Built by "make deb" from the ip_vs_maglev source tree.

 -- ip_vs_maglev developers <ip-vs-maglev@localhost>  $(date -R -d @"${SOURCE_DATE_EPOCH:-0}")
EOF

cat >"$d/copyright" <<'EOF'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: ip_vs_maglev

Files: *
Copyright: ip_vs_maglev developers
License: GPL-2
 On Debian systems the full text of the GNU General Public License
 version 2 is in /usr/share/common-licenses/GPL-2.
EOF

# Sources only: DKMS builds the module on the user's machine.
cat >"$d/rules" <<'EOF'
#!/usr/bin/make -f
%:
	dh $@

override_dh_auto_configure override_dh_auto_build override_dh_auto_test \
override_dh_auto_install override_dh_auto_clean:
EOF
chmod +x "$d/rules"

# The DKMS sources: the module's files, as "make" builds them.
files=(Kbuild Makefile include maglev_main.c maglev_build.c maglev_proc.c maglev_table.c maglev_excl.c)
for f in "${files[@]}"; do
	echo "$f usr/src/ip_vs_maglev-$ver/"
done >"$d/ip-vs-maglev-dkms.install"
for f in "${files[@]}"; do
	echo "$f usr/src/ip-vs-mh-maglev-$ver/"
done >"$d/ip-vs-mh-maglev-dkms.install"
cp "$TOP/dkms.conf" "$d/ip-vs-maglev-dkms.dkms"
cat >"$d/ip-vs-mh-maglev-dkms.dkms" <<EOF
# DKMS description of the mh-compatible build (make MH_COMPAT=1).
PACKAGE_NAME="ip-vs-mh-maglev"
PACKAGE_VERSION="$ver"
BUILT_MODULE_NAME[0]="ip_vs_mh"
# Debian's DKMS installs into updates/dkms/, which depmod prefers to the
# in-tree kernel/net/netfilter/ipvs/ip_vs_mh.ko.
DEST_MODULE_LOCATION[0]="/updates"
MAKE[0]="make KDIR=\${kernel_source_dir} MH_COMPAT=1 modules"
CLEAN="make KDIR=\${kernel_source_dir} MH_COMPAT=1 clean"
AUTOINSTALL="yes"
EOF

log "building ip-vs-maglev-dkms and ip-vs-mh-maglev-dkms $ver in $out"
(cd "$src" && dpkg-buildpackage -b -us -uc) >"$out/build.log" 2>&1 || {
	tail -n 30 "$out/build.log" >&2
	die "dpkg-buildpackage failed (log: $out/build.log)"
}
mv -f "$out"/src/*.deb "$out/"
rm -f "$out"/src/*.buildinfo "$out"/src/*.changes
ls "$out"/*.deb
