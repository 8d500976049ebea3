#!/bin/sh
# Guest test 12: a fleet of load balancers behind ECMP, with real TCP.
#
#   cl 10.9.0.1 -- rt (router) ==ECMP to 10.0.0.1==> lb1 lb2 lb3 10.2.0.1K
#                   10.2.0.254                        rs1..rs5   10.2.0.I
#   (rt, the LBs and the real servers share one bridge segment, br0 here)
#
# Every LB runs IPVS with the VIP 10.0.0.1 and the same real servers, added
# in a different order on each LB, forwarding by direct routing (the VIP is
# on the real servers' lo, arp_ignore=1/arp_announce=2, so replies go
# straight back through the router) with sloppy_tcp=1, so an LB that never
# saw a connection's SYN schedules its mid-stream packets. The router
# spreads connections over the LBs by their 5-tuple
# (fib_multipath_hash_policy=1). Real servers answer each line with their
# name (tcpfleet server). One client process (tcpfleet client) holds all
# connections; each sends a line per round and checks that the same real
# server answers.
#
# Part 1: services on ports 80 (maglev), 81 (sh) and 82 (mh), port hashing
# (flag-2) on all three; FLEET_CONNS connections to each; lb3 dies (its
# link goes down and the router drops its nexthop) and every connection
# sends two more lines. With maglev every connection must survive; sh and
# mh are printed beside it. Part 2: a rolling update on port 83 (maglev):
# a fifth real server is added on lb1, lb2, lb3 in turn, then lb1 dies;
# the connections that break must be exactly those that changed LB and
# whose key maglev-sim gives to another server after the update.
#
# timeout: 120
. "${0%/*}/lib.sh"

tstart=$(date +%s)
VIP=10.0.0.1
CL=10.9.0.1
NCONN=${FLEET_CONNS:-150}	# per scheduler in part 1
NROLL=${FLEET_ROLL_CONNS:-300}	# part 2
LBS="lb1 lb2 lb3"
ORDER_lb1="1 2 3 4"
ORDER_lb2="4 3 2 1"
ORDER_lb3="2 4 1 3"

nsx() { ip netns exec "$@"; }

# --- network -------------------------------------------------------------

# Few processes: under TCG each one costs. Namespaces made from here on
# inherit the root's IPv4 conf/all settings: no ARP answers for the VIP on
# lo, ARP requests from the link's own address.
sysctl -qw net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2
for ns in rt cl $LBS rs1 rs2 rs3 rs4 rs5; do ip netns add "$ns"; done
# rt, the LBs and the real servers join the bridge br0 as eth0.
{
	echo "link add br0 type bridge"
	echo "link set br0 up"
	for ns in rt $LBS rs1 rs2 rs3 rs4 rs5; do
		echo "link add b-$ns type veth peer name eth0 netns $ns"
		echo "link set b-$ns master br0 up"
	done
} | ip -batch - || fail "bridge and links"
fleet_router_client "$CL"
nsx rt sysctl -qw net.ipv4.ip_forward=1 net.ipv4.fib_multipath_hash_policy=1
for i in 1 2 3 4 5 11 12 13; do
	case $i in 1?) ns=lb${i#1} ;; *) ns=rs$i ;; esac
	printf '%s\n' "link set lo up" "addr add 10.2.0.$i/24 dev eth0" \
		"link set eth0 up" "addr add $VIP/32 dev lo" \
		"route add default via 10.2.0.254" |
		ip -n "$ns" -batch - || fail "$ns links"
done
for lb in $LBS; do
	nsx "$lb" sysctl -qw net.ipv4.vs.sloppy_tcp=1
done

# route LB...: the router's route to the VIP, one nexthop per LB.
route() { fleet_route "$VIP" "$@"; }

route lb1 lb2 lb3
info "ECMP route: $(ip -n rt route show $VIP | tr -s ' \n' ' ')"

pids=
fleet_servers 5 80 81 82 83

# --- IPVS on the LBs ----------------------------------------------------------

# rules SCHED PORT ORDER: ipvsadm -R lines for a DR service on $VIP:PORT
# with the real servers 10.2.0.I:PORT (weight 1) added in ORDER.
rules() {
	echo "-A -t $VIP:$2 -s $1 -b flag-2"
	for _i in $3; do echo "-a -t $VIP:$2 -r 10.2.0.$_i:$2 -g -w 1"; done
}

# caught_up NS: wait (bounded) until every maglev service in NS has its
# table for its current configuration (pending 0, where /proc has it).
caught_up() {
	_n=0
	while in_ns "$1" cat $PROC | awk '$1 == "service" {
		for (i = 4; i < NF; i += 2)
			if ($i == "pending" && $(i + 1) != 0)
				busy = 1
		}
		END { exit !busy }'; do
		_n=$((_n + 1))
		[ $_n -lt 100 ] || { fail "$1: tables still pending after 10 s"; return 1; }
		sleep 0.1
	done
}

for lb in $LBS; do
	case $lb in
	lb1) order=$ORDER_lb1 ;;
	lb2) order=$ORDER_lb2 ;;
	*) order=$ORDER_lb3 ;;
	esac
	{
		rules maglev 80 "$order"
		rules sh 81 "$order"
		rules mh 82 "$order"
		rules maglev 83 "$order"
	} | nsx "$lb" ipvsadm -R || fail "$lb: ipvsadm -R"
	caught_up "$lb"
done

# simcmds PORT ORDER: maglev-sim commands for the real servers of PORT in
# ORDER, with the table size of lb1's service on port 80 and lb1's key.
SIZE=$(svc_field "TCP $VIP:80" size lb1)
KEY=$(ns_sysctl lb1 maglev_hash_key)
simcmds() {
	echo "SIZE $SIZE"
	echo "KEY $KEY"
	for _i in $2; do echo "ADD_NODE 10.2.0.$_i:$1 1"; done
}

# same_digest TEXT PORT ORDER1 ORDER2: every LB shows the same digest for
# $VIP:PORT, and maglev-sim computes it from ORDER1 and from ORDER2.
same_digest() {
	_d=$(svc_field "TCP $VIP:$2" digest lb1)
	[ -n "$_d" ] || fail "$1: lb1 shows no digest"
	_all=
	for _lb in $LBS; do _all="$_all $(svc_field "TCP $VIP:$2" digest "$_lb")"; done
	expect_eq "$1: every LB shows one digest" "$_all" " $_d $_d $_d"
	{ simcmds "$2" "$3"; echo DIGEST; } >"$T/sim1"
	{ simcmds "$2" "$4"; echo DIGEST; } >"$T/sim2"
	_s="$(sim "$T/sim1" | tail -n 1) $(sim "$T/sim2" | tail -n 1)"
	expect_eq "$1: maglev-sim's digest from orders '$3' and '$4'" "$_s" "$_d $_d"
}

same_digest "fleet port 80" 80 "$ORDER_lb1" "$ORDER_lb2"
# The same with maglev-fleet, on the three /proc files as collected.
fleet_capture setup "$LBS"
fleet_check "fleet set up" 0 setup "$LBS" \
	'^OK: 2 maglev services agree on 3'

# --- the client -----------------------------------------------------------------

fleet_client $CL $VIP

# lb_conns FILE: "LB VPORT CPORT RS" per IPVS connection on every LB.
lb_conns() {
	for _lb in $LBS; do
		nsx "$_lb" ipvsadm -Lcn | awk -v lb="$_lb" '$1 == "TCP" {
			split($4, c, ":"); split($5, v, ":"); split($6, d, ":")
			print lb, v[2], c[2], d[1] }'
	done >"$1"
}

# first_vs_sim TEXT PORT ORDER LIST: the first real server of every
# connection to PORT in LIST is maglev-sim's choice for its key.
first_vs_sim() {
	awk -v p="$2" -v cl=$CL '$1 == p { print cl, $2 }' "$4" >"$T/keys"
	simcmds "$2" "$3" >"$T/simset"
	predict "$T/keys" "$T/simset" 1 |
		awk '{ split($3, a, /[.:]/); print $2, "rs" a[4] }' >"$T/pred"
	_bad=$(awk -v p="$2" 'NR == FNR { o[$1] = $2; next }
		$1 == p && o[$2] != $3 { n++ } END { print n + 0 }' \
		"$T/pred" "$4")
	expect_eq "$1: connections whose real server is not maglev-sim's choice" \
		"$_bad" 0
}

# stats BEFORE AFTER LIST: per port "PORT CONNS MOVED MOVED_LIVE LIVE RESET
# WRONG TIMEOUT FAILED"; a connection moved if an LB that had no entry for
# it before has one after.
stats() {
	awk 'FILENAME == ARGV[1] { had[$1 " " $2 " " $3] = 1; next }
	FILENAME == ARGV[2] {
		if (!(($1 " " $2 " " $3) in had))
			moved[$2 " " $3] = 1
		next
	}
	{
		n[$1]++
		st[$1 " " $5]++
		if (($1 " " $2) in moved) {
			mv[$1]++
			if ($5 == "live")
				ml[$1]++
		}
	}
	END {
		for (p in n)
			print p, n[p], mv[p] + 0, ml[p] + 0, st[p " live"] + 0,
				st[p " reset"] + 0, st[p " wrong"] + 0,
				st[p " timeout"] + 0, st[p " failed"] + 0
	}' "$1" "$2" "$3" | sort -n
}

# --- part 1: an LB dies ----------------------------------------------------------

info "set-up took $(($(date +%s) - tstart)) s"
t0=$(date +%s)
for p in 80 81 82; do cmd open $p "$NCONN" 2; done
cmd list "$T/list0"
expect_eq "fleet: connections opened through 3 LBs and answered" \
	"$ANS" "ok live $((3 * NCONN)) reset 0 wrong 0 timeout 0 failed 0"
first_vs_sim "fleet port 80" 80 "$ORDER_lb1" "$T/list0"
lb_conns "$T/lb.before"
for lb in $LBS; do
	info "$lb holds $(awk -v lb="$lb" '$1 == lb' "$T/lb.before" | wc -l) connections"
done
held=$(awk '$1 == "lb3"' "$T/lb.before" | wc -l)

# lb3 dies: its link goes down and the router drops its route.
ip link set b-lb3 down
route lb1 lb2
info "lb3 leaves the route: $(ip -n rt route show $VIP | tr -s ' \n' ' ')"
cmd round 3 60
cmd round 2 60
cmd list "$T/list1"
lb_conns "$T/lb.after"
stats "$T/lb.before" "$T/lb.after" "$T/list1" >"$T/st1"
info "part 1 took $(($(date +%s) - t0)) s"

info "port conns moved moved-live live reset wrong timeout failed"
while read -r line; do info "$line"; done <"$T/st1"
# shellcheck disable=SC2046
set -- $(awk '$1 == 80' "$T/st1")
[ "$held" -gt 0 ] || fail "fleet: lb3 held no connection, nothing to fail over"
if [ "$#" -eq 9 ] && [ "$3" -gt 0 ] && [ "$5" -eq "$NCONN" ] &&
	[ "$6$7$8$9" = 0000 ]; then
	pass "fleet failover, maglev: all $5 of $NCONN connections survived lb3's death, $3 changed LB, none reset or answered by another real server"
else
	fail "fleet failover, maglev: conns moved moved-live live reset wrong timeout failed: ${2:-?} ${3:-?} ${4:-?} ${5:-?} ${6:-?} ${7:-?} ${8:-?} ${9:-?}"
fi
awk -v n="$NCONN" '{ s[$1] = $5 "/" $2 " survived, " $3 " changed LB of which " $4 " survived" }
	END { printf "fleet-failover 3->2 LBs, %d conns each: maglev %s | sh %s | mh %s\n",
		n, s[80], s[81], s[82] }' "$T/st1" >"$T/bench"
info "$(cat "$T/bench")"
cmd close

# --- part 2: rolling update, then an LB dies ------------------------------------

ip link set b-lb3 up
route lb1 lb2 lb3
t0=$(date +%s)
cmd open 83 "$NROLL" 2
expect_eq "rolling update: $NROLL connections opened" "$ANS" \
	"ok live $NROLL reset 0 wrong 0 timeout 0 failed 0"
cmd list "$T/list2"
first_vs_sim "rolling update port 83" 83 "$ORDER_lb1" "$T/list2"
cp "$T/pred" "$T/pred.old"
for lb in $LBS; do
	nsx "$lb" ipvsadm -a -t $VIP:83 -r 10.2.0.5:83 -g -w 1 ||
		fail "$lb: ipvsadm -a 10.2.0.5:83"
	caught_up "$lb"
	if [ "$lb" = lb1 ]; then
		fleet_capture roll-lb1 "$LBS"
		fleet_check "rolling update, lb1 updated" 1 roll-lb1 "$LBS" \
			'dest 10.2.0.5:83: weight 1 on lb1; missing on lb2, lb3'
	fi
done
fleet_capture roll-done "$LBS"
fleet_check "rolling update done" 0 roll-done "$LBS"
cmd round 2 60
expect_eq "rolling update: every connection lives on after the update" \
	"$ANS" "ok live $NROLL reset 0 wrong 0 timeout 0 failed 0"
same_digest "rolling update port 83" 83 "$ORDER_lb2 5" "5 $ORDER_lb3"

# maglev-sim's owner of every key after the update.
awk -v cl=$CL '$1 == 83 { print cl, $2 }' "$T/list2" >"$T/keys"
{ simcmds 83 "1 2 3 4 5"; } >"$T/simset"
predict "$T/keys" "$T/simset" 1 |
	awk '{ split($3, a, /[.:]/); print $2, "rs" a[4] }' >"$T/pred.new"
lb_conns "$T/lb.before"
ip link set b-lb1 down
route lb2 lb3
info "lb1 leaves the route: $(ip -n rt route show $VIP | tr -s ' \n' ' ')"
cmd round 3 60
cmd list "$T/list3"
lb_conns "$T/lb.after"
info "part 2 took $(($(date +%s) - t0)) s"

# Per connection: moved (changed LB), owner before and after per
# maglev-sim, state. Predicted break: moved and the owner changed.
awk 'FILENAME == ARGV[1] { had[$1 " " $2 " " $3] = 1; next }
FILENAME == ARGV[2] {
	if ($2 == 83 && !(($1 " " $2 " " $3) in had))
		moved[$3] = 1
	next
}
FILENAME == ARGV[3] { old[$1] = $2; next }
FILENAME == ARGV[4] { new[$1] = $2; next }
$1 == 83 {
	print $2, ($2 in moved) ? 1 : 0, old[$2], new[$2], $5
}' "$T/lb.before" "$T/lb.after" "$T/pred.old" "$T/pred.new" "$T/list3" \
	>"$T/roll"
# shellcheck disable=SC2046
set -- $(awk '
	{ n++ }
	$3 != $4 { own++; if ($4 == "rs5") to5++ }
	$2 { mv++ }
	$2 && $3 != $4 { pred++ }
	$5 != "live" { brk++ }
	($2 && $3 != $4) != ($5 != "live") { diff++ }
	END { print n + 0, own + 0, to5 + 0, mv + 0, pred + 0, brk + 0, diff + 0 }' \
	"$T/roll")
info "rolling update: $1 conns; maglev-sim: $2 keys changed owner ($3 to the new rs5, $(($2 - $3)) between the others; 1/5 would be $(($1 / 5))); $4 changed LB when lb1 left"
echo "fleet-rolling-update $1 conns, $4 changed LB: measured breaks $6, maglev-sim predicts $5" >>"$T/bench"
info "$(tail -n 1 "$T/bench")"
if [ "$#" -eq 7 ] && [ "$7" -eq 0 ] && [ "$4" -gt 0 ]; then
	pass "fleet rolling update then failover: the $6 broken connections are exactly the $5 that changed LB and whose key maglev-sim gives to another server"
else
	fail "fleet rolling update: $6 broke, maglev-sim predicts $5; $7 connections differ"
	awk '($2 && $3 != $4) != ($5 != "live")' "$T/roll" | head -n 5
fi
info "broken connections whose key went to the new rs5: $(awk '$5 != "live" && $4 == "rs5"' "$T/roll" | wc -l), to another old server (Maglev's churn between survivors): $(awk '$5 != "live" && $4 != "rs5"' "$T/roll" | wc -l)"

cmd close
echo quit >&4
exec 4>&- 5<&-
cat "$T/bench"
# Services go with their namespaces, but only once those are freed: clear
# them now so that the module can be removed after the test.
for lb in $LBS; do nsx "$lb" ipvsadm -C; done
# shellcheck disable=SC2086
kill $pids 2>/dev/null
wait
cleanup_net
ip link del br0
sysctl -qw net.ipv4.conf.all.arp_ignore=0 net.ipv4.conf.all.arp_announce=0
finish
