#!/bin/sh
# shellcheck shell=dash
# Guest side of "make bench-conn-guest" (scripts/bench-conn-guest.sh): a
# benchmark, not a test. Runs under busybox sh in the test kernel, with
# ip_vs_maglev.ko loaded by the guest's /init and the kernel's own mh
# built in.
#
# For each key kind (IPv4, IPv4+port, IPv6, IPv6+port) and N (100, 5) it
# makes one mh and one maglev TCP service with N real servers each (every
# service its own servers, weight 1; the module's defaults, so maglev's
# table is sized to N). The port kinds use mh's "mh-port" and maglev's
# "flag-2" (the same bit). Each service is made with the benchmark
# module's scheduler "connbench", which records it, and then switched to
# mh or maglev with "ipvsadm -E" (tools/bench/kmod/ip_vs_connbench.c says
# why). Then the module times each service's own schedule() on prebuilt
# packets, mh and maglev interleaved, and prints the table.

PROC=/proc/net/ip_vs_maglev
DBG=/sys/kernel/debug/ip_vs_connbench
KO=/maglev/connbench/ip_vs_connbench.ko
ROUNDS=101
BATCH=4096
T=/tmp/connbench
mkdir -p "$T"

arg() { sed -n "s/.*maglev\\.$1=\\([^ ]*\\).*/\\1/p" /proc/cmdline; }
v=$(arg rounds)
case $v in ''|*[!0-9]*) ;; *) ROUNDS=$v ;; esac
v=$(arg batch)
case $v in ''|*[!0-9]*) ;; *) BATCH=$v ;; esac

die() { echo "bench-conn-guest: error: $*"; exit 1; }

grep -q '^ip_vs_maglev ' /proc/modules || die "ip_vs_maglev is not loaded"
insmod "$KO" || die "insmod ip_vs_connbench.ko"
[ -e "$DBG" ] || die "$DBG missing (debugfs not mounted?)"

# vip FAMILY CASE S: the virtual service of case CASE, S 1 (mh) or 2 (maglev)
vip() {
	if [ "$1" = 6 ]; then
		echo "[2001:db8:20:$2::$3]:80"
	else
		echo "10.20.$2.$3:80"
	fi
}

# rip FAMILY CASE S I: real server I (1..N) of that service
rip() {
	if [ "$1" = 6 ]; then
		echo "[2001:db8:3$2:$3::$4]:80"
	else
		echo "10.3$2.$3.$4:80"
	fi
}

# make_svc FAMILY PORT CASE S N: one service, through connbench
make_svc() {
	_v=$(vip "$1" "$3" "$4")
	_sched=mh _flag='' _mflag=''
	[ "$4" = 2 ] && _sched=maglev
	if [ "$2" = 1 ]; then
		_flag="-b flag-2"
		_mflag=$_flag
		[ "$_sched" = mh ] && _mflag="-b mh-port"
	fi
	# shellcheck disable=SC2086 # _flag and _mflag are words or nothing
	ipvsadm -A -t "$_v" -s connbench $_flag ||
		die "ipvsadm -A -t $_v -s connbench"
	# shellcheck disable=SC2086
	ipvsadm -E -t "$_v" -s "$_sched" $_mflag ||
		die "ipvsadm -E -t $_v -s $_sched $_mflag"
	_i=1
	while [ "$_i" -le "$5" ]; do
		echo "-a -t $_v -r $(rip "$1" "$3" "$4" "$_i") -m -w 1"
		_i=$((_i + 1))
	done >"$T/dests"
	ipvsadm -R <"$T/dests" || die "ipvsadm -R (servers of $_v)"
}

c=0
for n in 100 5; do
	for fam in 4 6; do
		for port in 0 1; do
			make_svc "$fam" "$port" "$c" 1 "$n"
			make_svc "$fam" "$port" "$c" 2 "$n"
			c=$((c + 1))
		done
	done
done

# maglev's tables are built asynchronously: wait for every one.
i=0
while awk '$1 == "service" { for (f = 1; f < NF; f++)
		if ($f == "pending" && $(f + 1) != 0) p = 1 }
	END { exit !p }' "$PROC"; do
	i=$((i + 1))
	[ "$i" -gt 6000 ] && die "maglev services still pending after 300 s"
	sleep 0.05
done

echo "kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs, QEMU TCG (software emulation)"
echo "services (ipvsadm -Ln):"
ipvsadm -Ln | grep -E '^(TCP|UDP)' | sed 's/^/  /'
echo "maglev tables (/proc/net/ip_vs_maglev: size, dests, shared):"
awk '$1 == "service" { s = ""; d = ""; u = ""
	for (f = 1; f < NF; f++) {
		if ($f == "size") s = $(f + 1)
		if ($f == "dests") d = $(f + 1)
		if ($f == "shared") u = $(f + 1)
	}
	printf "  %s size %s dests %s shared %s\n", $3, s, d, u }' "$PROC"
echo

echo "$ROUNDS $BATCH" >"$DBG" || die "the benchmark run failed (see the console)"
cat "$DBG"
echo
echo "mh, maglev: each service's own schedule() (the kernel's ip_vs_mh_schedule(),"
echo "ip_vs_maglev_schedule()), one call per new connection, a new random client"
echo "address (and port) each call. loop: the same loop and indirect call to a"
echo "schedule() that returns at once. net: the ratio of the medians less loop's."
echo "The absolute ns are of QEMU's software emulation (TCG), not of a real CPU;"
echo "only the two schedulers side by side under the same emulator compare."

rmmod ip_vs_connbench || die "rmmod ip_vs_connbench"
ipvsadm -C
echo "PASS: bench-conn-guest finished"
