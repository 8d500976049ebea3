#!/bin/sh
# Guest test 28: fwmark services with marked packets, SCTP associations,
# IPv6 over TCP and IPv6 direct routing, through the kernel with real
# traffic; every choice is compared with maglev-sim's.
#
# The director (this namespace, setup_net in lib.sh) marks packets with
# nftables (Debian's nft in the initramfs, the kernel's nf_tables): UDP
# and TCP to $VIP4 ports 7000-7099 get mark 1, to $VIP6 mark 2, in a
# prerouting chain at the mangle priority, before IPVS sees them.
# a. FWM 1 (IPv4, flag-2, NAT, weights 1 2 3, real servers named
#    10.1.I.1:0 as maglev-sim names them): 600 UDP flows to port 7000 and
#    the same keys to port 7050 (the key has no destination port: each
#    flow meets the same server) and 30 TCP connections (tcpfleet) to port
#    7000 go where maglev-sim says; a datagram to an unmarked port makes
#    no connection.
# b. FWM6 2 (IPv6, flag-2, NAT, [fd01:I::1]:0): the same with 600 UDP flows
#    and 30 TCP connections.
# c. SCTP (flag-2, NAT): 30 associations (tcpfleet -s, one-to-one SCTP
#    sockets) over IPv4 and 30 over IPv6, each answered by the server
#    maglev-sim names for its client address and port, and alive after a
#    round of messages.
# d. IPv6 over TCP, NAT (flag-2): 40 connections.
# e. IPv6 direct routing (flag-2): 40 TCP connections to [fd00::1]:81, the
#    VIP on the real servers' lo; the replies leave the real servers from
#    the VIP and the director only routes them.
# Every connection answered by maglev-sim's server and alive after a round
# of lines; no "no destination available" in the kernel log.
#
# guest-timeout: 150
# debug-kernel: yes
. "${0%/*}/lib.sh"

C4=10.9.255.253
C6=fd09::fd

setup_net 3
warm_up
for c in nft tcpfleet udpflows; do
	command -v $c >/dev/null 2>&1 || { fail "no $c in the guest"; finish; }
done

# --- marks ----------------------------------------------------------------------
cat >"$T/mark.nft" <<EOF
table inet maglevtest {
	chain pre {
		type filter hook prerouting priority mangle; policy accept;
		ip daddr $VIP4 udp dport 7000-7099 meta mark set 1
		ip daddr $VIP4 tcp dport 7000-7099 meta mark set 1
		ip6 daddr $VIP6 udp dport 7000-7099 meta mark set 2
		ip6 daddr $VIP6 tcp dport 7000-7099 meta mark set 2
	}
}
EOF
if ! out=$(nft -f "$T/mark.nft" 2>&1); then
	fail "nft -f: the marking rules: $out"
	finish
fi
pass "nftables marks the packets to the fwmark services (nft $(nft -v 2>/dev/null | awk '{ print $2 }'))"

# --- servers: TCP on 7000 (fwmark), 80 (NAT), 81 (DR); SCTP on 9000 -------------
pids=
for i in 1 2 3; do
	ip netns exec "rs$i" tcpfleet server "rs$i" 7000 80 81 &
	pids="$pids $!"
	ip netns exec "rs$i" tcpfleet -s server "rs$i" 9000 &
	pids="$pids $!"
done
# listening PORT PROTO_FILE: every real server listens on PORT.
listening() {
	_hex=$(printf '%04X' "$1")
	for _i in 1 2 3; do
		_t=0
		until ip netns exec "rs$_i" grep -q ":$_hex .* 0A " "$2"; do
			_t=$((_t + 1))
			[ $_t -lt 100 ] || { fail "rs$_i does not listen on $1"; return 1; }
			sleep 0.1
		done
	done
}
listening 81 /proc/net/tcp6
# /proc/net/sctp/eps lists the SCTP endpoints (LPORT: the sixth column).
for i in 1 2 3; do
	t=0
	# shellcheck disable=SC2016 # an awk program
	until ip netns exec "rs$i" awk '$6 == 9000 { f = 1 } END { exit !f }' \
		/proc/net/sctp/eps 2>/dev/null; do
		t=$((t + 1))
		[ $t -lt 100 ] || { fail "rs$i: no SCTP endpoint on port 9000"; break; }
		sleep 0.1
	done
done

# tf_start [-s] SRC DST: a tcpfleet client in "cl" from SRC to DST, driven
# by cmd (lib.sh) through fds 4 and 5.
tf_start() {
	rm -f "$T/cmd" "$T/ans"
	mkfifo "$T/cmd" "$T/ans"
	_o=
	if [ "$1" = -s ]; then
		_o=-s
		shift
	fi
	# shellcheck disable=SC2086 # no option or one
	/usr/sbin/ip netns exec cl tcpfleet $_o client "$1" "$2" <"$T/cmd" >"$T/ans" &
	tfpid=$!
	exec 4>"$T/cmd" 5<"$T/ans"
}
tf_stop() {
	echo quit >&4
	exec 4>&- 5<&-
	wait $tfpid
}

# rs_of: maglev-sim owners ("ADDR PORT OWNER") to "PORT rsI".
rs_of() {
	awk '{
		o = $3
		if (o ~ /^\[/) { split(o, a, ":"); i = a[2] }
		else { split(o, a, "."); i = a[3] }
		print $2, "rs" i
	}'
}

# tf_vs_sim TEXT LIST PORT CLIENT SIMCMDS N: the N connections to PORT in
# LIST (tcpfleet's list) were each first answered by maglev-sim's server
# for CLIENT and the connection's port (flag-2), and are still live.
tf_vs_sim() {
	awk -v p="$3" -v c="$4" '$1 == p { print c, $2 }' "$2" >"$T/tf.keys"
	predict "$T/tf.keys" "$5" 1 | rs_of >"$T/tf.pred"
	_r=$(awk -v p="$3" 'FILENAME == ARGV[1] { o[$1] = $2; next }
		$1 == p { n++; if (o[$2] != $3) bad++; if ($5 != "live") dead++ }
		END { print n + 0, bad + 0, dead + 0 }' "$T/tf.pred" "$2")
	expect_eq "$1: connections, answered by another server than maglev-sim's, not live" \
		"$_r" "$6 0 0"
	[ "${_r#* }" = "0 0" ] || awk -v p="$3" 'FILENAME == ARGV[1] { o[$1] = $2; next }
		$1 == p && o[$2] != $3 { print "#  lport " $2 " answered by " $3 ", maglev-sim says " o[$2] }' \
		"$T/tf.pred" "$2" | head -n 5
	# The servers the connections went to: more than one, or the
	# comparison proves little.
	info "$1: per server $(awk -v p="$3" '$1 == p { n[$3]++ } END { for (s in n) printf "%s=%d ", s, n[s] }' "$2")"
}

# udp_vs_sim TEXT FLOWS SIMCMDS VIP PORT: compare_choices of the UDP flows
# to VIP:PORT, the real servers named NAME:0 in SIMCMDS getting the
# packet's destination port.
udp_vs_sim() {
	predict "$2" "$3" 1 | sed "s/:0\$/:$5/" >"$T/u.pred"
	compare_choices "$1" "$2" "$T/u.pred" "$4" "$5"
}

# --- a. FWM 1, IPv4 ---------------------------------------------------------------
S="FWM 1"
run ipvsadm -A -f 1 -s maglev -b flag-2
: >"$T/s.f1"
for i in 1 2 3; do
	run ipvsadm -a -f 1 -r "10.1.$i.1:0" -m -w $i
	echo "ADD_NODE 10.1.$i.1:0 $i" >>"$T/s.f1"
done
check_sim "$S" "$S" "$T/s.f1"
addrs=$(client_addrs 4 20)
# shellcheck disable=SC2086
flows $VIP4 7000 20000 30 $addrs >"$T/f.a"
udp_vs_sim "$S UDP to port 7000" "$T/f.a" "$T/s.f1" $VIP4 7000
conns $VIP4 7000 >"$T/c.a"
# /proc names the servers NAME:0; the connections have the packets' port.
sed 's/:7000$/:0/' "$T/c.a" >"$T/c.a0"
check_shares "$S UDP" "$S" "$T/c.a0"
# shellcheck disable=SC2086
flows $VIP4 7050 20000 30 $addrs >"$T/f.a2"
conns $VIP4 7050 | sed 's/:7050$//' | sort >"$T/c.a2"
sed 's/:7000$//' "$T/c.a" | sort >"$T/c.a1"
if [ -s "$T/c.a2" ] && cmp -s "$T/c.a1" "$T/c.a2"; then
	pass "$S: the same $(wc -l <"$T/c.a2") flows to port 7050 met the same servers as to 7000"
else
	fail "$S: the flows to port 7050 met other servers than to 7000"
	diff "$T/c.a1" "$T/c.a2" | head -n 5
fi
# Unmarked: no service matches, no connection entry.
flows $VIP4 8000 20000 5 $C4 >/dev/null
expect_eq "$S: unmarked datagrams (port 8000) make no IPVS connection" \
	"$(conns $VIP4 8000 | wc -l)" 0
tf_start $C4 $VIP4
cmd open 7000 30 2
cmd round 1 30
cmd list "$T/l.a"
tf_stop
tf_vs_sim "$S TCP to port 7000" "$T/l.a" 7000 $C4 "$T/s.f1" 30

# --- b. FWM6 2, IPv6 ---------------------------------------------------------------
S="FWM6 2"
run ipvsadm -A -f 2 -6 -s maglev -b flag-2
: >"$T/s.f2"
for i in 1 2 3; do
	run ipvsadm -a -f 2 -6 -r "[fd01:$i::1]:0" -m -w $i
	echo "ADD_NODE [fd01:$i::1]:0 $i" >>"$T/s.f2"
done
check_sim "$S" "$S" "$T/s.f2"
addrs6=$(client_addrs 6 20)
# shellcheck disable=SC2086
flows $VIP6 7000 20000 30 $addrs6 >"$T/f.b"
udp_vs_sim "$S UDP to port 7000" "$T/f.b" "$T/s.f2" $VIP6 7000
conns $VIP6 7000 | sed 's/:7000$/:0/' >"$T/c.b"
check_shares "$S UDP" "$S" "$T/c.b"
tf_start $C6 $VIP6
cmd open 7000 30 2
cmd round 1 30
cmd list "$T/l.b"
tf_stop
tf_vs_sim "$S TCP to port 7000" "$T/l.b" 7000 $C6 "$T/s.f2" 30

# --- c. SCTP, IPv4 and IPv6 --------------------------------------------------------
run ipvsadm -A --sctp-service $VIP4:9000 -s maglev -b flag-2
run ipvsadm -A --sctp-service "[$VIP6]:9000" -s maglev -b flag-2
: >"$T/s.s4"
: >"$T/s.s6"
for i in 1 2 3; do
	run ipvsadm -a --sctp-service $VIP4:9000 -r "10.1.$i.1:9000" -m -w 1
	run ipvsadm -a --sctp-service "[$VIP6]:9000" -r "[fd01:$i::1]:9000" -m -w 1
	echo "ADD_NODE 10.1.$i.1:9000 1" >>"$T/s.s4"
	echo "ADD_NODE [fd01:$i::1]:9000 1" >>"$T/s.s6"
done
check_sim "SCTP $VIP4:9000" "SCTP $VIP4:9000" "$T/s.s4"
check_sim "SCTP [$VIP6]:9000" "SCTP [$VIP6]:9000" "$T/s.s6"
# sctp_conns VIP: IPVS's SCTP connections to VIP:9000 from clients.
sctp_conns() {
	ipvsadm -Lcn | awk -v v="$1:9000" '$1 == "SCTP" && $5 == v' | wc -l
}
tf_start -s $C4 $VIP4
cmd open 9000 30 2
cmd round 1 30
cmd list "$T/l.c4"
expect_eq "SCTP $VIP4:9000: IPVS holds a connection for each association" \
	"$(sctp_conns $VIP4)" 30
tf_stop
tf_vs_sim "SCTP $VIP4:9000 associations" "$T/l.c4" 9000 $C4 "$T/s.s4" 30
tf_start -s $C6 $VIP6
cmd open 9000 30 2
cmd round 1 30
cmd list "$T/l.c6"
expect_eq "SCTP [$VIP6]:9000: IPVS holds a connection for each association" \
	"$(sctp_conns "[$VIP6]")" 30
tf_stop
tf_vs_sim "SCTP [$VIP6]:9000 associations" "$T/l.c6" 9000 $C6 "$T/s.s6" 30

# --- d, e. IPv6 over TCP: NAT, direct routing -----------------------------------------
run ipvsadm -A -t "[$VIP6]:80" -s maglev -b flag-2
run ipvsadm -A -t "[$VIP6]:81" -s maglev -b flag-2
: >"$T/s.d"
: >"$T/s.e"
for i in 1 2 3; do
	run ipvsadm -a -t "[$VIP6]:80" -r "[fd01:$i::1]:80" -m -w 1
	run ipvsadm -a -t "[$VIP6]:81" -r "[fd01:$i::1]:81" -g -w 1
	echo "ADD_NODE [fd01:$i::1]:80 1" >>"$T/s.d"
	echo "ADD_NODE [fd01:$i::1]:81 1" >>"$T/s.e"
done
check_sim "TCP [$VIP6]:80 NAT" "TCP [$VIP6]:80" "$T/s.d"
check_sim "TCP [$VIP6]:81 DR" "TCP [$VIP6]:81" "$T/s.e"
tf_start $C6 $VIP6
cmd open 80 40 2
cmd open 81 40 2
cmd round 1 30
cmd list "$T/l.de"
tf_stop
tf_vs_sim "TCP [$VIP6]:80 NAT" "$T/l.de" 80 $C6 "$T/s.d" 40
tf_vs_sim "TCP [$VIP6]:81 direct routing" "$T/l.de" 81 $C6 "$T/s.e" 40

if dmesg | grep -q 'no destination available'; then
	fail "the kernel logged 'no destination available'"
else
	pass "no packet found no destination"
fi
# shellcheck disable=SC2086
kill $pids 2>/dev/null
wait 2>/dev/null
nft delete table inet maglevtest
cleanup_net
finish
