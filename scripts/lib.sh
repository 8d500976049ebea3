# shellcheck shell=bash
# Helpers shared by the ip_vs_maglev test scripts. Source it; do not run it.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export TOP

# Bump when the way the test kernel is built changes, to invalidate caches.
KERNEL_RECIPE=1

log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# need_pkgs PKG...: install missing Debian packages, or tell a non-root user
# the exact command to run and stop.
need_pkgs() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${db:Status-Status}\n' "$p" 2>/dev/null |
			grep -qx installed || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		log "missing packages: ${missing[*]}; as root run:"
		echo "  apt-get install -y --no-install-recommends ${missing[*]}" >&2
		exit 1
	fi
	log "installing: ${missing[*]}"
	local apt=(apt-get -y -q -o DPkg::Lock::Timeout=600
		   install --no-install-recommends "${missing[@]}")
	DEBIAN_FRONTEND=noninteractive "${apt[@]}" </dev/null >&2 ||
		{ apt-get -q update >&2 &&
		  DEBIAN_FRONTEND=noninteractive "${apt[@]}" </dev/null >&2; } ||
		die "apt-get install ${missing[*]} failed"
}

# Packages to build a kernel and out-of-tree modules.
# shellcheck disable=SC2034
BUILD_PKGS=(make gcc libc6-dev bc bison flex libelf-dev libssl-dev perl
	    xz-utils cpio kmod linux-source-6.12)
# Everything "make check" needs, installed up front in one go.
# shellcheck disable=SC2034
CHECK_PKGS=("${BUILD_PKGS[@]}" sparse dkms qemu-system-x86 busybox-static
	    ipvsadm iproute2 socat linux-headers-cloud-amd64
	    linux-headers-6.12-cloud-amd64 linux-image-6.12-cloud-amd64)

cache_root() {
	if [ -n "${MAGLEV_CACHE:-}" ]; then
		echo "$MAGLEV_CACHE"
	elif [ "$(id -u)" -eq 0 ] || [ -w /var/cache/ip_vs_maglev ]; then
		echo /var/cache/ip_vs_maglev
	else
		echo "${XDG_CACHE_HOME:-$HOME/.cache}/ip_vs_maglev"
	fi
}

# kflavour_frags: fragment files for $KFLAVOUR, base first.
kflavour_frags() {
	local f="$TOP/kconfig/${KFLAVOUR}.config"
	[ -f "$f" ] || die "unknown KFLAVOUR '$KFLAVOUR' (no $f)"
	echo "$TOP/kconfig/base.config" "$f"
}

# kernel_cache_dir: where the test kernel for $KFLAVOUR lives. The name
# changes with the linux-source package version and the fragments.
kernel_cache_dir() {
	local ver hash
	ver=$(dpkg-query -W -f='${Version}' linux-source-6.12) ||
		die "linux-source-6.12 is not installed"
	# shellcheck disable=SC2046
	hash=$( { echo "$KERNEL_RECIPE"; cat $(kflavour_frags); } |
		sha256sum | cut -c1-12)
	echo "$(cache_root)/kernel-${ver//[^A-Za-z0-9.-]/_}-$hash-$KFLAVOUR"
}

# stock_kver: version of the Debian 6.12 cloud kernel present as image,
# modules and headers.
stock_kver() {
	local d v
	for d in /usr/src/linux-headers-6.12.*-cloud-amd64; do
		v=${d#/usr/src/linux-headers-}
		[ -f "/boot/vmlinuz-$v" ] && [ -d "/lib/modules/$v/kernel" ] &&
			{ echo "$v"; return 0; }
	done
	return 1
}

# Results: every check prints "PASS: <what>" or "FAIL: <what>" and the
# script ends with summary, which prints "N passed, N failed".
PASSED=0
FAILED=0
pass() { PASSED=$((PASSED + 1)); echo "PASS: $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL: $*"; }
# tally: read PASS:/FAIL:/SKIP: lines on stdin, count and echo them.
tally() {
	local line
	while IFS= read -r line; do
		case $line in
		'PASS: '*) pass "${line#PASS: }" ;;
		'FAIL: '*) fail "${line#FAIL: }" ;;
		*) echo "$line" ;;
		esac
	done
}
summary() {
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" -eq 0 ]
}

# Module source files copied by stage_sources.
MODULE_SOURCES=(Kbuild Makefile dkms.conf include kunit maglev_main.c maglev_table.c)

# stage_sources DEST: copy the module sources (no build products) into DEST,
# so builds for different kernels neither share objects nor touch the tree.
stage_sources() {
	local f
	rm -rf "$1"
	mkdir -p "$1"
	for f in "${MODULE_SOURCES[@]}"; do
		[ -e "$TOP/$f" ] || continue
		tar -C "$TOP" -cf - --exclude='*.o' --exclude='*.ko' \
			--exclude='*.mod' --exclude='*.mod.c' --exclude='.*.cmd' \
			--exclude=modules.order --exclude=Module.symvers "$f" |
			tar -C "$1" -xf -
	done
}

# Work directory for logs and builds: build/check/ in the tree.
work_dir() {
	mkdir -p "$TOP/build/check/$1"
	echo "$TOP/build/check/$1"
}
