#!/bin/sh
# Guest test 26: the procedures of docs/operating.md, run as written there,
# on a fleet of two LBs with IPVS connection sync, while long-lived TCP
# connections run through it; not one of them may break.
#
#   cl 10.9.0.1 -- rt ==ECMP to 10.0.0.1==> lb1 lb2 (10.2.0.1K, br0)
#                                           rs1..rs4 (10.2.0.I, br0)
#   lb1 lb2 also share br1 (eth1, 10.4.0.1K): the sync network
#
# Direct routing, sloppy_tcp=1, port hashing (flag-2), every LB a sync
# master and backup, as on docs/fleet.md. In order:
#   1. the table-size command of "Choosing the table size" (maglev-sim);
#   2. "Rolling out a hash key": a new key is set on lb1, then lb2, and
#      persisted in /etc/sysctl.d and /etc/modprobe.d; then rotated to
#      another key the same way while connections live; lb2 leaves the
#      ECMP route and every connection continues on lb1 (synced), though
#      the new key gives most of their keys to other servers;
#   3. "Upgrade and rollback": lb1 leaves the ECMP route; ipvsadm -S, -C,
#      rmmod, the module installed again, modprobe (its key from
#      /etc/modprobe.d), sysctl -p, ipvsadm -R. Both LBs run on this one
#      kernel, so rmmod needs lb2 cleared and restored too: its
#      connections, idle meanwhile, survive the reload (IPVS keeps a
#      deleted server's entry while connections use it, and -R revives
#      it). Digests, key fingerprints and the module version are checked
#      after;
#   4. "Removing a real server safely": weight 0 on every LB, the
#      connections go on (rs2's on rs2), new ones avoid rs2; once they end
#      and rs2 shows ActiveConn 0 everywhere, it is deleted; new
#      connections then all live;
#   5. "What to alert on": maglev-fleet check and maglev-fleet prom as
#      written.
# docs/operating.md's code blocks are checked against this file by
# scripts/doc-check.sh (every command line there must appear here).
#
# guest-timeout: 120
. "${0%/*}/lib.sh"

tstart=$(date +%s)
VIP=10.0.0.1
CL=10.9.0.1
NCONN=${OPS_CONNS:-60}
LBS="lb1 lb2"
all_live() { echo "ok live $1 reset 0 wrong 0 timeout 0 failed 0"; }

nsx() { ip netns exec "$@"; }

# --- 1. choosing the table size (maglev-sim, as on the page) -----------------

mkdir -p "$T/sim/build" && ln -s "$MAGLEV_SIM" "$T/sim/build/maglev-sim"
cd "$T/sim" || exit 1
N=10 M=65537
{ echo "SIZE $M"; for i in $(seq $N); do echo "ADD_NODE rs$i"; done; echo COUNTS
  echo "ADD_NODE rs$((N + 1))"; echo CHURN; } | build/maglev-sim |
awk -v n=$N -v m=$M 'NF == 2 { d = $2 / (m / n) - 1; if (d < 0) d = -d; if (d > e) e = d }
    NF == 1 { printf "share error %.2f %%, moved when one server joins %.2f %% (ideal %.2f %%)\n", 100 * e, 100 * $1 / m, 100 / (n + 1) }' \
	>"$T/size.out"
info "table size: $(cat "$T/size.out")"
check "table size: maglev-sim prints the share error and the churn" \
	grep -q '^share error [0-9.]* %, moved when one server joins [0-9.]* % (ideal 9.09 %)$' "$T/size.out"
cd / || exit 1

# --- network (as tests 12 and 18) ------------------------------------------------

sysctl -qw net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2
for ns in rt cl $LBS rs1 rs2 rs3 rs4; do ip netns add "$ns"; done
{
	echo "link add br0 type bridge"
	echo "link set br0 up"
	echo "link add br1 type bridge"
	echo "link set br1 up"
	for ns in rt $LBS rs1 rs2 rs3 rs4; do
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
fleet_hosts "$VIP" 1 2 3 4 11 12
route() { fleet_route "$VIP" "$@"; }
route lb1 lb2

pids=
fleet_servers 4 80

# sync_on LB: sloppy_tcp and the sync daemons of docs/fleet.md.
sync_on() {
	nsx "$1" sysctl -qw net.ipv4.vs.sloppy_tcp=1 net.ipv4.vs.sync_version=1 \
		net.ipv4.vs.sync_refresh_period=300 || fail "$1: sysctls"
	echo "3 0" >"$T/thr"
	nsx "$1" sh -c "cat $T/thr >/proc/sys/net/ipv4/vs/sync_threshold" ||
		fail "$1: sync_threshold"
	nsx "$1" ipvsadm --start-daemon master --mcast-interface eth1 --syncid 23 ||
		fail "$1: sync master"
	nsx "$1" ipvsadm --start-daemon backup --mcast-interface eth1 --syncid 23 ||
		fail "$1: sync backup"
}
for lb in $LBS; do
	sync_on "$lb"
	{
		echo "-A -t $VIP:80 -s maglev -b flag-2"
		for i in 1 2 3 4; do echo "-a -t $VIP:80 -r 10.2.0.$i:80 -g -w 1"; done
	} | nsx "$lb" ipvsadm -R || fail "$lb: ipvsadm -R"
	wait_caught_up "$lb" 20
done
S="TCP $VIP:80"

# agree NAME TEXT: the LBs' /proc files agree (maglev-fleet check exits 0).
agree() {
	fleet_capture "$1" "$LBS" >/dev/null
	fleet_check "$2" 0 "$1" "$LBS" '^OK'
}

# synced: wait (up to 10 s) until every LB holds every connection to port
# 80 that the client holds, its own or synced.
synced() {
	_want=$(echo "$ANS" | awk '{ print $3 }')
	_w=0
	while :; do
		_ok=0
		for _lb in $LBS; do
			_n=$(nsx "$_lb" ipvsadm -Lcn | awk '$1 == "TCP" && $3 == "ESTABLISHED" && $5 ~ /:80$/' | wc -l)
			[ "$_n" -ge "$_want" ] && _ok=$((_ok + 1))
		done
		[ "$_ok" -eq 2 ] || [ $_w -ge 20 ] && break
		sleep 0.5
		_w=$((_w + 1))
	done
	expect_eq "$1: every LB holds every connection ($_want), its own or synced" "$_ok" 2
}

# --- 2. rolling out a hash key ---------------------------------------------------

mkdir -p /etc/sysctl.d /etc/modprobe.d /etc/modules-load.d
# key_rollout: the page's commands, on every LB in turn (the files are
# the guest's, shared by both LBs).
key_rollout() {
	KEY=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
	for lb in $LBS; do
		nsx "$lb" sysctl -w net.ipv4.vs.maglev_hash_key="$KEY" >/dev/null ||
			fail "$lb: sysctl -w maglev_hash_key"
		nsx "$lb" grep -o ' key [0-9a-f]* ' /proc/net/ip_vs_maglev >"$T/fp.$lb"
		[ "$lb" = lb1 ] && cmd round 1 30
	done
	umask 077
	echo "net.ipv4.vs.maglev_hash_key = $KEY" >/etc/sysctl.d/60-ip-vs-maglev.conf
	echo "options ip_vs_maglev hash_key=$KEY" >/etc/modprobe.d/ip-vs-maglev.conf
	echo ip_vs_maglev >/etc/modules-load.d/ip-vs-maglev.conf
	umask 022
	expect_eq "$1: the key's fingerprint on lb1 and lb2" \
		"$(cat "$T/fp.lb1")" "$(cat "$T/fp.lb2")"
	expect_eq "$1: /proc shows maglev-sim's fingerprint of the key" \
		"$(cat "$T/fp.lb1")" " key $(key_fp "$KEY") "
	agree "$2" "$1: the LBs agree"
}

fleet_client $CL $VIP
key_rollout "first key" first
K1=$KEY
cmd open 80 "$NCONN" 2
expect_eq "$NCONN connections opened" "$ANS" "$(all_live "$NCONN")"
synced "first key"

key_rollout "key rotation" rotation
check "key rotation: the key changed" [ "$KEY" != "$K1" ]
cmd round 1 30
expect_eq "key rotation: every connection lives after the rotation" "$ANS" "$(all_live "$NCONN")"
# How many connections the new key gives to another server than their own.
cmd list "$T/list.k"
{
	echo "KEY $KEY"
	for i in 1 2 3 4; do echo "ADD_NODE 10.2.0.$i:80 1"; done
} >"$T/simset"
awk -v cl=$CL '{ print cl, $2 }' "$T/list.k" >"$T/keys"
predict "$T/keys" "$T/simset" 1 |
	awk '{ split($3, a, /[.:]/); print $2, "rs" a[4] }' >"$T/own.k"
moved=$(awk 'NR == FNR { o[$1] = $2; next } o[$2] != $3 { n++ }
	END { print n + 0 }' "$T/own.k" "$T/list.k")
info "key rotation: the new key gives $moved of $NCONN connections to another server"
check "key rotation: the new key moves some connections' keys" [ "$moved" -gt 0 ]
route lb1
cmd round 2 60
expect_eq "key rotation: lb2 left the route, every connection lives on lb1 (synced)" \
	"$ANS" "$(all_live "$NCONN")"
route lb1 lb2
cmd round 1 30

# --- 3. upgrade and rollback ------------------------------------------------------

d0=$(svc_field "$S" digest lb1)
fp0=$(svc_field "$S" key lb1)
route lb2
cmd round 2 60
expect_eq "upgrade: lb1 left the route, every connection lives on lb2" "$ANS" "$(all_live "$NCONN")"
nsx lb1 ipvsadm -S -n >/etc/ipvsadm.rules
nsx lb1 ipvsadm -C
# lb2 too: one kernel. Its connections are idle meanwhile: a packet that
# comes while its real server is deleted is dropped without renewing its
# entry's timer.
nsx lb2 ipvsadm -S -n >"$T/lb2.rules"
nsx lb2 ipvsadm -C
if rmmod ip_vs_maglev; then
	pass "upgrade: rmmod after ipvsadm -C"
else
	fail "upgrade: rmmod refused"
fi
# Installing the new version: the same module here (make install).
kver=$(uname -r)
mkdir -p "/lib/modules/$kver/extra"
cp "$MAGLEV_KO" "/lib/modules/$kver/extra/"
depmod "$kver"
echo /bin/modprobe >/proc/sys/kernel/modprobe
modprobe ip_vs_maglev || fail "upgrade: modprobe ip_vs_maglev"
expect_eq "upgrade: the initial namespace's key from /etc/modprobe.d" \
	"$(cat /proc/sys/net/ipv4/vs/maglev_hash_key)" "$KEY"
expect_eq "upgrade: lb1's key is the default one after the reload" \
	"$(ns_sysctl lb1 maglev_hash_key)" "$ZERO_KEY"
nsx lb1 sysctl -p /etc/sysctl.d/60-ip-vs-maglev.conf >/dev/null || fail "lb1: sysctl -p"
nsx lb2 sysctl -p /etc/sysctl.d/60-ip-vs-maglev.conf >/dev/null || fail "lb2: sysctl -p"
nsx lb2 ipvsadm -R <"$T/lb2.rules" || fail "lb2: ipvsadm -R"
nsx lb1 ipvsadm -R </etc/ipvsadm.rules || fail "lb1: ipvsadm -R"
wait_caught_up lb2 20
cmd round 2 60
expect_eq "upgrade: every connection lives after the reload (on lb2)" "$ANS" "$(all_live "$NCONN")"
nsx lb1 cat /proc/net/ip_vs_maglev >/dev/null
expect_eq "upgrade: lb1's digest as before" "$(svc_field "$S" digest lb1)" "$d0"
expect_eq "upgrade: lb1's key fingerprint as before" "$(svc_field "$S" key lb1)" "$fp0"
expect_eq "upgrade: lb1's flags as before (-S keeps -b)" "$(svc_field "$S" flags lb1)" 0x10
agree upgraded "upgrade: the LBs agree"
ver=$(modinfo -F version ip_vs_maglev)
check "upgrade: modinfo -F version ip_vs_maglev prints a version ($ver)" [ -n "$ver" ]
expect_eq "upgrade: /sys/module/ip_vs_maglev/version is modinfo's" \
	"$(cat /sys/module/ip_vs_maglev/version 2>/dev/null)" "$ver"
route lb1 lb2
cmd round 2 60
expect_eq "upgrade: lb1 back in the route, every connection lives" "$ANS" "$(all_live "$NCONN")"

# --- 4. removing a real server safely ---------------------------------------------

rs2_first() { cmd list "$T/list.r" >/dev/null; awk '$3 == "rs2"' "$T/list.r" | wc -l; }
n2=$(rs2_first)
info "removal: $n2 of $NCONN connections are on rs2"
for lb in $LBS; do
	nsx "$lb" ipvsadm -e -t 10.0.0.1:80 -r 10.2.0.2:80 -g -w 0
done
cmd round 1 30
expect_eq "removal: weight 0, every connection lives (rs2's on rs2)" "$ANS" "$(all_live "$NCONN")"
cmd open 80 30 2
expect_eq "removal: 30 new connections opened" "$ANS" "$(all_live $((NCONN + 30)))"
expect_eq "removal: no new connection went to rs2" "$(rs2_first)" "$n2"
cmd close
for lb in $LBS; do
	while nsx "$lb" ipvsadm -Ln -t 10.0.0.1:80 | awk '$2 == "10.2.0.2:80" && $5 > 0 { f = 1 } END { exit !f }'; do sleep 1; done
	nsx "$lb" ipvsadm -d -t 10.0.0.1:80 -r 10.2.0.2:80 || fail "$lb: ipvsadm -d"
done
pass "removal: rs2 showed ActiveConn 0 on every LB and was deleted"
cmd open 80 "$NCONN" 2
cmd round 1 30
expect_eq "removal: after the delete, new connections all live" "$ANS" "$(all_live "$NCONN")"
expect_eq "removal: none on rs2" "$(rs2_first)" 0
agree removed "removal: the LBs agree"

# --- 5. what to alert on ------------------------------------------------------------

cd "$T" || exit 1
for lb in lb1 lb2; do nsx "$lb" cat /proc/net/ip_vs_maglev >$lb; done
maglev-fleet check lb1 lb2 >"$T/check.out"
expect_eq "alerts: maglev-fleet check lb1 lb2 exits 0" "$?" 0
info "alerts: $(head -n 1 "$T/check.out")"
mkdir -p /var/lib/prometheus/node-exporter
nsx lb1 maglev-fleet prom >/var/lib/prometheus/node-exporter/ip_vs_maglev.prom.$$ &&
    mv /var/lib/prometheus/node-exporter/ip_vs_maglev.prom.$$ \
       /var/lib/prometheus/node-exporter/ip_vs_maglev.prom
for m in ip_vs_maglev_pending ip_vs_maglev_build_failures_total \
	ip_vs_maglev_alloc_failures_total ip_vs_maglev_table_info; do
	check "alerts: maglev-fleet prom exports $m" \
		grep -q "^$m{" /var/lib/prometheus/node-exporter/ip_vs_maglev.prom
done
cd / || exit 1

info "took $(($(date +%s) - tstart)) s"
echo quit >&4
exec 4>&- 5<&-
for lb in $LBS; do
	nsx "$lb" ipvsadm --stop-daemon master
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
