# shellcheck shell=bash
# Helpers shared by the ip_vs_maglev test scripts. Source it; do not run it.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export TOP

# Bump when the way the test kernel is built changes, to invalidate caches.
KERNEL_RECIPE=1
# Bump when the stock header cache's layout changes (it gained 'depends').
STOCK_RECIPE=2

log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# children_cpu VAR: set VAR to the CPU seconds (user + system) the
# shell's waited-for children have used so far. (The builtin "times" runs
# in this shell; in a command substitution it would count the subshell's.)
children_cpu() {
	local f
	f=$(mktemp)
	times >"$f"
	printf -v "$1" '%s' "$(awk 'NR == 2 { gsub(/[ms]/, " ")
		printf "%d\n", $1 * 60 + $2 + $3 * 60 + $4 + 0.5 }' "$f")"
	rm -f "$f"
}

# cpu_seconds CMD...: run CMD (its stdout to stderr) and print the CPU
# seconds (user + system) it and its children used; returns CMD's status.
cpu_seconds() {
	local before after rc=0
	children_cpu before
	"$@" >&2 || rc=$?
	children_cpu after
	echo $((after - before))
	return "$rc"
}

# missing_pkgs PKG...: print those of the Debian packages PKG... that are
# not installed, one a line.
missing_pkgs() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${db:Status-Status}\n' "$p" 2>/dev/null |
			grep -qx installed || echo "$p"
	done
}

# need_pkgs PKG...: install missing Debian packages, or tell a non-root user
# the exact command to run and stop.
need_pkgs() {
	local missing=() p
	while IFS= read -r p; do
		missing+=("$p")
	done < <(missing_pkgs "$@")
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

# deb_depends DEB...: the packages that the .debs DEB... need installed,
# read from their own Depends and Pre-Depends (dpkg-deb -f), one name a
# line: for an alternative "a | b" the first one that apt can install,
# a virtual package replaced by a real one that provides it. Packages
# among the DEBs themselves are left out (they are unpacked, not
# installed), and so is anything named linux-image-* (the boot kernel
# is never installed; an alternative offering one takes another choice).
# Fails (after a log line) if a dependency has no installable choice.
deb_depends() {
	local deb own=' ' field deps dep alt name real ok out=''
	for deb in "$@"; do
		own+="$(dpkg-deb -f "$deb" Package) "
	done
	deps=$(for deb in "$@"; do
		for field in Pre-Depends Depends; do
			dpkg-deb -f "$deb" "$field"
			echo
		done
	done | tr ',' '\n' | sed 's/([^)]*)//g; s/:any//g; s/^ *//; s/ *$//' |
		grep -v '^$' | LC_ALL=C sort -u)
	while IFS= read -r dep; do
		[ -n "$dep" ] || continue
		ok=
		IFS='|' read -ra alt <<<"$dep"
		for name in "${alt[@]}"; do
			name=${name// /}
			case $name in
			linux-image-*) ok=${ok:-image}; continue ;;
			esac
			case $own in *" $name "*) ok=own; break ;; esac
			real=$(apt_real_pkg "$name") || continue
			out+="$real"$'\n'
			ok=1
			break
		done
		# Only linux-image choices: that is the kernel, never installed.
		[ -n "$ok" ] || {
			log "no installable choice for the dependency '$dep' of ${*##*/}"
			return 1
		}
	done <<<"$deps"
	printf '%s' "$out" | LC_ALL=C sort -u
}

# apt_real_pkg NAME: NAME if apt knows it as a real package, else the first
# package that provides it (as apt-get install picks a sole provider).
apt_real_pkg() {
	if sapt apt-cache show --no-all-versions "$1" 2>/dev/null |
	   grep -q '^Package:'; then
		echo "$1"
		return 0
	fi
	sapt apt-cache showpkg "$1" 2>/dev/null |
		sed -n '/^Reverse Provides:/,$p' | sed -n '2{s/ .*//;p;q}' | grep .
}

# suite_lib_closure SUITE PKG[=VER]: the library packages that PKG needs
# to run, within the private configuration SUITE (papt_setup): its
# Depends and Pre-Depends, and theirs in turn, each a real package
# (apt_real_pkg, the first installable choice of an alternative), but
# only libraries (Section libs, or a name lib*) and followed only
# through those: what a root of its own needs to run PKG's programs, not
# the rest of what installing it pulls in (iproute2, init-system-helpers,
# perl, debconf). PKG itself first, then one name a line. Callers check
# the result against the programs' DT_NEEDED (elf_needed_missing).
suite_lib_closure() {
	local suite=$1 seen=' ' queue=("$2") p rec deps dep alt name real
	local -A known=()	# name -> real package, or '' if none
	while [ ${#queue[@]} -gt 0 ]; do
		p=${queue[0]}
		queue=("${queue[@]:1}")
		rec=$(papt "$suite" apt-cache show --no-all-versions "$p" \
			2>/dev/null)
		if [ "$p" != "$2" ]; then
			case $p in
			lib*) ;;
			*) grep -qx 'Section: \(old\)\{0,1\}libs' <<<"$rec" ||
				continue ;;
			esac
		fi
		echo "${p%%=*}"
		deps=$(sed -n 's/^\(Pre-\)\{0,1\}Depends: //p' <<<"$rec" |
			tr ',' '\n' | sed 's/([^)]*)//g; s/:any//g; s/^ *//; s/ *$//' |
			grep -v '^$' | LC_ALL=C sort -u)
		while IFS= read -r dep; do
			[ -n "$dep" ] || continue
			IFS='|' read -ra alt <<<"$dep"
			for name in "${alt[@]}"; do
				name=${name// /}
				if [ -z "${known[$name]+set}" ]; then
					known[$name]=$(STOCK_SUITE=$suite \
						apt_real_pkg "$name") || true
				fi
				real=${known[$name]}
				[ -n "$real" ] || continue
				case $seen in
				*" $real "*) ;;
				*) seen+="$real "; queue+=("$real") ;;
				esac
				break
			done
		done <<<"$deps"
	done
}

# elf_needed ROOT FILE...: the libraries that FILE... (in ROOT) need to
# run, looked up as the dynamic loader would, but in ROOT's library
# directories (never this machine's): the DT_NEEDED entries of FILE...
# and of the libraries they need in turn. Prints the path in ROOT of
# each, one a line; logs the names not found in ROOT and returns 1 if
# any. Reads the ELF headers only (readelf), runs nothing.
elf_needed() {
	local root=$1 queue=() seen=' ' f n d found lost=''
	shift
	queue=("$@")
	while [ ${#queue[@]} -gt 0 ]; do
		f=${queue[0]}
		queue=("${queue[@]:1}")
		for n in $(readelf -d "$f" 2>/dev/null |
			   sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
			case $seen in *" $n "*) continue ;; esac
			seen+="$n "
			found=
			for d in lib/x86_64-linux-gnu usr/lib/x86_64-linux-gnu \
				 lib/i386-linux-gnu usr/lib/i386-linux-gnu \
				 lib64 usr/lib64 lib usr/lib; do
				if [ -e "$root/$d/$n" ]; then
					found=$root/$d/$n
					break
				fi
			done
			case $(readlink -f "$found") in
			"$root"/*)
				echo "$found"
				queue+=("$(readlink -f "$found")") ;;
			*)	lost+=" $n" ;;
			esac
		done
	done
	[ -z "$lost" ] || {
		log "not in $root:$lost (needed by ${*#"$root"})"
		return 1
	}
}

# I386_USERLAND_PKGS: what the 32-bit guest (KARCH=i386) runs from Debian:
# busybox (static), ipvsadm and iproute2's ip; the project's own guest
# tools are built with gcc -m32 -static (vm-test.sh).
I386_USERLAND_PKGS=(busybox-static ipvsadm iproute2)
I386_USERLAND_RECIPE=1

# i386_userland: print a directory holding Debian 12's i386 busybox,
# ipvsadm and ip with the libraries they need (bin/, usr/sbin/ and the
# library directories, laid out for the initramfs: mkinitramfs.sh
# USERLAND=DIR). Made once in the cache: the packages and their library
# packages (suite_lib_closure) of the private configuration bookworm-i386
# (papt_setup: its lists and archive in the cache, never this machine's)
# downloaded with apt-get download and unpacked with dpkg-deb; nothing of
# it runs on this machine. Fails unless every library the programs'
# ELF headers name is there (elf_needed).
i386_userland() {
	local suite=bookworm-i386 dir pkgs hash r interp libs p f wanted=()
	papt_setup "$suite" >&2 || return 1
	pkgs=$(for p in "${I386_USERLAND_PKGS[@]}"; do
		papt "$suite" apt-cache policy "$p" 2>/dev/null |
			sed -n "s/^ *Candidate: /$p=/p"
	done)
	[ "$(grep -c . <<<"$pkgs")" -eq ${#I386_USERLAND_PKGS[@]} ] || {
		log "the private $suite configuration lacks one of ${I386_USERLAND_PKGS[*]}"
		return 1
	}
	hash=$(echo "$I386_USERLAND_RECIPE $pkgs" | sha256sum | cut -c1-12)
	dir=$(cache_root)/userland-i386-$hash
	if [ ! -f "$dir/.ready" ]; then
		mkdir -p "$dir" || return 1
		( flock 9
		  [ -f "$dir/.ready" ] && exit 0
		  rm -rf "$dir/dl" "$dir/tree" "$dir/out"
		  mkdir -p "$dir/dl" "$dir/out/bin" "$dir/out/usr/sbin"
		  for p in $pkgs; do
			suite_lib_closure "$suite" "$p" || exit 1
		  done | LC_ALL=C sort -u >"$dir/packages"
		  log "downloading $suite's $(wc -l <"$dir/packages") packages for the 32-bit guest into $dir"
		  mapfile -t wanted <"$dir/packages"
		  (cd "$dir/dl" && papt "$suite" apt-get -q download "${wanted[@]}") \
			>"$dir/download.log" 2>&1 || exit 1
		  r=$dir/tree
		  mkdir -p "$r"
		  for deb in "$dir"/dl/*.deb; do
			dpkg-deb --fsys-tarfile "$deb" | tar -C "$r" -x || exit 1
		  done
		  for p in busybox ipvsadm ip; do
			f=$(find "$r/bin" "$r/sbin" "$r/usr/bin" "$r/usr/sbin" \
				-name "$p" \( -type f -o -type l \) 2>/dev/null | head -n 1)
			[ -n "$f" ] || { log "no $p in $suite's packages"; exit 1; }
			case $p in
			busybox) cp -L "$f" "$dir/out/bin/busybox" ;;
			*) cp -L "$f" "$dir/out/usr/sbin/$p" ;;
			esac
		  done
		  readelf -h "$dir/out/bin/busybox" | grep -q 'Machine:.*Intel 80386' ||
			{ log "$suite's busybox is not a 32-bit x86 program"; exit 1; }
		  interp=$(readelf -l "$dir/out/usr/sbin/ipvsadm" |
			sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')
		  [ -e "$r$interp" ] || { log "no $interp in $suite's libc6"; exit 1; }
		  mkdir -p "$dir/out${interp%/*}"
		  cp -L "$r$interp" "$dir/out$interp"
		  libs=$(elf_needed "$r" "$dir/out/usr/sbin/ipvsadm" \
			"$dir/out/usr/sbin/ip") || exit 1
		  for f in $libs; do
			mkdir -p "$dir/out$(dirname "${f#"$r"}")"
			cp -L "$f" "$dir/out${f#"$r"}"
		  done
		  rm -rf "$dir/dl" "$dir/tree"
		  touch "$dir/.ready" ) 9>"$dir.lock" || {
			log "cannot gather $suite's 32-bit userspace (see $dir/download.log)"
			return 1
		}
	fi
	echo "$dir/out"
}

# need_deb_depends DEPFILE: install (need_pkgs) the packages listed in
# DEPFILE, as written by deb_depends, after checking that installing them
# pulls in no linux-image package.
need_deb_depends() {
	local all=() pkgs=() sim
	mapfile -t all < <(grep -v '^$' "$1")
	# Only what is missing: the simulation costs a second a call.
	mapfile -t pkgs < <(missing_pkgs "${all[@]}")
	[ ${#pkgs[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -eq 0 ]; then
		sim=$(apt-get -s -q install --no-install-recommends "${pkgs[@]}" 2>&1 |
			sed -n 's/^Inst \(linux-image-[^ ]*\).*/\1/p')
		[ -z "$sim" ] ||
			die "installing ${pkgs[*]} would install $sim; refused (the boot kernel stays as it is)"
	fi
	need_pkgs "${pkgs[@]}"
}

# Packages to build a kernel and out-of-tree modules.
# shellcheck disable=SC2034
BUILD_PKGS=(make gcc libc6-dev bc bison flex libelf-dev libssl-dev perl
	    xz-utils cpio kmod linux-source-6.12)
# Everything "make check" needs, installed up front in one go.
# shellcheck disable=SC2034
# No linux-headers packages: they pull in linux-image packages, which
# change the boot kernel; stock_headers fetches them into the cache.
# keepalived's libraries come from its own Depends (stock-keepalived.sh);
# debhelper, dh-dkms, build-essential: make deb (its Build-Depends and
# dpkg-buildpackage's own requirement); python3-prometheus-client: the parser
# that checks maglev-fleet's exposition; mmdebstrap: the fresh step;
# nftables: nft in the guests of vm-test.sh (its service stays disabled,
# as Debian installs it; nothing runs nft on this machine); gcc-multilib:
# the 32-bit guest's tools (vm-i386); patch: the mutants step.
CHECK_PKGS=("${BUILD_PKGS[@]}" sparse dkms qemu-system-x86 busybox-static
	    ipvsadm iproute2 socat nftables debhelper dh-dkms build-essential
	    dpkg-dev gnuplot-nox python3 python3-prometheus-client mmdebstrap
	    gcc-multilib patch)

cache_root() {
	if [ -n "${MAGLEV_CACHE:-}" ]; then
		echo "$MAGLEV_CACHE"
	elif [ "$(id -u)" -eq 0 ] || [ -w /var/cache/ip_vs_maglev ]; then
		echo /var/cache/ip_vs_maglev
	else
		echo "${XDG_CACHE_HOME:-$HOME/.cache}/ip_vs_maglev"
	fi
}

# kflavour_frags: fragment files for $KFLAVOUR, base first, and for
# KARCH=i386 (a 32-bit x86 kernel) kconfig/i386.config last.
kflavour_frags() {
	local f="$TOP/kconfig/${KFLAVOUR}.config"
	[ -f "$f" ] || die "unknown KFLAVOUR '$KFLAVOUR' (no $f)"
	case ${KARCH:-x86_64} in
	x86_64) echo "$TOP/kconfig/base.config" "$f" ;;
	i386)	echo "$TOP/kconfig/base.config" "$f" "$TOP/kconfig/i386.config" ;;
	*)	die "unknown KARCH '$KARCH' (x86_64 or i386)" ;;
	esac
}

# kernel_source: the Linux source the test kernel is built from, chosen by
# KSOURCE: 6.12 (the default: Debian 12's linux-source-6.12 package,
# installed) or newest (newest_tarball: the newest linux-source-N.M of
# trixie-backports and sid, in the cache). Sets KSRC_NAME (the directory
# the tarball unpacks to, linux-source-N.M), KSRC_TARBALL and KSRC_VER
# (the package version).
# shellcheck disable=SC2034
kernel_source() {
	case ${KSOURCE:-6.12} in
	6.12)
		KSRC_NAME=linux-source-6.12
		KSRC_TARBALL=/usr/src/linux-source-6.12.tar.xz
		KSRC_VER=$(dpkg-query -W -f='${Version}' linux-source-6.12) ||
			{ log "linux-source-6.12 is not installed"; return 1; } ;;
	newest)
		newest_tarball || return 1
		KSRC_NAME=linux-source-$NEWEST_SERIES
		KSRC_TARBALL=$NEWEST_TARBALL
		KSRC_VER=$NEWEST_PKGVER ;;
	*)	log "unknown KSOURCE '$KSOURCE' (6.12 or newest)"; return 1 ;;
	esac
}

# kernel_cache_dir: where the test kernel for $KFLAVOUR (from $KSOURCE,
# for KARCH) lives. The name changes with the linux-source package version
# and the fragments. Call kernel_source first.
kernel_cache_dir() {
	local hash
	[ -n "${KSRC_VER:-}" ] || kernel_source || die "no kernel source"
	# shellcheck disable=SC2046
	hash=$( { echo "$KERNEL_RECIPE"; cat $(kflavour_frags); } |
		sha256sum | cut -c1-12)
	local arch=
	[ "${KARCH:-x86_64}" = x86_64 ] || arch=-$KARCH
	echo "$(cache_root)/kernel-${KSRC_VER//[^A-Za-z0-9.-]/_}-$hash-$KFLAVOUR$arch"
}

# Debian's stock cloud kernels: a series is "6.12" or "6.1" (Debian 12's
# own kernel), "cloud" (whatever series linux-headers-cloud-amd64 follows:
# the distribution's own kernel) or "newest" (stock_resolve_newest). The
# default is the kernel a user of this distribution runs: 6.12 on Debian
# 12 (from bookworm's updates), the distribution's own on any other
# release (Debian 13: trixie's 6.12).
STOCK_SERIES_DEFAULT=6.12
if [ -r /etc/os-release ] &&
   ! grep -qx 'VERSION_CODENAME=bookworm' /etc/os-release; then
	STOCK_SERIES_DEFAULT=cloud
fi

# stock_meta [SERIES]: the headers metapackage that follows Debian's SERIES
# cloud kernel: linux-headers-cloud-amd64 for 6.1 (bookworm's default),
# linux-headers-SERIES-cloud-amd64 otherwise.
stock_meta() {
	local series=${1:-$STOCK_SERIES_DEFAULT}
	case $series in
	6.1|cloud) echo linux-headers-cloud-amd64 ;;
	*) echo "linux-headers-$series-cloud-amd64" ;;
	esac
}

# stock_resolve [SERIES]: find the current Debian SERIES (default 6.12)
# cloud kernel from the package lists, without installing anything: the
# headers package that the candidate version of stock_meta SERIES depends
# on. Sets STOCK_VER (e.g. 6.12.117+deb12-cloud-amd64 or
# 6.1.0-57-cloud-amd64) and STOCK_PKGVER (its package version). As root,
# runs "apt-get update" once if the lists do not know the metapackage.
# shellcheck disable=SC2034,SC2120 # SERIES is optional
stock_resolve() {
	local series=${1:-$STOCK_SERIES_DEFAULT} meta cand dep d try pat
	STOCK_VER='' STOCK_PKGVER='' STOCK_SUITE='' STOCK_DIST=''
	[ "$series" = newest ] && { stock_resolve_newest; return; }
	meta=$(stock_meta "$series")
	pat="linux-headers-$series."
	[ "$series" = cloud ] && pat=linux-headers-
	for try in lists update; do
		if [ "$try" = update ]; then
			[ "$(id -u)" -eq 0 ] || break
			log "apt-cache knows no $meta; running apt-get update"
			apt-get -q update >&2 || break
		fi
		cand=$(apt-cache policy "$meta" 2>/dev/null |
			sed -n 's/^ *Candidate: //p')
		[ -n "$cand" ] && [ "$cand" != '(none)' ] && break
	done
	[ -n "$cand" ] && [ "$cand" != '(none)' ] || return 1
	dep=$(apt-cache show "$meta=$cand" 2>/dev/null |
		sed -n 's/^Depends: //p' | head -n 1)
	local IFS=,
	for d in $dep; do
		d=${d# }
		case $d in
		"$pat"*-cloud-amd64\ \(=\ *\))
			STOCK_VER=${d%% *}
			STOCK_VER=${STOCK_VER#linux-headers-}
			STOCK_PKGVER=${d##*= }
			STOCK_PKGVER=${STOCK_PKGVER%)}
			;;
		esac
	done
	[ -n "$STOCK_VER" ] && [ -n "$STOCK_PKGVER" ]
}

# sapt apt-get|apt-cache ARG...: apt for the stock kernel being fetched:
# this machine's own, or the private configuration STOCK_SUITE (set by
# stock_resolve newest).
sapt() {
	if [ -n "${STOCK_SUITE:-}" ]; then
		papt "$STOCK_SUITE" "$@"
	else
		"$@"
	fi
}

# sapt_update: "apt-get update" of what sapt uses.
sapt_update() {
	if [ -n "${STOCK_SUITE:-}" ]; then
		PAPT_UPDATE=1 papt_setup "$STOCK_SUITE"
	else
		apt-get -q update
	fi
}

# stock_resolve_newest: the series "newest" of stock_resolve: the newest
# Debian cloud kernel that the private configurations of NEWEST_SUITES
# offer (the highest version of linux-headers-cloud-amd64 in those
# suites), and the headers package it depends on. Sets STOCK_VER,
# STOCK_PKGVER, STOCK_SUITE (the private configuration to fetch it
# with, see sapt) and STOCK_DIST (the distribution that has it:
# trixie-backports, sid).
# shellcheck disable=SC2034
stock_resolve_newest() {
	local entry suite dist v best='' bsuite='' bdist='' dep d
	for entry in "${NEWEST_SUITES[@]}"; do
		suite=${entry%%:*}
		dist=${entry#*:}
		papt_setup "$suite" || continue
		v=$(papt "$suite" apt-cache madison linux-headers-cloud-amd64 |
			awk -F' *[|] *' -v d="$dist" '$3 ~ "(^|/| )" d "[/ ]" { print $2; exit }')
		[ -n "$v" ] || continue
		if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then
			best=$v bsuite=$suite bdist=$dist
		fi
	done
	[ -n "$best" ] || return 1
	dep=$(papt "$bsuite" apt-cache show "linux-headers-cloud-amd64=$best" \
		2>/dev/null | sed -n 's/^Depends: //p' | head -n 1)
	local IFS=,
	for d in $dep; do
		d=${d# }
		case $d in
		linux-headers-*-cloud-amd64\ \(=\ *\))
			STOCK_VER=${d%% *}
			STOCK_VER=${STOCK_VER#linux-headers-}
			STOCK_PKGVER=${d##*= }
			STOCK_PKGVER=${STOCK_PKGVER%)} ;;
		esac
	done
	STOCK_SUITE=$bsuite STOCK_DIST=$bdist
	[ -n "$STOCK_VER" ] && [ -n "$STOCK_PKGVER" ]
}

# stock_kver [SERIES]: print STOCK_VER of stock_resolve SERIES.
# shellcheck disable=SC2120 # SERIES is optional
stock_kver() {
	stock_resolve "$@" || return 1
	echo "$STOCK_VER"
}

# stock_kernel [SERIES]: make Debian's stock SERIES (default 6.12) cloud
# kernel (stock_resolve) available to boot under QEMU, without installing
# it: the first call downloads its linux-image .deb with "apt-get download"
# and unpacks it with dpkg-deb into the cache; later calls reuse that.
# Nothing goes into /boot or /lib/modules. Sets STOCK_VER (the kernel
# version) and STOCK_ROOT, the directory holding boot/vmlinuz-$STOCK_VER
# and lib/modules/$STOCK_VER/ (with modules.dep).
# Logs and returns 1 on failure.
# shellcheck disable=SC2034,SC2120 # SERIES is optional
stock_kernel() {
	local series=${1:-$STOCK_SERIES_DEFAULT} ver pkgver dir meta
	meta=$(stock_meta "$series")
	STOCK_ROOT=''
	stock_resolve "$series" || {
		log "apt-cache finds no Debian $series cloud kernel ($meta)"
		return 1
	}
	ver=$STOCK_VER pkgver=$STOCK_PKGVER
	dir=$(stock_dir "$ver" "$pkgver")
	if [ ! -f "$dir/.ready" ]; then
		mkdir -p "$dir" || return 1
		( flock 9 && stock_unpack "$ver" "$pkgver" "$dir" "$meta" ) \
			9>"$dir.lock" || return 1
	fi
	STOCK_VER=$ver
	STOCK_ROOT=$dir/root
}

# stock_dir [SERIES | VER PKGVER]: the cache directory of stock_kernel, for
# the current SERIES (default 6.12) kernel unless given the kernel and
# package version; it holds .ready once unpacked.
# shellcheck disable=SC2120 # SERIES is optional
stock_dir() {
	local ver pkgver
	if [ $# -ge 2 ]; then
		ver=$1 pkgver=$2
	else
		stock_resolve "${1:-}" || return 1
		ver=$STOCK_VER pkgver=$STOCK_PKGVER
	fi
	echo "$(cache_root)/stock-$ver-${pkgver//[^A-Za-z0-9.-]/_}"
}

# stock_headers [SERIES]: the headers of Debian's stock SERIES (default
# 6.12) cloud kernel, for building modules, without installing them (an
# installed headers package pulls in the linux-image package, which
# changes the boot kernel): the first call downloads
# linux-headers-VER, linux-headers-...-common and linux-kbuild-... with
# "apt-get download" and unpacks them into one root in the cache (the
# scripts/tools symlinks of the headers are relative). Sets STOCK_VER and
# STOCK_KDIR, the directory to build against (make -C "$STOCK_KDIR"
# M=...). Logs and returns 1 on failure.
# shellcheck disable=SC2034,SC2120 # SERIES is optional
stock_headers() {
	local series=${1:-$STOCK_SERIES_DEFAULT} dir
	STOCK_KDIR=''
	stock_resolve "$series" || {
		log "apt-cache finds no Debian $series cloud kernel ($(stock_meta "$series"))"
		return 1
	}
	dir="$(cache_root)/headers-$STOCK_VER-${STOCK_PKGVER//[^A-Za-z0-9.-]/_}-r$STOCK_RECIPE"
	if [ ! -f "$dir/.ready" ]; then
		mkdir -p "$dir" || return 1
		( flock 9 && stock_headers_unpack "$STOCK_VER" "$STOCK_PKGVER" \
			"$dir" ) 9>"$dir.lock" || return 1
	fi
	[ -f "$dir/depends" ] || {
		log "$dir has no depends list; delete $dir and run again"
		return 1
	}
	# Another suite's headers build in a root of that suite
	# (suite_kbuild_root), not on this machine.
	[ -n "$STOCK_SUITE" ] || ( need_deb_depends "$dir/depends" ) || return 1
	STOCK_KDIR=$dir/root/usr/src/linux-headers-$STOCK_VER
}

# stock_headers_unpack VER PKGVER DIR: the work of stock_headers, under its
# lock.
stock_headers_unpack() {
	local ver=$1 pkgver=$2 dir=$3 dep d pkgs deb
	[ -f "$dir/.ready" ] && return 0
	rm -rf "$dir/dl" "$dir/tmp" "$dir/root" "$dir/download.log"
	mkdir -p "$dir/dl" "$dir/tmp" || return 1
	# linux-headers-VER depends on its -common and linux-kbuild packages
	# (and on the image, which is not wanted here).
	pkgs=("linux-headers-$ver")
	dep=$(sapt apt-cache show "linux-headers-$ver=$pkgver" 2>/dev/null |
		sed -n 's/^Depends: //p' | head -n 1)
	local IFS=,
	for d in $dep; do
		d=${d# }
		d=${d%% *}
		case $d in
		linux-headers-*-common|linux-kbuild-*) pkgs+=("$d") ;;
		esac
	done
	unset IFS
	[ ${#pkgs[@]} -eq 3 ] || {
		log "linux-headers-$ver $pkgver: expected a -common and a linux-kbuild dependency, got: $dep"
		return 1
	}
	for d in "${pkgs[@]}"; do
		log "downloading $d=$pkgver into $dir"
		(cd "$dir/dl" && sapt apt-get -q download "$d=$pkgver") \
			>>"$dir/download.log" 2>&1 || {
			tail -n 5 "$dir/download.log" >&2
			log "cannot download $d $pkgver (log: $dir/download.log); as root, 'apt-get update' may help"
			return 1
		}
	done
	# What the headers need installed to build with (pahole, libelf,
	# gcc-12, ...), from the packages themselves: stock_headers installs
	# it on every call.
	deb_depends "$dir"/dl/*.deb >"$dir/depends.new" || return 1
	for deb in "$dir"/dl/*.deb; do
		dpkg-deb -x "$deb" "$dir/tmp" || return 1
	done
	d=$dir/tmp/usr/src/linux-headers-$ver
	if [ ! -f "$d/Makefile" ] || [ ! -e "$d/scripts/Makefile.build" ]; then
		log "headers of $ver incomplete in $dir/tmp"
		return 1
	fi
	# The Makefile includes the -common one by its absolute /usr/src path
	# (and since 7.x names itself as KBUILD_OUTPUT).
	sed -i -e "s|^include /usr/src/|include $dir/root/usr/src/|" \
		-e "s|^KBUILD_OUTPUT=/usr/src/|KBUILD_OUTPUT=$dir/root/usr/src/|" \
		"$d/Makefile" || return 1
	mv -f "$dir/depends.new" "$dir/depends" || return 1
	mv -T "$dir/tmp" "$dir/root" || return 1
	rm -rf "$dir/dl"
	touch "$dir/.ready"
}

# stock_unpack VER PKGVER DIR META: the work of stock_kernel, under its
# lock; META is the headers metapackage to name if the download fails.
stock_unpack() {
	local ver=$1 pkgver=$2 dir=$3 meta=$4 pkg deb='' try
	local PATH=$PATH:/usr/sbin:/sbin
	[ -f "$dir/.ready" ] && return 0
	rm -rf "$dir/dl" "$dir/tmp" "$dir/root" "$dir/download.log"
	mkdir -p "$dir/dl" "$dir/tmp" || return 1
	# The signed image is what the metapackage installs; the unsigned one
	# holds the same kernel and modules. Update the package lists (root
	# only) if neither can be downloaded.
	for try in lists update; do
		if [ "$try" = update ]; then
			[ "$(id -u)" -eq 0 ] || break
			log "download failed; running apt-get update"
			sapt_update >>"$dir/download.log" 2>&1 || break
		fi
		for pkg in "linux-image-$ver" "linux-image-$ver-unsigned"; do
			log "downloading $pkg=$pkgver into $dir"
			(cd "$dir/dl" && sapt apt-get -q download "$pkg=$pkgver") \
				>>"$dir/download.log" 2>&1 || continue
			deb=$(find "$dir/dl" -name '*.deb' | head -n 1)
			[ -n "$deb" ] && break 2
		done
	done
	if [ -z "$deb" ]; then
		tail -n 5 "$dir/download.log" >&2
		log "cannot download linux-image-$ver $pkgver (log: $dir/download.log)"
		if [ "$(id -u)" -ne 0 ]; then
			log "as root, 'apt-get update' may help"
		else
			log "if the archive has moved on to a newer kernel, upgrade the headers: apt-get install $meta"
		fi
		return 1
	fi
	log "unpacking ${deb##*/}"
	dpkg-deb -x "$deb" "$dir/tmp" || return 1
	# Since 7.x the image package is a shell around linux-binary-VER
	# (boot/vmlinuz) and linux-modules-VER (lib/modules): those too.
	for pkg in $(dpkg-deb -f "$deb" Depends | tr ',' '\n' |
		     sed -n "s/^ *\(linux-\(binary\|modules\)-$ver\) .*/\1/p"); do
		log "downloading $pkg=$pkgver into $dir"
		rm -f "$dir"/dl/*.deb
		(cd "$dir/dl" && sapt apt-get -q download "$pkg=$pkgver") \
			>>"$dir/download.log" 2>&1 || {
			tail -n 5 "$dir/download.log" >&2
			log "cannot download $pkg $pkgver (log: $dir/download.log)"
			return 1
		}
		dpkg-deb -x "$dir"/dl/*.deb "$dir/tmp" || return 1
	done
	# Those install to /usr/lib/modules/VER/ with the kernel image in it
	# (vmlinuz); the layout below (and depmod -b) is /lib/modules and
	# /boot/vmlinuz-VER.
	if [ -d "$dir/tmp/usr/lib/modules/$ver" ] && [ ! -e "$dir/tmp/lib/modules" ]; then
		mkdir -p "$dir/tmp/lib" &&
		mv "$dir/tmp/usr/lib/modules" "$dir/tmp/lib/modules" || return 1
	fi
	if [ ! -e "$dir/tmp/boot/vmlinuz-$ver" ] &&
	   [ -f "$dir/tmp/lib/modules/$ver/vmlinuz" ]; then
		mkdir -p "$dir/tmp/boot" &&
		ln "$dir/tmp/lib/modules/$ver/vmlinuz" "$dir/tmp/boot/vmlinuz-$ver" ||
			return 1
	fi
	if [ ! -f "$dir/tmp/boot/vmlinuz-$ver" ] ||
	   [ ! -d "$dir/tmp/lib/modules/$ver/kernel" ]; then
		log "${deb##*/} has no boot/vmlinuz-$ver or lib/modules/$ver/kernel"
		return 1
	fi
	# The package leaves modules.dep to its postinst.
	depmod -C /dev/null -b "$dir/tmp" "$ver" ||
		{ log "depmod -b $dir/tmp $ver failed"; return 1; }
	mv -T "$dir/tmp" "$dir/root" || return 1
	rm -rf "$dir/dl"
	touch "$dir/.ready"
}

# stock_modules ROOT VER DEST MOD...: copy the modules MOD... of kernel VER
# unpacked under ROOT (as by stock_kernel), with everything they depend on,
# decompressed for busybox insmod, into DEST/deps/, and list their file
# names in load order in DEST/deps.list (as guest-init.sh expects).
stock_modules() {
	local root=$1 ver=$2 dest=$3 m deps='' kind ko name
	shift 3
	local PATH=$PATH:/usr/sbin:/sbin
	mkdir -p "$dest/deps"
	: >"$dest/deps.list"
	for m in "$@"; do
		# -C /dev/null: none of this machine's modprobe.d options.
		deps+=$(modprobe -C /dev/null -d "$root" -S "$ver" \
			--show-depends "$m") || {
			log "modprobe finds no $m in $root/lib/modules/$ver"
			return 1
		}
		deps+=$'\n'
	done
	while read -r kind ko _; do
		[ "$kind" = insmod ] || continue
		case $ko in
		"$root"/*) ;;
		*) log "modprobe named $ko, outside $root"; return 1 ;;
		esac
		name=${ko##*/}
		name=${name%.xz}
		name=${name%.zst}
		grep -qxF "$name" "$dest/deps.list" && continue
		case $ko in
		*.xz) xz -dc "$ko" ;;
		*.zst) zstd -dcq "$ko" ;;
		*) cat "$ko" ;;
		esac >"$dest/deps/$name" || { log "cannot read $ko"; return 1; }
		echo "$name" >>"$dest/deps.list"
	done <<<"$deps"
}

# boot_state: installed linux-image packages and what /boot and the /vmlinuz
# and /initrd.img links hold, to compare before and after a run
# (check.sh, fresh-test.sh).
boot_state() {
	dpkg-query -W -f='${db:Status-Abbrev} ${Package} ${Version}\n' \
		'linux-image-*' 2>/dev/null | awk '$1 == "ii" { print $2, $3 }'
	find /boot -printf '%p %s %T@ %l\n' 2>/dev/null | LC_ALL=C sort
	find / -maxdepth 1 \( -name 'vmlinuz*' -o -name 'initrd.img*' \) \
		-printf '%p %l\n' 2>/dev/null | LC_ALL=C sort
}

# kernel_state: what this machine's running kernel has loaded, to compare
# before and after a run (kernel_state_check; check.sh, demo.sh): the
# taint flags ("tainted N") and one "module NAME" line per loaded module,
# or "modules unlisted" when there is no /proc/modules (a kernel without
# module support lists none and loads none). KSTATE_PROC (default /proc)
# is for the self-test in tests/run.sh.
kernel_state() {
	local proc=${KSTATE_PROC:-/proc}
	echo "tainted $(cat "$proc/sys/kernel/tainted" 2>/dev/null || echo unknown)"
	if [ -r "$proc/modules" ]; then
		awk '{ print "module " $1 }' "$proc/modules" | LC_ALL=C sort
	else
		echo "modules unlisted"
	fi
}

# Taint flags that loading a module sets: P (0, proprietary), F (1,
# forced), C (10, staging), O (12, out of tree: ip_vs_maglev.ko is), E (13,
# unsigned: ours are). They stay set after the module is removed, so a
# module loaded and unloaded again during the run is seen too.
TAINT_MODULE=$(( (1 << 0) | (1 << 1) | (1 << 10) | (1 << 12) | (1 << 13) ))

# kernel_state_check LABEL BEFORE AFTER: PASS:, FAIL: or SKIP: lines that
# say whether the run between the kernel_state outputs BEFORE and AFTER
# loaded anything the project must never load into this machine's kernel:
# an IPVS module (ip_vs, any ip_vs_* scheduler; every module this project
# builds is one: ip_vs_maglev, ip_vs_mh with MH_COMPAT, the benchmarks'
# ip_vs_connbench and ip_vs_mh16), or anything that sets a module's taint
# flag (TAINT_MODULE). Other modules that appear are allowed, and listed:
# this machine is shared, and its own services (udev, apt's package
# scripts) may load modules that have nothing to do with the run; none of
# the project's steps does (the QEMU guests run their kernels in TCG,
# mmdebstrap and the kbuild roots use namespaces and bind mounts only).
kernel_state_check() {
	local label=$1 before=$2 after=$3 t0 t1 new bad gained
	t0=$(sed -n 's/^tainted //p' <<<"$before")
	t1=$(sed -n 's/^tainted //p' <<<"$after")
	if ! [[ $t0 =~ ^[0-9]+$ && $t1 =~ ^[0-9]+$ ]]; then
		echo "FAIL: $label: cannot read /proc/sys/kernel/tainted (before '$t0', after '$t1')"
	else
		gained=$(( t1 & ~t0 ))
		if [ $(( gained & TAINT_MODULE )) -ne 0 ]; then
			echo "FAIL: $label: the kernel's taint gained a module flag during the run ($t0 -> $t1): something loaded a module"
		else
			echo "PASS: $label: no module taint flag set during the run (tainted $t0 -> $t1)"
			[ "$gained" -eq 0 ] ||
				echo "# $label: tainted also gained $gained (not a module flag)"
		fi
	fi
	if printf '%s\n%s\n' "$before" "$after" | grep -qx 'modules unlisted'; then
		# Compared only when both runs had a list.
		echo "SKIP: $label: no /proc/modules on this machine (no module support?): loaded modules not compared"
		return 0
	fi
	new=$(LC_ALL=C comm -13 <(grep '^module ' <<<"$before") \
		<(grep '^module ' <<<"$after") | sed 's/^module //')
	bad=$(grep -E '^ip_vs($|_)' <<<"$new" || true)
	if [ -n "$bad" ]; then
		echo "FAIL: $label: loaded into this machine's kernel during the run: $(paste -sd" " - <<<"$bad")"
	else
		echo "PASS: $label: no IPVS module (ip_vs, ip_vs_*: every module of this project) loaded into this machine's kernel"
	fi
	[ -z "$new" ] || [ -n "$bad" ] ||
		echo "# $label: other modules loaded meanwhile (allowed, not by this project's steps): $(paste -sd" " - <<<"$new")"
	return 0
}

# Results: every check prints "PASS: <what>" or "FAIL: <what>", or
# "SKIP: <what>" for one that could not run here (counted, reported, not
# a failure), and the script ends with summary, which prints "N passed,
# N failed", followed by ", N skipped" when anything was skipped.
PASSED=0
FAILED=0
SKIPPED=0
pass() { PASSED=$((PASSED + 1)); echo "PASS: $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL: $*"; }
skip() { SKIPPED=$((SKIPPED + 1)); echo "SKIP: $*"; }
# tally: read PASS:/FAIL:/SKIP: lines on stdin, count and echo them.
tally() {
	local line
	while IFS= read -r line; do
		case $line in
		'PASS: '*) pass "${line#PASS: }" ;;
		'FAIL: '*) fail "${line#FAIL: }" ;;
		'SKIP: '*) skip "${line#SKIP: }" ;;
		*) echo "$line" ;;
		esac
	done
}
# SUMMARY_RE: a summary line; BASH_REMATCH 1, 2 and 4 are the numbers
# passed, failed and skipped (4 empty without ", N skipped").
# shellcheck disable=SC2034 # used by check.sh
SUMMARY_RE='^([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?$'

# step_result LOG: "P F S" for a step's log (scripts/check.sh): the
# numbers of its last line, its summary, but F the larger of the summary's
# failures and the FAIL lines it printed; without a summary as its last
# line, its FAIL lines and one more. Says why on stdout, as a FAIL line,
# when the FAIL lines or the missing summary decide.
step_result() {
	local last nf
	last=$(tail -n 1 "$1")
	nf=$(grep -c '^FAIL' "$1" || true)
	if [[ $last =~ $SUMMARY_RE ]]; then
		if [ "$nf" -gt "${BASH_REMATCH[2]}" ]; then
			echo "FAIL: its summary counts ${BASH_REMATCH[2]} failed, it printed $nf FAIL lines" >&2
			echo "${BASH_REMATCH[1]} $nf ${BASH_REMATCH[4]:-0}"
		else
			echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]} ${BASH_REMATCH[4]:-0}"
		fi
	else
		echo "FAIL: its last line is not 'N passed, N failed' (it printed $nf FAIL lines)" >&2
		echo "0 $((nf + 1)) 0"
	fi
}
summary() {
	if [ "$SKIPPED" -gt 0 ]; then
		echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
	else
		echo "$PASSED passed, $FAILED failed"
	fi
	[ "$FAILED" -eq 0 ]
}

# Module source files copied by stage_sources.
MODULE_SOURCES=(Kbuild Makefile dkms.conf include kunit maglev_main.c
		maglev_table.c)

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

# compile_check NAME KDIR ARCH KUNIT: build the module with W=1 against
# KDIR (ARCH for a cross tree, or empty) in $w/src-NAME ($w: the caller's
# work directory); PASS or FAIL "compile NAME: ...". KUNIT "kunit": also
# with its KUnit suites (MAGLEV_KUNIT=1), and a KDIR without CONFIG_KUNIT
# fails; "plain": the module alone (Debian's kernels have no
# CONFIG_KUNIT), which the PASS line says. Any compiler or modpost warning
# about our files fails.
# shellcheck disable=SC2154 # w: the caller's work directory
# w1_warnings LOG SRC: print the warnings and errors of a module build
# log LOG in the sources staged at SRC (and modpost's), with SRC cut from
# the paths; true if there were any.
w1_warnings() {
	{ grep -E ': (warning|error):' "$1" | grep -F "$2/"
	  grep 'WARNING: modpost:' "$1"; } | sed "s|$2/||g" | grep .
}

compile_check() {
	local name=$1 kdir=$2 arch=$3 with=$4 src="$w/src-$1" log="$w/$1.log"
	local builds=('')
	stage_sources "$src"
	if [ ! -f "$src/Kbuild" ]; then
		fail "compile $name: module sources missing (no Kbuild)"
		return
	fi
	case $with in
	kunit)
		if ! grep -q '^CONFIG_KUNIT=' "$kdir/include/config/auto.conf"; then
			fail "compile $name: the tree has no CONFIG_KUNIT: the KUnit suites cannot build"
			return
		fi
		builds+=(MAGLEV_KUNIT=1) ;;
	plain)	;;
	*)	fail "compile $name: compile_check KUNIT must be kunit or plain, not '$with'"
		return ;;
	esac
	: >"$log"
	for kunit in "${builds[@]}"; do
		make -C "$kdir" ${arch:+ARCH=$arch} M="$src" clean >/dev/null 2>&1 ||
			true
		# shellcheck disable=SC2086 # kunit is one word or none
		if ! make -C "$kdir" ${arch:+ARCH=$arch} M="$src" W=1 $kunit \
			modules >>"$log" 2>&1; then
			fail "compile $name: build failed${kunit:+ with $kunit} (see $log)"
			grep -iE 'error|warning' "$log" | head -n 20
			return
		fi
	done
	if w1_warnings "$log" "$src"; then
		fail "compile $name: W=1 warnings (see $log)"
	elif [ "$with" = kunit ]; then
		pass "compile $name: W=1 clean, with and without its KUnit suites"
	else
		pass "compile $name: W=1 clean (the module alone: no CONFIG_KUNIT in this tree)"
	fi
}

# Work directory for logs and builds: build/check/ in the tree.
work_dir() {
	mkdir -p "$TOP/build/check/$1"
	echo "$TOP/build/check/$1"
}

# --- Other Debian suites: a private apt configuration in the cache ---
#
# trixie (Debian 13, with its updates, security and backports suites) and
# sid are looked up through an apt configuration of their own under
# $(cache_root)/apt-SUITE/: sources.list, package lists, .deb archive,
# an empty dpkg status and apt's binary caches all live there. The host's
# /etc/apt and /var/lib/apt are only read (apt.conf.d), never written.

# papt_mirror [security]: the Debian mirror this machine's own apt sources
# use (deb822 .sources or one-line .list), the main archive or with
# "security" the security archive: the URI of the first source whose
# suites are not -security (or are).
papt_mirror() {
	local want=${1:-main} f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
		 /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		case $f in
		*.sources)
			awk -v want="$want" '
				function flush() {
					if (uri != "" && types ~ /(^| )deb( |$)/) {
						sec = (suites ~ /-security/)
						if ((want == "security") == sec) {
							print uri; found = 1; exit
						}
					}
					uri = ""; suites = ""; types = ""
				}
				/^[ \t]*$/ { flush(); next }
				/^#/ { next }
				tolower($1) == "uris:" { uri = $2 }
				tolower($1) == "suites:" { $1 = ""; suites = $0 }
				tolower($1) == "types:" { $1 = ""; types = $0 }
				END { if (!found) flush() }' "$f" ;;
		*)
			awk -v want="$want" '
				$1 == "deb" {
					i = 2
					if ($2 ~ /^\[/) while ($i !~ /\]$/) i++
					if ($2 ~ /^\[/) i++
					sec = ($(i + 1) ~ /-security/)
					if ((want == "security") == sec) { print $i; exit }
				}' "$f" ;;
		esac
	done | head -n 1 | sed 's|/*$||'
}

# papt_suites SUITE: the suites of the private configuration SUITE
# (trixie, sid or bookworm-i386), one a line as "URI SUITE".
papt_suites() {
	local main sec
	main=$(papt_mirror) || return 1
	[ -n "$main" ] || { log "no Debian mirror in /etc/apt/sources.list*"; return 1; }
	case $1 in
	trixie)
		sec=$(papt_mirror security)
		[ -n "$sec" ] || sec=${main%/debian}/debian-security
		echo "$main trixie"
		echo "$main trixie-updates"
		echo "$sec trixie-security"
		echo "$main trixie-backports" ;;
	sid)	echo "$main sid" ;;
	bookworm-i386)
		# Debian 12's i386 packages (the 32-bit guest's userspace,
		# i386_userland): this machine's own release, another
		# architecture.
		sec=$(papt_mirror security)
		[ -n "$sec" ] || sec=${main%/debian}/debian-security
		echo "$main bookworm"
		echo "$main bookworm-updates"
		echo "$sec bookworm-security" ;;
	*)	log "no private apt configuration for the suite '$1'"; return 1 ;;
	esac
}

# papt_dir SUITE: the directory of the private apt configuration SUITE.
papt_dir() {
	echo "$(cache_root)/apt-$1"
}

# papt_opts SUITE: set the array PAPT to the apt options that point every
# place apt reads or writes state at the private configuration SUITE.
# apt's binary caches are kept there too, even where apt.conf.d turns them
# off (as container images do): without them every apt-cache call parses
# the package lists again (0.8 s instead of 0.2).
# shellcheck disable=SC2034
papt_opts() {
	local d arch=amd64
	d=$(papt_dir "$1")
	case $1 in *-i386) arch=i386 ;; esac
	PAPT=(-o "Dir::Etc::sourcelist=$d/sources.list"
	      -o "Dir::Etc::sourceparts=$d/empty"
	      -o Dir::Etc::preferences=/dev/null
	      -o "Dir::Etc::preferencesparts=$d/empty"
	      -o "Dir::State=$d/state"
	      -o "Dir::State::Lists=$d/lists"
	      -o "Dir::State::status=$d/status"
	      -o "Dir::State::extended_states=$d/state/extended_states"
	      -o "Dir::Cache=$d/cache"
	      -o "Dir::Cache::pkgcache=$d/cache/pkgcache.bin"
	      -o "Dir::Cache::srcpkgcache=$d/cache/srcpkgcache.bin"
	      -o "Dir::Cache::archives=$d/archives"
	      -o "Dir::Log=$d/log"
	      -o "APT::Architecture=$arch"
	      -o "APT::Architectures::=$arch"
	      -o Acquire::Languages=none
	      -o Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled=false)
}

# papt_setup SUITE: write the private configuration SUITE and update its
# package lists (at most once an hour; PAPT_UPDATE=1 forces it, a failed
# update keeps the lists there were). Fails if it has no lists.
papt_setup() {
	local suite=$1 d src
	d=$(papt_dir "$suite")
	mkdir -p "$d/lists/partial" "$d/archives/partial" "$d/state" \
		"$d/cache" "$d/log" "$d/empty" || return 1
	[ -f "$d/status" ] || : >"$d/status"
	src=$(papt_suites "$suite" | while read -r uri s; do
		echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $s main"
	done) || return 1
	[ "$(cat "$d/sources.list" 2>/dev/null)" = "$src" ] ||
		{ echo "$src" >"$d/sources.list"; rm -f "$d/updated"; }
	papt_opts "$suite"
	(
		flock 9
		if [ -n "${PAPT_UPDATE:-}" ] || [ ! -f "$d/updated" ] ||
		   [ -n "$(find "$d/updated" -mmin +60)" ]; then
			log "apt-get update of the private $suite configuration ($d)"
			if apt-get -q "${PAPT[@]}" update >"$d/update.log" 2>&1 &&
			   ! grep -q '^[WE]: ' "$d/update.log"; then
				touch "$d/updated"
			else
				tail -n 5 "$d/update.log" >&2
				log "apt-get update for $suite failed (log: $d/update.log)"
			fi
		fi
	) 9>"$d/lock" || return 1
	compgen -G "$d/lists/*_Packages*" >/dev/null ||
		{ log "no package lists for $suite in $d/lists"; return 1; }
}

# papt SUITE apt-get|apt-cache ARG...: run apt-get or apt-cache with the
# private configuration SUITE (set up by papt_setup).
papt() {
	local suite=$1 tool=$2
	shift 2
	papt_opts "$suite"
	"$tool" "${PAPT[@]}" "$@"
}

# host_apt_state: checksums of this machine's apt configuration and state,
# to compare before and after a step that uses papt.
host_apt_state() {
	find /etc/apt /var/lib/apt /var/cache/apt/*.bin -maxdepth 3 -type f \
		! -path '/var/lib/apt/lists/partial/*' \
		-exec sha256sum {} + 2>/dev/null | LC_ALL=C sort -k 2
}

# NEWEST_SUITES: where the newest Linux is looked for, in the private
# configurations (SUITE or SUITE:DIST, DIST a suite inside it).
NEWEST_SUITES=(trixie:trixie-backports sid)

# newest_source: find the newest linux-source-N.M package in NEWEST_SUITES
# (apt-cache search, then each one's candidate version). Sets NEWEST_SERIES
# (N.M), NEWEST_PKGVER (its package version), NEWEST_SUITE (the private
# configuration it came from) and NEWEST_DIST (its suite); logs what each
# suite has. Returns 1 if no suite lists any.
newest_source() {
	local entry suite dist p pkgs v s best=''
	NEWEST_SERIES='' NEWEST_PKGVER='' NEWEST_SUITE='' NEWEST_DIST=''
	for entry in "${NEWEST_SUITES[@]}"; do
		suite=${entry%%:*}
		dist=${entry#*:}
		papt_setup "$suite" || continue
		pkgs=$(papt "$suite" apt-cache search --names-only \
			'^linux-source-[0-9]+\.[0-9]+$' | cut -d' ' -f1)
		for p in $pkgs; do
			# The version from that suite (trixie's lists also hold
			# trixie's own older series).
			v=$(papt "$suite" apt-cache madison "$p" |
				awk -F' *[|] *' -v d="$dist" '$3 ~ "(^|/| )" d "[/ ]" { print $2; exit }')
			[ -n "$v" ] || continue
			s=${p#linux-source-}
			log "$dist has $p $v"
			if [ -z "$best" ] ||
			   dpkg --compare-versions "$s.0" gt "${best%% *}.0" ||
			   { [ "$s" = "${best%% *}" ] &&
			     dpkg --compare-versions "$v" gt "$NEWEST_PKGVER"; }; then
				best="$s $v"
				NEWEST_SERIES=$s NEWEST_PKGVER=$v
				NEWEST_SUITE=$suite NEWEST_DIST=$dist
			fi
		done
	done
	[ -n "$best" ]
}

# newest_tarball: newest_source, then its linux-source .deb downloaded into
# the private archive and the tarball taken out of it into the cache
# (once per package version). Sets NEWEST_TARBALL (linux-source-N.M.tar.xz)
# and NEWEST_KEY (a cache key naming series and package version).
# shellcheck disable=SC2034
newest_tarball() {
	local d deb tmp
	newest_source || { log "no linux-source-N.M in ${NEWEST_SUITES[*]}"; return 1; }
	NEWEST_KEY="$NEWEST_SERIES-${NEWEST_PKGVER//[^A-Za-z0-9.-]/_}"
	d="$(cache_root)/linux-source-$NEWEST_KEY"
	NEWEST_TARBALL=$d/linux-source-$NEWEST_SERIES.tar.xz
	[ -f "$d/.ready" ] && return 0
	mkdir -p "$d" || return 1
	(
		flock 9
		[ -f "$d/.ready" ] && exit 0
		log "downloading linux-source-$NEWEST_SERIES=$NEWEST_PKGVER ($NEWEST_DIST)"
		# apt-get download: the one .deb, into the private archive.
		(cd "$(papt_dir "$NEWEST_SUITE")/archives" &&
		 papt "$NEWEST_SUITE" apt-get -q download \
			"linux-source-$NEWEST_SERIES=$NEWEST_PKGVER") \
			>"$d/download.log" 2>&1 || exit 1
		deb=$(find "$(papt_dir "$NEWEST_SUITE")/archives" -maxdepth 1 \
			-name "linux-source-${NEWEST_SERIES}_*.deb" | head -n 1)
		[ -n "$deb" ] || exit 1
		tmp=$d/tmp
		rm -rf "$tmp"
		mkdir -p "$tmp"
		dpkg-deb --fsys-tarfile "$deb" |
			tar -C "$tmp" -xf - "./usr/src/linux-source-$NEWEST_SERIES.tar.xz" ||
			exit 1
		mv -f "$tmp/usr/src/linux-source-$NEWEST_SERIES.tar.xz" "$NEWEST_TARBALL"
		rm -rf "$tmp"
		# The .deb holds nothing else we need.
		rm -f "$deb"
		touch "$d/.ready"
	) 9>"$d.lock" || { log "cannot get linux-source-$NEWEST_SERIES (log: $d/download.log)"; return 1; }
}

# --- Building against another suite's headers, in a root of that suite ---

# Bump when the way the kbuild root is built changes.
KBUILD_ROOT_RECIPE=1

# suite_kbuild_root SUITE DEPFILE: print a root of the Debian SUITE (its
# private configuration, papt_setup) holding make, libc6-dev, binutils and the
# packages listed in DEPFILE (deb_depends of the headers, e.g.
# gcc-14-for-host, pahole): kbuild tools built for a newer C library
# than this machine's (linux-kbuild-7.x needs GLIBC_2.38) run there. Made
# once with mmdebstrap (minbase), cached unpacked under the cache, keyed
# by the recipe, the package list, the sources and mmdebstrap's version.
suite_kbuild_root() {
	local suite=$1 deps=$2 pkgs hash dir
	papt_setup "$suite" || return 1
	pkgs=$( { echo make; echo libc6-dev; echo binutils; grep -v '^$' "$deps"; } |
		LC_ALL=C sort -u | paste -sd, -)
	hash=$( { echo "$KBUILD_ROOT_RECIPE $suite $pkgs"
		  cat "$(papt_dir "$suite")/sources.list"
		  dpkg-query -W -f='${Version}\n' mmdebstrap; } |
		sha256sum | cut -c1-12)
	dir=$(cache_root)/kbuild-root-$suite-$hash
	if [ ! -f "$dir/.ready" ]; then
		need_pkgs mmdebstrap util-linux >&2
		mkdir -p "$dir" || return 1
		(
			flock 9
			[ -f "$dir/.ready" ] && exit 0
			log "building a $suite root for kbuild ($pkgs) with mmdebstrap, once"
			rm -rf "$dir/root"
			nice -n 10 mmdebstrap --variant=minbase --include="$pkgs" \
				--dpkgopt='path-exclude=/usr/share/doc/*' \
				--dpkgopt='path-exclude=/usr/share/man/*' \
				--dpkgopt='path-exclude=/usr/share/locale/*' \
				"$suite" "$dir/root" \
				"$(papt_dir "$suite")/sources.list" \
				>"$dir/mmdebstrap.log" 2>&1 || {
				tail -n 20 "$dir/mmdebstrap.log" >&2
				exit 1
			}
			touch "$dir/.ready"
		) 9>"$dir.lock" || { log "mmdebstrap $suite failed (log: $dir/mmdebstrap.log)"; return 1; }
	fi
	echo "$dir/root"
}

# in_kbuild_root ROOT DIR... -- COMMAND...: run COMMAND (a shell command
# line) in ROOT (chroot, in a private mount namespace, so nothing stays
# mounted) with DIR... bind-mounted at their own paths and /dev, /proc.
in_kbuild_root() {
	local root=$1 binds=() d
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		binds+=("$1")
		shift
	done
	shift
	for d in "${binds[@]}"; do
		mkdir -p "$root$d" || return 1
	done
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare --mount --propagation private /bin/bash -c '
		root=$1 n=$2
		shift 2
		mount --rbind /dev "$root/dev" &&
		mount -t proc proc "$root/proc" || exit 1
		while [ "$n" -gt 0 ]; do
			mount --bind "$1" "$root$1" || exit 1
			shift
			n=$((n - 1))
		done
		exec nice chroot "$root" /usr/bin/env -i HOME=/root \
			PATH=/usr/sbin:/usr/bin:/sbin:/bin /bin/bash -c "$1"
	' in_kbuild_root "$root" "${#binds[@]}" "${binds[@]}" "$*"
}

# stock_build KDIR SRC [MAKE ARGS...]: build the module in SRC against the
# stock headers KDIR (stock_headers): on this machine, or for another
# suite's kernel (STOCK_SUITE set) in suite_kbuild_root of that suite.
stock_build() {
	local kdir=$1 src=$2 hdir root
	shift 2
	if [ -z "${STOCK_SUITE:-}" ]; then
		make -C "$kdir" M="$src" "$@"
		return
	fi
	hdir=${kdir%%/root/usr/src/*}
	root=$(suite_kbuild_root "$STOCK_SUITE" "$hdir/depends") || return 1
	in_kbuild_root "$root" "$hdir" "$src" -- \
		"make -C '$kdir' M='$src' $*"
}
