#!/bin/sh
# Guest test 3: order independence. The same destinations added in
# different orders, to two services here and to one in another namespace,
# give identical digests and identical choices for the same flows. The
# other namespace fills its own table: the same flows sent there (from
# client addresses of its own, local sources on a dummy link) get the same
# choices as here and as maglev-sim's. The same run with "-s mh" prints how
# many flows differ there (informational).
. "${0%/*}/lib.sh"

setup_net 3
warm_up
V=10.0.0.1
if have_udpflows; then naddr=10 nport=100; else naddr=3 nport=10; fi

# add_service SCHED PORT ORDER [NETNS]: UDP service on $V:PORT with the
# real servers 10.1.I.1:80 (weight I) added in ORDER, with port hashing.
add_service() {
	in_ns "${4:-}" ipvsadm -A -u "$V:$2" -s "$1" -b flag-2 || fail "ipvsadm -A $1 $2"
	for i in $3; do
		in_ns "${4:-}" ipvsadm -a -u "$V:$2" -r "10.1.$i.1:80" -m -w "$i" ||
			fail "ipvsadm -a $2 10.1.$i.1"
	done
}

add_service maglev 80 "1 2 3"
add_service maglev 81 "2 1 3"
add_service maglev 82 "3 2 1"
ip netns add other
# IPVS refuses real servers whose address type it cannot tell, as in a
# namespace without a local routing table yet.
ip -n other link set lo up
add_service maglev 80 "1 3 2" other

d80=$(svc_field "UDP $V:80" digest)
expect_eq "digest with order 2 1 3 equals order 1 2 3" \
	"$(svc_field "UDP $V:81" digest)" "$d80"
expect_eq "digest with order 3 2 1 equals order 1 2 3" \
	"$(svc_field "UDP $V:82" digest)" "$d80"
expect_eq "digest in another namespace with order 1 3 2" \
	"$(svc_field "UDP $V:80" digest other)" "$d80"
: >"$T/s"
for i in 1 2 3; do echo "ADD_NODE 10.1.$i.1:80 $i" >>"$T/s"; done
check_sim "UDP $V:80" "UDP $V:80" "$T/s"

addrs=$(client_addrs 4 $naddr)
for p in 80 81 82; do
	# shellcheck disable=SC2086
	flows $V $p 20000 $nport $addrs >"$T/f.$p"
	conns_of "$T/f.$p" $V $p >"$T/c.$p"
done
nflows=$(wc -l <"$T/f.80")
expect_eq "every flow to port 80 got a connection" "$(wc -l <"$T/c.80")" "$nflows"
for p in 81 82; do
	if [ -s "$T/c.80" ] && cmp -s "$T/c.80" "$T/c.$p"; then
		pass "port $p: all $nflows choices equal port 80's"
	else
		fail "port $p: choices differ from port 80's ($(wc -l <"$T/c.$p") conns)"
	fi
done
predict "$T/f.80" "$T/s" 1 >"$T/p.80"
compare_choices "UDP $V:80" "$T/f.80" "$T/p.80" $V 80

# The other namespace's own table, with traffic: the same client addresses
# as "cl"'s, local to "other" (IPVS schedules locally made connections
# too; the datagrams then leave by a dummy link).
{
	echo "link add d0 type dummy"
	echo "link set d0 up"
	for a in $addrs; do echo "addr add $a/16 dev d0"; done
	echo "route add default dev d0"
} | ip -n other -batch - || fail "other: dummy link and client addresses"
# shellcheck disable=SC2086
ip netns exec other udpflows $V 80 20000 $nport $addrs >"$T/f.other"
sort "$T/f.other" >"$T/f.other.s"
sort "$T/f.80" >"$T/f.80.s"
check "other namespace: the same $(wc -l <"$T/f.other") flows sent" \
	cmp -s "$T/f.other.s" "$T/f.80.s"
conns $V 80 other | sort >"$T/c.other"
if [ -s "$T/c.80" ] && cmp -s "$T/c.80" "$T/c.other"; then
	pass "other namespace: all $nflows choices equal port 80's here"
else
	fail "other namespace: choices differ from port 80's here ($(wc -l <"$T/c.other") conns)"
fi
compare_choices "UDP $V:80 in the other namespace" "$T/f.other" "$T/p.80" $V 80 other

# The same with mh: its table depends on the order of the destinations,
# a little (Maglev's fill lets the first in line win contested slots).
# Eight dests (five without a server: the connection entry is all that
# counts here), added in two orders that are not rotations of each other.
mh_service() {
	run ipvsadm -A -u "$V:$1" -s mh -b flag-2
	for i in $2; do
		run ipvsadm -a -u "$V:$1" -r "10.1.$(((i - 1) % 3 + 1)).$(((i - 1) / 3 + 1)):80" -m
	done
}
mh_service 90 "1 2 3 4 5 6 7 8"
mh_service 91 "2 7 4 1 8 3 6 5"
for p in 90 91; do
	# shellcheck disable=SC2086
	flows $V $p 20000 $nport $addrs >"$T/f.$p"
	conns_of "$T/f.$p" $V $p >"$T/c.$p"
done
diff=$(awk 'NR == FNR { d[$1 " " $2] = $3; next }
	($1 " " $2) in d && d[$1 " " $2] != $3 { n++ } END { print n + 0 }' \
	"$T/c.90" "$T/c.91")
info "mh, 8 dests added in two orders: $diff of $nflows flows differ (maglev: 0 by construction)"
expect_eq "mh: every flow got a connection on both services" \
	"$(wc -l <"$T/c.90") $(wc -l <"$T/c.91")" "$nflows $nflows"

cleanup_net
finish
