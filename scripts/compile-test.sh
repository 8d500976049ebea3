#!/bin/bash
# compile-test.sh: build ip_vs_maglev.ko with W=1 against Debian's stock
# 6.1 and 6.12 cloud headers, and it with and without its KUnit suites
# (MAGLEV_KUNIT=1; the stock kernels lack CONFIG_KUNIT) against the test
# kernel rewritten to the form before dest->cflags, and against a 32-bit x86
# kernel tree (i386, modules_prepare only, cached like the test kernel),
# where a 64-bit division the compiler turns into __udivdi3 and the like
# is an undefined symbol, and against the 6.1 headers rewritten to the
# form of stable releases before dest->cflags and <linux/array_size.h>.
# Any compiler or modpost warning about our files is a failure. The stock
# headers come from the cache (stock_headers in lib.sh), not /usr/src.
# The test kernels themselves (default, debug, nosysctl) and Debian's newest
# kernel are compiled against W=1 by scripts/vm-test.sh, which loads the
# result.
# Logs: build/check/compile/.
set -eu
. "$(dirname "$0")/lib.sh"

need_pkgs "${BUILD_PKGS[@]}"
w=$(work_dir compile)

# The 32-bit tree: tinyconfig plus what the module needs, for ARCH=i386.
I386_RECIPE=1
I386_CONFIG='CONFIG_MODULES=y
CONFIG_MODULE_UNLOAD=y
CONFIG_SMP=y
CONFIG_PROC_FS=y
CONFIG_SYSFS=y
CONFIG_NET=y
CONFIG_INET=y
CONFIG_IPV6=y
CONFIG_NETFILTER=y
CONFIG_NETFILTER_ADVANCED=y
CONFIG_NF_CONNTRACK=y
CONFIG_IP_VS=y
CONFIG_IP_VS_IPV6=y
CONFIG_IP_VS_PROTO_TCP=y
CONFIG_IP_VS_PROTO_UDP=y
CONFIG_IP_VS_PROTO_SCTP=y
CONFIG_DEBUG_FS=y
CONFIG_KUNIT=y
# CONFIG_KUNIT_ALL_TESTS is not set'

# i386_tree: print a 32-bit x86 kernel tree ready for external modules,
# made once from linux-source-6.12 into the cache: unpacked (without the
# parts modules_prepare does not read), configured, "make modules_prepare",
# and a Module.symvers listing every symbol exported by the x86 and
# generic code (no vmlinux is built), so that modpost reports any other
# undefined symbol as an error.
i386_tree() {
	local ver hash dir src line d dirs
	ver=$(dpkg-query -W -f='${Version}' linux-source-6.12) || return 1
	hash=$(printf '%s\n%s\n' "$I386_RECIPE" "$I386_CONFIG" |
		sha256sum | cut -c1-12)
	dir=$(cache_root)/i386-${ver//[^A-Za-z0-9.-]/_}-$hash
	src=$dir/linux-source-6.12
	if [ ! -f "$dir/.ready" ]; then
		mkdir -p "$dir" || return 1
		(
			flock 9
			[ -f "$dir/.ready" ] && exit 0
			log "preparing a 32-bit x86 tree in $dir (once)"
			if [ ! -f "$dir/.unpacked" ]; then
				rm -rf "$src"
				tar -C "$dir" -xJf /usr/src/linux-source-6.12.tar.xz \
					--exclude='linux-source-6.12/Documentation/*/*' \
					--exclude='linux-source-6.12/drivers/*.[ch]' \
					--exclude='linux-source-6.12/sound/*.[ch]' ||
					exit 1
				touch "$dir/.unpacked"
			fi
			printf '%s\n' "$I386_CONFIG" >"$dir/frag.config"
			make -C "$src" -s ARCH=i386 tinyconfig >&2 &&
			(cd "$src" && ARCH=i386 ./scripts/kconfig/merge_config.sh \
				-m .config "$dir/frag.config") >/dev/null &&
			make -C "$src" -s ARCH=i386 olddefconfig >&2 || exit 1
			grep -qx 'CONFIG_X86_32=y' "$src/.config" || exit 1
			while IFS= read -r line; do
				case $line in
				CONFIG_*) grep -qxF "$line" "$src/.config" || {
					log "i386 config lost $line"; exit 1; } ;;
				esac
			done <"$dir/frag.config"
			nice make -C "$src" ARCH=i386 -j"$(nproc)" \
				modules_prepare >"$dir/prepare.log" 2>&1 || {
				tail -n 20 "$dir/prepare.log" >&2; exit 1; }
			# EXPORT_SYMBOL*(sym) of all but the other architectures.
			dirs=("$src/arch/x86")
			for d in "$src"/*/; do
				case ${d%/} in
				*/arch | */Documentation | */tools) ;;
				*) dirs+=("${d%/}") ;;
				esac
			done
			# kernel/params.c exports param_{get,set,ops}_TYPE
			# through STANDARD_PARAM_DEF(TYPE, ...).
			{
				grep -rhoE --include='*.[chS]' \
					'EXPORT_SYMBOL(_GPL)?\([A-Za-z_][A-Za-z0-9_]*\)' \
					"${dirs[@]}" |
					sed -E 's/^EXPORT_SYMBOL(_GPL)?\((.*)\)$/\2 EXPORT_SYMBOL\1/'
				sed -nE 's/^STANDARD_PARAM_DEF\(([a-z]+),.*/\1/p' \
					"$src/kernel/params.c" |
					awk '{ for (i = 1; i <= 3; i++)
						print "param_" substr("getsetops", 3 * i - 2, 3) "_" $1,
						      "EXPORT_SYMBOL" }'
			} | sort | awk '!seen[$1]++ {
				printf "0x00000000\t%s\tvmlinux\t%s\t\n", $1, $2 }' \
				>"$src/Module.symvers" || exit 1
			grep -qF "$(printf '\tkfree\t')" "$src/Module.symvers" ||
				{ log "no exports found in $src"; exit 1; }
			touch "$dir/.ready"
		) 9>"$dir.lock" || return 1
	fi
	echo "$src"
}

# The stock headers are downloaded into the cache, not installed
# (stock_headers in lib.sh).
for series in 6.1 6.12; do
	if stock_headers "$series"; then
		compile_check "$STOCK_VER" "$STOCK_KDIR" "" plain
	else
		fail "compile: get the headers of Debian's $series cloud kernel"
	fi
done
# Stable 6.1.y and 6.6.y releases before the dest->cflags backport kept
# the availability bit in dest->flags (IP_VS_DEST_F_AVAILABLE), and 6.1.y
# before 6.1.159 had no <linux/array_size.h> (ARRAY_SIZE() was defined in
# <linux/kernel.h>) nor, in its early updates, <kunit/visibility.h>
# (VISIBLE_IF_KUNIT); the current 6.1 headers rewritten to that form build
# the other side of include/kcompat.mk. Hard links, and sed -i writes new
# files, so the cached headers stay as they are.
# pre_cflags_tree KDIR VER: print the rewritten tree's build directory.
pre_cflags_tree() {
	local kdir=$1 ver=$2 root dir h k
	root=${kdir%%/usr/src/*}
	dir="$w/pre-cflags"
	rm -rf "$dir"
	mkdir -p "$dir"
	cp -al "$root" "$dir/root" || return 1
	sed -i "s|$root/|$dir/root/|" "$dir/root/usr/src/linux-headers-$ver/Makefile" ||
		return 1
	h=$(find "$dir/root/usr/src" -path '*/include/net/ip_vs.h' | head -n 1)
	[ -n "$h" ] && grep -q IP_VS_DEST_CF_AVAILABLE "$h" || return 1
	sed -i -e '/unsigned long[[:space:]]*cflags;/d' \
		-e 's/IP_VS_DEST_CF_AVAILABLE/IP_VS_DEST_F_AVAILABLE/' "$h" || return 1
	! grep -q cflags "$h" || return 1
	k=$(find "$dir/root/usr/src" -path '*/include/linux/kernel.h' | head -n 1)
	[ -n "$k" ] && [ -f "${k%/*}/array_size.h" ] || return 1
	rm "${k%/*}/array_size.h"
	sed -i '/^#include <linux\/array_size.h>$/d' "${k%/*}/string.h" || return 1
	sed -i 's|^#include <linux/array_size.h>$|#define ARRAY_SIZE(arr) (sizeof(arr) / sizeof((arr)[0]) + __must_be_array(arr))|' \
		"$k" || return 1
	grep -q '^#define ARRAY_SIZE' "$k" || return 1
	! grep -rqs 'linux/array_size\.h' "$dir/root/usr/src" || return 1
	find "$dir/root/usr/src" -path '*/include/kunit/visibility.h' -delete ||
		return 1
	echo "$dir/root/usr/src/linux-headers-$ver"
}

if stock_headers 6.1 && kdir=$(pre_cflags_tree "$STOCK_KDIR" "$STOCK_VER"); then
	compile_check "$STOCK_VER-pre-cflags" "$kdir" "" plain
	if grep -q -- -DMAGLEV_HAVE_DEST_CFLAGS \
		"$w/src-$STOCK_VER-pre-cflags/.maglev_main.o.cmd" 2>/dev/null; then
		fail "compile $STOCK_VER-pre-cflags: Kbuild still saw dest->cflags"
	else
		pass "compile $STOCK_VER-pre-cflags: built with dest->flags (no cflags)"
	fi
	if grep -q 'include/compat/linux/array_size\.h' \
		"$w/src-$STOCK_VER-pre-cflags/.maglev_main.o.cmd" 2>/dev/null; then
		pass "compile $STOCK_VER-pre-cflags: ARRAY_SIZE() through include/compat/linux/array_size.h"
	else
		fail "compile $STOCK_VER-pre-cflags: include/compat/linux/array_size.h not used"
	fi
	if grep -q 'include/compat/kunit/visibility\.h' \
		"$w/src-$STOCK_VER-pre-cflags/.maglev_main.o.cmd" 2>/dev/null; then
		pass "compile $STOCK_VER-pre-cflags: VISIBLE_IF_KUNIT through include/compat/kunit/visibility.h"
	else
		fail "compile $STOCK_VER-pre-cflags: include/compat/kunit/visibility.h not used"
	fi
	rm -rf "$w/pre-cflags"
else
	fail "compile: rewrite the 6.1 headers to the form before dest->cflags"
fi
# The test kernel's own tree: scripts/vm-test.sh builds the module there
# W=1, with and without KUnit, and fails on a warning.
kdir=$("$TOP/scripts/build-kernel.sh")
# The KUnit suites against the form before dest->cflags: the stock headers
# have no CONFIG_KUNIT, so the test kernel's tree is rewritten the same
# way (hard links; only include/net/ip_vs.h is a new file).
# pre_cflags_kernel_tree KDIR: print the rewritten tree.
pre_cflags_kernel_tree() {
	local kdir=$1 dir="$w/pre-cflags-kunit" h
	rm -rf "$dir"
	mkdir -p "$dir"
	cp -al "$kdir" "$dir/linux" || return 1
	h=$dir/linux/include/net/ip_vs.h
	grep -q IP_VS_DEST_CF_AVAILABLE "$h" || return 1
	sed -i -e '/unsigned long[[:space:]]*cflags;/d' \
		-e 's/IP_VS_DEST_CF_AVAILABLE/IP_VS_DEST_F_AVAILABLE/' "$h" || return 1
	! grep -q cflags "$h" || return 1
	echo "$dir/linux"
}
if kdir=$(pre_cflags_kernel_tree "$kdir"); then
	compile_check test-kernel-pre-cflags "$kdir" "" kunit
	if grep -q -- -DMAGLEV_HAVE_DEST_CFLAGS \
		"$w/src-test-kernel-pre-cflags/kunit/.maglev_table_test.o.cmd" 2>/dev/null ||
	   [ ! -f "$w/src-test-kernel-pre-cflags/kunit/.maglev_table_test.o.cmd" ]; then
		fail "compile test-kernel-pre-cflags: KUnit not built with dest->flags"
	else
		pass "compile test-kernel-pre-cflags: KUnit built with dest->flags (no cflags)"
	fi
	rm -rf "$w/pre-cflags-kunit"
else
	fail "compile: rewrite the test kernel's ip_vs.h to the form before dest->cflags"
fi
if kdir=$(i386_tree); then
	compile_check i386 "$kdir" i386 kunit
else
	fail "compile i386: cannot prepare a 32-bit x86 tree from linux-source-6.12"
fi
summary
