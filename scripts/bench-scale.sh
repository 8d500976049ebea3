#!/bin/bash
# bench-scale.sh (make bench-scale): a kube-proxy-like set at scale, in one
# QEMU boot of the test kernel, with the module's defaults. A benchmark: it
# prints figures, it is not a test and passes on any speed.
#
# The guest runs parts a and b of guest test 22-scale-share
# (tests/guest/22-scale-share.sh, SHARE_BENCH=1) with BENCH_SERVICES
# virtual services in groups of 4 sharing 3 endpoints, plus one of 100 and
# one of 1000 endpoints: memory per virtual service against rr and the
# kernel's own mh (slab objects + VmallocUsed, SUnreclaim + VmallocUsed,
# /proc/meminfo, the largest kmalloc caches from /proc/slabinfo), then one
# endpoint removed from every group with one ipvsadm -R, with the time
# until every table is current and the fills (table builds) it took
# against the number of distinct server sets. The invariants of the test
# (one table per distinct set, digests equal to maglev-sim's, at most one
# fill per set) are checked as in the test and reported.
#
# Environment: BENCH_SERVICES (default 4000), QEMU_TIMEOUT (default 1800 s;
# TCG on a busy machine is slow), QEMU_MEM (default 2G).
# Logs: build/check/bench-scale/.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vmlib.sh"

KFLAVOUR=default
export KFLAVOUR
export QEMU_TIMEOUT=${QEMU_TIMEOUT:-1800}
export QEMU_MEM=${QEMU_MEM:-2G}
S=${BENCH_SERVICES:-4000}
case $S in ''|*[!0-9]*) die "BENCH_SERVICES must be a number" ;; esac
need_pkgs gcc libc6-dev make

kdir=$("$TOP/scripts/build-kernel.sh")
w=$(work_dir bench-scale)
rm -rf "$w/root" "$w/tools"
mkdir -p "$w/root/maglev/tests" "$w/root/maglev/bin"
stage_sources "$w/src"

make -C "$kdir" M="$w/src" modules >"$w/module.log" 2>&1 ||
	{ tail -n 30 "$w/module.log"; die "ip_vs_maglev.ko did not build"; }
cp "$w/src/ip_vs_maglev.ko" "$w/root/maglev/"
make -C "$TOP" BUILD="$w/tools" tools guest-tools >"$w/tools.log" 2>&1 ||
	{ tail -n 30 "$w/tools.log"; die "make tools guest-tools failed"; }
find "$w/tools" -maxdepth 1 -type f -perm -u+x \
	-exec cp {} "$w/root/maglev/bin/" \;
cp "$w/tools/maglev-sim" "$w/root/maglev/"

cp -r "$TOP/tests/guest/." "$w/root/maglev/tests/"
cat >"$w/root/maglev/tests/bench-scale.sh" <<EOF
#!/bin/sh
SHARE_SERVICES=$S SHARE_BENCH=1 CATCHUP_TIMEOUT=$((QEMU_TIMEOUT - 120))
export SHARE_SERVICES SHARE_BENCH CATCHUP_TIMEOUT
exec sh /maglev/tests/22-scale-share.sh
EOF
chmod +x "$w/root/maglev/tests/bench-scale.sh"

"$TOP/scripts/mkinitramfs.sh" "$w/initramfs.cpio" "$w/root"

log "booting the test kernel with $S virtual services in groups of 4 (TCG; this takes a while)"
bench_boot "$w" "$kdir" bench-scale.sh
bench_report bench-scale "$w" '^@@ END bench-scale.sh 0'
