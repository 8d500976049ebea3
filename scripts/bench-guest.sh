#!/bin/bash
# bench-guest.sh (make bench-guest): maglev against the kernel's own
# ip_vs_mh inside one QEMU boot of the test kernel. A benchmark: it prints
# figures, it is not a test and passes on any speed.
#
# The test kernel builds mh in with its default 4093 slots. To compare at
# 65521 slots, the kernel tree's own net/netfilter/ipvs/ip_vs_mh.c, not
# modified, is built as a module with tools/bench/guest/mh16.h forced in:
# CONFIG_IP_VS_MH_TAB_INDEX 16 and the scheduler name "mh65521". The guest
# side, tools/bench/guest/rebuild.sh, says what is measured.
#
# Environment: BENCH_N (real servers, default 1000), QEMU_TIMEOUT (default
# 900 s; TCG on a busy machine is slow). Logs: build/check/bench-guest/.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vmlib.sh"

KFLAVOUR=default
export KFLAVOUR
export QEMU_TIMEOUT=${QEMU_TIMEOUT:-900}
N=${BENCH_N:-1000}
case $N in ''|*[!0-9]*) die "BENCH_N must be a number" ;; esac
need_pkgs gcc libc6-dev make

kdir=$("$TOP/scripts/build-kernel.sh")
w=$(work_dir bench-guest)
rm -rf "$w/root" "$w/mh16"
mkdir -p "$w/root/maglev/tests" "$w/root/maglev/bin" "$w/root/maglev/deps" \
	"$w/mh16"
stage_sources "$w/src"

make -C "$kdir" M="$w/src" modules >"$w/module.log" 2>&1 ||
	{ tail -n 30 "$w/module.log"; die "ip_vs_maglev.ko did not build"; }
cp "$w/src/ip_vs_maglev.ko" "$w/root/maglev/"

mhsrc=$kdir/net/netfilter/ipvs/ip_vs_mh.c
[ -f "$mhsrc" ] || die "$mhsrc not found in the test kernel tree"
cp "$mhsrc" "$w/mh16/ip_vs_mh16.c"
cp "$TOP/tools/bench/guest/mh16.h" "$w/mh16/"
cat >"$w/mh16/Kbuild" <<'EOF'
obj-m := ip_vs_mh16.o
ccflags-y := -include $(src)/mh16.h
EOF
make -C "$kdir" M="$w/mh16" modules >"$w/mh16.log" 2>&1 ||
	{ tail -n 30 "$w/mh16.log"; die "ip_vs_mh16.ko did not build"; }
cp "$w/mh16/ip_vs_mh16.ko" "$w/root/maglev/deps/"
echo ip_vs_mh16.ko >"$w/root/maglev/deps.list"

"${HOSTCC:-cc}" -static -O2 -Wall -o "$w/root/maglev/bin/nsclock" \
	"$TOP/tools/bench/guest/nsclock.c"
cp "$TOP/tools/bench/guest/rebuild.sh" "$w/root/maglev/tests/"

"$TOP/scripts/mkinitramfs.sh" "$w/initramfs.cpio" "$w/root"

# Under TCG the guest's TSC runs at the host's TSC rate, but the test
# kernel cannot calibrate it (no PIT/HPET reference) and falls back to
# jiffies, 4 ms steps. Tell it the host's rate (a constant TSC's "cpu MHz"),
# so that its clock, and build_ns, have nanosecond steps.
tsc=()
if grep -qw constant_tsc /proc/cpuinfo; then
	khz=$(awk -F: '/^cpu MHz/ { printf "%d", $2 * 1000; exit }' /proc/cpuinfo)
	[ -n "$khz" ] && [ "$khz" -gt 0 ] && tsc=("tsc_early_khz=$khz")
fi
log "booting the test kernel (TCG; this takes a few minutes)"
bench_boot "$w" "$kdir" rebuild.sh "${tsc[@]}" "maglev.n=$N"
bench_report bench-guest "$w" '^PASS: bench-guest finished'
