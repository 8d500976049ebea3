#!/bin/bash
# mkdeb.sh OUTDIR ("make deb"): build the Debian packages described by
# debian/ (two binary packages from one source):
#   ip-vs-maglev-dkms     DKMS module ip_vs_maglev, scheduler "maglev"
#   ip-vs-mh-maglev-dkms  DKMS module ip-vs-mh-maglev: the same sources built
#                         with MH_COMPAT=1 as ip_vs_mh.ko, scheduler "mh",
#                         for keepalived and kube-proxy; DKMS installs it
#                         under updates/, which modprobe prefers to the
#                         in-tree ip_vs_mh; removing the package gives the
#                         in-tree module back
# with debhelper and dh-dkms from the Debian archive (installed with
# apt-get if missing), into OUTDIR (default build/deb). dpkg-buildpackage
# runs on a copy of the module sources and debian/, so the tree stays
# clean. debian/changelog's version must be dkms.conf's PACKAGE_VERSION.
set -eu
. "$(dirname "$0")/lib.sh"

out=${1:-$TOP/build/deb}
need_pkgs dpkg-dev dkms
# What dpkg-buildpackage will require, read from the package itself:
# debian/control's Build-Depends and build-essential (Debian policy 4.2),
# as dpkg-checkbuilddeps reports them unmet; virtual names (debhelper-compat,
# dh-sequence-dkms) go to apt-get, which picks their one provider.
unmet=$(LC_ALL=C dpkg-checkbuilddeps "$TOP/debian/control" 2>&1 |
	sed -n 's/^dpkg-checkbuilddeps: error: Unmet build dependencies: //p' |
	sed -E 's/ *\([^)]*\)//g; s/:native//g; s/ *\| *[^ ]+//g') || true
# shellcheck disable=SC2086 # unmet is a list of package names
[ -z "$unmet" ] || need_pkgs $unmet
mkdir -p "$out"
out=$(cd "$out" && pwd)
ver=$(sed -n 's/^PACKAGE_VERSION="\?\([^"]*\)"\?$/\1/p' "$TOP/dkms.conf")
[ -n "$ver" ] || die "no PACKAGE_VERSION in dkms.conf"
debver=$(cd "$TOP" && dpkg-parsechangelog -S Version)
[ "$debver" = "$ver" ] ||
	die "debian/changelog says $debver, dkms.conf's PACKAGE_VERSION $ver"

src=$out/src/ip-vs-maglev-$ver
rm -rf "$out/src"
stage_sources "$src"
rm -rf "$src/kunit"
cp -r "$TOP/debian" "$src/"

log "building ip-vs-maglev-dkms and ip-vs-mh-maglev-dkms $ver in $out"
(cd "$src" && dpkg-buildpackage -b -us -uc) >"$out/build.log" 2>&1 || {
	tail -n 30 "$out/build.log" >&2
	die "dpkg-buildpackage failed (log: $out/build.log)"
}
mv -f "$out"/src/*.deb "$out/"
rm -f "$out"/src/*.buildinfo "$out"/src/*.changes
ls "$out"/*.deb
