#!/bin/sh
# Guest test 24: a connection taken over from another load balancer stays
# on its server when that server is over its upper threshold (-x).
#
# With net.ipv4.vs.sloppy_tcp=1 IPVS schedules a TCP packet without SYN
# that has no connection entry: a connection opened through a load
# balancer that died, or that ECMP moved here. It lives on the table's
# server already; refusing it (no flag-1) or sending it to another server
# (flag-1) resets it. Each packet below is one raw segment
# (tests/guest/tcpraw.c) from "cl" to the VIP, and its IPVS connection
# entry says where it went.
# a. One server 10.1.1.1:80 with -x 1 holds a real connection, so it is
#    overloaded. Without flag-1 a new SYN is refused; an ACK of a flow
#    this LB never saw goes to that server.
# b. flag-1,flag-2 and a second server: of the keys maglev-sim gives to the
#    overloaded server, a SYN goes to the other server, an ACK to the
#    table's own.
. "${0%/*}/lib.sh"

V=$VIP4
S="TCP $V:80"
C=10.9.255.253

setup_net 2
warm_up
sysctl -qw net.ipv4.vs.sloppy_tcp=1 || fail "sloppy_tcp=1"
echo 251 >$SYSCTL/maglev_table_size || fail "maglev_table_size 251"
if ! command -v tcpraw >/dev/null 2>&1; then
	fail "tcpraw missing (make guest-tools)"
	finish
fi

# dest_of PORT: the destination of the connection from $C:PORT, or "none".
dest_of() {
	_d=$(conns $V 80 | awk -v c=$C -v p="$1" '$1 == c && $2 == p { print $3 }')
	echo "${_d:-none}"
}

# --- a. one overloaded server, no flag-1 -----------------------------------------
ip netns exec rs1 socat TCP-LISTEN:80,reuseaddr,fork SYSTEM:'sleep 30' &
srv=$!
run ipvsadm -A -t $V:80 -s maglev
run ipvsadm -a -t $V:80 -r 10.1.1.1:80 -m -w 1 -x 1
wait_caught_up
sleep 0.3
ip netns exec cl socat -u SYSTEM:'sleep 30' TCP:$V:80,bind=$C:2000 &
cli=$!
n=50
while [ $n -gt 0 ] && [ "$(dest_of 2000)" = none ]; do
	sleep 0.1
	n=$((n - 1))
done
expect_eq "a held connection on 10.1.1.1:80 (-x 1: overloaded)" \
	"$(dest_of 2000)" 10.1.1.1:80

ip netns exec cl tcpraw $C 2001 $V 80 S || fail "tcpraw SYN"
ip netns exec cl tcpraw $C 2002 $V 80 A || fail "tcpraw ACK"
ip netns exec cl tcpraw $C 2003 $V 80 PA || fail "tcpraw PSH ACK"
sleep 0.2
expect_eq "no flag-1: a new SYN to the overloaded server is refused" \
	"$(dest_of 2001)" none
expect_eq "no flag-1: an ACK of a taken-over connection reaches its server" \
	"$(dest_of 2002)" 10.1.1.1:80
expect_eq "no flag-1: a PSH ACK of a taken-over connection reaches its server" \
	"$(dest_of 2003)" 10.1.1.1:80

# --- b. flag-1: new connections go elsewhere, taken-over ones stay ------------------
run ipvsadm -E -t $V:80 -s maglev -b flag-1,flag-2
run ipvsadm -a -t $V:80 -r 10.1.2.1:80 -m -w 1
printf 'SIZE 251\nADD_NODE 10.1.1.1:80 1\nADD_NODE 10.1.2.1:80 1\n' >"$T/sim"
expect_eq "$S: two servers, flag-1,flag-2" \
	"$(svc_field "$S" dests) $(svc_field "$S" flags)" "2 0x18"
p=3000
while [ $p -lt 3200 ]; do
	echo "$C $p"
	p=$((p + 1))
done >"$T/keys"
predict "$T/keys" "$T/sim" 1 | awk '$3 == "10.1.1.1:80" { print $2 }' >"$T/rs1"
syn=$(sed -n 1p "$T/rs1")
ack=$(sed -n 2p "$T/rs1")
if [ -z "$syn" ] || [ -z "$ack" ]; then
	fail "maglev-sim gives no two of 200 ports to 10.1.1.1:80"
else
	ip netns exec cl tcpraw $C "$syn" $V 80 S || fail "tcpraw SYN"
	ip netns exec cl tcpraw $C "$ack" $V 80 A || fail "tcpraw ACK"
	sleep 0.2
	expect_eq "flag-1: a new SYN of the overloaded server's key goes to the other" \
		"$(dest_of "$syn")" 10.1.2.1:80
	expect_eq "flag-1: an ACK of a taken-over connection stays on the table's server" \
		"$(dest_of "$ack")" 10.1.1.1:80
fi

kill $cli $srv 2>/dev/null
wait 2>/dev/null
echo 65537 >$SYSCTL/maglev_table_size
cleanup_net
finish
