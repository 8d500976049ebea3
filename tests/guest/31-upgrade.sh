#!/bin/sh
# Guest test 31: upgrading from 0.1 (commit c749cec of this repository,
# built against the same kernel by vm-test.sh: "# old-module-build:") to
# this tree with connections open and traffic flowing.
#
#   cl 10.9.0.1 -- rt ==> lb1 lb2 (10.2.0.11, .12; sync link br1)
#                        rs1 rs2 rs3 (10.2.0.I, direct routing, VIP on lo)
#
# Part 1, one LB (lb1, the router's only route), TCP port 80, flag-2:
# 60 connections opened under 0.1 (its default size "auto"; its table and
# choices equal maglev-sim's at that size), each sending a line every
# moment of each step below (a round spread over 8 s) and afterwards:
#   a. upgrade by "ipvsadm -E" to rr, rmmod 0.1, insmod this tree, -E back
#      to maglev: 20 connections opened the moment the new module is in
#      (connprobe) are served by rr, none refused;
#   b. rollback by save, reload, restore with a placeholder service (rr,
#      on an unused address) in place of "ipvsadm -C", which keeps IPVS's
#      hooks in the namespace;
# after a and b every connection is live and answered by its first
# server;
#   c. upgrade by the save, clear, reload, restore of docs/operating.md
#      (ipvsadm -S, -C, rmmod, insmod, ipvsadm -R) on the LB still in the
#      route: every connection that sends between -C and -R is reset (IPVS
#      unregisters its hooks with a namespace's last service, and the
#      LB's own stack answers for the local VIP).
# After each, the table is maglev-sim's at the version's size (0.1: auto;
# this tree: 65537) and new connections go where maglev-sim says at that
# size; how many keys the size change gives to other servers is printed.
# Not simulated away, but said here: part a's new module is in while rr
# serves, so its connections are rr's, not the new maglev's; in part 2
# "lb2 on 0.1" after lb1's upgrade is this tree's module at 0.1's table
# size (one kernel, one module), whose table equals 0.1's, not 0.1's code.
# Part 2, a synced pair (lb1, lb2: sync master and backup on both, ECMP,
# TCP port 84, flag-2): 100 connections under 0.1. Both LBs share this
# guest's kernel, so there is one module: lb1 is upgraded (out of the
# route, -S, -C, the module replaced, -R) while lb2 stays in the route on
# 0.1's table: lb2's service goes to rr for the moment of the module's
# replacement and back to maglev with lb2's maglev_table_size set to 0.1's
# size, which gives exactly 0.1's table (its digest checked against 0.1's).
# Then both LBs serve (lb1 this tree, lb2 0.1's table), then lb2 leaves the
# route (every connection through lb1), then lb2 is upgraded (-S, -C, the
# size back to the default, -R) and both serve again: every connection
# lives through all of it (sync), and the LBs agree at the end
# (maglev-fleet check). maglev-sim's count of the connections whose server
# differs between the two tables (those an LB change would break without
# sync) is printed.
#
# guest-timeout: 240
# old-module-build: c749cec
# debug-kernel: yes
. "${0%/*}/lib.sh"

OLD=${MAGLEV_DIR:-/maglev}/old/c749cec/ip_vs_maglev.ko
NEW=$MAGLEV_KO
V=$VIP4
CL=10.9.0.1
LBS="lb1 lb2"
for f in "$OLD" "$NEW"; do
	[ -f "$f" ] || { fail "no $f"; finish; }
done
for c in tcpfleet connprobe maglev-fleet; do
	command -v $c >/dev/null 2>&1 || { fail "no $c in the guest"; finish; }
done
nsx() { ip netns exec "$@"; }

# version: the loaded module's MODULE_VERSION, "none" without one (0.1).
version() { cat /sys/module/ip_vs_maglev/version 2>/dev/null || echo none; }

# --- network -----------------------------------------------------------------------
sysctl -qw net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2
for ns in rt cl $LBS rs1 rs2 rs3; do ip netns add "$ns"; done
{
	echo "link add br0 type bridge"
	echo "link set br0 up"
	echo "link add br1 type bridge"
	echo "link set br1 up"
	for ns in rt $LBS rs1 rs2 rs3; do
		echo "link add b-$ns type veth peer name eth0 netns $ns"
		echo "link set b-$ns master br0 up"
	done
	for ns in $LBS; do
		echo "link add s-$ns type veth peer name eth1 netns $ns"
		echo "link set s-$ns master br1 up"
	done
} | ip -batch - || fail "bridges and links"
fleet_router_client "$CL"
nsx rt sysctl -qw net.ipv4.ip_forward=1 net.ipv4.fib_multipath_hash_policy=1
fleet_hosts "$V" 1 2 3 11 12
for lb in $LBS; do nsx "$lb" sysctl -qw net.ipv4.vs.sloppy_tcp=1; done
pids=
fleet_servers 3 80 84
fleet_client $CL $V

# --- 0.1 ---------------------------------------------------------------------------
check "rmmod this tree's module (loaded by the harness)" rmmod ip_vs_maglev
if ! out=$(insmod "$OLD" 2>&1); then
	fail "insmod 0.1: $out"
	finish
fi
expect_eq "0.1 loaded: no MODULE_VERSION" "$(version)" none
expect_eq "0.1: the default table size" "$(cat $SYSCTL/maglev_table_size)" auto

# simcmds SIZE PORT: maglev-sim's commands for the three servers on PORT.
simcmds() {
	echo "SIZE $1"
	for _i in 1 2 3; do echo "ADD_NODE 10.2.0.$_i:$2 1"; done
}
# new_vs_sim TEXT PORT SIZE N: open N connections to PORT; each is first
# answered by maglev-sim's server at SIZE; closes them. Prints the keys'
# servers at SIZE to $T/pred.
new_vs_sim() {
	cmd list "$T/before"
	cmd open "$2" "$4" 1
	cmd list "$T/after"
	awk 'FILENAME == ARGV[1] { o[$2] = 1; next } !($2 in o)' "$T/before" \
		"$T/after" >"$T/newc"
	awk -v c=$CL '{ print c, $2 }' "$T/newc" >"$T/keys"
	simcmds "$3" "$2" >"$T/simset"
	predict "$T/keys" "$T/simset" 1 | awk '{ split($3, a, /[.:]/); print $2, "rs" a[4] }' >"$T/pred"
	_r=$(awk 'FILENAME == ARGV[1] { o[$1] = $2; next } { n++; if (o[$2] != $3 || $5 != "live") bad++ }
		END { print n + 0, bad + 0 }' "$T/pred" "$T/newc")
	expect_eq "$1: new connections, answered by another server than maglev-sim's at size $3" \
		"$_r" "$4 0"
}
# all_live TEXT N: a round on every connection; all N live, none broken.
all_live() {
	cmd round 2 30
	expect_eq "$1" "$ANS" "ok live $2 reset 0 wrong 0 timeout 0 failed 0"
}
# digest_is TEXT NS PORT SIZE: NS's table for PORT is maglev-sim's at SIZE.
digest_is() {
	{ simcmds "$4" "$3"; echo DIGEST; } >"$T/d.in"
	expect_eq "$1" "$(svc_field "TCP $V:$3" digest "$2") $(svc_field "TCP $V:$3" size "$2")" \
		"$(sim "$T/d.in" | tail -n 1) $4"
}
# moved SIZE1 SIZE2 PORT LIST: how many connections of PORT in LIST
# maglev-sim gives to other servers at SIZE2 than at SIZE1.
moved() {
	awk -v p="$3" -v c=$CL '$1 == p { print c, $2 }' "$4" >"$T/mk"
	simcmds "$1" "$3" >"$T/m1"
	simcmds "$2" "$3" >"$T/m2"
	predict "$T/mk" "$T/m1" 1 >"$T/mp1"
	predict "$T/mk" "$T/m2" 1 >"$T/mp2"
	awk 'FILENAME == ARGV[1] { o[FNR] = $3; next } o[FNR] != $3' "$T/mp1" "$T/mp2" | wc -l
}
# background: a round of 8 s on every connection, its answer read later
# (bg_done), so that every connection sends during the step between.
background() { echo "round 8 30" >&4; }
bg_done() {
	read -r ANS <&5
	expect_eq "$1: every connection sent and was answered during it" "$ANS" \
		"ok live $2 reset 0 wrong 0 timeout 0 failed 0"
}

# --- part 1: one LB ---------------------------------------------------------------------
fleet_route $V lb1
nsx lb1 ipvsadm -A -t $V:80 -s maglev -b flag-2 || fail "lb1: ipvsadm -A"
for i in 1 2 3; do nsx lb1 ipvsadm -a -t $V:80 -r "10.2.0.$i:80" -g -w 1; done
SOLD=$(svc_field "TCP $V:80" size lb1)
info "0.1's size for 3 servers (auto): $SOLD"
case $SOLD in '' | 0 | 65537) fail "0.1's auto size '$SOLD'" ;; esac
digest_is "0.1: its table is maglev-sim's at its size" lb1 80 "$SOLD"
cmd open 80 60 2
expect_eq "0.1: 60 connections" "$ANS" "ok live 60 reset 0 wrong 0 timeout 0 failed 0"
N=60
cmd list "$T/l0"
simcmds "$SOLD" 80 >"$T/simset"
awk -v c=$CL '$1 == 80 { print c, $2 }' "$T/l0" >"$T/keys"
predict "$T/keys" "$T/simset" 1 | awk '{ split($3, a, /[.:]/); print $2, "rs" a[4] }' >"$T/pred"
expect_eq "0.1: connections answered by another server than maglev-sim's at size $SOLD" \
	"$(awk 'FILENAME == ARGV[1] { o[$1] = $2; next } o[$2] != $3' "$T/pred" "$T/l0" | wc -l)" 0

# a. -E to rr, module replaced, -E back.
background
t0=$(date +%s)
nsx lb1 ipvsadm -E -t $V:80 -s rr -b flag-2 || fail "a: -E to rr"
PROBE=$(connprobe -n /run/netns/cl -t 5000 20 $V 80 -- \
	sh -c "rmmod ip_vs_maglev && insmod $NEW")
# shellcheck disable=SC2086
set -- $PROBE
expect_eq "a: connections the moment this tree's module is in (rr serves): connected, refused" \
	"$2 $4" "20 0"
nsx lb1 ipvsadm -E -t $V:80 -s maglev -b flag-2 || fail "a: -E back to maglev"
info "a: the switch took $(($(date +%s) - t0)) s"
bg_done "a: upgrade by -E" $N
expect_eq "a: this tree loaded" "$(version)" 0.2
all_live "a: after the upgrade by -E, every connection live" $N
digest_is "a: the table is maglev-sim's at the new default size" lb1 80 65537
new_vs_sim "a" 80 65537 30
N=$((N + 30))
cmd list "$T/l1"
info "a: of the $N connections' keys, $(moved "$SOLD" 65537 80 "$T/l1") go to other servers at 65537 than at $SOLD (new connections of these clients move once)"

# b. Rollback with traffic flowing, by save, reload, restore, with a
# placeholder service (rr, on an address nobody uses) kept through it in
# place of "ipvsadm -C": IPVS registers its netfilter hooks with a
# namespace's first service of a family and unregisters them with its
# last, so with the placeholder every packet still meets IPVS, which drops
# those of the established connections while their server is gone
# (expire_nodest_conn=0) and TCP sends them again once "ipvsadm -R" has
# brought it back.
PLACEHOLDER=10.255.255.1:1
background
t0=$(date +%s)
nsx lb1 ipvsadm -S -n >"$T/rules" || fail "b: ipvsadm -S"
nsx lb1 ipvsadm -A -t $PLACEHOLDER -s rr || fail "b: the placeholder service"
awk '$1 == "-A" { print "-D", $2, $3 }' "$T/rules" | nsx lb1 ipvsadm -R ||
	fail "b: deleting the saved services"
expect_eq "b: only the placeholder left" "$(nsx lb1 ipvsadm -Sn | grep -c '^-A')" 1
rmmod ip_vs_maglev || fail "b: rmmod"
insmod "$OLD" || fail "b: insmod 0.1"
nsx lb1 ipvsadm -R <"$T/rules" || fail "b: ipvsadm -R"
nsx lb1 ipvsadm -D -t $PLACEHOLDER || fail "b: deleting the placeholder"
info "b: the reload took $(($(date +%s) - t0)) s: $(tr '\n' ';' <"$T/rules")"
bg_done "b: rollback to 0.1 with a placeholder service" $N
expect_eq "b: 0.1 loaded" "$(version)" none
all_live "b: after the rollback, every connection live" $N
digest_is "b: the table is maglev-sim's at 0.1's size again" lb1 80 "$SOLD"
new_vs_sim "b" 80 "$SOLD" 10
N=$((N + 10))

# c. The upgrade of docs/operating.md (ipvsadm -S, -C, rmmod, insmod,
# ipvsadm -R) on an LB still in the route: every connection that sends
# while the namespace has no service (one round right after -C) is reset,
# by the LB's own TCP stack (the VIP is local and IPVS's hooks went with
# the last service). docs/operating.md takes the LB out of the route first.
nsx lb1 ipvsadm -S -n >"$T/rules" || fail "c: ipvsadm -S"
nsx lb1 ipvsadm -C
cmd round 1 5
expect_eq "c: after ipvsadm -C every connection that sends is reset" "$ANS" \
	"ok live 0 reset $N wrong 0 timeout 0 failed 0"
rmmod ip_vs_maglev || fail "c: rmmod"
insmod "$NEW" || fail "c: insmod this tree"
nsx lb1 ipvsadm -R <"$T/rules" || fail "c: ipvsadm -R"
expect_eq "c: this tree loaded" "$(version)" 0.2
digest_is "c: the table is maglev-sim's at the new default size" lb1 80 65537
cmd close
N=0
new_vs_sim "c" 80 65537 20
cmd close
nsx lb1 ipvsadm -C

# --- part 2: a synced pair --------------------------------------------------------------
rmmod ip_vs_maglev || fail "rmmod before part 2"
insmod "$OLD" || fail "insmod 0.1 for part 2"
for lb in $LBS; do
	nsx "$lb" sysctl -qw net.ipv4.vs.sync_version=1 \
		net.ipv4.vs.sync_refresh_period=300 || fail "$lb: sync sysctls"
	echo "3 0" >"$T/thr"
	nsx "$lb" sh -c "cat $T/thr >/proc/sys/net/ipv4/vs/sync_threshold" ||
		fail "$lb: sync_threshold"
	nsx "$lb" ipvsadm --start-daemon master --mcast-interface eth1 --syncid 31 ||
		fail "$lb: sync master"
	nsx "$lb" ipvsadm --start-daemon backup --mcast-interface eth1 --syncid 31 ||
		fail "$lb: sync backup"
	{
		echo "-A -t $V:84 -s maglev -b flag-2"
		for i in 1 2 3; do echo "-a -t $V:84 -r 10.2.0.$i:84 -g -w 1"; done
	} | nsx "$lb" ipvsadm -R || fail "$lb: ipvsadm -R"
done
fleet_route $V lb1 lb2
DOLD=$(svc_field "TCP $V:84" digest lb2)
digest_is "pair on 0.1: lb1's table is maglev-sim's at 0.1's size" lb1 84 "$SOLD"
digest_is "pair on 0.1: lb2's table is maglev-sim's at 0.1's size" lb2 84 "$SOLD"
N=100
cmd open 84 $N 2
expect_eq "pair on 0.1: $N connections through both LBs" "$ANS" \
	"ok live $N reset 0 wrong 0 timeout 0 failed 0"
# Every LB holds every connection (its own or synced) within 10 s.
w=0
while [ $w -lt 20 ]; do
	k=0
	for lb in $LBS; do
		[ "$(nsx "$lb" ipvsadm -Lcn | awk -v v="$V:84" '$5 == v' | wc -l)" -ge $N ] && k=$((k + 1))
	done
	[ $k -eq 2 ] && break
	sleep 0.5
	w=$((w + 1))
done
expect_eq "pair on 0.1: both LBs hold every connection" "$k" 2
cmd list "$T/l2"
info "pair: of the $N connections' keys, $(moved "$SOLD" 65537 84 "$T/l2") go to other servers at 65537 than at $SOLD: without sync, those that change LB while the LBs' versions differ break"

# lb1's turn: out of the route; lb2 keeps 0.1's table through the module's
# replacement (rr for that moment, then maglev at 0.1's size).
fleet_route $V lb2
background
nsx lb1 ipvsadm -S -n >"$T/r1" || fail "lb1: ipvsadm -S"
nsx lb1 ipvsadm -C
nsx lb2 ipvsadm -E -t $V:84 -s rr -b flag-2 || fail "lb2: -E to rr"
rmmod ip_vs_maglev || fail "rmmod 0.1"
insmod "$NEW" || fail "insmod this tree"
ns_sysctl lb2 maglev_table_size "$SOLD" || fail "lb2: maglev_table_size $SOLD"
nsx lb2 ipvsadm -E -t $V:84 -s maglev -b flag-2 || fail "lb2: -E back to maglev"
nsx lb1 ipvsadm -R <"$T/r1" || fail "lb1: ipvsadm -R"
bg_done "pair: lb1 upgraded while lb2 serves (by rr while the module is replaced, then by this tree at 0.1's size)" $N
expect_eq "pair: lb2, on this tree's module at 0.1's size, has 0.1's table (0.1's digest)" \
	"$(svc_field "TCP $V:84" digest lb2)" "$DOLD"
digest_is "pair: lb1 on this tree has maglev-sim's table at 65537" lb1 84 65537
fleet_capture mixed "$LBS"
fleet_check "pair: the LBs' tables differ while their versions do" 1 mixed "$LBS"

fleet_route $V lb1 lb2
all_live "pair: both LBs serve, one on each table: every connection live" $N
fleet_route $V lb1
all_live "pair: lb2 leaves the route, every connection through lb1: all live" $N

# lb2's turn.
nsx lb2 ipvsadm -S -n >"$T/r2" || fail "lb2: ipvsadm -S"
nsx lb2 ipvsadm -C
ns_sysctl lb2 maglev_table_size 65537 || fail "lb2: maglev_table_size 65537"
nsx lb2 ipvsadm -R <"$T/r2" || fail "lb2: ipvsadm -R"
fleet_route $V lb1 lb2
all_live "pair: lb2 upgraded, both LBs serve: every connection live" $N
wait_caught_up lb2 20
fleet_capture upgraded "$LBS"
fleet_check "pair: both LBs on this tree agree" 0 upgraded "$LBS"
new_vs_sim "pair, both upgraded" 84 65537 20

cmd close
echo quit >&4
exec 4>&- 5<&-
for lb in $LBS; do
	nsx "$lb" ipvsadm --stop-daemon master
	nsx "$lb" ipvsadm --stop-daemon backup
	nsx "$lb" ipvsadm -C
done
# shellcheck disable=SC2086
kill $pids 2>/dev/null
wait 2>/dev/null
cleanup_net
ip link del br0
ip link del br1
sysctl -qw net.ipv4.conf.all.arp_ignore=0 net.ipv4.conf.all.arp_announce=0
finish
