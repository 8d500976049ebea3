#!/bin/sh
# Guest test 2: real packets. A client namespace sends UDP flows (many
# source addresses and ports) through the director (this namespace) to
# real servers in their own namespaces, by NAT and by direct routing, IPv4
# and IPv6. For every flow the destination IPVS chose (ipvsadm -Lcn) is the
# one maglev-sim's LOOKUP_ADDR predicts, the flows per destination match
# the weights (1, 2, 3 on the first service), and the real servers
# receive the datagrams.
. "${0%/*}/lib.sh"

setup_net 3
warm_up

if have_udpflows; then
	naddr=20 nport=60	# 1200 flows
else
	info "no udpflows in the guest: fewer flows with socat"
	naddr=3 nport=10
fi

# rx_packets of each real server's link, one line per server.
rs_rx() {
	for i in 1 2 3; do
		ip netns exec "rs$i" cat "/sys/class/net/r${i}b/statistics/rx_packets"
	done
}

# check_rx TEXT BEFORE CONNS: each real server received at least as many
# packets as it has connections in CONNS.
check_rx() {
	rs_rx >"$T/rx.after"
	_bad=$(awk -v f="$3" '
		BEGIN { while ((getline l < f) > 0) { split(l, a, " "); c[a[3]]++ } }
		NR == FNR { b[FNR] = $1; next }
		{
			got = $1 - b[FNR]
			want = 0
			for (d in c)
				if (index(d, "10.1." FNR ".1:") == 1 ||
				    index(d, "[fd01:" FNR "::1]:") == 1)
					want += c[d]
			printf "rs%d %d/%d ", FNR, got, want
			if (got < want)
				bad = 1
		}
		END { print bad ? "BAD" : "OK" }' "$2" "$T/rx.after")
	case $_bad in
	*OK) pass "$1: real servers received their flows ($_bad)" ;;
	*) fail "$1: real servers missed datagrams ($_bad)" ;;
	esac
}

# --- IPv4 NAT, port hashing ----------------------------------------------------
V=10.0.0.1
S="UDP $V:80"
run ipvsadm -A -u $V:80 -s maglev -b flag-2
: >"$T/s.nat"
for i in 1 2 3; do
	run ipvsadm -a -u $V:80 -r "10.1.$i.1:80" -m -w $i
	echo "ADD_NODE 10.1.$i.1:80 $i" >>"$T/s.nat"
done
check_sim "$S" "$S" "$T/s.nat"
addrs=$(client_addrs 4 $naddr)
rs_rx >"$T/rx.before"
# shellcheck disable=SC2086
flows $V 80 20000 $nport $addrs >"$T/f.nat"
info "$S: $(wc -l <"$T/f.nat") flows sent"
predict "$T/f.nat" "$T/s.nat" 1 >"$T/p.nat"
compare_choices "$S NAT flag-2" "$T/f.nat" "$T/p.nat" $V 80
conns $V 80 >"$T/c.nat"
check_shares "$S NAT flag-2" "$S" "$T/c.nat" "$T/s.nat"
check_rx "$S NAT" "$T/rx.before" "$T/c.nat"

# --- IPv4 direct routing, address hashing only -------------------------------
S="UDP $V:81"
run ipvsadm -A -u $V:81 -s maglev
: >"$T/s.dr"
for i in 1 2 3; do
	run ipvsadm -a -u $V:81 -r "10.1.$i.1:81" -g -w 1
	echo "ADD_NODE 10.1.$i.1:81 1" >>"$T/s.dr"
done
check_sim "$S" "$S" "$T/s.dr"
if have_udpflows; then
	more=$(client_addrs 4 $((300 - naddr)) $((naddr + 1)))
else
	more=
fi
rs_rx >"$T/rx.before"
# shellcheck disable=SC2086
flows $V 81 30000 3 $addrs $more >"$T/f.dr"
predict "$T/f.dr" "$T/s.dr" 0 >"$T/p.dr"
compare_choices "$S DR" "$T/f.dr" "$T/p.dr" $V 81
conns $V 81 >"$T/c.dr"
same=$(awk '{ d[$1] = d[$1] " " $3 } END {
	for (a in d) { n = split(d[a], x, " ");
		for (i = 2; i <= n; i++) if (x[i] != x[1]) bad++ }
	print bad + 0 }' "$T/c.dr")
expect_eq "$S DR: all ports of one client address go to one dest" "$same" 0
check_shares "$S DR" "$S" "$T/c.dr" "$T/s.dr"
check_rx "$S DR" "$T/rx.before" "$T/c.dr"

# flag-3 alone is ignored: address hashing only, as without flags (new
# source ports: IPVS keeps the old flows' connections). Guest 29 checks
# flag-3 beside flag-2.
run ipvsadm -E -u $V:81 -s maglev -b flag-3
expect_eq "$S: flags flag-3 in /proc" "$(svc_field "$S" flags)" 0x20
check_sim "$S flag-3: flag-3 is ignored, the table" "$S" "$T/s.dr"
# shellcheck disable=SC2086
flows $V 81 31000 3 $addrs $more >"$T/f.dr3"
predict "$T/f.dr3" "$T/s.dr" 0 >"$T/p.dr3"
compare_choices "$S flag-3: flag-3 is ignored" "$T/f.dr3" "$T/p.dr3" $V 81
run ipvsadm -E -u $V:81 -s maglev

# --- IPv6 NAT, port hashing --------------------------------------------------
V6=fd00::1
S="UDP [$V6]:80"
run ipvsadm -A -u "[$V6]:80" -s maglev -b flag-2
: >"$T/s.6"
for i in 1 2 3; do
	run ipvsadm -a -u "[$V6]:80" -r "[fd01:$i::1]:80" -m -w 2
	echo "ADD_NODE [fd01:$i::1]:80 2" >>"$T/s.6"
done
check_sim "$S" "$S" "$T/s.6"
addrs6=$(client_addrs 6 $naddr)
ip netns exec cl ping6 -c 1 -W 2 fd09::fe >/dev/null 2>&1
rs_rx >"$T/rx.before"
# shellcheck disable=SC2086
flows $V6 80 40000 $nport $addrs6 >"$T/f.6"
predict "$T/f.6" "$T/s.6" 1 >"$T/p.6"
compare_choices "$S NAT flag-2" "$T/f.6" "$T/p.6" $V6 80
conns $V6 80 >"$T/c.6"
check_shares "$S NAT flag-2" "$S" "$T/c.6" "$T/s.6"
check_rx "$S NAT" "$T/rx.before" "$T/c.6"

if dmesg | grep -q 'no destination available'; then
	fail "the kernel logged 'no destination available'"
else
	pass "no flow found no destination"
fi
cleanup_net
finish
