#!/bin/bash
# demo.sh (make demo): see the maglev scheduler work, on a fresh Debian 12
# or 13 machine, without building a kernel.
#
# Installs what it needs with apt-get (gcc, QEMU, busybox, ipvsadm,
# iproute2, socat), builds ip_vs_maglev.ko against the headers of Debian's
# stock cloud kernel (Debian 12: 6.12 from its updates; Debian 13: its own,
# STOCK_SERIES_DEFAULT in lib.sh) and maglev-sim, and boots that kernel under
# QEMU (TCG, no network device) with an initramfs that holds them and
# scripts/demo-guest.sh. Neither the stock kernel nor its headers are
# installed: their .debs are downloaded and unpacked into the cache
# (stock_kernel, stock_headers in lib.sh), nothing goes into /boot. Nothing is loaded into
# this machine's kernel and its network is not touched: at the end the demo
# compares /proc/modules and the kernel's taint flags with what they were
# at its start (kernel_state_check in lib.sh) and fails if an ip_vs module
# appeared or a module taint flag was set.
#
# The guest creates a maglev service with five real servers in network
# namespaces, sends DEMO_FLOWS (default 3000) flows, adds a sixth server,
# then removes one, and prints the shares and the churn each time. Then
# three LBs behind an ECMP router carry TCP connections, one LB dies, and
# every connection goes on with its real server.
#
# Environment: DEMO_FLOWS (10..60000, default 3000), DEMO_ASCII=1 (bars of
# "#" for terminals without Unicode), QEMU_TIMEOUT (default 600).
# Work files and logs: build/demo/.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vmlib.sh"

# modprobe and friends live in sbin, which a normal user's PATH may lack.
PATH=$PATH:/usr/sbin:/sbin

# A set-up problem: one line saying what to do, then stop.
unfit() { echo "make demo: $*" >&2; exit 1; }

DEMO_PKGS=(make gcc libc6-dev kmod xz-utils cpio busybox-static ipvsadm
	   iproute2 socat qemu-system-x86)
FLOWS=${DEMO_FLOWS:-3000}
case $FLOWS in ''|*[!0-9]*) unfit "DEMO_FLOWS must be a number (10..60000)" ;; esac
if [ "$FLOWS" -lt 10 ] || [ "$FLOWS" -gt 60000 ]; then
	unfit "DEMO_FLOWS must be in 10..60000"
fi

if ! command -v apt-get >/dev/null || ! command -v dpkg-query >/dev/null; then
	unfit "needs Debian 12 (apt-get and dpkg were not found)"
fi
[ "$(dpkg --print-architecture)" = amd64 ] ||
	unfit "needs an amd64 (x86-64) Debian 12 machine: it boots Debian's amd64 kernel under QEMU"

missing=()
for p in "${DEMO_PKGS[@]}"; do
	dpkg-query -W -f='${db:Status-Status}\n' "$p" 2>/dev/null |
		grep -qx installed || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" -ne 0 ]; then
	unfit "run it as root (sudo make demo) so it can install: ${missing[*]}"
fi

kernel_before=$(kernel_state)
t_start=$(date +%s)
step() { printf '[%3ss] %s\n' "$(($(date +%s) - t_start))" "$*"; }

if [ ${#missing[@]} -gt 0 ]; then
	step "installing with apt-get: ${missing[*]}"
	need_pkgs "${DEMO_PKGS[@]}"
fi
command -v qemu-system-x86_64 >/dev/null ||
	unfit "qemu-system-x86_64 not found: apt-get install qemu-system-x86"
ver=$(stock_kver) ||
	unfit "apt-cache finds no Debian $STOCK_SERIES_DEFAULT cloud kernel ($(stock_meta)): run apt-get update"
[ -f "$(stock_dir)/.ready" ] ||
	step "getting the stock kernel $ver: its linux-image and linux-headers packages, unpacked into the cache (once)"
stock_kernel ||
	unfit "cannot get Debian's stock kernel $ver (see the lines above)"
stock_headers ||
	unfit "cannot get the headers of Debian's stock kernel $ver (see the lines above)"

w="$TOP/build/demo"
mkdir -p "$w"
rm -rf "$w/root"
mkdir -p "$w/root/maglev/deps" "$w/root/maglev/tests" "$w/root/maglev/bin"

step "building ip_vs_maglev.ko against the $ver headers"
stage_sources "$w/src"
if ! make -C "$STOCK_KDIR" M="$w/src" modules \
	>"$w/module.log" 2>&1; then
	tail -n 30 "$w/module.log" >&2
	die "building ip_vs_maglev.ko failed (log: $w/module.log)"
fi
cp "$w/src/ip_vs_maglev.ko" "$w/root/maglev/"

step "building maglev-sim and tcpfleet (make tools guest-tools)"
if ! make -C "$TOP" BUILD="$w/tools" tools guest-tools >"$w/tools.log" 2>&1; then
	tail -n 30 "$w/tools.log" >&2
	die "make tools guest-tools failed (log: $w/tools.log)"
fi
cp "$w/tools/maglev-sim" "$w/root/maglev/"
cp "$w/tools/tcpfleet" "$w/root/maglev/bin/"

# ip_vs, veth and pktgen from the stock kernel with their dependencies, in
# load order, decompressed for busybox insmod.
step "gathering ip_vs, veth, pktgen and bridge of $ver from $STOCK_ROOT"
stock_modules "$STOCK_ROOT" "$ver" "$w/root/maglev" ip_vs veth pktgen bridge ||
	die "cannot gather the stock kernel's modules"
cp "$TOP/scripts/demo-guest.sh" "$w/root/maglev/tests/demo.sh"

step "building the initramfs"
"$TOP/scripts/mkinitramfs.sh" "$w/initramfs.cpio" "$w/root"

step "booting $ver under QEMU (TCG, -nic none); the guest's output follows"
con="$w/console.log"
res="$w/results.log"
: >"$res"
export QEMU_TIMEOUT=${QEMU_TIMEOUT:-600}
"$TOP/scripts/qemu-run.sh" "$STOCK_ROOT/boot/vmlinuz-$ver" "$w/initramfs.cpio" \
	"$con" "$res" maglev.job=test:demo.sh \
	maglev.timeout=$((QEMU_TIMEOUT - 30)) maglev.flows="$FLOWS" \
	maglev.ascii="${DEMO_ASCII:-0}" &
qpid=$!

# Show the guest's demo output (between @@ BEGIN and @@ END) as it comes,
# and keep it in build/demo/transcript.txt: scripts/doc-examples.sh checks
# the docs' demo examples against it.
rc=
tr="$w/transcript.txt"
: >"$tr"
while IFS= read -r line; do
	line=${line%$'\r'}
	case $line in
	'@@ BEGIN '*) ;;
	'@@ END '*) rc=${line##* } ;;
	'@@ '*) ;;
	'FAIL: '*) echo "guest: ${line#FAIL: }" ;;
	*) echo "$line"; printf '%s\n' "$line" >>"$tr" ;;
	esac
done < <(tail -n +1 -f --pid=$qpid "$res" 2>/dev/null)
qrc=0
wait $qpid || qrc=$?

bug_re=${KERNEL_BUG_RE:-'WARNING:|BUG:|Oops|Kernel panic|Call Trace:'}
bad=$(tr -d '\r' <"$con" | grep -E -m 5 -- "$bug_re" || true)
if [ -n "$bad" ]; then
	tr -d '\r' <"$con" | grep -E -m 1 -A 40 -- "$bug_re" >&2
	die "the guest kernel reported a problem (console: $con)"
fi
[ "$qrc" -eq 124 ] && die "QEMU timed out after ${QEMU_TIMEOUT}s (console: $con)"
[ -n "$rc" ] || {
	tr -d '\r' <"$con" | tail -n 20 >&2
	die "the demo did not run in the guest (console: $con)"
}
[ "$rc" -eq 0 ] || die "the demo failed in the guest (exit $rc; console: $con)"
kcheck=$(kernel_state_check "this machine's kernel" "$kernel_before" "$(kernel_state)")
if grep -q '^FAIL: ' <<<"$kcheck"; then
	grep '^FAIL: ' <<<"$kcheck" >&2
	die "the demo changed this machine's kernel"
fi
echo
if grep -q '^SKIP: ' <<<"$kcheck"; then
	step "this machine's kernel: no module taint flag set (it lists no modules to compare)"
else
	step "this machine's kernel: no ip_vs module loaded, no module taint flag set"
fi
step "done"
