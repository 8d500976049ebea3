#!/bin/bash
# Build (once) the test kernel and print its build tree on stdout.
#
#   scripts/build-kernel.sh           # KFLAVOUR=default
#   KFLAVOUR=debug scripts/build-kernel.sh
#   KSOURCE=newest scripts/build-kernel.sh   # the newest Linux Debian ships
#   KARCH=i386 KFLAVOUR=nosysctl scripts/build-kernel.sh   # 32-bit x86
#
# The tree is tinyconfig + kconfig/base.config + kconfig/$KFLAVOUR.config,
# built from Debian's linux-source-6.12 (KSOURCE=6.12, the default) or the
# newest linux-source-N.M of trixie-backports and sid (KSOURCE=newest,
# kernel_source in lib.sh) into $MAGLEV_CACHE (default
# /var/cache/ip_vs_maglev). It holds bzImage, Module.symvers and
# everything "make -C <tree> M=<dir>" needs. Later runs only print the path.
set -eu
. "$(dirname "$0")/lib.sh"

KFLAVOUR=${KFLAVOUR:-default}
JOBS=${JOBS:-$(nproc)}
# KARCH=i386: a 32-bit x86 kernel (make ARCH=i386, kconfig/i386.config).
arch=()
case ${KARCH:-x86_64} in
x86_64)	;;
i386)	arch=(ARCH=i386) ;;
*)	die "unknown KARCH '$KARCH' (x86_64 or i386)" ;;
esac

need_pkgs "${BUILD_PKGS[@]}"
kernel_source || die "no kernel source for KSOURCE=${KSOURCE:-6.12}"
dir=$(kernel_cache_dir)
src=$dir/$KSRC_NAME

if [ -f "$dir/.built" ]; then
	echo "$src"
	exit 0
fi

mkdir -p "$dir"
exec 9>"$dir.lock"
flock 9
if [ -f "$dir/.built" ]; then
	echo "$src"
	exit 0
fi

if [ ! -f "$dir/.unpacked" ]; then
	log "unpacking $KSRC_TARBALL into $dir"
	rm -rf "$src"
	tar -C "$dir" -xJf "$KSRC_TARBALL"
	touch "$dir/.unpacked"
fi

# config_wanted FRAG...: each symbol's last setting in the fragments, in
# the order of first mention (a later fragment overrides an earlier one,
# as merge_config.sh does).
config_wanted() {
	awk '/^# CONFIG_[A-Za-z0-9_]+ is not set$/ { sym = $2 }
		/^CONFIG_/ { sym = $0; sub(/=.*/, "", sym) }
		sym != "" {
			if (!(sym in want))
				order[++n] = sym
			want[sym] = $0
			sym = ""
		}
		END { for (i = 1; i <= n; i++) print want[order[i]] }' "$@"
}

# check_config FRAG...: every symbol's last setting in the fragments must
# be in .config, except symbols that no Kconfig file of this tree declares:
# those are logged and left out (7.x folded CONFIG_PROC_SYSCTL into
# CONFIG_SYSCTL).
check_config() {
	local line sym bad=0 known
	known=$(grep -rhoE --include='Kconfig*' '^[[:space:]]*(menu)?config[[:space:]]+[A-Za-z0-9_]+' \
		"$src" | awk '{ print "CONFIG_" $2 }' | LC_ALL=C sort -u)
	while IFS= read -r line; do
		case $line in
		'# CONFIG_'*' is not set') sym=${line#\# }; sym=${sym%% *} ;;
		CONFIG_*) sym=${line%%=*} ;;
		*) continue ;;
		esac
		if ! grep -qxF "$sym" <<<"$known"; then
			log "config: $sym does not exist in $KSRC_NAME $KSRC_VER; '$line' left out"
			continue
		fi
		case $line in
		'# CONFIG_'*' is not set')
			sym=${line#\# }
			sym=${sym%% *}
			if grep -q "^$sym=" "$src/.config"; then
				log "config: wanted '$line', got '$(grep "^$sym=" "$src/.config")'"
				bad=1
			fi ;;
		CONFIG_*)
			if ! grep -qxF "$line" "$src/.config"; then
				log "config: wanted '$line', got '$(grep -E "^(# )?${line%%=*}[= ]" "$src/.config" || echo unset)'"
				bad=1
			fi ;;
		esac
	done < <(config_wanted "$@")
	return $bad
}

# shellcheck disable=SC2046
set -- $(kflavour_frags)
if [ ! -f "$dir/.configured" ]; then
	log "configuring ($KFLAVOUR${KARCH:+, $KARCH}): tinyconfig + ${*#"$TOP/"}"
	make -C "$src" -s "${arch[@]}" tinyconfig >&2
	(cd "$src" && env "${arch[@]}" ./scripts/kconfig/merge_config.sh -m .config "$@") >/dev/null
	make -C "$src" -s "${arch[@]}" olddefconfig >&2
	check_config "$@" || die "kernel config lost options above (missing dependencies in kconfig/?)"
	touch "$dir/.configured"
fi

# Below the tests (nice 0), which "make check" runs beside the builds, and
# from nothing the kernel whose guests are the longest chain first: the
# debug kernel, then the default one (which the compile and static steps
# also need), then the others.
case $KFLAVOUR in
debug)	niceness=5 ;;
default) niceness=10 ;;
*)	niceness=15 ;;
esac
log "building kernel in $src (-j$JOBS, nice $niceness, log: $dir/build.log)"
start=$(date +%s)
if ! nice -n "$niceness" make -C "$src" "${arch[@]}" -j"$JOBS" all >"$dir/build.log" 2>&1; then
	tail -n 40 "$dir/build.log" >&2
	die "kernel build failed; see $dir/build.log"
fi
touch "$dir/.built"
log "kernel built in $(( $(date +%s) - start ))s"
echo "$src"
