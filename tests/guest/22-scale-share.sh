#!/bin/sh
# Guest test 22: shared tables at scale, with the module's defaults
# (maglev_table_size 65537).
#   a. A kube-proxy-like set: SHARE_SERVICES virtual services in groups of
#      4 that share the same 3 endpoints (each group its own 3), plus one
#      service of 100 and one of 1000 endpoints, made with one ipvsadm -R;
#      the same set with rr and with the kernel's own mh in the same boot,
#      all three side by side.
#      Memory per virtual service (slab objects + VmallocUsed, and
#      SUnreclaim + VmallocUsed) is printed against rr's and mh's. Asserted:
#      one table per distinct server set (namespace line: tables and fills),
#      "shared 4" and one table id per group, digests and slot counts equal
#      to maglev-sim's, and the services' "mem" adding up to the
#      namespace's (each table counted once).
#   b. One endpoint of every group removed at once (one ipvsadm -R with all
#      the -d lines): every table current, at most one fill per distinct
#      new server set, the old tables freed; the time until every service
#      shows pending 0 and the fills are printed.
#   c. Unshare and share again: a service whose weights change gets its own
#      table and the others of its group keep theirs; changed back, it finds
#      its group's table without a fill; two services drained the same way
#      share one new table (one fill).
#   d. One namespace's queued builds do not hold up another's: namespace
#      "busy" queues SHARE_BUSY long builds (distinct servers, table size
#      5000011, seconds each in the guest); a service made in the root
#      namespace right after gets current while at least half of busy's
#      builds are still pending (asserted: with one work item per service
#      on the shared workqueue, 4 at a time, it waited behind all but the
#      last few of them).
#   e. Lifetimes (run on the debug kernel too): UDP flows to 8 services
#      that share one table while they are unshared, shared, deleted and
#      re-made; a namespace with shared tables deleted while its builds are
#      queued; the module unloaded right after ipvsadm -C with shared
#      tables, and loaded again.
# SHARE_BENCH=1 (make bench-scale) runs a and b only, with the counts given
# (SHARE_SERVICES in the thousands), and only prints the figures.
#
# guest-timeout: 300
# kcsan-kernel: yes
# debug-kernel: yes
. "${0%/*}/lib.sh"

# The debug kernel (KASAN, kmemleak) checks the lifetimes; its memory
# figures mean nothing (quarantine, kmemleak's own objects), so it makes
# no rr and mh sets to compare with (SHARE_COMPARE=0), it leaves out the
# fairness check d (SHARE_BUSY=0), and it makes half the services (48) and
# half of e's rounds of changes (10, two of them deleting and re-making a
# service): every process costs a quarter of a second there. The kcsan
# kernel, which looks for races of the tables' sharing and lifetimes, runs
# the same set: its memory figures and the fairness check's timing are
# the default kernel's to measure.
if [ -e /sys/kernel/debug/kmemleak ] || [ -e /sys/kernel/debug/kcsan ]; then
	SHARE_SERVICES=${SHARE_SERVICES:-48}
	SHARE_BUSY=${SHARE_BUSY:-0}
	SHARE_COMPARE=${SHARE_COMPARE:-0}
	SHARE_ROUNDS=${SHARE_ROUNDS:-10}
else
	SHARE_SERVICES=${SHARE_SERVICES:-240}
	SHARE_BUSY=${SHARE_BUSY:-40}
	SHARE_COMPARE=${SHARE_COMPARE:-1}
	SHARE_ROUNDS=${SHARE_ROUNDS:-20}
fi
SHARE_BENCH=${SHARE_BENCH:-0}
SHARE_SERVICES=$((SHARE_SERVICES / 4 * 4))
NGROUPS=$((SHARE_SERVICES / 4))
VS=$((SHARE_SERVICES + 2))	# virtual services in the set
CATCHUP_TIMEOUT=${CATCHUP_TIMEOUT:-600}
info "virtual services $VS: $SHARE_SERVICES in $NGROUPS groups of 4 (3 endpoints each), one of 100 and one of 1000 endpoints"

# now: seconds since boot, to the hundredth.
now() { cut -d' ' -f1 /proc/uptime; }
# elapsed T0 T1: T1 - T0 in seconds, to the hundredth.
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# ns_field KEY [NETNS]: KEY of the namespace line.
ns_field() {
	in_ns "${2:-}" cat $PROC | awk -v k="$1" '$1 == "namespace" {
		for (i = 2; i < NF; i += 2) if ($i == k) print $(i + 1) }'
}

# kp_set SCHED NET: ipvsadm -R lines of the set on VIPs 10.NET.X.Y:53
# (service I of group G: the 4 services 10.NET.*:53 of group G share the
# endpoints 10.64.G/250.G%250+1:8080, 10.65.... and 10.66....), then
# 10.NET.250.1:53 with 100 endpoints and 10.NET.250.2:53 with 1000.
kp_set() {
	awk -v s="$1" -v net="$2" -v n="$SHARE_SERVICES" 'BEGIN {
		for (i = 0; i < n; i++) {
			g = int(i / 4)
			v = sprintf("10.%d.%d.%d:53", net, int(i / 250), i % 250 + 1)
			print "-A -u " v " -s " s
			for (k = 0; k < 3; k++)
				printf "-a -u %s -r 10.%d.%d.%d:8080 -m -w 1\n",
					v, 64 + k, int(g / 250), g % 250 + 1
		}
		v = sprintf("10.%d.250.1:53", net)
		print "-A -u " v " -s " s
		for (k = 0; k < 100; k++)
			printf "-a -u %s -r 10.70.%d.%d:8080 -m -w 1\n", v,
				int(k / 250), k % 250 + 1
		v = sprintf("10.%d.250.2:53", net)
		print "-A -u " v " -s " s
		for (k = 0; k < 1000; k++)
			printf "-a -u %s -r 10.71.%d.%d:8080 -m -w 1\n", v,
				int(k / 250), k % 250 + 1
	}'
}

# kp_del NET: the -d lines that remove endpoint 10.64.* of every group.
kp_del() {
	awk -v net="$1" -v n="$SHARE_SERVICES" 'BEGIN {
		for (i = 0; i < n; i++) {
			g = int(i / 4)
			printf "-d -u 10.%d.%d.%d:53 -r 10.64.%d.%d:8080\n",
				net, int(i / 250), i % 250 + 1, int(g / 250),
				g % 250 + 1
		}
	}'
}

# sim_set FILE SVC [DROP]: maglev-sim commands for the backends of service
# SVC ("TCP ..." as in /proc) in FILE (ipvsadm -R lines), without DROP.
sim_set() {
	awk -v s="${2#* }" -v drop="${3:-}" 'BEGIN { print "SIZE 65537" }
		$1 == "-a" && $3 == s && $5 != drop { print "ADD_NODE", $5, $8 }' "$1"
}

# proc_groups FILE: check that the services of each group show one table id,
# "shared 4", 3 or 2 dests and the same digest, each group its own id.
proc_groups() {
	awk -v n="$SHARE_SERVICES" -v net="$2" '$1 == "service" {
		for (i = 4; i < NF; i += 2) f[$i] = $(i + 1)
		split($3, a, "[.:]")
		if (a[2] != net || a[3] == 250)
			next
		idx = a[3] * 250 + a[4] - 1
		g = int(idx / 4)
		if (f["shared"] != 4) { print "shared", $0; bad++ }
		if (g in id) {
			if (id[g] != f["table"] || dg[g] != f["digest"]) {
				print "group", g, $0; bad++
			}
		} else {
			if (f["table"] in owner) { print "id", $0; bad++ }
			owner[f["table"]] = g
			id[g] = f["table"]
			dg[g] = f["digest"]
		}
		seen++
	} END { if (seen != n) { print "seen", seen; bad++ } exit bad > 0 }' "$1"
}

# within A B N: true if A <= B < A + N.
within() { [ "$1" -le "$2" ] && [ "$2" -lt $(($1 + $3)) ]; }

# wait_tables N: wait (up to 10 s) until the namespace has N tables: a
# replaced table goes a grace period after its last service left it.
wait_tables() {
	_i=0
	while [ "$(ns_field tables)" -ne "$1" ] && [ $_i -lt 100 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
}

# mem_sum FILE: the services' "mem" added up.
mem_sum() {
	awk '$1 == "service" { for (i = 4; i < NF; i += 2)
		if ($i == "mem") s += $(i + 1) } END { printf "%d\n", s }' "$1"
}

check "maglev_table_size is 65537 by default" \
	[ "$(cat $SYSCTL/maglev_table_size)" = 65537 ]

# --- a. the set, against rr and mh ------------------------------------------------
mem_line() {
	awk '$1 == "Slab:" || $1 == "SUnreclaim:" || $1 == "VmallocUsed:" {
		printf "%s %s kB ", $1, $2 } END { print "" }' /proc/meminfo
}

# measure SCHED NET: make the set with SCHED, print and keep the growth of
# slab objects + VmallocUsed (kB) in $m_obj and of SUnreclaim + VmallocUsed
# in $m_pg; the services stay.
measure() {
	kp_set "$1" "$2" >"$T/set.$1"
	_o0=$(mem_kernel)
	_p0=$(mem_pages)
	_t0=$(now)
	run ipvsadm -R <"$T/set.$1"
	[ "$1" = maglev ] && stress_wait_caught_up "" "$CATCHUP_TIMEOUT"
	_t1=$(now)
	m_obj=$(($(mem_kernel) - _o0))
	m_pg=$(($(mem_pages) - _p0))
	info "$1: $VS virtual services made in $(elapsed "$_t0" "$_t1") s; slab objects+vmalloc +$m_obj kB, SUnreclaim+VmallocUsed +$m_pg kB; $(mem_line)"
}

# The three sets stay side by side until the end of b: deleting one would
# put its destinations in IPVS's trash, whose later release would count
# against the next set. A first rr set, not measured, pays what the
# first services and destinations of a boot cost once (per-CPU chunks,
# slab pages).
rr_obj=0 rr_pg=0
if [ "$SHARE_COMPARE" = 1 ]; then
	kp_set rr 30 >"$T/set.warm"
	run ipvsadm -R <"$T/set.warm"
	measure rr 40
	rr_obj=$m_obj rr_pg=$m_pg
fi
if [ "$SHARE_COMPARE" = 1 ] && ipvsadm -A -u 10.99.0.1:53 -s mh 2>/dev/null; then
	run ipvsadm -D -u 10.99.0.1:53
	measure mh 42
	mh_obj=$m_obj mh_pg=$m_pg
else
	info "no mh set (SHARE_COMPARE=$SHARE_COMPARE, or no mh scheduler in this kernel)"
	mh_obj='' mh_pg=''
fi
measure maglev 50
mg_obj=$m_obj mg_pg=$m_pg

per() { echo $((($1 - rr_obj) * 1024 / VS)); }
perp() { echo $((($1 - rr_pg) * 1024 / VS)); }
if [ "$SHARE_COMPARE" = 1 ]; then
	info "memory per virtual service beyond rr: maglev $(per "$mg_obj") B (slab objects+vmalloc), $(perp "$mg_pg") B (SUnreclaim+VmallocUsed)${mh_obj:+; mh $(per "$mh_obj") B, $(perp "$mh_pg") B}; rr itself $((rr_obj * 1024 / VS)) B; target at most 5120 B beyond rr"
fi
if [ -r /proc/slabinfo ]; then
	info "slabinfo (active objects, object size) of the largest kmalloc caches now:"
	awk 'NR > 2 && $1 ~ /^kmalloc/ { printf "#   %s %s x %s B\n", $1, $2, $4 }' \
		/proc/slabinfo | sort -k3 -n -r | head -n 8
fi

wait_tables $((NGROUPS + 2))
cat $PROC >"$T/proc"
tables=$(ns_field tables)
info "namespace: $(grep '^namespace' "$T/proc") (the fills include the services' first tables while ipvsadm -R added their endpoints)"
expect_eq "one table per distinct server set" "$tables" $((NGROUPS + 2))
expect_eq "services in the namespace line" "$(ns_field services)" "$VS"
check "each group of 4 shares one table (shared 4, one id, one digest), each group its own" \
	proc_groups "$T/proc" 50
for v in 10.50.250.1:53 10.50.250.2:53; do
	expect_eq "UDP $v: not shared" "$(svc_field_now "UDP $v" shared)" 1
	sim_set "$T/set.maglev" "UDP $v" >"$T/s.big"
	check_sim "UDP $v" "UDP $v" "$T/s.big"
	# Every server's slots within 2 % of an even share of the 65537.
	svc_dests "UDP $v" >"$T/d.big"
	check "UDP $v: $(wc -l <"$T/d.big") servers' slot shares within 2 % of even ($(awk '{ if (!n || $3 < lo) lo = $3; if ($3 > hi) hi = $3; n++ } END { print lo ".." hi }' "$T/d.big"))" \
		awk '{ s += $3; c[NR] = $3 } END { e = s / NR
			for (i in c) if (c[i] < e * 0.98 || c[i] > e * 1.02) exit 1
			exit s != 65537 }' "$T/d.big"
done
last=$((SHARE_SERVICES - 1))
for i in 0 $last; do
	v=$(printf '10.50.%d.%d:53' $((i / 250)) $((i % 250 + 1)))
	sim_set "$T/set.maglev" "UDP $v" >"$T/s.g"
	check_sim "UDP $v (group $((i / 4)))" "UDP $v" "$T/s.g"
done
nsmem=$(ns_field mem)
sum=$(mem_sum "$T/proc")
info "maglev's tables by /proc (namespace mem, each table once): $nsmem B, $((nsmem / VS)) B per virtual service"
check "the services' mem ($sum) adds up to the namespace's ($nsmem), less than one byte per service apart (shares rounded down)" \
	within "$sum" "$nsmem" "$VS"

# --- b. one endpoint out of every group, at once -------------------------------
kp_del 50 >"$T/del"
f0=$(ns_field fills)
t0=$(now)
run ipvsadm -R <"$T/del"
t1=$(now)
check "mass change: every table current" \
	stress_wait_caught_up "" "$CATCHUP_TIMEOUT"
t2=$(now)
f1=$(ns_field fills)
info "mass change: $SHARE_SERVICES -d lines in one ipvsadm -R took $(elapsed "$t0" "$t1") s; every table current $(elapsed "$t1" "$t2") s after it returned; $((f1 - f0)) fills for $NGROUPS distinct server sets"
check "mass change: at most one fill per distinct server set ($((f1 - f0)) for $NGROUPS)" \
	[ $((f1 - f0)) -le "$NGROUPS" ]
wait_tables $((NGROUPS + 2))
expect_eq "mass change: the old tables freed" "$(ns_field tables)" \
	$((NGROUPS + 2))
cat $PROC >"$T/proc"
check "mass change: each group of 4 still shares one table" \
	proc_groups "$T/proc" 50
for i in 0 $last; do
	v=$(printf '10.50.%d.%d:53' $((i / 250)) $((i % 250 + 1)))
	g=$((i / 4))
	sim_set "$T/set.maglev" "UDP $v" \
		"$(printf '10.64.%d.%d:8080' $((g / 250)) $((g % 250 + 1)))" \
		>"$T/s.g"
	check_sim "UDP $v after the mass change" "UDP $v" "$T/s.g"
done
expect_eq "mass change: no build failed" "$(awk '$1 == "service" {
	for (i = 4; i < NF; i += 2)
		if ($i == "alloc_fail" || $i == "build_fail") n += $(i + 1)
	} END { print n + 0 }' "$T/proc")" 0

if [ "$SHARE_BENCH" = 1 ]; then
	run ipvsadm -C
	finish
fi

# The rr and mh sets go; the maglev set stays for c.
awk '$1 == "-A" { print "-D", $2, $3 }' "$T/set.warm" "$T/set.rr" "$T/set.mh" 2>/dev/null \
	>"$T/del.others"
run ipvsadm -R <"$T/del.others"

# --- c. unshare, share again, drain alike -----------------------------------------
A="UDP 10.50.0.1:53" B="UDP 10.50.0.2:53" C="UDP 10.50.0.3:53"
old=$(svc_field "$A" table)
f0=$(ns_field fills)
run ipvsadm -e -u 10.50.0.1:53 -r 10.65.0.1:8080 -m -w 3
expect_eq "$A re-weighted: its own table" "$(svc_field "$A" shared)" 1
check "$A re-weighted: a new table id" [ "$(svc_field "$A" table)" != "$old" ]
expect_eq "$B keeps the group's table" "$(svc_field "$B" table)" "$old"
expect_eq "$B: the group's table is shared by 3 now" \
	"$(svc_field "$B" shared)" 3
expect_eq "one fill for the re-weighted service" $(($(ns_field fills) - f0)) 1
run ipvsadm -e -u 10.50.0.1:53 -r 10.65.0.1:8080 -m -w 1
expect_eq "$A weighted back: the group's table again" \
	"$(svc_field "$A" table)" "$old"
expect_eq "$A weighted back: shared 4" "$(svc_field "$A" shared)" 4
expect_eq "weighted back: found, not filled" $(($(ns_field fills) - f0)) 1
# Two services of the group drained the same way share one new table.
f0=$(ns_field fills)
run ipvsadm -e -u 10.50.0.2:53 -r 10.65.0.1:8080 -m -w 0
run ipvsadm -e -u 10.50.0.3:53 -r 10.65.0.1:8080 -m -w 0
wait_caught_up
expect_eq "$B and $C drained alike: one table" "$(svc_field "$B" table)" \
	"$(svc_field "$C" table)"
expect_eq "$B drained: shared 2" "$(svc_field "$B" shared)" 2
expect_eq "$A keeps the undrained table, shared 2" "$(svc_field "$A" shared)" 2
expect_eq "drained alike: one fill" $(($(ns_field fills) - f0)) 1
printf 'SIZE 65537\nADD_NODE 10.65.0.1:8080 1\nADD_NODE 10.66.0.1:8080 1\nWEIGHT 10.65.0.1:8080 0\n' \
	>"$T/s.drain"
check_sim "$B drained" "$B" "$T/s.drain"
run ipvsadm -C

# --- d. one namespace's builds do not hold up another's ----------------------------
# (a fairness check, not a lifetime one: the debug kernel leaves it out,
# SHARE_BUSY=0)
if [ "$SHARE_BUSY" -gt 0 ]; then
ip netns add busy
ns_sysctl busy maglev_table_size 5000011
awk -v n="$SHARE_BUSY" 'BEGIN {
	for (i = 0; i < n; i++) {
		v = sprintf("10.77.%d.%d:53", int(i / 250), i % 250 + 1)
		print "-A -u " v " -s maglev"
		for (k = 0; k < 3; k++)
			printf "-a -u %s -r 10.%d.%d.%d:53 -m -w 1\n", v,
				80 + k, int(i / 250), i % 250 + 1
	}
}' >"$T/busy"
run ip netns exec busy ipvsadm -R <"$T/busy"
# Until their hold-offs end, busy's builds are timers, not queued work;
# after this wait they are all due, ahead of the root namespace's change.
sleep 2
before=$(ip netns exec busy grep -c ' pending 1 ' $PROC)
t0=$(now)
run ipvsadm -A -u 10.78.0.1:53 -s maglev
run ipvsadm -a -u 10.78.0.1:53 -r 10.79.0.1:53 -m -w 1
check "root namespace: its service current while busy's queue runs" \
	stress_wait_caught_up "" 120
t1=$(now)
left=$(ip netns exec busy grep -c ' pending 1 ' $PROC)
info "busy: $before of $SHARE_BUSY services pending when the root namespace's service was made, $left when it was current ($(elapsed "$t0" "$t1") s later)"
if [ "$before" -ge $((SHARE_BUSY / 2)) ] && [ $((left * 2)) -ge "$before" ]; then
	pass "root namespace: current with $left of busy's $before queued builds still pending"
else
	fail "root namespace: current only with $left of busy's $before queued builds still pending (it waited behind them)"
fi
run ip netns exec busy ipvsadm -C
run ipvsadm -C
ip netns del busy
fi

# --- e. lifetimes -------------------------------------------------------------------
setup_net 3
addrs=$(client_addrs 4 16)
warm_up
# udp8 SERVER_PORT PORT...: ipvsadm -R lines of UDP services $VIP4:PORT
# with the real servers 10.1.{1,2,3}.1:SERVER_PORT (the service's port if
# empty).
udp8() {
	_sp=$1
	shift
	for _p in "$@"; do
		echo "-A -u $VIP4:$_p -s maglev"
		for _i in 1 2 3; do
			echo "-a -u $VIP4:$_p -r 10.1.$_i.1:${_sp:-$_p} -m -w 1"
		done
	done
}
udp8 "" 80 81 82 83 84 85 86 87 >"$T/udp8"
run ipvsadm -R <"$T/udp8"
wait_caught_up
# Each service's servers listen on its own port: names differ, 8 tables
# (the tables of their first builds go a grace period after those).
wait_tables 8
expect_eq "8 services with their own server ports: 8 tables" \
	"$(ns_field tables)" 8
# The same ports: 8 more services of one server set, one table.
udp8 53 90 91 92 93 94 95 96 97 >"$T/udp8"
run ipvsadm -R <"$T/udp8"
wait_caught_up
expect_eq "8 services on 10.1.{1,2,3}.1:53 share one table" \
	"$(svc_field "UDP $VIP4:90" shared)" 8
# flows to ports 90..97 while the services are unshared, shared, deleted,
# made again (NOWAIT: during the changes)
(
	n=0
	while [ ! -e "$T/stop" ]; do
		for p in 90 91 92 93 94 95 96 97; do
			# shellcheck disable=SC2086 # addresses are words
			NOWAIT=1 flows $VIP4 $p $((20000 + n % 20000)) 4 $addrs \
				>/dev/null 2>&1
		done
		n=$((n + 4))
	done
	echo "$n" >"$T/flows.rounds"
) &
fp=$!
r=0
while [ $r -lt "$SHARE_ROUNDS" ]; do
	p=$((90 + r % 8))
	run ipvsadm -e -u $VIP4:$p -r 10.1.1.1:53 -m -w $((r % 3 + 1))
	run ipvsadm -d -u $VIP4:$p -r 10.1.2.1:53
	run ipvsadm -a -u $VIP4:$p -r 10.1.2.1:53 -m -w 1
	if [ $((r % 5)) -eq 4 ]; then
		run ipvsadm -D -u $VIP4:$p
		run ipvsadm -A -u $VIP4:$p -s maglev
		for i in 1 2 3; do
			run ipvsadm -a -u $VIP4:$p -r 10.1.$i.1:53 -m -w 1
		done
	fi
	r=$((r + 1))
done
for p in 90 91 92 93 94 95 96 97; do
	run ipvsadm -e -u $VIP4:$p -r 10.1.1.1:53 -m -w 1
done
touch "$T/stop"
wait $fp
wait_caught_up
info "flows: $(cat "$T/flows.rounds" 2>/dev/null) rounds of 4 ports x 16 clients x 8 services during $SHARE_ROUNDS rounds of changes"
expect_eq "after the changes: the 8 services share one table again" \
	"$(svc_field "UDP $VIP4:90" shared)" 8
check "after the changes: IPVS made connections" [ "$(conns $VIP4 90 | wc -l)" -gt 0 ]

# A namespace with shared tables deleted while its builds are queued.
refs=$(cat /sys/module/ip_vs_maglev/refcnt)
ip netns add gone
kp_set maglev 60 | head -n 200 >"$T/gone"
run ip netns exec gone ipvsadm -R <"$T/gone"
ip netns del gone
i=0
while [ "$(cat /sys/module/ip_vs_maglev/refcnt)" -ne "$refs" ] && [ $i -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
expect_eq "namespace deleted with shared tables: its services gone" \
	"$(cat /sys/module/ip_vs_maglev/refcnt)" "$refs"

# Unload right after the last services with shared tables went.
run ipvsadm -C
cleanup_net
check "rmmod right after ipvsadm -C with shared tables" rmmod ip_vs_maglev
check "insmod again" insmod "$MAGLEV_KO"
finish
