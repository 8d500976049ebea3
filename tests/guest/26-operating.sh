#!/bin/sh
# Guest test 26: the procedures of docs/operating.md, run as written there,
# on a fleet of two LBs with IPVS connection sync, while long-lived TCP
# connections run through it; not one of them may break. Run for each
# build: ip_vs_maglev.ko (scheduler maglev), then the mh build
# (ip_vs_mh.ko, scheduler mh with mh-port; its own module name in every
# command) where the kernel's mh is a module (Debian's kernels: the
# newest step runs this test), SKIP where it is built in (the test
# kernels).
#
#   cl 10.9.0.1 -- rt ==ECMP to 10.0.0.1==> lb1 lb2 (10.2.0.1K, br0)
#                                           rs1..rs4 (10.2.0.I, br0)
#   lb1 lb2 also share br1 (eth1, 10.4.0.1K): the sync network
#   lb3 (no link): an LB restored without its drains
#
# Direct routing, sloppy_tcp=1, port hashing, every LB a sync master and
# backup, as on docs/fleet.md. In order:
#   1. the table-size command of "Choosing the table size" (maglev-sim);
#   then per build:
#   2. "Rolling out or rotating a hash key": a new key is set on lb1, then
#      lb2, and persisted in /etc/sysctl.d, /etc/modprobe.d and
#      /etc/modules-load.d (the build's module name); then rotated to
#      another key the same way while connections live; lb2 leaves the
#      ECMP route and every connection continues on lb1 (synced), though
#      the new key gives most of their keys to other servers;
#   3. "Upgrade and rollback" with a drain in progress: rs3 is set to
#      weight 0 on both LBs (/proc shows "drain 1"); lb3 restored from
#      lb1's plain "ipvsadm -S" has rs3 "added at 0" and another digest
#      (maglev-fleet check says so), and "maglev-fleet save --drains"
#      repairs it. lb1 leaves the ECMP route; its rules saved with
#      "ipvsadm -S -n | maglev-fleet save", ipvsadm -C, rmmod (an LB
#      without the module: maglev-fleet check reports the missing /proc
#      file), the module installed again, modprobe (its key from
#      /etc/modprobe.d), sysctl -p, ipvsadm -R. Both LBs run on this one
#      kernel, so rmmod needs lb2 cleared and restored too: its
#      connections, idle meanwhile, survive the reload. After: the
#      digests with the drain as before, rs3 draining, the key, the flags,
#      the running version (/sys/module/NAME/version, in maglev-fleet
#      collect's module line); then rs3's weight back restores the table
#      of before the drain on both;
#   4. "Removing a real server safely": weight 0 on every LB, the
#      connections go on (rs2's on rs2), new ones avoid rs2; once they end
#      and rs2 shows ActiveConn 0 everywhere (a bounded wait), it is
#      deleted; new connections then all live;
#   5. "What to alert on": maglev-fleet collect, check and prom as
#      written.
#   6. (ip_vs_maglev on the default test kernel) the /proc figures the
#      pages quote: table_mem and mem for services of 0 to 1000 real
#      servers, compared with tests/guest/26-figures.txt, which
#      scripts/doc-figures.sh writes from this test's "# figure" lines and
#      the doc check compares with the pages.
#   7. (the mh build) where the kernel's own ip_vs_mh is loaded: an LB
#      running it instead of the mh build (a DKMS build that failed) has
#      no /proc file, which collect, check and prom report.
# docs/operating.md's code blocks are checked against this file by
# scripts/doc-check.sh (every command line there must appear here).
#
# guest-timeout: 400
# mh-compat: yes
# debug-kernel: yes
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
# The table is a pure function of the names and M: the figures are those
# docs/operating.md shows for this command.
expect_eq "table size: maglev-sim's share error and churn are the page's" \
	"$(cat "$T/size.out")" "share error 0.01 %, moved when one server joins 9.34 % (ideal 9.09 %)"
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
for lb in $LBS; do sync_on "$lb"; done
# lb3: no link; lo up gives it a local routing table, without which IPVS
# refuses every real server's address as not unicast.
ip netns add lb3
ip -n lb3 link set lo up
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
# persist: the page's block of "Settings that survive a reload", in the
# build's form (the files are the guest's, shared by both LBs).
persist() {
	umask 077
	echo "net.ipv4.vs.maglev_hash_key = $KEY" >/etc/sysctl.d/60-ip-vs-maglev.conf
	if [ "$MOD" = ip_vs_mh ]; then
		echo "options ip_vs_mh hash_key=$KEY" >/etc/modprobe.d/ip-vs-maglev.conf
		echo ip_vs_mh >/etc/modules-load.d/ip-vs-maglev.conf
	else
		echo "options ip_vs_maglev hash_key=$KEY" >/etc/modprobe.d/ip-vs-maglev.conf
		echo ip_vs_maglev >/etc/modules-load.d/ip-vs-maglev.conf
	fi
	umask 022
}
# key_rollout: the page's commands, on every LB in turn.
key_rollout() {
	KEY=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
	for lb in $LBS; do
		nsx "$lb" sysctl -w net.ipv4.vs.maglev_hash_key="$KEY" >/dev/null ||
			fail "$lb: sysctl -w maglev_hash_key"
		nsx "$lb" grep -o ' key [0-9a-f]* ' /proc/net/ip_vs_maglev >"$T/fp.$lb"
		[ "$lb" = lb1 ] && cmd round 1 30
	done
	persist
	expect_eq "$B: $1: the key's fingerprint on lb1 and lb2" \
		"$(cat "$T/fp.lb1")" "$(cat "$T/fp.lb2")"
	expect_eq "$B: $1: /proc shows maglev-sim's fingerprint of the key" \
		"$(cat "$T/fp.lb1")" " key $(key_fp "$KEY") "
	agree "$B-$2" "$B: $1: the LBs agree"
}

# fleet_services: the fleet's service on both LBs, with the build's scheduler.
fleet_services() {
	for lb in $LBS; do
		{
			echo "-A -t $VIP:80 -s $SCHED -b $PORTFLAG"
			for i in 1 2 3 4; do echo "-a -t $VIP:80 -r 10.2.0.$i:80 -g -w 1"; done
		} | nsx "$lb" ipvsadm -R || fail "$lb: ipvsadm -R"
		wait_caught_up "$lb" 20
	done
}

# dest_drain LB NAME: "weight W drain D" of dest NAME of the service.
dest_drain() {
	nsx "$1" cat $PROC | awk -v d="$2" '$1 == "dest" && $2 == d { print $3, $4, $7, $8 }'
}

procedures() {
B=$SCHED
info "=== the procedures with $MOD (scheduler $SCHED)"
fleet_services
key_rollout "first key" first
K1=$KEY
cmd open 80 "$NCONN" 2
expect_eq "$B: $NCONN connections opened" "$ANS" "$(all_live "$NCONN")"
synced "$B: first key"

key_rollout "key rotation" rotation
check "$B: key rotation: lb1's /proc no longer shows the first key's fingerprint" \
	[ "$(svc_field "$S" key lb1)" != "$(key_fp "$K1")" ]
cmd round 1 30
expect_eq "$B: key rotation: every connection lives after the rotation" "$ANS" "$(all_live "$NCONN")"
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
info "$B: key rotation: the new key gives $moved of $NCONN connections to another server"
check "$B: key rotation: the new key moves some connections' keys" [ "$moved" -gt 0 ]
route lb1
cmd round 2 60
expect_eq "$B: key rotation: lb2 left the route, every connection lives on lb1 (synced)" \
	"$ANS" "$(all_live "$NCONN")"
route lb1 lb2
cmd round 1 30

# --- 3. upgrade and rollback, with a drain in progress -----------------------------

dpre=$(svc_field "$S" digest lb1)
for lb in $LBS; do
	nsx "$lb" ipvsadm -e -t $VIP:80 -r 10.2.0.3:80 -g -w 0 || fail "$lb: drain rs3"
	wait_caught_up "$lb" 20
done
expect_eq "$B: drain: rs3 on lb1 shows weight 0, drain 1" "$(dest_drain lb1 10.2.0.3:80)" "weight 0 drain 1"
agree "$B-drain" "$B: drain: the LBs agree while rs3 drains"
for lb in $LBS; do sed "s/^/# capture $B-drain $lb | /" "$T/cap.$B-drain.$lb"; done
d0=$(svc_field "$S" digest lb1)
fp0=$(svc_field "$S" key lb1)
check "$B: drain: the drain changed the digest" [ "$d0" != "$dpre" ]

# The defect the procedure avoids: lb1's rules restored as ipvsadm -S
# saves them (rs3 at weight 0, no former weight) give another table.
nsx lb3 sysctl -p /etc/sysctl.d/60-ip-vs-maglev.conf >/dev/null || fail "lb3: sysctl -p"
nsx lb1 ipvsadm -S -n | nsx lb3 ipvsadm -R || fail "lb3: plain ipvsadm -R"
wait_caught_up lb3 20
expect_eq "$B: plain restore: rs3 on lb3 shows weight 0, drain 0 (added at 0)" \
	"$(dest_drain lb3 10.2.0.3:80)" "weight 0 drain 0"
fleet_capture "$B-plain" "lb1 lb3"
fleet_check "$B: plain restore: lb3 differs from lb1" 1 "$B-plain" "lb1 lb3" \
	'^  dest 10\.2\.0\.3:80: weight 0 draining from 1 on lb1; weight 0 added at 0 on lb3'
# Its repair, as the page gives it for an LB whose rules came back
# otherwise (keepalived): lb1's file, then the edits on lb3.
cd "$T" || exit 1
# shellcheck disable=SC2094 # a namespace, then a file of the same name
nsx lb1 maglev-fleet collect >lb1
nsx lb3 ipvsadm -S -n | maglev-fleet save --drains lb1 | nsx lb3 ipvsadm -R
cd / || exit 1
wait_caught_up lb3 20
expect_eq "$B: save --drains: rs3 on lb3 drains from 1" "$(dest_drain lb3 10.2.0.3:80)" "weight 0 drain 1"
expect_eq "$B: save --drains: lb3's digest is lb1's" "$(svc_field "$S" digest lb3)" "$d0"
nsx lb3 ipvsadm -C

route lb2
cmd round 2 60
expect_eq "$B: upgrade: lb1 left the route, every connection lives on lb2" "$ANS" "$(all_live "$NCONN")"
nsx lb1 ipvsadm -S -n >"$T/plain.rules"
nsx lb1 cat $PROC >"$T/save.proc"
nsx lb1 ipvsadm -S -n | nsx lb1 maglev-fleet save >/etc/ipvsadm.rules
# The three as captures for tests/fleet/run.sh (save's input and output).
sed "s/^/# capture $B-save ipvsadm-S | /" "$T/plain.rules"
sed "s/^/# capture $B-save proc | /" "$T/save.proc"
sed "s/^/# capture $B-save rules | /" /etc/ipvsadm.rules
check "$B: upgrade: the saved rules add rs3 at weight 1 and set it to 0 after" \
	grep -qx -- "-e -t $VIP:80 -r 10.2.0.3:80 -g -w 0" /etc/ipvsadm.rules
nsx lb1 ipvsadm -C
# lb2 too: one kernel. Its connections are idle meanwhile: a packet that
# comes while its real server is deleted is dropped without renewing its
# entry's timer.
nsx lb2 ipvsadm -S -n | nsx lb2 maglev-fleet save >"$T/lb2.rules"
nsx lb2 ipvsadm -C
if [ "$MOD" = ip_vs_mh ]; then
	rmmod ip_vs_mh
else
	rmmod ip_vs_maglev
fi
if [ -d "/sys/module/$MOD" ]; then
	fail "$B: upgrade: rmmod $MOD refused"
else
	pass "$B: upgrade: rmmod $MOD after ipvsadm -C"
fi
# An LB without the module: no /proc file, which the fleet check reports.
cd "$T" || exit 1
nsx lb1 maglev-fleet collect >"$T/noproc.lb1"
info "$B: without the module: $(head -n 1 "$T/noproc.lb1")"
sed "s/^/# capture $B-noproc lb1 | /" "$T/noproc.lb1"
check "$B: without the module: collect says proc missing" \
	grep -q ' proc missing$' "$T/noproc.lb1"
rc=0
maglev-fleet check lb1="$T/noproc.lb1" lb2=lb1 >"$T/noproc.out" || rc=$?
sed 's/^/# maglev-fleet: /' "$T/noproc.out"
expect_eq "$B: without the module: maglev-fleet check exits 1" "$rc" 1
check "$B: without the module: the check names lb1's missing /proc file" \
	grep -q '^lb1: no /proc/net/ip_vs_maglev ' "$T/noproc.out"
cd / || exit 1
# Installing the new version: the same module here (make install).
kver=$(uname -r)
if [ "$MOD" = ip_vs_mh ]; then
	mkdir -p "/lib/modules/$kver/updates"
	cp "$MH_KO" "/lib/modules/$kver/updates/"
else
	mkdir -p "/lib/modules/$kver/extra"
	cp "$MAGLEV_KO" "/lib/modules/$kver/extra/"
fi
depmod "$kver"
echo /bin/modprobe >/proc/sys/kernel/modprobe
if [ "$MOD" = ip_vs_mh ]; then
	modprobe ip_vs_mh
else
	modprobe ip_vs_maglev
fi
check "$B: upgrade: modprobe $MOD loaded it" [ -d "/sys/module/$MOD" ]
expect_eq "$B: upgrade: the initial namespace's key from /etc/modprobe.d" \
	"$(cat /proc/sys/net/ipv4/vs/maglev_hash_key)" "$KEY"
expect_eq "$B: upgrade: lb1's key is the default one after the reload" \
	"$(ns_sysctl lb1 maglev_hash_key)" "$ZERO_KEY"
nsx lb1 sysctl -p /etc/sysctl.d/60-ip-vs-maglev.conf >/dev/null || fail "lb1: sysctl -p"
nsx lb2 sysctl -p /etc/sysctl.d/60-ip-vs-maglev.conf >/dev/null || fail "lb2: sysctl -p"
nsx lb3 sysctl -p /etc/sysctl.d/60-ip-vs-maglev.conf >/dev/null || fail "lb3: sysctl -p"
nsx lb2 ipvsadm -R <"$T/lb2.rules" || fail "lb2: ipvsadm -R"
nsx lb1 ipvsadm -R </etc/ipvsadm.rules || fail "lb1: ipvsadm -R"
wait_caught_up lb2 20
cmd round 2 60
expect_eq "$B: upgrade: every connection lives after the reload (on lb2)" "$ANS" "$(all_live "$NCONN")"
expect_eq "$B: upgrade: lb1's digest as before, with rs3 draining" "$(svc_field "$S" digest lb1)" "$d0"
expect_eq "$B: upgrade: rs3 on lb1 drains from 1 again" "$(dest_drain lb1 10.2.0.3:80)" "weight 0 drain 1"
expect_eq "$B: upgrade: lb1's key fingerprint as before" "$(svc_field "$S" key lb1)" "$fp0"
expect_eq "$B: upgrade: lb1's flags as before (-S keeps -b)" "$(svc_field "$S" flags lb1)" 0x10
agree "$B-upgraded" "$B: upgrade: the LBs agree"
if [ "$MOD" = ip_vs_mh ]; then
	cat /sys/module/ip_vs_mh/version
	ver=$(cat /sys/module/ip_vs_mh/version)
else
	cat /sys/module/ip_vs_maglev/version
	ver=$(cat /sys/module/ip_vs_maglev/version)
fi
# The version the module file installed above carries (its .modinfo).
[ "$MOD" = ip_vs_mh ] && kofile=$MH_KO || kofile=$MAGLEV_KO
kover=$(tr '\0' '\n' <"$kofile" | sed -n 's/^version=//p' | head -n 1)
expect_eq "$B: upgrade: /sys/module/$MOD/version shows the installed file's version" \
	"$ver" "${kover:-no version= in $kofile}"
nsx lb1 maglev-fleet collect >"$T/collect"
expect_eq "$B: upgrade: maglev-fleet collect's module line" "$(head -n 1 "$T/collect")" \
	"module $MOD version $ver bits $(case $(uname -m) in *64) echo 64 ;; *) echo 32 ;; esac) proc yes"
route lb1 lb2
cmd round 2 60
expect_eq "$B: upgrade: lb1 back in the route, every connection lives" "$ANS" "$(all_live "$NCONN")"
for lb in $LBS; do
	nsx "$lb" ipvsadm -e -t $VIP:80 -r 10.2.0.3:80 -g -w 1 || fail "$lb: rs3 back"
	wait_caught_up "$lb" 20
done
expect_eq "$B: drain ended: rs3's weight back gives lb1 the table of before the drain" \
	"$(svc_field "$S" digest lb1)" "$dpre"
agree "$B-undrained" "$B: drain ended: the LBs agree"

# --- 4. removing a real server safely ---------------------------------------------

rs2_first() { cmd list "$T/list.r" >/dev/null; awk '$3 == "rs2"' "$T/list.r" | wc -l; }
n2=$(rs2_first)
info "$B: removal: $n2 of $NCONN connections are on rs2"
for lb in $LBS; do
	nsx "$lb" ipvsadm -e -t 10.0.0.1:80 -r 10.2.0.2:80 -g -w 0
done
cmd round 1 30
expect_eq "$B: removal: weight 0, every connection lives (rs2's on rs2)" "$ANS" "$(all_live "$NCONN")"
cmd open 80 30 2
expect_eq "$B: removal: 30 new connections opened" "$ANS" "$(all_live $((NCONN + 30)))"
expect_eq "$B: removal: no new connection went to rs2" "$(rs2_first)" "$n2"
cmd close
for lb in $LBS; do
	n=0; while nsx "$lb" ipvsadm -Ln -t 10.0.0.1:80 | awk '$2 == "10.2.0.2:80" && $5 > 0 { f = 1 } END { exit !f }' && [ $((n += 1)) -le 600 ]; do sleep 1; done
	if nsx "$lb" ipvsadm -Ln -t 10.0.0.1:80 | awk '$2 == "10.2.0.2:80" && $5 > 0 { exit 1 }' && nsx "$lb" ipvsadm -d -t 10.0.0.1:80 -r 10.2.0.2:80; then
		pass "$B: removal: rs2 showed ActiveConn 0 on $lb after $n s, and was deleted"
	else
		fail "$B: removal: rs2 not deleted on $lb: still active connections after $n s, or ipvsadm -d failed"
	fi
done
cmd open 80 "$NCONN" 2
cmd round 1 30
expect_eq "$B: removal: after the delete, new connections all live" "$ANS" "$(all_live "$NCONN")"
expect_eq "$B: removal: none on rs2" "$(rs2_first)" 0
agree "$B-removed" "$B: removal: the LBs agree"

# --- 5. what to alert on ------------------------------------------------------------

cd "$T" || exit 1
# shellcheck disable=SC2094 # a namespace, then a file of the same name
for lb in lb1 lb2; do nsx $lb maglev-fleet collect >$lb; done
for lb in lb1 lb2; do sed "s/^/# capture $B-collect $lb | /" $lb; done
maglev-fleet check lb1 lb2 >"$T/check.out"
expect_eq "$B: alerts: maglev-fleet check lb1 lb2 exits 0" "$?" 0
# The same file, read as the page says for an LB in its own namespace.
mv lb1 "$T/collect.lb1"
# shellcheck disable=SC2094 # a namespace, then a file of the same name
ip netns exec lb1 maglev-fleet collect >lb1
expect_eq "$B: alerts: ip netns exec reads lb1's file" "$(grep -c '^service ' lb1)" 1
info "$B: alerts: $(head -n 1 "$T/check.out")"
check "$B: alerts: the check's OK line names the running version" \
	grep -q "^OK: .*; module $MOD $ver, " "$T/check.out"
mkdir -p /var/lib/prometheus/node-exporter
nsx lb1 maglev-fleet prom >/var/lib/prometheus/node-exporter/ip_vs_maglev.prom.$$ &&
    mv /var/lib/prometheus/node-exporter/ip_vs_maglev.prom.$$ \
       /var/lib/prometheus/node-exporter/ip_vs_maglev.prom
for m in ip_vs_maglev_pending ip_vs_maglev_build_failures_total \
	ip_vs_maglev_alloc_failures_total ip_vs_maglev_table_info; do
	check "$B: alerts: maglev-fleet prom exports $m" \
		grep -q "^$m{" /var/lib/prometheus/node-exporter/ip_vs_maglev.prom
done
check "$B: alerts: maglev-fleet prom exports the running module and version" \
	grep -qx "ip_vs_maglev_module_info{module=\"$MOD\",version=\"$ver\",bits=\"[0-9]*\"} 1" \
	/var/lib/prometheus/node-exporter/ip_vs_maglev.prom
check "$B: alerts: maglev-fleet prom exports proc_present 1" \
	grep -qx "ip_vs_maglev_proc_present 1" /var/lib/prometheus/node-exporter/ip_vs_maglev.prom
cd / || exit 1
cmd close
for lb in $LBS; do nsx "$lb" ipvsadm -C; done
}

# --- the maglev build ---------------------------------------------------------------

fleet_client $CL $VIP
MOD=ip_vs_maglev SCHED=maglev PORTFLAG=flag-2
procedures

# --- 6. the /proc figures the pages quote (tests/guest/26-figures.txt) -------------
#
# One service of N real servers for each N (its own server set: nothing
# shared), in a namespace of its own: table_mem (the table, its servers
# and its descriptor) and mem (the service's own part and its table).

ip netns add fig
ip -n fig link set lo up
{
	for n in 0 1 2 3 5 100 1000; do
		echo "-A -t 10.7.0.1:$((1000 + n)) -s maglev"
		i=0
		while [ $i -lt $n ]; do
			echo "-a -t 10.7.0.1:$((1000 + n)) -r 10.8.$((i / 250)).$((i % 250 + 1)):80 -m -w 1"
			i=$((i + 1))
		done
	done
} | nsx fig ipvsadm -R || fail "figures: ipvsadm -R"
wait_caught_up fig 60
nsx fig cat $PROC | awk '$1 == "service" {
		for (i = 4; i < NF; i += 2) f[$i] = $(i + 1)
		split($3, a, ":"); n = a[2] - 1000
		print "proc table_mem " n, f["table_mem"]
		print "proc mem " n, f["mem"]
	}' >"$T/figures"
info "figure kernel $(uname -r)"
sed 's/^/# figure /' "$T/figures"
ff=${0%/*}/26-figures.txt
if [ "$(uname -r)" != "$(sed -n 's/^kernel //p' "$ff")" ] || [ -e /proc/lockdep ]; then
	skip "figures: not the kernel tests/guest/26-figures.txt was measured on ($(sed -n 's/^kernel //p' "$ff"), no lockdep); this is $(uname -r)"
else
	bad=$(awk 'NR == FNR { if ($1 == "proc") want[$1 " " $2 " " $3] = $4; next }
		{ k = $1 " " $2 " " $3; seen[k] = 1
		  if (!(k in want)) print k ": " $4 " here, not in the file"
		  else if (want[k] != $4) print k ": " $4 " here, " want[k] " in the file" }
		END { for (k in want) if (!(k in seen)) print k ": in the file, not measured" }' "$ff" "$T/figures")
	if [ -z "$bad" ]; then
		pass "figures: the $(grep -c . "$T/figures") /proc figures equal tests/guest/26-figures.txt's"
	else
		fail "figures: /proc differs from tests/guest/26-figures.txt (regenerate: scripts/doc-figures.sh --update RESULTS): $(echo "$bad" | tr '\n' ';')"
	fi
fi
nsx fig ipvsadm -C
# An IPv6 and a fwmark service (reference.md's examples, from these
# captures): /proc names their servers as maglev-sim does, a fwmark
# service's with port 0, and their digests are maglev-sim's.
nsx fig ipvsadm -A -t "[2001:db8::1]:80" -s maglev -b flag-2
nsx fig ipvsadm -a -t "[2001:db8::1]:80" -r "[2001:db8::a]:80" -m -w 1
nsx fig ipvsadm -a -t "[2001:db8::1]:80" -r "[2001:db8::b]:80" -m -w 2
nsx fig ipvsadm -A -f 7 -s maglev
nsx fig ipvsadm -a -f 7 -r 10.8.0.1 -m -w 1
nsx fig ipvsadm -a -f 7 -r 10.8.0.2 -m -w 1
wait_caught_up fig 20
fleet_capture fig-examples fig
printf '%s\n' 'ADD_NODE [2001:db8::a]:80 1' 'ADD_NODE [2001:db8::b]:80 2' >"$T/v6.sim"
printf '%s\n' 'ADD_NODE 10.8.0.1:0 1' 'ADD_NODE 10.8.0.2:0 1' >"$T/fwm.sim"
for x in "TCP [2001:db8::1]:80 v6" "FWM 7 fwm"; do
	svc=${x% *}
	{ cat "$T/${x##* }.sim"; echo DIGEST; } | "$MAGLEV_SIM" >"$T/sim.d"
	expect_eq "figures: $svc: /proc's digest is maglev-sim's" \
		"$(svc_field "$svc" digest fig)" "$(cat "$T/sim.d")"
done
check "figures: the fwmark service's servers are named with port 0" \
	grep -q '^  dest 10.8.0.1:0 weight 1 ' "$T/cap.fig-examples.fig"
nsx fig ipvsadm -C
ip netns del fig

# --- the mh build ------------------------------------------------------------------

MH_KO=${MAGLEV_DIR:-/maglev}/mh/ip_vs_mh.ko
rmmod ip_vs_maglev || fail "rmmod ip_vs_maglev before the mh build"
if [ ! -f "$MH_KO" ]; then
	fail "no $MH_KO (vm-test.sh builds it with MH_COMPAT=1 for this test)"
elif [ -d /sys/module/ip_vs_mh ] && [ ! -e /sys/module/ip_vs_mh/version ]; then
	# 7. The kernel's own mh, as after a failed DKMS build.
	nsx lb1 ipvsadm -A -t $VIP:80 -s mh -b mh-port || fail "in-tree mh: ipvsadm -A"
	cd "$T" || exit 1
	nsx lb1 maglev-fleet collect >"$T/intree.lb1"
	fleet_capture mh-intree lb2 >/dev/null
	expect_eq "the kernel's own ip_vs_mh: collect's module line" "$(cat "$T/intree.lb1")" \
		"module ip_vs_mh version - bits $(case $(uname -m) in *64) echo 64 ;; *) echo 32 ;; esac) proc missing"
	sed 's/^/# capture mh-intree lb1 | /' "$T/intree.lb1"
	rc=0
	maglev-fleet check lb1="$T/intree.lb1" lb2=lb1 >"$T/intree.out" || rc=$?
	sed 's/^/# maglev-fleet: /' "$T/intree.out"
	expect_eq "the kernel's own ip_vs_mh: maglev-fleet check exits 1" "$rc" 1
	check "the kernel's own ip_vs_mh: the check says the DKMS build may have failed" \
		grep -q '^lb1: no /proc/net/ip_vs_maglev (module ip_vs_mh, version -): a module without a version is loaded: the kernel.s own, another table (did the DKMS build fail' "$T/intree.out"
	nsx lb1 maglev-fleet prom >"$T/intree.prom"
	check "the kernel's own ip_vs_mh: prom exports proc_present 0" \
		grep -qx 'ip_vs_maglev_proc_present 0' "$T/intree.prom"
	cd / || exit 1
	nsx lb1 ipvsadm -C
	rmmod ip_vs_mh || fail "rmmod the kernel's ip_vs_mh"
	MOD=ip_vs_mh SCHED=mh PORTFLAG=mh-port
	mkdir -p "/lib/modules/$(uname -r)/updates"
	cp "$MH_KO" "/lib/modules/$(uname -r)/updates/"
	depmod "$(uname -r)"
	if modprobe ip_vs_mh && [ -e /sys/module/ip_vs_mh/version ]; then
		pass "mh build: modprobe ip_vs_mh loads the mh build (version $(cat /sys/module/ip_vs_mh/version))"
		procedures
	else
		fail "mh build: modprobe ip_vs_mh did not load the mh build"
	fi
else
	skip "mh build: this kernel's own mh is built in (the test kernels): the mh build cannot register its name here; Debian's kernels run it (the newest step)"
fi

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
