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
# links; takes trixie's keepalived too (Debian 13, a newer upstream
# release), with trixie's libraries, in a root of its own
# (keepalived_suite_pkg); boots the guest once, which runs
# scripts/stock-keepalived-guest.sh: the keepalived checks with each
# keepalived, then kube-proxy's sequences. Results are named
# "keepalived ..." (this machine's keepalived), "keepalived trixie
# VERSION ..." and "kube-proxy ...".
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
	KA_VER=$ver
}

# Bump when the layout of keepalived_suite_pkg's cache changes.
KA_SUITE_RECIPE=2

# root_paths ROOT PATH...: PATH... (in ROOT) and, for a symbolic link,
# each link of its chain to the file, with every directory above them
# up to ROOT, relative to ROOT ("./usr/lib/..."), one a line: what an
# archive of just these files needs. A directory on the way that is a
# link (lib64 -> usr/lib64) is followed, and listed as a link by the
# caller.
root_paths() {
	local root=$1 p t
	shift
	for p in "$@"; do
		while :; do
			p=$(readlink -f "${p%/*}")/${p##*/}
			case $p in "$root"/*) ;; *) break ;; esac
			t=${p#"$root"}
			while [ -n "$t" ]; do
				echo ".$t"
				t=${t%/*}
			done
			[ -L "$p" ] || break
			t=$(readlink "$p")
			case $t in
			/*) p=$root$t ;;
			*) p=${p%/*}/$t ;;
			esac
		done
	done
}

# keepalived_suite_pkg SUITE: the keepalived of another Debian release, its
# candidate in the private apt configuration SUITE (papt_setup), with the
# library packages it needs from SUITE (suite_lib_closure), downloaded
# and unpacked into one root of that release in the cache: it links
# SUITE's C library and libraries, which this machine does not have, and
# runs in the guest chrooted into that root. The guest gets keepalived's
# own files (but its documentation), the root's /etc, its dynamic loader
# and the libraries its ELF headers name (elf_needed: every one must be
# in the root), as a cpio archive written once that
# lays them out under /sysroot/SUITE, to append to the initramfs (the
# whole root, usr/share/doc/keepalived included, stays in the cache
# directory, under tree/sysroot/SUITE). Sets KA_SUITE_VER and
# KA_SUITE_CPIO.
keepalived_suite_pkg() {
	local suite=$1 ver dir
	papt_setup "$suite" || return 1
	ver=$(papt "$suite" apt-cache policy keepalived 2>/dev/null |
		sed -n 's/^ *Candidate: //p')
	if [ -z "$ver" ] || [ "$ver" = '(none)' ]; then
		log "the private $suite configuration knows no keepalived package"
		return 1
	fi
	dir="$(cache_root)/keepalived-$suite-${ver//[^A-Za-z0-9.-]/_}-r$KA_SUITE_RECIPE"
	if [ ! -f "$dir/.ready" ]; then
		mkdir -p "$dir"
		( flock 9
		  [ -f "$dir/.ready" ] && exit 0
		  rm -rf "$dir/dl" "$dir/tree" "$dir/sysroot.cpio"
		  mkdir -p "$dir/dl"
		  suite_lib_closure "$suite" "keepalived=$ver" \
			>"$dir/packages" || exit 1
		  log "downloading $suite's keepalived=$ver and $(($(wc -l <"$dir/packages") - 1)) library packages into $dir"
		  mapfile -t pkgs < <(sed '1s/.*/&='"$ver"'/' "$dir/packages")
		  (cd "$dir/dl" &&
		   papt "$suite" apt-get -q download "${pkgs[@]}") \
			>"$dir/download.log" 2>&1 || exit 1
		  r=$dir/tree/sysroot/$suite
		  # A merged-/usr root, as Debian 13's own; mount points for
		  # the guest.
		  mkdir -p "$r"/usr/{bin,sbin,lib,lib64} \
			"$r"/{etc,proc,sys,dev,tmp,run}
		  for l in bin sbin lib lib64; do
			ln -s "usr/$l" "$r/$l"
		  done
		  for deb in "$dir"/dl/*.deb; do
			dpkg-deb --fsys-tarfile "$deb" |
				tar -C "$r" -x --keep-directory-symlink ||
				exit 1
		  done
		  ka=$r/usr/sbin/keepalived
		  interp=$(readelf -l "$ka" |
			sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')
		  case $(readlink -f "$r$interp") in
		  "$r"/*) ;;
		  *) log "$r has no $interp, the loader of keepalived"; exit 1 ;;
		  esac
		  libs=$(elf_needed "$r" "$ka") || exit 1
		  # keepalived's own files but its documentation: 2.3's
		  # reproducible build reads the build options that --version
		  # prints from /etc/keepalived/keepalived.config-opts, and
		  # will not start without it ("Unable to read build config
		  # options file"). And /etc of every package (libnl's
		  # classid, ...).
		  own=$(dpkg-deb --fsys-tarfile "$dir"/dl/keepalived_*.deb |
			tar -t | grep -v -e '/$' -e '^\./usr/share/doc/' \
				-e '^\./usr/share/man/' | sed "s|^\.|$r|")
		  own+=$'\n'$(find "$r/etc" ! -type d)
		  # shellcheck disable=SC2086 # one path a word
		  { printf '%s\n' ./sysroot "./sysroot/$suite" ./sysroot/"$suite"/{bin,sbin,lib,lib64,usr,etc,proc,sys,dev,tmp,run}
		    (cd "$dir/tree" && root_paths "$dir/tree" "$ka" "$r$interp" \
			$libs $own); } |
			LC_ALL=C sort -u >"$dir/files"
		  (cd "$dir/tree" && cpio -o -H newc -R 0:0 --quiet <"$dir/files") \
			>"$dir/sysroot.cpio" || exit 1
		  rm -rf "$dir/dl"
		  touch "$dir/.ready" ) 9>"$dir.lock" || {
			log "cannot make a root with $suite's keepalived $ver (see $dir/download.log)"
			return 1
		}
	fi
	KA_SUITE_VER=$ver
	KA_SUITE_CPIO=$dir/sysroot.cpio
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
codename=$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release 2>/dev/null)
pass "$label: ${codename:-this machine}'s keepalived $KA_VER (this machine's apt), its libraries this machine's"
# The keepalived runs of the guest, one a line: the root it runs in and
# the name of its results. This machine's keepalived is "keepalived", as
# it always was; trixie's is named with its release and version.
echo "/ keepalived" >"$w/root/maglev/keepalived.runs"
KA_SUITE_CPIO=
if keepalived_suite_pkg trixie; then
	pass "$label: trixie's keepalived $KA_SUITE_VER, in a root of trixie's packages: keepalived and the $(($(wc -l <"${KA_SUITE_CPIO%/*}/packages") - 1)) library packages it needs, every library it links there"
	echo "/sysroot/trixie keepalived trixie $KA_SUITE_VER" \
		>>"$w/root/maglev/keepalived.runs"
else
	fail "$label: get trixie's keepalived and its libraries from trixie (private apt configuration)"
	KA_SUITE_CPIO=
fi

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
# trixie's root, a cpio archive of its own: the kernel unpacks
# concatenated archives one after the other.
[ -z "$KA_SUITE_CPIO" ] || cat "$KA_SUITE_CPIO" >>"$w/initramfs.cpio"
export QEMU_TIMEOUT=${QEMU_TIMEOUT:-360}
vm_boot "$label" "$STOCK_ROOT/boot/vmlinuz-$ver" "$w/initramfs.cpio" "$w" \
	"" maglev.job=test:keepalived.sh maglev.ko=none \
	maglev.timeout=$((QEMU_TIMEOUT - 40))
summary
