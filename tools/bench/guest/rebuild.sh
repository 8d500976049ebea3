#!/bin/sh
# shellcheck shell=dash
# Guest side of "make bench-guest" (scripts/bench-guest.sh): a benchmark,
# not a test. Runs under busybox sh in the test kernel with ip_vs_maglev.ko
# and ip_vs_mh16.ko (the kernel's own ip_vs_mh.c built for 65521 slots,
# registered as "mh65521") loaded.
#
# Three services in the same boot: maglev (maglev_table_size 65521), mh65521, and
# rr as the baseline for what the ipvsadm calls cost without a table build.
#  1. N real servers (default 1000) are added one by one to each, in chunks
#     of 100 "-a" lines fed to "ipvsadm -R" (one setsockopt, so one table
#     rebuild, per server, without a process start per server); chunks of
#     the three services take turns. With asynchronous maglev builds
#     (/proc shows "pending"), the time until "pending 0" is added.
#  2. At N servers, rebuilds: one server's weight is edited (2 <-> 3),
#     EDITS edits per "ipvsadm -R", ROUNDS rounds, the services taking
#     turns. Per rebuild = service's time per edit - rr's time per edit
#     (with asynchronous maglev builds, until "pending 0"); for maglev also
#     build_ns from /proc, the build alone as the module times it.
# Figures are medians; ratios are mh over maglev.

PROC=/proc/net/ip_vs_maglev
SYSCTL=/proc/sys/net/ipv4/vs
SIZE=65521
N=1000
EDITS=40
ROUNDS=5
CHUNK=100
W=/tmp/bench
mkdir -p "$W"

arg() { sed -n "s/.*maglev\\.$1=\\([^ ]*\\).*/\\1/p" /proc/cmdline; }
v=$(arg n)
case $v in ''|*[!0-9]*) ;; *) N=$v ;; esac

now() { nsclock; }
die() { echo "bench-guest: error: $*"; exit 1; }
ms() { awk -v ns="$1" 'BEGIN { printf "%.2f", ns / 1e6 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }'; }
# median of the numbers in file $1
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print 0 }'; }
spread() { sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR) printf "%.2f..%.2f", v[1] / 1e6, v[NR] / 1e6 }'; }

# field NAME of the maglev service line for VIP $1 (empty if absent)
field() {
	awk -v vip="$1" -v f="$2" '$1 == "service" && index($0, vip) {
		for (i = 1; i < NF; i++) if ($i == f) { print $(i + 1); exit } }' "$PROC"
}

HAS_PENDING=0
# wait until the maglev service shows pending 0 (no-op without the field)
caught_up() {
	[ "$HAS_PENDING" -eq 1 ] || return 0
	_i=0
	while [ "$(field "$MG" pending)" != 0 ]; do
		_i=$((_i + 1))
		[ "$_i" -gt 20000 ] && die "maglev service never caught up"
		usleep 1000
	done
}

command -v nsclock >/dev/null || die "nsclock missing"
echo "$SIZE" >"$SYSCTL/maglev_table_size" ||
	die "cannot set maglev_table_size $SIZE"

MG=10.10.0.1:80
MH=10.10.0.2:80
RR=10.10.0.3:80
ipvsadm -A -t $MG -s maglev || die "maglev service"
ipvsadm -A -t $MH -s mh65521 || die "mh65521 service (ip_vs_mh16.ko loaded?)"
ipvsadm -A -t $RR -s rr || die "rr service"
[ "$(field $MG size)" = "$SIZE" ] || [ "$(field $MG size)" = 0 ] ||
	die "maglev table size is $(field $MG size), not $SIZE"
[ -n "$(field $MG pending)" ] && HAS_PENDING=1

echo "kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs (QEMU TCG), clock $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
echo "maglev maglev_table_size $SIZE, mh = the kernel's ip_vs_mh.c at 65521 slots,"
echo "$N real servers; asynchronous maglev builds: $([ $HAS_PENDING -eq 1 ] && echo yes || echo no)"
echo

rip() { echo "10.20.$(($1 / 250)).$(($1 % 250 + 1))"; }

# ---- 1. adding N servers one by one ----
: >"$W/add.maglev"; : >"$W/add.mh"; : >"$W/add.rr"; : >"$W/wait.maglev"
i=0
while [ "$i" -lt "$N" ]; do
	end=$((i + CHUNK))
	[ "$end" -gt "$N" ] && end=$N
	for s in maglev mh rr; do
		case $s in maglev) vip=$MG ;; mh) vip=$MH ;; rr) vip=$RR ;; esac
		j=$i
		: >"$W/chunk"
		while [ "$j" -lt "$end" ]; do
			echo "-a -t $vip -r $(rip "$j"):80 -m -w 1" >>"$W/chunk"
			j=$((j + 1))
		done
		t0=$(now)
		ipvsadm -R <"$W/chunk" || die "ipvsadm -R ($s)"
		t1=$(now)
		echo $((t1 - t0)) >>"$W/add.$s"
		if [ $s = maglev ]; then
			caught_up
			echo $(($(now) - t1)) >>"$W/wait.maglev"
		fi
	done
	i=$end
done
sum() { awk '{ s += $1 } END { print s + 0 }' "$1"; }
a_mg=$(sum "$W/add.maglev"); a_mh=$(sum "$W/add.mh"); a_rr=$(sum "$W/add.rr")
a_wait=$(sum "$W/wait.maglev")
[ "$(ipvsadm -Ln -t $MG | grep -c '\->.*Masq')" -eq "$N" ] ||
	die "maglev service does not have $N servers"
echo "Adding $N real servers one by one (ipvsadm -R, chunks of $CHUNK, services taking turns):"
echo "  rr (no table)  $(ms "$a_rr") ms"
echo "  maglev         $(ms "$a_mg") ms ipvsadm$([ $HAS_PENDING -eq 1 ] && echo " + $(ms "$a_wait") ms until pending 0 = $(ms $((a_mg + a_wait))) ms")"
echo "  mh             $(ms "$a_mh") ms"
echo "  mh / maglev    $(ratio "$a_mh" $((a_mg + a_wait)))   (minus rr's cost from both: $(ratio $((a_mh - a_rr)) $((a_mg + a_wait - a_rr))))"
echo "  maglev builds $(field $MG builds), last build_ns $(field $MG build_ns)"
echo

# ---- 2. rebuilds at N servers ----
# EDITS weight edits of one server (1 <-> 2) per "ipvsadm -R", so one
# process start is spread over EDITS rebuilds and rr's batch subtracts it.
: >"$W/ed.maglev"; : >"$W/ed.mh"; : >"$W/ed.rr"; : >"$W/bns"
last=$(rip $((N / 2))):80
for s in maglev mh rr; do
	case $s in maglev) vip=$MG ;; mh) vip=$MH ;; rr) vip=$RR ;; esac
	k=0
	: >"$W/edits.$s"
	while [ "$k" -lt "$EDITS" ]; do
		echo "-e -t $vip -r $last -m -w $((k % 2 + 2))" >>"$W/edits.$s"
		k=$((k + 1))
	done
done
r=0
while [ "$r" -lt "$ROUNDS" ]; do
	for s in maglev mh rr; do
		t0=$(now)
		ipvsadm -R <"$W/edits.$s" || die "ipvsadm -R edits ($s)"
		[ $s = maglev ] && caught_up
		t1=$(now)
		echo $(( (t1 - t0) / EDITS )) >>"$W/ed.$s"
		[ $s = maglev ] && field $MG build_ns >>"$W/bns"
	done
	r=$((r + 1))
done
e_mg=$(median "$W/ed.maglev"); e_mh=$(median "$W/ed.mh"); e_rr=$(median "$W/ed.rr")
bns=$(median "$W/bns")
echo "One rebuild at $N servers: $EDITS weight edits of one server per ipvsadm -R,"
echo "$ROUNDS rounds, services taking turns; time per edit, median [min..max]:"
echo "  rr edit        $(ms "$e_rr") ms [$(spread "$W/ed.rr")]  (ipvsadm + IPVS, no table)"
echo "  maglev edit    $(ms "$e_mg") ms [$(spread "$W/ed.maglev")]  -> rebuild $(ms $((e_mg - e_rr))) ms"
echo "  mh edit        $(ms "$e_mh") ms [$(spread "$W/ed.mh")]  -> rebuild $(ms $((e_mh - e_rr))) ms"
echo "  maglev build_ns of the last build of each round: $(ms "$bns") ms [$(spread "$W/bns")]"
echo "  mh rebuild / maglev rebuild: $(ratio $((e_mh - e_rr)) $((e_mg - e_rr)))"
echo "  mh rebuild / maglev build_ns: $(ratio $((e_mh - e_rr)) "$bns")"
ipvsadm -C
echo "PASS: bench-guest finished"
