#!/bin/sh
# shellcheck shell=dash
# Guest side of "make demo" (scripts/demo.sh). Runs under busybox sh in a
# QEMU guest booted with Debian's stock 6.12 kernel, after guest-init.sh
# loaded ip_vs, veth, pktgen, bridge and ip_vs_maglev.ko. No network
# device exists: all traffic stays between network namespaces of this
# guest.
#
#   client netns          director (this netns)          rsN netns
#   10.1.0.1 ...  --veth-->  VIP 10.0.0.1:80/udp   --veth-->  10.0.1.N:80
#   (pktgen)                 IPVS maglev, NAT               (socat logs
#                                                           each sender)
#
# Every flow is one UDP datagram from its own client address (the scheduler
# hashes the client address). The service uses one-packet scheduling (-o),
# so each round of the same flows is scheduled afresh by the current table.
# Each real server logs the source of every datagram it receives: that is
# what IPVS chose, not a prediction. maglev-sim then predicts every flow
# from the same backend names, and the two are compared.
#
# Kernel command line: maglev.flows=N (default 3000), maglev.ascii=1 (bars
# of "#" instead of Unicode blocks).

IP=/usr/sbin/ip		# busybox would otherwise run its own "ip" applet
VIP=10.0.0.1
SVC=$VIP:80
SIM=${MAGLEV_SIM:-/maglev/maglev-sim}
W=/tmp/demo
mkdir -p "$W"

arg() { sed -n "s/.*maglev\\.$1=\\([^ ]*\\).*/\\1/p" /proc/cmdline; }
FLOWS=$(arg flows)
case $FLOWS in ''|*[!0-9]*) FLOWS=3000 ;; esac
[ "$FLOWS" -ge 10 ] && [ "$FLOWS" -le 60000 ] || FLOWS=3000
ASCII=$(arg ascii)

die() { echo "demo: error: $*"; exit 1; }
run() { echo "# $*"; "$@"; }

# Client addresses: 10.1.0.1 and the FLOWS - 1 after it.
ip_of() { echo "10.1.$(($1 / 256)).$(($1 % 256))"; }
CLI_MIN=$(ip_of 1)
CLI_MAX=$(ip_of "$FLOWS")

# ---- network ----

echo 1 >/proc/sys/net/ipv4/ip_forward
echo 16777216 >/proc/sys/net/core/rmem_max
echo 10000 >/proc/sys/net/core/netdev_max_backlog
for f in /proc/sys/net/ipv4/conf/*/rp_filter; do echo 0 >"$f"; done

setup_client() {
	$IP addr add $VIP/32 dev lo &&
	$IP netns add client &&
	$IP link add cli type veth peer name eth0 netns client &&
	$IP addr add 172.16.0.1/24 dev cli &&
	$IP link set cli up &&
	$IP -n client link set lo up &&
	$IP -n client addr add 172.16.0.2/24 dev eth0 &&
	$IP -n client link set eth0 up &&
	$IP -n client route add default via 172.16.0.1 &&
	$IP route add 10.1.0.0/16 via 172.16.0.2
}

# start_rs N: real server 10.0.1.N in netns rsN, logging every datagram.
start_rs() {
	$IP netns add "rs$1" &&
	$IP link add "rs$1" type veth peer name eth0 netns "rs$1" &&
	$IP addr add 10.0.1.254/32 dev "rs$1" &&
	$IP link set "rs$1" up &&
	$IP route add "10.0.1.$1/32" dev "rs$1" &&
	$IP -n "rs$1" link set lo up &&
	$IP -n "rs$1" addr add "10.0.1.$1/24" dev eth0 &&
	$IP -n "rs$1" link set eth0 up &&
	$IP -n "rs$1" route add default via 10.0.1.254 || return 1
	: >"$W/rs$1.log"
	# socat -d -d logs "received packet with N bytes from AF=2 A.B.C.D:P".
	$IP netns exec "rs$1" socat -d -d -u \
		UDP-RECV:80,rcvbuf=8388608 OPEN:/dev/null 2>>"$W/rs$1.log" &
}

setup_client || die "could not set up the client namespace"
for i in 1 2 3 4 5 6; do
	start_rs $i || die "could not set up real server $i"
done
CLI_MAC=$(cat /sys/class/net/cli/address)
# Wait until every real server's socat listens on UDP port 80 (0x50).
for i in 1 2 3 4 5 6; do
	t=0
	until $IP netns exec "rs$i" grep -q ':0050 ' /proc/net/udp; do
		t=$((t + 1))
		[ $t -lt 100 ] || die "real server $i is not listening"
		sleep 0.1
	done
done

# ---- traffic ----

# send_round NAME: send the flow set once, wait for the real servers, and
# write $W/NAME.map: "client server" per flow, sorted by client.
send_round() {
	caught_up
	for f in "$W"/rs*.log; do : >"$f"; done
	# shellcheck disable=SC2016 # expanded by the inner sh
	$IP netns exec client sh -c '
		set -e
		t=/proc/net/pktgen/kpktgend_0
		echo rem_device_all >$t
		echo "add_device eth0" >$t
		d=/proc/net/pktgen/eth0
		for c in "count $1" "clone_skb 0" "pkt_size 60" "delay 100000" \
			"dst_mac $2" "dst_min 10.0.0.1" "dst_max 10.0.0.1" \
			"src_min $3" "src_max $4" "udp_src_min 5000" \
			"udp_src_max 5000" "udp_dst_min 80" "udp_dst_max 80"; do
			echo "$c" >$d
		done
		echo start >/proc/net/pktgen/pgctrl
		grep -q "^Result: OK" $d || { cat $d; exit 1; }
	' sh "$FLOWS" "$CLI_MAC" "$CLI_MIN" "$CLI_MAX" ||
		die "pktgen failed to send the flows"
	got=0
	tries=0
	while [ $tries -lt $((100 + FLOWS / 100)) ]; do
		got=$(cat "$W"/rs*.log | grep -c 'received packet')
		[ "$got" -ge "$FLOWS" ] && break
		tries=$((tries + 1))
		sleep 0.2
	done
	for i in 1 2 3 4 5 6; do
		awk -v s="10.0.1.$i:80" '/received packet/ {
			a = $NF; sub(/:[0-9]+$/, "", a); print a, s }' \
			"$W/rs$i.log"
	done | sort >"$W/$1.map"
	n=$(wc -l <"$W/$1.map")
	u=$(cut -d' ' -f1 "$W/$1.map" | uniq | wc -l)
	if [ "$n" -ne "$FLOWS" ] || [ "$u" -ne "$FLOWS" ]; then
		die "sent $FLOWS flows, the real servers received $n from $u clients"
	fi
}

# ---- report ----

# Tables are built asynchronously, and a replaced table is freed a grace
# period after its last service left it: wait until no service shows
# "pending 1" and the namespace's "tables" counts only the tables in use
# (the distinct "table" numbers of its services), so that each act shows
# the state it settled in.
settled() {
	awk '$1 == "namespace" { for (i = 2; i < NF; i++) if ($i == "tables") t = $(i + 1) }
	$1 == "service" { for (i = 2; i < NF; i++) {
		if ($i == "pending" && $(i + 1) != 0) p = 1
		if ($i == "table" && $(i + 1) != 0) u[$(i + 1)] = 1 } }
	END { n = 0; for (k in u) n++; exit !(p == 0 && t + 0 == n) }' \
		/proc/net/ip_vs_maglev
}
caught_up() {
	_n=0
	while ! settled && [ $_n -lt 600 ]; do
		sleep 0.1
		_n=$((_n + 1))
	done
}
maglev_proc() { caught_up; cat /proc/net/ip_vs_maglev; }
svc_field() { maglev_proc | awk -v k="$1" '$1 == "service" {
	for (i = 2; i < NF; i++) if ($i == k) { print $(i + 1); exit } }'; }
dest_slots() { maglev_proc | awk -v d="$1" '$1 == "dest" && $2 == d { print $6 }'; }

# chart MAP: per-server share of flows (bar) next to its share of slots.
chart() {
	maglev_proc | awk -v flows="$FLOWS" -v map="$1" -v ascii="$ASCII" '
	BEGIN {
		full = "\342\226\210"
		part[1] = "\342\226\217"; part[2] = "\342\226\216"
		part[3] = "\342\226\215"; part[4] = "\342\226\214"
		part[5] = "\342\226\213"; part[6] = "\342\226\212"
		part[7] = "\342\226\211"
		if (ascii == 1)
			full = "#"
		while ((getline line < map) > 0) {
			split(line, f, " ")
			n[f[2]]++
		}
	}
	$1 == "service" { for (i = 2; i < NF; i++) if ($i == "size") m = $(i + 1) }
	$1 == "dest" { name[++nd] = $2; slots[$2] = $6 }
	END {
		# Flows are a sample: a share p of N flows varies by about
		# sqrt(p (1 - p) / N) (busybox awk has no sqrt()).
		p = 1 / nd
		v = p * (1 - p) / flows
		sd = v
		for (j = 0; j < 40; j++) sd = (sd + v / sd) / 2
		# Two blocks per percent unless a share would not fit in 44.
		top = 0
		for (i = 1; i <= nd; i++)
			if (n[name[i]] > top) top = n[name[i]]
		per = 0.5
		while (100 * top / flows / per > 44) per *= 2
		printf "  %-13s %-44s %14s %16s\n", "real server",
			"share of flows (one block = " per "%)", "flows", "table slots"
		for (i = 1; i <= nd; i++) {
			d = name[i]
			fs = 100 * n[d] / flows
			ss = 100 * slots[d] / m
			eighths = int(fs * 8 / per + 0.5)
			if (ascii == 1)
				eighths = 8 * int(fs / per + 0.5)
			bar = ""
			for (j = 0; j < int(eighths / 8); j++) bar = bar full
			if (eighths % 8) bar = bar part[eighths % 8]
			for (j = int((eighths + 7) / 8); j < 44; j++) bar = bar " "
			printf "  %-13s %s %5.1f%% %7d  %5.1f%% %8d\n", d, bar,
				fs, n[d], ss, slots[d]
		}
		printf "  (%d flows from as many clients: a flow share varies around its slot\n", flows
		printf "  share by about +-%.1f points, one standard deviation)\n", 100 * sd
	}'
}

# churn OLD NEW add|remove SERVER SLOTS: what the last change moved, in
# table slots (from /proc/net/ip_vs_maglev) and in flows (from the real
# servers' logs of the rounds OLD and NEW). SERVER is the server added or
# removed, SLOTS the slots it owns (add) or owned (remove). A line for the
# summary goes to $W/summary.
churn() {
	awk -v mode="$3" -v d="$4" -v ds="$5" -v c="$(svc_field churn)" \
		-v m="$(svc_field size)" -v flows="$FLOWS" -v sum="$W/summary" '
	NR == FNR { old[$1] = $2; next }
	old[$1] != $2 {
		mv++
		if ((mode == "add" && $2 == d) || (mode == "remove" && old[$1] == d))
			own++
	}
	function row(what, a, b, note) {
		printf "  %-24s %6d %5.1f%%  %6d %5.1f%%  %s\n", what,
			a, 100 * a / m, b, 100 * b / flows, note
	}
	END {
		printf "  %-24s %13s  %13s\n", "what moved", "table slots", "flows"
		if (mode == "add") {
			row("all", c, mv, "(ideal: 1/6 = 16.7%, all to the new server)")
			row("to the new server", ds, own, "")
		} else {
			row("all", c, mv, "(ideal: just the removed server\047s share)")
			row("off the removed server", ds, own, "(these have to move)")
		}
		row("between the others", c - ds, mv - own, "(ideal: none; Maglev moves a few, under 2%)")
		printf "%-22s %5.1f%%  %5.1f%%   %d flows (%.1f%%), %d slots (%.1f%%)\n",
			mode " " d, 100 * mv / flows, 100 * c / m, mv - own,
			100 * (mv - own) / flows, c - ds, 100 * (c - ds) / m >> sum
	}' "$1" "$2"
}

# verify MAP: maglev-sim predicts every flow from the backend names in
# /proc/net/ip_vs_maglev; compare with what the real servers received.
verify() {
	maglev_proc | awk -v map="$1" '
	$1 == "service" { for (i = 2; i < NF; i++) if ($i == "size") print "SIZE", $(i + 1)
		print "REBUILD" }
	$1 == "dest" { print "ADD_NODE", $2, $4 }
	END {
		print "DIGEST"
		while ((getline line < map) > 0) {
			split(line, f, " ")
			print "LOOKUP_ADDR", f[1]
		}
	}' | "$SIM" >"$W/sim.out" || die "maglev-sim failed"
	sd=$(head -n 1 "$W/sim.out")
	kd=$(svc_field digest)
	ok=$(tail -n +2 "$W/sim.out" | paste -d' ' "$1" - |
		awk '$2 == $3 { n++ } END { print n + 0 }')
	if [ "$sd" = "$kd" ]; then dig="table digest $kd matches"
	else dig="table digest DIFFERS: kernel $kd, maglev-sim $sd"; fi
	echo "  check: maglev-sim predicts $ok of $FLOWS flows exactly as IPVS sent them;"
	echo "         $dig"
	[ "$ok" -eq "$FLOWS" ] && [ "$sd" = "$kd" ]
}

status=0
section() { echo; echo "== $* =="; }

section "Setup"
echo "  kernel $(uname -r) under QEMU (TCG, no network device)"
echo "  ip_vs_maglev net.ipv4.vs.maglev_table_size=$(cat /proc/sys/net/ipv4/vs/maglev_table_size)," \
	"hash key: its fingerprint is on the service line below"
echo "  client netns sends one UDP datagram per flow from $CLI_MIN .. $CLI_MAX"
echo "  ($FLOWS flows) to $SVC; real servers 10.0.1.N:80 each in its own netns"
echo "  log the client address of every datagram they receive. The service"
echo "  schedules each datagram on its own (-o), so every round of the same"
echo "  flows shows where the table of that moment sends them."
echo
run ipvsadm -A -u $SVC -s maglev -o || die "ipvsadm -A -s maglev failed"
fp=$(awk '$1 == "service" { for (i = 4; i < NF; i++)
	if ($i == "key") { print $(i + 1); exit } }' /proc/net/ip_vs_maglev)
if [ "$fp" = 714c8345 ]; then
	echo "  key fingerprint $fp: the default hash key, all zero and public" \
		"(a fleet facing untrusted clients sets its own: docs/security.md)"
else
	echo "  key fingerprint $fp (the key itself is in maglev_hash_key, mode 0600)"
fi
for i in 1 2 3 4 5; do
	run ipvsadm -a -u $SVC -r 10.0.1.$i:80 -m || die "ipvsadm -a failed"
done

section "1. Five real servers"
run ipvsadm -Ln
echo "# cat /proc/net/ip_vs_maglev"
maglev_proc
echo
send_round five
chart "$W/five.map"
verify "$W/five.map" || status=1

section "2. Add a sixth real server"
run ipvsadm -a -u $SVC -r 10.0.1.6:80 -m || die "ipvsadm -a failed"
run ipvsadm -Ln
echo
send_round six
chart "$W/six.map"
echo
churn "$W/five.map" "$W/six.map" add 10.0.1.6:80 "$(dest_slots 10.0.1.6:80)"
verify "$W/six.map" || status=1

section "3. Remove real server 10.0.1.3:80"
gone=$(dest_slots 10.0.1.3:80)
run ipvsadm -d -u $SVC -r 10.0.1.3:80 || die "ipvsadm -d failed"
run ipvsadm -Ln
echo
send_round five-again
chart "$W/five-again.map"
echo
churn "$W/six.map" "$W/five-again.map" remove 10.0.1.3:80 "$gone"
verify "$W/five-again.map" || status=1

# ---- act 4: several load balancers behind a router, one dies ----
#
#   user 10.8.0.1 -- router ==ECMP==> lb1 lb2 lb3 (10.3.0.11-13)  -->  srv1..srv5
#                    10.3.0.254        (all on bridge fbr, replies go straight
#                                       from the servers to the router)

FVIP=10.0.0.1
FLEET=120

# setup_fleet: the namespaces and links (one "ip -batch" per namespace:
# under TCG every process costs), servers started.
setup_fleet() {
	for ns in router user lb1 lb2 lb3 srv1 srv2 srv3 srv4 srv5; do
		$IP netns add $ns || return 1
	done
	{
		echo "link add fbr type bridge"
		echo "link set fbr up"
		for ns in router lb1 lb2 lb3 srv1 srv2 srv3 srv4 srv5; do
			echo "link add f-$ns type veth peer name eth0 netns $ns"
			echo "link set f-$ns master fbr up"
		done
	} | $IP -batch - || return 1
	printf '%s\n' "link set lo up" "addr add 10.3.0.254/24 dev eth0" \
		"link set eth0 up" "link add up0 type veth peer name eth0 netns user" \
		"addr add 10.8.0.254/24 dev up0" "link set up0 up" |
		$IP -n router -batch - || return 1
	printf '%s\n' "link set lo up" "addr add 10.8.0.1/24 dev eth0" \
		"link set eth0 up" "route add default via 10.8.0.254" |
		$IP -n user -batch - || return 1
	$IP netns exec router sysctl -qw net.ipv4.ip_forward=1 \
		net.ipv4.fib_multipath_hash_policy=1 || return 1
	for i in 1 2 3 4 5 11 12 13; do
		case $i in 1?) ns=lb${i#1} ;; *) ns=srv$i ;; esac
		printf '%s\n' "link set lo up" "addr add 10.3.0.$i/24 dev eth0" \
			"link set eth0 up" "addr add $FVIP/32 dev lo" \
			"route add default via 10.3.0.254" |
			$IP -n "$ns" -batch - &&
		$IP netns exec "$ns" sysctl -qw net.ipv4.conf.all.arp_ignore=1 \
			net.ipv4.conf.all.arp_announce=2 || return 1
	done
	for i in 1 2 3 4 5; do
		$IP netns exec "srv$i" tcpfleet server "srv$i" 80 &
	done
}

# fleet_route LB...: the router's route to the VIP, one nexthop per LB.
fleet_route() {
	nh=
	for lb in "$@"; do nh="$nh nexthop via 10.3.0.1${lb#lb}"; done
	# shellcheck disable=SC2086
	run $IP -n router route replace $FVIP/32 $nh
}

# fleet_conns FILE: "LB CLIENT_PORT REAL_SERVER" per IPVS connection an
# LB made itself (Origin LOCAL in /proc/net/ip_vs_conn_sync; the copies
# that sync brought from the other LBs say SYNC).
fleet_conns() {
	for lb in lb1 lb2 lb3; do
		$IP netns exec $lb cat /proc/net/ip_vs_conn_sync | awk -v lb=$lb '
		function hex(s,   i, n) {
			s = tolower(s)
			for (i = 1; i <= length(s); i++)
				n = n * 16 + index("0123456789abcdef",
						   substr(s, i, 1)) - 1
			return n
		}
		$1 == "TCP" && $9 == "LOCAL" {
			print lb, hex($3), "srv" hex(substr($6, 7, 2)) }'
	done >"$1"
}

# fcmd LINE: a command to the client (tcpfleet), its answer in $ANS.
fcmd() {
	echo "$*" >&4
	read -r ANS <&5
}

section "4. Three load balancers behind a router; one dies"
act_start=$(date +%s)
echo "  A router spreads TCP connections over three LBs by ECMP (hash of the"
echo "  5-tuple). Each LB runs IPVS with the same VIP $FVIP:80 and the same four"
echo "  real servers, added in a different order on each, direct routing and"
echo "  net.ipv4.vs.sloppy_tcp=1 (so an LB that never saw a connection's SYN"
echo "  still schedules it). Each real server answers every line with its name."
echo "  Every LB runs IPVS's connection sync as master and backup (multicast"
echo "  on the LBs' link), so each LB knows the others' connections."
setup_fleet || die "could not set up the fleet's namespaces"
for lb in lb1 lb2 lb3; do
	case $lb in lb1) o="1 2 3 4" ;; lb2) o="4 3 2 1" ;; *) o="2 4 1 3" ;; esac
	# docs/fleet.md: each connection synced once established, at each
	# closing state, and again every 300 s while it has traffic.
	$IP netns exec $lb sysctl -qw net.ipv4.vs.sloppy_tcp=1 \
		net.ipv4.vs.sync_version=1 "net.ipv4.vs.sync_threshold=3 0" \
		net.ipv4.vs.sync_refresh_period=300
	for role in master backup; do
		$IP netns exec $lb ipvsadm --start-daemon $role \
			--mcast-interface eth0 --syncid 4 ||
			die "ipvsadm --start-daemon $role on $lb failed"
	done
	{
		echo "-A -t $FVIP:80 -s maglev -b flag-2"
		for i in $o; do echo "-a -t $FVIP:80 -r 10.3.0.$i:80 -g -w 1"; done
	} >"$W/$lb.rules"
	$IP netns exec $lb ipvsadm -R <"$W/$lb.rules" ||
		die "ipvsadm -R on $lb failed"
	echo "  $lb: real servers added in the order $o"
done
fleet_route lb1 lb2 lb3
echo "  The digest on each LB's service line of /proc/net/ip_vs_maglev:"
for lb in lb1 lb2 lb3; do
	t=0
	while $IP netns exec $lb grep -q ' pending [1-9]' /proc/net/ip_vs_maglev &&
		[ $t -lt 100 ]; do t=$((t + 1)); sleep 0.1; done
	printf '  %s: ' $lb
	$IP netns exec $lb grep '^service' /proc/net/ip_vs_maglev |
		awk '{ for (i = 1; i < NF; i++) if ($i ~ /^(digest|dests)$/)
				f[$i] = $(i + 1)
			print "digest", f["digest"], "dests", f["dests"] }'
done
mkfifo "$W/cmd" "$W/ans"
$IP netns exec user tcpfleet client 10.8.0.1 $FVIP <"$W/cmd" >"$W/ans" &
exec 4>"$W/cmd" 5<"$W/ans"
fcmd open 80 $FLEET 2
fcmd round 2 60
echo "  $FLEET connections opened and answered: $ANS"
fleet_conns "$W/fleet.before"
for lb in lb1 lb2 lb3; do
	printf '  %s holds %d connections\n' $lb \
		"$(awk -v lb=$lb '$1 == lb' "$W/fleet.before" | wc -l)"
done
echo
echo "  A rolling update, one LB after the other: srv5 joins, srv2 is drained"
echo "  (weight 0: its connections stay, new ones go elsewhere), srv3 gets"
echo "  weight 2. Each LB's table now sends some old connections' keys to"
echo "  other servers; the connections stay where they are."
for lb in lb1 lb2 lb3; do
	$IP netns exec $lb ipvsadm -a -t $FVIP:80 -r 10.3.0.5:80 -g -w 1 &&
	$IP netns exec $lb ipvsadm -e -t $FVIP:80 -r 10.3.0.2:80 -g -w 0 &&
	$IP netns exec $lb ipvsadm -e -t $FVIP:80 -r 10.3.0.3:80 -g -w 2 ||
		die "the rolling update on $lb failed"
done
fcmd round 2 60
# The master sends a partly filled buffer after at most about 2 s.
sleep 3
# Which of lb3's connections the updated table sends elsewhere: without
# sync, those would break when lb3 dies (maglev-sim, same table code).
{
	for i in 1 2 3 4; do echo "ADD_NODE 10.3.0.$i:80 1"; done
	printf '%s\n' "ADD_NODE 10.3.0.5:80 1" "WEIGHT 10.3.0.2:80 0" \
		"WEIGHT 10.3.0.3:80 2"
	awk '$1 == "lb3" { print "LOOKUP_ADDR 10.8.0.1:" $2 }' "$W/fleet.before"
} | "$SIM" >"$W/fleet.sim" || die "maglev-sim failed"
elsewhere=$(awk '$1 == "lb3" { print $3 }' "$W/fleet.before" |
	paste - "$W/fleet.sim" | awk '{ split($2, a, /[.:]/)
		if ("srv" a[4] != $1) n++ } END { print n + 0 }')
for lb in lb1 lb2; do
	printf '  %s knows %d connections (its own and, by sync, the others'"'"')\n' \
		$lb "$($IP netns exec $lb ipvsadm -Lcn | grep -c '^TCP')"
done
echo
echo "  lb3 dies: its link goes down and the router drops its route (as BGP"
echo "  or a health check would). Every connection sends two more lines."
run $IP link set f-lb3 down
fleet_route lb1 lb2
fcmd round 3 60
fcmd round 2 60
fcmd list "$W/fleet.list"
fleet_conns "$W/fleet.after"
awk 'FILENAME == ARGV[1] { had[$1 " " $2] = 1; if (!($2 in lb)) lb[$2] = $1; next }
FILENAME == ARGV[2] { if (!(($1 " " $2) in had)) now[$2] = $1; next }
{
	c = lb[$2] == "lb3" ? 2 : ($2 in now) ? 3 : 1
	n[c]++
	if ($5 == "live") ok[c]++
	if ($5 == "live" && $3 == $4) same[c]++
	rs[c " " $4]++
}
END {
	name[1] = "stayed on lb1 or lb2"
	name[2] = "were on lb3, moved"
	name[3] = "moved between lb1, lb2"
	printf "\n  %-24s %5s %9s %9s   %s\n", "connections", "count",
		"continued", "same srv", "answered by, after"
	for (c = 1; c <= 3; c++) {
		l = ""
		for (i = 1; i <= 5; i++)
			l = l sprintf(i < 5 ? "srv%d %-4d" : "srv%d %d", i,
				rs[c " srv" i])
		printf "  %-24s %5d %9d %9d   %s\n", name[c], n[c], ok[c],
			same[c], l
		tot += n[c]; tok += ok[c]
	}
	printf "  %-24s %5d %9d\n", "all", tot, tok
	exit tot != tok || tot == 0
}' "$W/fleet.before" "$W/fleet.after" "$W/fleet.list" || status=1
echo
echo "  Every LB built the same table from the same servers, and the connection"
echo "  sync told lb1 and lb2 about lb3's connections, so whichever LB a packet"
echo "  reaches sends it to the server that holds its connection, even after"
echo "  the update changed the tables: without sync, the $elsewhere of lb3's"
echo "  connections that the updated table sends to another server (maglev-sim)"
echo "  would have broken."
echo "  (this act took $(($(date +%s) - act_start)) s in the guest)"
echo quit >&4
exec 4>&- 5<&-
for lb in lb1 lb2 lb3; do
	$IP netns exec $lb ipvsadm --stop-daemon master
	$IP netns exec $lb ipvsadm --stop-daemon backup
	$IP netns exec $lb ipvsadm -C
done

section "Summary"
printf '  %-22s %6s  %6s   %s\n' change flows slots \
	"moved between servers that stayed"
sed 's/^/  /' "$W/summary"
echo "  Maglev fills its table in turns, so a change also hands a few slots"
echo "  between servers that stay: that is its known trade-off for an even"
echo "  spread and a one-load lookup."
if [ $status -eq 0 ]; then
	echo "  Every flow in every round went where maglev-sim, built from the same"
	echo "  maglev_table.c, says it goes."
fi

echo
run ipvsadm -D -u $SVC
exit $status
