#!/bin/bash
# bench-conn-guest.sh (make bench-conn-guest): per new connection, maglev
# against the kernel's own ip_vs_mh, inside one QEMU boot of the test
# kernel. A benchmark: it prints figures, it is not a test and passes on
# any speed.
#
# The benchmark module tools/bench/kmod/ip_vs_connbench.c (its own Kbuild;
# not part of ip_vs_maglev.ko, never installed) is built against the test
# kernel and loaded only in the guest. The guest side,
# tools/bench/kmod/connbench.sh, makes an mh and a maglev service for each
# key kind (IPv4, IPv4+port, IPv6, IPv6+port) and N (100, 5), and the
# module times each service's own schedule() on prebuilt packets with a
# new random client each call, mh and maglev interleaved round by round.
#
# The guest runs under TCG, QEMU's software emulation: its nanoseconds are
# the emulator's, not a CPU's. What compares is the two schedulers' real
# code side by side under the same emulator; make bench-host times the
# same path on the host CPU.
#
# Environment: BENCH_ROUNDS (default 101), BENCH_BATCH (calls per batch,
# default 4096), KSOURCE (6.12, the default, or newest: the newest Linux
# Debian ships, as scripts/build-kernel.sh), QEMU_TIMEOUT (default 900 s).
# Logs: build/check/bench-conn-guest/ (bench-conn-guest-newest/).
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vmlib.sh"

KFLAVOUR=default
export KFLAVOUR
export QEMU_TIMEOUT=${QEMU_TIMEOUT:-900}
ROUNDS=${BENCH_ROUNDS:-101}
BATCH=${BENCH_BATCH:-4096}
case $ROUNDS$BATCH in ''|*[!0-9]*)
	die "BENCH_ROUNDS and BENCH_BATCH must be numbers" ;;
esac
need_pkgs gcc libc6-dev make

kdir=$("$TOP/scripts/build-kernel.sh")
name=bench-conn-guest
[ "${KSOURCE:-6.12}" = 6.12 ] || name+=-$KSOURCE
w=$(work_dir "$name")
rm -rf "$w/root" "$w/kmod"
mkdir -p "$w/root/maglev/tests" "$w/root/maglev/connbench" "$w/kmod"
stage_sources "$w/src"

make -C "$kdir" M="$w/src" modules >"$w/module.log" 2>&1 ||
	{ tail -n 30 "$w/module.log"; die "ip_vs_maglev.ko did not build"; }
cp "$w/src/ip_vs_maglev.ko" "$w/root/maglev/"

cp "$TOP/tools/bench/kmod/Kbuild" "$TOP/tools/bench/kmod/ip_vs_connbench.c" \
	"$w/kmod/"
make -C "$kdir" M="$w/kmod" modules >"$w/kmod.log" 2>&1 ||
	{ tail -n 30 "$w/kmod.log"; die "ip_vs_connbench.ko did not build"; }
cp "$w/kmod/ip_vs_connbench.ko" "$w/root/maglev/connbench/"
cp "$TOP/tools/bench/kmod/connbench.sh" "$w/root/maglev/tests/"

"$TOP/scripts/mkinitramfs.sh" "$w/initramfs.cpio" "$w/root"

log "booting the test kernel (TCG; this takes a few minutes)"
bench_boot "$w" "$kdir" connbench.sh "maglev.rounds=$ROUNDS" \
	"maglev.batch=$BATCH"
bench_report bench-conn-guest "$w" '^PASS: bench-conn-guest finished'
