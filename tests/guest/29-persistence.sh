#!/bin/sh
# Guest test 29: persistence (-p), one-packet scheduling (-o) and flag-3
# with maglev, through the kernel with real traffic, against maglev-sim.
#
# a. -p 300 with port hashing (flag-2), UDP, NAT, 3 real servers: IPVS
#    makes a persistence template per client address from the first flow
#    the table schedules, and sends the address's later flows to the
#    template's server whatever the table says for their ports. 20 client
#    addresses x 10 ports: every flow goes to maglev-sim's server for its
#    address's first port (and for some the table alone would have said
#    another). A fourth server added: the 20 addresses keep their
#    templates' servers for new ports, 20 new addresses follow the new
#    table.
# b. -o (one-packet scheduling), UDP, flag-2: every datagram is scheduled
#    on its own and no connection entry is kept. 200 flows each reach (seen
#    by udpflows -l on the real servers) maglev-sim's server; a fourth
#    server added, the same flows again each reach the new table's server,
#    some a new one. Without -o (port 92, the same flows and change) they
#    stay on their connections' first servers.
# c. flag-3 has no effect: services with flag-2 and with flag-2,flag-3 show
#    flags 0x10 and 0x30, the same digest (maglev-sim's), and 200 flows get
#    the same server from both, maglev-sim's.
# d. Persistence across two LBs (lb1, lb2 behind a router, direct routing,
#    TCP, flag-2, -p 300), one connection at a time from chosen client
#    ports whose keys maglev-sim gives to different servers: without
#    connection sync, a client's connection through lb2 after one through
#    lb1 goes to the table's server for its own key (lb2 has no template);
#    with sync (master and backup daemons on both) it goes to the server of
#    the template lb1 made and synced.
#
# guest-timeout: 150
# debug-kernel: yes
. "${0%/*}/lib.sh"

for c in udpflows tcpfleet; do
	command -v $c >/dev/null 2>&1 || { fail "no $c in the guest"; finish; }
done
# took PART: print the seconds since the last call.
tp=$(date +%s)
took() { info "$1 took $(($(date +%s) - tp)) s"; tp=$(date +%s); }
setup_net 4
warm_up
V=$VIP4

# rs_of: "ADDR PORT OWNER" (predict) to "ADDR PORT rsI".
rs_of() { awk '{ split($3, a, "."); print $1, $2, "rs" a[3] }'; }
# conns_rs VIP PORT FLOWS: "ADDR PORT rsI" of the IPVS connections of FLOWS.
conns_rs() {
	conns_of "$3" "$1" "$2" | awk '{ split($3, a, "."); print $1, $2, "rs" a[3] }' | sort
}
# same TEXT GOT WANT: the "ADDR PORT rsI" files GOT and WANT list the same
# flows with the same servers, and are not empty.
same() {
	sort -o "$2" "$2"
	sort -o "$3" "$3"
	if [ -s "$3" ] && cmp -s "$2" "$3"; then
		pass "$1 ($(wc -l <"$3") flows)"
	else
		fail "$1: $(wc -l <"$2") flows seen, $(wc -l <"$3") expected; first differences:"
		diff "$3" "$2" | grep '^[-+][^-+]' | head -n 6
	fi
}

took "set-up"

# --- a. persistence on one LB ---------------------------------------------------------
S="UDP $V:90"
run ipvsadm -A -u $V:90 -s maglev -b flag-2 -p 300
: >"$T/s.a"
for i in 1 2 3; do
	run ipvsadm -a -u $V:90 -r "10.1.$i.1:90" -m -w 1
	echo "ADD_NODE 10.1.$i.1:90 1" >>"$T/s.a"
done
check_sim "$S -p 300" "$S" "$T/s.a"
addrs=$(client_addrs 4 20)
# shellcheck disable=SC2086
flows $V 90 20000 10 $addrs >"$T/f.a"
# The table's own choice per flow, and per address that of its first flow.
predict "$T/f.a" "$T/s.a" 1 | rs_of >"$T/own.a"
awk '$2 == 20000 { print $1, $3 }' "$T/own.a" >"$T/first.a"
awk 'FILENAME == ARGV[1] { t[$1] = $2; next } { print $1, $2, t[$1] }' \
	"$T/first.a" "$T/f.a" >"$T/want.a"
conns_rs $V 90 "$T/f.a" >"$T/got.a"
same "$S: every flow goes to maglev-sim's server of its address's first flow (the template's)" \
	"$T/got.a" "$T/want.a"
over=$(awk 'FILENAME == ARGV[1] { w[$1 " " $2] = $3; next } w[$1 " " $2] != $3' \
	"$T/want.a" "$T/own.a" | wc -l)
if [ "$over" -gt 0 ]; then
	pass "$S: the templates overrode the table's choice for $over of $(wc -l <"$T/f.a") flows"
else
	fail "$S: no flow whose own key maglev-sim gives to another server: the check proves nothing"
fi
expect_eq "$S: one persistence template per client address" \
	"$(ipvsadm -Lcn | awk -v v="$V:90" '$5 == v && $4 ~ /:0$/' | wc -l)" 20

run ipvsadm -a -u $V:90 -r 10.1.4.1:90 -m -w 1
echo "ADD_NODE 10.1.4.1:90 1" >>"$T/s.a"
check_sim "$S with a fourth server" "$S" "$T/s.a"
more=$(client_addrs 4 20 21)
# shellcheck disable=SC2086
flows $V 90 20010 10 $addrs $more >"$T/f.a2"
predict "$T/f.a2" "$T/s.a" 1 | rs_of >"$T/own.a2"
awk '$2 == 20010 { print $1, $3 }' "$T/own.a2" >"$T/first.a2"
# Old addresses: their template's server; new ones: the new table's for
# their first flow.
awk 'FILENAME == ARGV[1] { o[$1] = $2; next }
	FILENAME == ARGV[2] { n[$1] = $2; next }
	{ print $1, $2, (($1 in o) ? o[$1] : n[$1]) }' "$T/first.a" "$T/first.a2" \
	"$T/f.a2" >"$T/want.a2"
conns_rs $V 90 "$T/f.a2" >"$T/got.a2"
same "$S after a fourth server: old clients keep their templates' servers, new ones follow the new table" \
	"$T/got.a2" "$T/want.a2"
moved=$(awk 'FILENAME == ARGV[1] { o[$1] = $2; next } ($1 in o) && o[$1] != $2' \
	"$T/first.a" "$T/first.a2" | wc -l)
info "$S: $moved of 20 old clients' first new flows would go elsewhere by the new table alone"
[ "$moved" -gt 0 ] || info "$S: (so the kept templates are not visible in this run)"

took "part a"

# --- b. one-packet scheduling -----------------------------------------------------------
S="UDP $V:91"
run ipvsadm -A -u $V:91 -s maglev -b flag-2 -o
run ipvsadm -A -u $V:92 -s maglev -b flag-2
: >"$T/s.b"
: >"$T/s.b92"
for i in 1 2 3; do
	run ipvsadm -a -u $V:91 -r "10.1.$i.1:91" -m -w 1
	run ipvsadm -a -u $V:92 -r "10.1.$i.1:92" -m -w 1
	echo "ADD_NODE 10.1.$i.1:91 1" >>"$T/s.b"
	# The servers' names (ports) are inputs of the table: its own.
	echo "ADD_NODE 10.1.$i.1:92 1" >>"$T/s.b92"
done
check_sim "$S -o" "$S" "$T/s.b"
baddrs=$(client_addrs 4 10 41)

# listen N: udpflows -l 91 in rs1..rsN, each writing what it receives to
# $T/rx.I, until IDLE s without a datagram; waits until each listens. The
# debug kernel took more than 3 s from the listeners to the first
# datagram once (after the fourth server: 0 of 200 flows seen).
IDLE=3
[ -e /sys/kernel/debug/kmemleak ] && IDLE=20
listen() {
	lpids=
	for _i in $(seq "$1"); do
		ip netns exec "rs$_i" udpflows -l 91 $IDLE >"$T/rx.$_i" &
		lpids="$lpids $!"
	done
	for _i in $(seq "$1"); do
		_t=0
		until ip netns exec "rs$_i" grep -q ':005B ' /proc/net/udp6; do
			_t=$((_t + 1))
			[ $_t -lt 100 ] || { fail "rs$_i: udpflows -l does not listen"; break; }
			sleep 0.1
		done
	done
}
# received N: "ADDR PORT rsI" of every datagram the N servers received.
received() {
	# shellcheck disable=SC2086
	wait $lpids
	for _i in $(seq "$1"); do
		sed "s/\$/ rs$_i/" "$T/rx.$_i"
	done
}

listen 3
# shellcheck disable=SC2086
flows $V 91 30000 20 $baddrs >"$T/f.b"
received 3 >"$T/got.b1"
predict "$T/f.b" "$T/s.b" 1 | rs_of >"$T/want.b1"
same "$S -o: every datagram reached maglev-sim's server" "$T/got.b1" "$T/want.b1"
expect_eq "$S -o: no connection entry kept" "$(conns $V 91 | wc -l)" 0
# shellcheck disable=SC2086
flows $V 92 30000 20 $baddrs >/dev/null
conns_of "$T/f.b" $V 92 | awk '{ split($3, a, "."); print $1, $2, "rs" a[3] }' >"$T/got.c1"

run ipvsadm -a -u $V:91 -r 10.1.4.1:91 -m -w 1
run ipvsadm -a -u $V:92 -r 10.1.4.1:92 -m -w 1
echo "ADD_NODE 10.1.4.1:91 1" >>"$T/s.b"
check_sim "$S -o with a fourth server" "$S" "$T/s.b"
listen 4
# shellcheck disable=SC2086
flows $V 91 30000 20 $baddrs >/dev/null
received 4 >"$T/got.b2"
predict "$T/f.b" "$T/s.b" 1 | rs_of >"$T/want.b2"
same "$S -o after a fourth server: every datagram reached the new table's server" \
	"$T/got.b2" "$T/want.b2"
moved=$(awk 'FILENAME == ARGV[1] { o[$1 " " $2] = $3; next } o[$1 " " $2] != $3' \
	"$T/want.b1" "$T/want.b2" | wc -l)
if [ "$moved" -gt 0 ]; then
	pass "$S -o: $moved of $(wc -l <"$T/f.b") flows moved with the table"
else
	fail "$S -o: maglev-sim moves no flow to the fourth server: the check proves nothing"
fi
# shellcheck disable=SC2086
flows $V 92 30000 20 $baddrs >/dev/null
conns_of "$T/f.b" $V 92 | awk '{ split($3, a, "."); print $1, $2, "rs" a[3] }' >"$T/got.c2"
same "UDP $V:92 without -o: after a fourth server the same flows stay on their connections' servers" \
	"$T/got.c2" "$T/got.c1"
predict "$T/f.b" "$T/s.b92" 1 | rs_of >"$T/want.c1"
same "UDP $V:92 without -o: those are maglev-sim's of the first table" "$T/got.c1" "$T/want.c1"

took "part b"

# --- c. flag-3 --------------------------------------------------------------------------
run ipvsadm -A -u $V:93 -s maglev -b flag-2
run ipvsadm -A -u $V:94 -s maglev -b flag-2,flag-3
: >"$T/s.c"
for i in 1 2 3; do
	run ipvsadm -a -u $V:93 -r "10.1.$i.1:53" -m -w $i
	run ipvsadm -a -u $V:94 -r "10.1.$i.1:53" -m -w $i
	echo "ADD_NODE 10.1.$i.1:53 $i" >>"$T/s.c"
done
expect_eq "flag-3: /proc shows the flags 0x10 and 0x30" \
	"$(svc_field "UDP $V:93" flags) $(svc_field "UDP $V:94" flags)" "0x10 0x30"
check_sim "UDP $V:93 flag-2" "UDP $V:93" "$T/s.c"
check_sim "UDP $V:94 flag-2,flag-3" "UDP $V:94" "$T/s.c"
caddrs=$(client_addrs 4 10 61)
# shellcheck disable=SC2086
flows $V 93 40000 20 $caddrs >"$T/f.c"
# shellcheck disable=SC2086
flows $V 94 40000 20 $caddrs >/dev/null
conns_rs $V 93 "$T/f.c" >"$T/got.c93"
conns_rs $V 94 "$T/f.c" >"$T/got.c94"
predict "$T/f.c" "$T/s.c" 1 | rs_of >"$T/want.c"
same "flag-3: the flows to the service without it went to maglev-sim's servers" "$T/got.c93" "$T/want.c"
same "flag-3: the same flows to the service with it went to the same servers" "$T/got.c94" "$T/got.c93"

ipvsadm -C
cleanup_net
took "part c"

# --- d. persistence across two LBs, with and without sync ---------------------------------
CL=10.9.0.1
LBS="lb1 lb2"
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
ip netns exec rt sysctl -qw net.ipv4.ip_forward=1
fleet_hosts "$V" 1 2 3 11 12
pids=
fleet_servers 3 95 96
for lb in $LBS; do
	for p in 95 96; do
		echo "-A -t $V:$p -s maglev -b flag-2 -p 300"
		for i in 1 2 3; do echo "-a -t $V:$p -r 10.2.0.$i:$p -g -w 1"; done
	done | ip netns exec "$lb" ipvsadm -R || fail "$lb: ipvsadm -R"
	wait_caught_up "$lb" 20
done
# own PORT: maglev-sim's server for each of the client ports 41000..41099
# to PORT (whose servers' names, with their port, are inputs of the
# table), "CPORT rsI" lines in $T/own.d.
own() {
	{
		echo "SIZE $(svc_field "TCP $V:$1" size lb1)"
		echo "KEY $(ns_sysctl lb1 maglev_hash_key)"
		for _i in 1 2 3; do echo "ADD_NODE 10.2.0.$_i:$1 1"; done
	} >"$T/s.d"
	seq 41000 41099 | sed "s/^/$CL /" >"$T/keys.d"
	predict "$T/keys.d" "$T/s.d" 1 |
		awk '{ split($3, a, /[.:]/); print $2, "rs" a[4] }' >"$T/own.d"
}
# pair: two ports (the first unused ones) whose keys go to different
# servers; sets P1 P2 and R1 R2.
pair() {
	# shellcheck disable=SC2046
	set -- $(awk -v used="$USED" 'BEGIN { split(used, u, " "); for (i in u) x[u[i]] = 1 }
		!($1 in x) { if (!a) { a = $1; ra = $2 } else if ($2 != ra) { print a, ra, $1, $2; exit } }' \
		"$T/own.d")
	P1=$1 R1=$2 P2=$3 R2=$4
	USED="$USED $P1 $P2"
}
# via LB PORT CPORT: one TCP connection from $CL:CPORT to $V:PORT through
# LB (the router's only route to the VIP); prints the server that answered.
via() {
	fleet_route $V "$1"
	echo hello | ip netns exec cl socat -t 5 - "TCP:$V:$2,bind=$CL:$3" 2>&1 | head -n 1
}
USED=
own 95
pair
info "ports $P1 ($R1) and $P2 ($R2) by maglev-sim"
expect_eq "no sync: $CL:$P1 through lb1 reaches maglev-sim's server" "$(via lb1 95 "$P1")" "$R1"
expect_eq "no sync: then $CL:$P2 through lb2, which has no template, reaches the table's server for its own key" \
	"$(via lb2 95 "$P2")" "$R2"

for lb in $LBS; do
	ip netns exec "$lb" sysctl -qw net.ipv4.vs.sync_version=1 || fail "$lb: sync_version"
	ip netns exec "$lb" ipvsadm --start-daemon master --mcast-interface eth1 --syncid 29 ||
		fail "$lb: sync master"
	ip netns exec "$lb" ipvsadm --start-daemon backup --mcast-interface eth1 --syncid 29 ||
		fail "$lb: sync backup"
done
own 96
pair
info "ports $P1 ($R1) and $P2 ($R2) by maglev-sim"
expect_eq "sync: $CL:$P1 through lb1 reaches maglev-sim's server" "$(via lb1 96 "$P1")" "$R1"
# The template reaches lb2 with the connection's sync message (at most a
# few seconds: IPVS sends a partly filled buffer after 2 s).
n=0
until ip netns exec lb2 ipvsadm -Lcn |
	awk -v c="$CL:0" -v v="$V:96" '$4 == c && $5 == v { f = 1 } END { exit !f }'; do
	n=$((n + 1))
	[ $n -lt 50 ] || { fail "sync: lb2 never received lb1's template"; break; }
	sleep 0.2
done
info "lb2: $(ip netns exec lb2 ipvsadm -Lcn | grep "$V:96" | tr -s ' \n' ' ;')"
expect_eq "sync: then $CL:$P2 through lb2 follows lb1's synced template, not the table's $R2" \
	"$(via lb2 96 "$P2")" "$R1"

took "part d"
for lb in $LBS; do
	ip netns exec "$lb" ipvsadm --stop-daemon master
	ip netns exec "$lb" ipvsadm --stop-daemon backup
	ip netns exec "$lb" ipvsadm -C
done
# shellcheck disable=SC2086
kill $pids 2>/dev/null
wait 2>/dev/null
cleanup_net
ip link del br0
ip link del br1
sysctl -qw net.ipv4.conf.all.arp_ignore=0 net.ipv4.conf.all.arp_announce=0
finish
