#!/bin/bash
# dkms-test.sh: "dkms add", "dkms build" for Debian's stock 6.12 cloud
# kernel and "dkms remove" of ip_vs_maglev from dkms.conf, in a private
# DKMS tree and signing key (build/check/dkms/) so the system's DKMS state
# is untouched. The headers come from the cache (stock_headers in lib.sh).
# Nothing is installed.
set -eu
. "$(dirname "$0")/lib.sh"

need_pkgs "${BUILD_PKGS[@]}" dkms
stock_headers || die "cannot get the headers of Debian's 6.12 cloud kernel"
ver=$STOCK_VER
w=$(work_dir dkms)
rm -rf "$w/tree" "$w/src"
mkdir -p "$w/tree"

if [ ! -f "$TOP/dkms.conf" ]; then
	fail "dkms: no dkms.conf"
	summary
	exit
fi
pkgver=$(sed -n 's/^PACKAGE_VERSION="\?\([^"]*\)"\?$/\1/p' "$TOP/dkms.conf")
stage_sources "$w/src/ip_vs_maglev-$pkgver"

# Sign with a throwaway key instead of creating /var/lib/dkms/mok.key.
export mok_signing_key=$w/mok.key mok_certificate=$w/mok.pub
dkms=(dkms --dkmstree "$w/tree" --sourcetree "$w/src")
if "${dkms[@]}" add "$w/src/ip_vs_maglev-$pkgver" >"$w/dkms.log" 2>&1 &&
   "${dkms[@]}" build -m ip_vs_maglev -v "$pkgver" -k "$ver" \
	--kernelsourcedir "$STOCK_KDIR" \
	>>"$w/dkms.log" 2>&1; then
	if find "$w/tree/ip_vs_maglev/$pkgver/$ver" -name 'ip_vs_maglev.ko*' |
		grep -q .; then
		pass "dkms build for $ver"
	else
		fail "dkms build for $ver: no ip_vs_maglev.ko in the DKMS tree"
	fi
else
	fail "dkms build for $ver (see $w/dkms.log)"
	tail -n 30 "$w/dkms.log"
	find "$w/tree" -name make.log -exec tail -n 30 {} \;
fi
if "${dkms[@]}" remove -m ip_vs_maglev -v "$pkgver" --all >>"$w/dkms.log" 2>&1; then
	pass "dkms remove"
else
	fail "dkms remove (see $w/dkms.log)"
fi
summary
