#!/bin/sh
# Guest test 18: a fleet of three LBs with IPVS connection synchronisation.
#
#   cl 10.9.0.1 -- rt ==ECMP to 10.0.0.1==> lb1 lb2 lb3 (10.2.0.1K, br0)
#                                           rs1..rs5    (10.2.0.I, br0)
#   lb1 lb2 lb3 also share br1 (eth1, 10.4.0.1K): the sync network
#
# As in test 12: direct routing, sloppy_tcp=1, port hashing (flag-2), the
# router hashes the 5-tuple over the LBs (here from the headers, policy 3). Each phase opens FLEET_CONNS
# long-lived TCP connections to its own port, makes three backend changes
# on every LB in turn (add rs5, take rs2 out by setting its weight to 0,
# re-weight rs3 to 2; a round of traffic after each), then kills lb3 (both
# its links go down, the router drops its nexthop) and sends more traffic
# on every connection. rs2 is drained, not deleted: "ipvsadm -d" makes
# IPVS drop the packets of the deleted server's established connections
# on that LB (expire_nodest_conn=0; with 1 it reschedules them), sync or
# not, so a server leaves by weight 0 first and is deleted once its
# connections have ended.
#
#   phase A, port 84: no sync. The connections that break must be exactly
#     those that changed LB and whose key maglev-sim gives to another
#     server in the final table than in the first.
#   phase B, port 85: every LB runs a sync master and a sync backup
#     (ipvsadm --start-daemon, multicast on eth1, syncid 18) with
#     sync_threshold "3 0" and sync_refresh_period 300 (docs/fleet.md).
#     No connection may break; maglev-sim's count of those that would
#     have broken without sync is printed beside it.
#   phase C, port 86: sync as in B, but sloppy_tcp=0 on every LB: the
#     synced connections need no sloppy_tcp.
#
# Which LB a connection uses is the router's ECMP choice, read with
# "ip route get ... iif up0 ipproto 6 sport P dport V" (phase A checks it
# against the LBs' own connection tables; with sync every LB holds every
# connection, so the tables cannot tell). maglev-fleet check runs on the
# LBs' /proc files: agreement after each complete change, disagreement in
# the middle of the rolling weight change, pending with a long hold-off,
# different flags at the end. The captures are printed ("# capture").
#
# guest-timeout: 300
. "${0%/*}/lib.sh"

tstart=$(date +%s)
VIP=10.0.0.1
CL=10.9.0.1
NCONN=${FLEET_CONNS:-150}
LBS="lb1 lb2 lb3"
SYNCID=18

nsx() { ip netns exec "$@"; }

# --- network ------------------------------------------------------------------

sysctl -qw net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2
for ns in rt cl $LBS rs1 rs2 rs3 rs4 rs5; do ip netns add "$ns"; done
{
	echo "link add br0 type bridge"
	echo "link set br0 up"
	echo "link add br1 type bridge"
	echo "link set br1 up"
	for ns in rt $LBS rs1 rs2 rs3 rs4 rs5; do
		echo "link add b-$ns type veth peer name eth0 netns $ns"
		echo "link set b-$ns master br0 up"
	done
	for ns in $LBS; do
		echo "link add s-$ns type veth peer name eth1 netns $ns"
		echo "link set s-$ns master br1 up"
	done
} | ip -batch - || fail "bridges and links"
fleet_router_client "$CL"
# The router hashes the 5-tuple from the headers (policy 3, fields: the
# addresses, protocol and ports). Policy 1 would use a hash the packet
# already carries: through veth that is the client socket's random
# txhash, which "ip route get" cannot know.
nsx rt sysctl -qw net.ipv4.ip_forward=1 net.ipv4.fib_multipath_hash_policy=3 \
	net.ipv4.fib_multipath_hash_fields=0x0037
fleet_hosts "$VIP" 1 2 3 4 5 11 12 13
for lb in $LBS; do nsx "$lb" sysctl -qw net.ipv4.vs.sloppy_tcp=1; done

route() { fleet_route "$VIP" "$@"; }
route lb1 lb2 lb3

pids=
fleet_servers 5 84 85 86

# --- IPVS ------------------------------------------------------------------------

for lb in $LBS; do
	for p in 84 85 86; do
		echo "-A -t $VIP:$p -s maglev -b flag-2"
		for i in 1 2 3 4; do echo "-a -t $VIP:$p -r 10.2.0.$i:$p -g -w 1"; done
	done | nsx "$lb" ipvsadm -R || fail "$lb: ipvsadm -R"
done
for lb in $LBS; do wait_caught_up "$lb" 20; done

# Size for maglev-sim from lb1's service line, the key from lb1's sysctl.
SIZE=$(svc_field "TCP $VIP:84" size lb1)
KEY=$(ns_sysctl lb1 maglev_hash_key)
# simcmds PORT STAGE: maglev-sim commands for the backends of PORT before
# the changes (old) or after them (new), in the order they were made.
simcmds() {
	echo "SIZE $SIZE"
	[ -z "$KEY" ] || echo "KEY $KEY"
	for _i in 1 2 3 4; do echo "ADD_NODE 10.2.0.$_i:$1 1"; done
	[ "$2" = old ] && return
	echo "ADD_NODE 10.2.0.5:$1 1"
	echo "WEIGHT 10.2.0.2:$1 0"
	echo "WEIGHT 10.2.0.3:$1 2"
}

fleet_capture setup "$LBS"
fleet_check "sync fleet set up" 0 setup "$LBS" '^OK'

# --- the client ------------------------------------------------------------------

fleet_client $CL $VIP

# ecmp PORT LIST: "LPORT LB" per connection to PORT in LIST, the router's
# ECMP choice for its 5-tuple now.
ecmp() {
	awk -v p="$1" '$1 == p { print $2 }' "$2" >"$T/ecmp.ports"
	awk -v p="$1" -v vip=$VIP -v cl=$CL '{
		print "route get " vip " from " cl " iif up0 ipproto 6 sport " $1 " dport " p
	}' "$T/ecmp.ports" | ip -n rt -force -batch - >"$T/ecmp.raw" 2>&1
	[ -n "${ECMP_SHOWN:-}" ] || { info "ip route get: $(head -n 3 "$T/ecmp.raw" | tr '\n' '|')" >&2; ECMP_SHOWN=1; }
	awk -v vip=$VIP '
		$1 == vip {
			lb = "?"
			for (i = 2; i < NF; i++)
				if ($i == "via") {
					n = split($(i + 1), a, ".")
					lb = "lb" substr(a[n], 2)
				}
			print lb
		}' "$T/ecmp.raw" >"$T/ecmp.lb"
	_unk=$(($(wc -l <"$T/ecmp.ports") - $(grep -c '^lb[123]$' "$T/ecmp.lb")))
	[ "$_unk" -eq 0 ] || fail "ip route get: $_unk connections without a nexthop" >&2
	awk 'NR == FNR { lb[FNR] = $1; next } { print $1, lb[FNR] }' \
		"$T/ecmp.lb" "$T/ecmp.ports"
}

# lb_conns PORT: "LB CPORT RS" per IPVS connection to PORT on every LB.
lb_conns() {
	for _lb in $LBS; do
		nsx "$_lb" ipvsadm -Lcn | awk -v lb="$_lb" -v p="$1" '$1 == "TCP" {
			split($4, c, ":"); split($5, v, ":"); split($6, d, ":")
			if (v[2] == p) print lb, c[2], d[1] }'
	done
}

# owners PORT LIST STAGE: "LPORT rsI" per connection, maglev-sim's owner
# of its key with the backends of STAGE (old, new).
owners() {
	awk -v p="$1" -v cl=$CL '$1 == p { print cl, $2 }' "$2" >"$T/keys"
	simcmds "$1" "$3" >"$T/simset"
	predict "$T/keys" "$T/simset" 1 |
		awk '{ split($3, a, /[.:]/); print $2, "rs" a[4] }'
}

# change PORT STEP: the rolling backend change STEP (add, drain, weight) on
# lb1, lb2, lb3 in turn; fleet checks around the weight change.
change() {
	for _lb in $LBS; do
		case $2 in
		add) nsx "$_lb" ipvsadm -a -t $VIP:"$1" -r 10.2.0.5:"$1" -g -w 1 ;;
		drain) nsx "$_lb" ipvsadm -e -t $VIP:"$1" -r 10.2.0.2:"$1" -g -w 0 ;;
		weight) nsx "$_lb" ipvsadm -e -t $VIP:"$1" -r 10.2.0.3:"$1" -g -w 2 ;;
		esac || fail "$_lb: $2 on port $1"
		wait_caught_up "$_lb" 20
		if [ "$1" = 84 ] && [ "$2" = weight ] && [ "$_lb" = lb1 ]; then
			fleet_capture weight-lb1 "$LBS"
			fleet_check "rolling re-weight, lb1 done" 1 weight-lb1 "$LBS" \
				"dest 10.2.0.3:84: weight 2 on lb1"
		fi
	done
}

# phase NAME PORT SYNC: open, change, kill lb3, count. Sets BROKEN,
# PREDICTED (by maglev-sim, for a fleet without sync), MOVED, N.
phase() {
	_p=$2
	_t0=$(date +%s)
	cmd open "$_p" "$NCONN" 2
	expect_eq "$1: $NCONN connections opened" "$ANS" \
		"ok live $NCONN reset 0 wrong 0 timeout 0 failed 0"
	cmd list "$T/list0"
	ecmp "$_p" "$T/list0" >"$T/ecmp0"
	owners "$_p" "$T/list0" old >"$T/own.old"
	_bad=$(awk 'NR == FNR { o[$1] = $2; next }
		$1 == '"$_p"' && o[$2] != $3 { n++ } END { print n + 0 }' \
		"$T/own.old" "$T/list0")
	expect_eq "$1: connections whose first server is not maglev-sim's choice" "$_bad" 0
	if [ "$3" = 1 ]; then
		# A master sends a partly filled buffer once it is 2 s old
		# (IPVS_SYNC_FLUSH_TIME), checking every second: up to 10 s
		# until every LB holds every connection.
		_w=0
		while lb_conns "$_p" >"$T/held" &&
		      [ "$(awk -v n="$NCONN" '{ c[$1]++ } END {
				for (l in c) if (c[l] == n) k++; print k + 0 }' \
			"$T/held")" -lt 3 ] && [ $_w -lt 20 ]; do
			sleep 0.5
			_w=$((_w + 1))
		done
		for _lb in $LBS; do
			expect_eq "$1: $_lb holds every connection, its own or synced" \
				"$(awk -v lb="$_lb" '$1 == lb' "$T/held" | wc -l)" "$NCONN"
		done
	fi
	for _s in add drain weight; do
		change "$_p" $_s
		cmd round 1 60
	done
	expect_eq "$1: every connection lives after the three changes" "$ANS" \
		"ok live $NCONN reset 0 wrong 0 timeout 0 failed 0"
	owners "$_p" "$T/list0" new >"$T/own.new"
	{ simcmds "$_p" new; echo DIGEST; } >"$T/simd"
	expect_eq "$1: lb1's digest after the changes is maglev-sim's" \
		"$(svc_field "TCP $VIP:$_p" digest lb1)" "$(sim "$T/simd" | tail -n 1)"
	lb_conns "$_p" >"$T/lb.before"

	ip link set b-lb3 down
	ip link set s-lb3 down
	route lb1 lb2
	cmd round 3 60
	cmd round 2 60
	cmd list "$T/list1"
	ecmp "$_p" "$T/list1" >"$T/ecmp1"
	lb_conns "$_p" >"$T/lb.after"
	# Per connection: LPORT MOVED OLD NEW STATE
	awk -v p="$_p" 'FILENAME == ARGV[1] { a[$1] = $2; next }
	FILENAME == ARGV[2] { b[$1] = $2; next }
	FILENAME == ARGV[3] { o[$1] = $2; next }
	FILENAME == ARGV[4] { nw[$1] = $2; next }
	$1 == p { print $2, (a[$2] != b[$2]) ? 1 : 0, o[$2], nw[$2], $5 }' \
		"$T/ecmp0" "$T/ecmp1" "$T/own.old" "$T/own.new" "$T/list1" \
		>"$T/per.$_p"
	# shellcheck disable=SC2046
	set -- "$1" "$2" "$3" $(awk '
		{ n++ }
		$2 { mv++ }
		$2 && $3 != $4 { pred++ }
		$5 != "live" { brk++ }
		($2 && $3 != $4) != ($5 != "live") { diff++ }
		END { print n + 0, mv + 0, pred + 0, brk + 0, diff + 0 }' \
		"$T/per.$_p")
	N=$4 MOVED=$5 PREDICTED=$6 BROKEN=$7 DIFF=$8
	info "$1: $N connections, $MOVED changed LB when lb3 died; broken $BROKEN; maglev-sim predicts $PREDICTED without sync ($(($(date +%s) - _t0)) s)"

	ip link set b-lb3 up
	ip link set s-lb3 up
	route lb1 lb2 lb3
	cmd close
}

# --- phase A: no sync ----------------------------------------------------------------

info "set-up took $(($(date +%s) - tstart)) s"
phase "no sync" 84 0
A_N=$N A_MOVED=$MOVED A_BROKEN=$BROKEN A_PRED=$PREDICTED
if [ "$DIFF" -eq 0 ] && [ "$MOVED" -gt 0 ]; then
	pass "no sync: the $BROKEN broken connections are exactly the $PREDICTED that changed LB and whose key maglev-sim gives to another server"
else
	fail "no sync: $BROKEN broke, maglev-sim predicts $PREDICTED, $DIFF connections differ, $MOVED moved"
	awk '($2 && $3 != $4) != ($5 != "live")' "$T/per.84" | head -n 5
fi
# The ECMP choice read with ip route get against the LBs' own tables:
# a connection that moved has an entry on an LB that had none for it.
_mv=$(awk 'FILENAME == ARGV[1] { had[$1 " " $2] = 1; next }
	!(($1 " " $2) in had) { m[$2] = 1 }
	END { for (k in m) n++; print n + 0 }' "$T/lb.before" "$T/lb.after")
expect_eq "no sync: connections that changed LB, by the LBs' tables and by ip route get" \
	"$_mv" "$MOVED"

# --- phase B: sync --------------------------------------------------------------------

# sync_on: master and backup sync daemons on every LB (sync_version 1).
for lb in $LBS; do
	nsx "$lb" sysctl -qw net.ipv4.vs.sync_version=1 \
		net.ipv4.vs.sync_refresh_period=300 || fail "$lb: sync sysctls"
	echo "3 0" >"$T/thr"
	nsx "$lb" sh -c "cat $T/thr >/proc/sys/net/ipv4/vs/sync_threshold" ||
		fail "$lb: sync_threshold"
	nsx "$lb" ipvsadm --start-daemon master --mcast-interface eth1 \
		--syncid $SYNCID || fail "$lb: sync master"
	nsx "$lb" ipvsadm --start-daemon backup --mcast-interface eth1 \
		--syncid $SYNCID || fail "$lb: sync backup"
done
info "lb1 daemons: $(nsx lb1 ipvsadm -L --daemon | tr '\n' ';')"
_d=$(nsx lb1 ipvsadm -L --daemon | grep -c 'sync.*daemon')
expect_eq "sync: lb1 lists a master and a backup daemon" "$_d" 2
# A threshold not below the period is refused (the documentation says
# "from 0 to sync_period").
if nsx lb1 sh -c 'echo "50 50" >/proc/sys/net/ipv4/vs/sync_threshold' 2>/dev/null; then
	info "sync_threshold 50 50 accepted"
	echo "3 0" >"$T/thr"
	nsx lb1 sh -c "cat $T/thr >/proc/sys/net/ipv4/vs/sync_threshold"
else
	info "sync_threshold 50 50 refused (EINVAL): the threshold must be below the period"
fi

# none_broken WHAT PORT: PASS if the phase just run on PORT broke no
# connection while some changed LB.
none_broken() {
	if [ "$BROKEN" -eq 0 ] && [ "$MOVED" -gt 0 ]; then
		pass "$1: 0 of $N connections broke after three backend changes and lb3's death ($MOVED changed LB; without sync maglev-sim predicts $PREDICTED broken)"
	else
		fail "$1: $BROKEN of $N connections broke ($MOVED changed LB; maglev-sim predicts $PREDICTED without sync)"
		awk '$5 != "live"' "$T/per.$2" | head -n 5
	fi
}

phase "sync" 85 1
B_N=$N B_MOVED=$MOVED B_BROKEN=$BROKEN B_PRED=$PREDICTED
none_broken sync 85

# --- phase C: sync, sloppy_tcp=0 -------------------------------------------------------

for lb in $LBS; do nsx "$lb" sysctl -qw net.ipv4.vs.sloppy_tcp=0; done
phase "sync, sloppy_tcp=0" 86 1
C_N=$N C_MOVED=$MOVED C_BROKEN=$BROKEN C_PRED=$PREDICTED
# Synced connections need no sloppy_tcp.
none_broken "sync with sloppy_tcp=0" 86
for lb in $LBS; do nsx "$lb" sysctl -qw net.ipv4.vs.sloppy_tcp=1; done

# --- fleet check: pending, flags ---------------------------------------------------------

# A long hold-off keeps lb1's next build waiting: its line shows pending 1.
# Up to three tries (a slow guest may read /proc after the hold-off); a
# run that never caught it pending says so in a SKIP line.
ns_sysctl lb1 maglev_holdoff_ms 3000 || fail "lb1: maglev_holdoff_ms 3000"
try=0
while [ $try -lt 3 ]; do
	try=$((try + 1))
	nsx lb1 ipvsadm -e -t $VIP:86 -r 10.2.0.3:86 -g -w 3
	nsx lb1 ipvsadm -e -t $VIP:86 -r 10.2.0.3:86 -g -w 2
	fleet_capture pending "$LBS"
	grep -q ' pending 1 ' "$T/cap.pending.lb1" && break
	wait_caught_up lb1 20
done
if grep -q ' pending 1 ' "$T/cap.pending.lb1"; then
	fleet_check "lb1 pending" 3 pending "$LBS" '^PENDING'
else
	skip "lb1's table was never pending when read (3 tries, hold-off 3 s): maglev-fleet check's PENDING verdict not tested"
fi
ns_sysctl lb1 maglev_holdoff_ms 50 || fail "lb1: maglev_holdoff_ms 50"
wait_caught_up lb1 20
nsx lb2 ipvsadm -E -t $VIP:86 -s maglev || fail "lb2: ipvsadm -E"
wait_caught_up lb2 20
fleet_capture flags "$LBS"
fleet_check "lb2 without port hashing" 1 flags "$LBS" \
	'flags: 0x10 on lb1, lb3; 0x0 on lb2'


# --- cost: short and busy connections at a steady rate ------------------------------

# busy: guest CPU ticks "BUSY TOTAL" from /proc/stat.
busy() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat; }
# sync_ticks: CPU ticks of the IPVS sync threads (ipvs-m:*, ipvs-b:*).
sync_ticks() {
	for _s in /proc/[0-9]*/stat; do cat "$_s" 2>/dev/null; done |
		awk '$2 ~ /^\(ipvs-[mb]:/ { t += $14 + $15 } END { print t + 0 }'
}
# link_tx: packets and bytes all LBs sent on the sync network.
link_tx() {
	for _lb in $LBS; do
		nsx "$_lb" cat /sys/class/net/eth1/statistics/tx_packets \
			/sys/class/net/eth1/statistics/tx_bytes
	done | awk 'NR % 2 { p += $1; next } { b += $1 } END { print p + 0, b + 0 }'
}
HZ_TICKS=100
# cost LABEL: BENCH_CYCLES times, open 100 connections over 1 s, send
# BENCH_ROUNDS (60) lines on each, so that more than 53 packets come
# from each client (IPVS's default re-syncs at packet 53), close them; print the sync traffic and CPU.
cost() {
	_c0=$(date +%s)
	# shellcheck disable=SC2046
	set -- "$1" $(busy) $(sync_ticks) $(link_tx)
	_i=0
	while [ $_i -lt "${BENCH_CYCLES:-3}" ]; do
		cmd open 86 100 1
		_r=0
		while [ $_r -lt "${BENCH_ROUNDS:-60}" ]; do
			echo "round 0 10" >&4
			read -r ANS <&5
			_r=$((_r + 1))
		done
		cmd close
		_i=$((_i + 1))
	done
	sleep 3	# the last partly filled sync buffer goes out after 2 s
	# shellcheck disable=SC2046
	set -- "$@" $(busy) $(sync_ticks) $(link_tx) $(($(date +%s) - _c0))
	_n=$((${BENCH_CYCLES:-3} * 100))
	awk -v l="$1" -v n=$_n -v hz=$HZ_TICKS \
		-v b0="$2" -v t0="$3" -v s0="$4" -v p0="$5" -v y0="$6" \
		-v b1="$7" -v t1="$8" -v s1="$9" -v p1="${10}" -v y1="${11}" -v secs="${12}" 'BEGIN {
		p = p1 - p0; y = y1 - y0
		printf "sync-cost %s: %d conns (%.0f/s, %d lines each) in %d s: sync %d packets (%.1f/s), %d bytes, %.1f bytes and %.3f packets per connection; sync threads %.2f s CPU; guest CPU busy %.0f%%\n",
			l, n, n / secs, '"${BENCH_ROUNDS:-60}"' + 1, secs, p, p / secs, y,
			y / n, p / n, (s1 - s0) / hz, 100 * (b1 - b0) / (t1 - t0)
	}' | tee -a "$T/bench"
}
# The cost figures are a benchmark: "make bench-sync" (SYNC_COST=1) prints
# them; "make check" leaves them out (50 s of the test under TCG).
if [ "${SYNC_COST:-0}" = 1 ]; then
	for lb in $LBS; do nsx "$lb" sysctl -qw net.ipv4.vs.sync_refresh_period=300; done
	echo "3 0" >"$T/thr"
	for lb in $LBS; do nsx "$lb" sh -c "cat $T/thr >/proc/sys/net/ipv4/vs/sync_threshold"; done
	cost "threshold 3 0, refresh 300 (recommended)"
	for lb in $LBS; do nsx "$lb" sysctl -qw net.ipv4.vs.sync_refresh_period=0; done
	echo "3 50" >"$T/thr"
	for lb in $LBS; do nsx "$lb" sh -c "cat $T/thr >/proc/sys/net/ipv4/vs/sync_threshold"; done
	cost "threshold 3 50, refresh 0 (IPVS default)"
	for lb in $LBS; do nsx "$lb" ipvsadm --stop-daemon master; done
	cost "no sync master"
else
	for lb in $LBS; do nsx "$lb" ipvsadm --stop-daemon master; done
fi

{
	echo "fleet-sync no sync: $A_BROKEN of $A_N broken ($A_MOVED changed LB), maglev-sim predicts $A_PRED"
	echo "fleet-sync sync: $B_BROKEN of $B_N broken ($B_MOVED changed LB), maglev-sim predicts $B_PRED without sync"
	echo "fleet-sync sync, sloppy_tcp=0: $C_BROKEN of $C_N broken ($C_MOVED changed LB), maglev-sim predicts $C_PRED without sync"
} >>"$T/bench"
for lb in $LBS; do
	info "$lb sync link: $(nsx "$lb" cat /sys/class/net/eth1/statistics/tx_packets) packets, $(nsx "$lb" cat /sys/class/net/eth1/statistics/tx_bytes) bytes sent"
done
cat "$T/bench"

echo quit >&4
exec 4>&- 5<&-
for lb in $LBS; do
	nsx "$lb" ipvsadm --stop-daemon backup
	nsx "$lb" ipvsadm -C
done
# shellcheck disable=SC2086
kill $pids 2>/dev/null
wait
cleanup_net
ip link del br0
ip link del br1
sysctl -qw net.ipv4.conf.all.arp_ignore=0 net.ipv4.conf.all.arp_announce=0
finish
