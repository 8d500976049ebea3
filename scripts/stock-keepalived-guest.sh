#!/bin/sh
# Guest side of scripts/stock-keepalived.sh, run by guest-init.sh on
# Debian's stock 6.12 kernel, where the in-tree ip_vs_mh is a module, with
# our mh-compatible build (make MH_COMPAT=1) installed as
# /lib/modules/VER/updates/ip_vs_mh.ko and depmod run, as "make install"
# or the ip-vs-mh-maglev-dkms package leave it.  Nothing is loaded
# beforehand but ip_vs and veth: IPVS autoloads the scheduler "mh".
#
# Part 1, keepalived (Debian's package, unchanged), once for each line of
# /maglev/keepalived.runs ("ROOT NAME": the keepalived of this machine's
# release, in the initramfs itself, root "/", results "keepalived: ...";
# trixie's, chrooted into /sysroot/trixie, a root of trixie's libraries,
# results "keepalived trixie VERSION: ..."): a UDP virtual_server
# with lb_algo mh and mh-port, real servers 10.1.I.1:80 in namespaces rsI
# with TCP_CHECK against socat listeners and inhibit_on_failure.  Flows are
# UDP datagrams from namespace "cl" (udpflows); which real server each flow
# gets is read where its datagram arrives (a socat receiver per real
# server), and between phases IPVS's connections are left to expire (UDP
# timeout 2 s) so that the same flows are scheduled again. A reload adds
# mh-fallback (flags 0x18), and lb_algo maglev falls back to wlc.
# Part 2, kube-proxy's IPVS sequences replayed with ipvsadm (kube-proxy is
# not available here): graceful termination and a rolling update on a
# service with scheduler mh and flag-2 (0x10, what kube-proxy sets for mh).
# shellcheck disable=SC2317 # functions called through wait_until and check
. "${0%/*}/lib.sh"

V=$VIP4
S="UDP $V:80"
NADDR=10	# client addresses
NPORT=30	# source ports each: 300 flows
KA_CONF=$T/keepalived.conf
KA_LOG=$T/keepalived.log

# wait_until TEXT SECS CMD...: poll CMD every 0.2 s for up to SECS seconds.
wait_until() {
	_w=$1 _n=$(($2 * 5))
	shift 2
	while ! "$@"; do
		_n=$((_n - 1))
		if [ "$_n" -le 0 ]; then
			fail "$_w: not within the time limit"
			return 1
		fi
		sleep 0.2
	done
}

# caught_up: the service is listed and its table reflects the last change
# (pending 0 where /proc has the field, i.e. with asynchronous builds).
caught_up() {
	svc_listed "$S" 2>/dev/null || return 1
	_p=$(svc_field "$S" pending)
	[ -z "$_p" ] || [ "$_p" = 0 ]
}

# dest_is NAME WEIGHT: /proc lists dest NAME with WEIGHT, and is caught up.
dest_is() {
	svc_dests "$S" | grep -qx "$1 $2 [0-9]*" && caught_up
}

nr_dests_is() { [ "$(svc_field "$S" dests 2>/dev/null)" = "$1" ] && caught_up; }

no_conns() { [ -z "$(conns "$V" 80)" ]; }

# phase NAME: let the previous phase's connections expire, send the same
# flows again, and save "ADDR PORT DEST" per flow in $T/NAME.map, DEST being
# the real server whose UDP receiver got the flow's datagram (what IPVS
# chose, read where it arrived; a flow no receiver got is dropped). Its
# results are named NAME, after KP (set by ka_run).
KP=
phase() {
	wait_until "$KP$1: connections of the previous phase expire" 20 no_conns
	for _i in 1 2 3 4 5; do
		: >"$T/rs$_i.udp"
	done
	# shellcheck disable=SC2046 # one argument per address
	flows "$V" 80 1000 $NPORT $(cat "$T/addrs") >"$T/$1.flows" ||
		fail "$KP$1: udpflows could not send every flow"
	_nf=$(wc -l <"$T/$1.flows")
	_n=150
	while [ "$(cat "$T"/rs*.udp | grep -c 'received packet')" -lt "$_nf" ] &&
		[ "$_n" -gt 0 ]; do
		sleep 0.2
		_n=$((_n - 1))
	done
	for _i in 1 2 3 4 5; do
		awk -v d="10.1.$_i.1:80" '/received packet/ {
			n = split($NF, a, ":")
			print a[1], a[2], d }' "$T/rs$_i.udp"
	done | sort >"$T/$1.map"
	_nc=$(wc -l <"$T/$1.map")
	expect_eq "$KP$1: every one of the $_nf flows reached a real server (none dropped)" \
		"$_nc" "$_nf"
}

# moved A B: "MOVED_TOTAL MOVED_TO_NEW" between phase maps A and B, where
# NEW (optional third argument) is a real server absent from A.
moved() {
	awk -v new="${3:-}" 'NR == FNR { d[$1 " " $2] = $3; next }
		($1 " " $2) in d && d[$1 " " $2] != $3 {
			m++
			if ($3 == new)
				n++
		}
		END { print m + 0, n + 0 }' "$T/$1.map" "$T/$2.map"
}

# moved_from A B DEST: flows that moved between A and B and were not on
# DEST in A (the live servers' flows that moved).
moved_from_others() {
	awk -v dest="$3" 'NR == FNR { d[$1 " " $2] = $3; next }
		($1 " " $2) in d && d[$1 " " $2] != $3 && d[$1 " " $2] != dest {
			m++
		}
		END { print m + 0 }' "$T/$1.map" "$T/$2.map"
}

# on MAP DEST: flows on DEST in phase MAP.
on() { awk -v d="$2" '$3 == d { n++ } END { print n + 0 }' "$T/$1.map"; }

# sim_check TEXT SIMCMDS MAP: digest and slots equal maglev-sim's for
# SIMCMDS, and so does every flow's real server in phase MAP.
sim_check() {
	check_sim "$1" "$S" "$2"
	awk '{ print $1, $2 }' "$T/$3.map" >"$T/$3.keys"
	predict "$T/$3.keys" "$2" 1 >"$T/$3.pred"
	_bad=$(awk 'NR == FNR { p[$1 " " $2] = $3; next }
		p[$1 " " $2] != $3 { n++ } END { print n + 0 }' \
		"$T/$3.pred" "$T/$3.map")
	_n=$(wc -l <"$T/$3.map")
	if [ "$_bad" -eq 0 ] && [ "$_n" -gt 0 ]; then
		pass "$1: all $_n flows' real servers equal maglev-sim's LOOKUP_ADDR"
	else
		fail "$1: $_bad of $_n flows' real servers differ from maglev-sim's"
	fi
}

# in_range N LO HI
in_range() { [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }

# sim_moved A B: flows whose predicted server differs between phases A and
# B (maglev-sim's LOOKUP_ADDR for each phase's backend set).
sim_moved() {
	awk 'NR == FNR { d[$1 " " $2] = $3; next }
		($1 " " $2) in d && d[$1 " " $2] != $3 { m++ }
		END { print m + 0 }' "$T/$1.pred" "$T/$2.pred"
}

# listener I: a TCP listener on 10.1.I.1:80 in rsI for the health checker;
# unlisten I stops it (and every connection it forked).
listener() {
	ip netns exec "rs$1" socat TCP-LISTEN:80,bind="10.1.$1.1",fork,reuseaddr \
		/dev/null &
}
unlisten() {
	for _p in $(ip netns pids "rs$1"); do
		grep -q TCP-LISTEN "/proc/$_p/cmdline" 2>/dev/null && kill "$_p"
	done
}

# receiver I: the UDP receiver of real server I; socat -d -d logs
# "received packet with N bytes from AF=2 A.B.C.D:P" per datagram.
receiver() {
	: >"$T/rs$1.udp"
	ip netns exec "rs$1" socat -d -d -u UDP-RECV:80,bind="10.1.$1.1" \
		OPEN:/dev/null 2>>"$T/rs$1.udp" &
}

# ka_conf ALGO I...: keepalived.conf with the real servers 10.1.I.1:80;
# for lb_algo mh, the scheduler flags in KA_FLAGS (default mh-port), each
# on a line of its own after lb_algo (keepalived takes mh-port and
# mh-fallback only once the scheduler is mh).
ka_conf() {
	_algo=$1
	shift
	{
		echo 'global_defs {'
		echo '	router_id maglev-test'
		echo '}'
		echo "virtual_server $V 80 {"
		echo '	delay_loop 1'
		echo "	lb_algo $_algo"
		if [ "$_algo" = mh ]; then
			for _f in ${KA_FLAGS:-mh-port}; do
				echo "	$_f"
			done
		fi
		echo '	lb_kind NAT'
		echo '	protocol UDP'
		for _i in "$@"; do
			echo "	real_server 10.1.$_i.1 80 {"
			echo '		weight 1'
			echo '		inhibit_on_failure'
			echo '		TCP_CHECK {'
			echo '			connect_port 80'
			echo '			connect_timeout 2'
			echo '			retry 0'
			echo '		}'
			echo '	}'
		done
		echo '}'
	} >"$KA_CONF"
}

# keepalived logs through syslog: busybox syslogd writes it to $KA_LOG.
# KA_CMD: this run's keepalived (ka_run).
ka_start() {
	# shellcheck disable=SC2086 # the command and its arguments
	$KA_CMD --check --dont-fork --log-detail \
		--use-file "$KA_CONF" --pid /run/keepalived.pid \
		--checkers_pid /run/keepalived-check.pid >>"$KA_LOG.out" 2>&1 &
	KA_PID=$!
}

ka_stop() {
	kill "$KA_PID" 2>/dev/null
	_n=50
	while kill -0 "$KA_PID" 2>/dev/null && [ "$_n" -gt 0 ]; do
		sleep 0.2
		_n=$((_n - 1))
	done
	wait "$KA_PID" 2>/dev/null
}

# ka_log: what keepalived logged in this run (ka_run), not the runs before.
ka_log() { awk -v n="$KA_LOG0" 'NR > n' "$KA_LOG"; }

# flags_are FLAGS: /proc shows the service with FLAGS, and is caught up.
flags_are() { [ "$(svc_field "$S" flags 2>/dev/null)" = "$1" ] && caught_up; }

# sysroot ROOT: make the root of another release ready to chroot into:
# /proc, /sys, and the guest's /dev (syslogd's /dev/log), /tmp (the
# configuration) and /run (the pid files) bound into it.
sysroot() {
	mount -t proc proc "$1/proc" &&
		mount -t sysfs sysfs "$1/sys" &&
		mount -o bind /dev "$1/dev" &&
		mount -o bind /tmp "$1/tmp" &&
		mount -o bind /run "$1/run"
}

sysroot_umount() {
	for _m in run tmp dev sys proc; do
		umount "$1/$_m" 2>/dev/null
	done
}

# sim_cmds I...: maglev-sim commands for the real servers 10.1.I.1:80.
sim_cmds() {
	for _i in "$@"; do
		echo "ADD_NODE 10.1.$_i.1:80 1"
	done
}

# ka_run ROOT NAME: part 1 with the keepalived in ROOT ("/": the
# initramfs's own; another root: chrooted there), results named NAME. Each
# run leaves no service behind; a run in another root starts with no
# ip_vs_mh loaded, as the first does, so that IPVS autoloads ours again.
ka_run() {
	K=$2
	KA_CMD=keepalived
	# Phases are named "base: ..." in the first run, as they always
	# were, and after the keepalived in the others.
	KP=
	[ "$1" = / ] || KP="$K, "
	KA_LOG0=0
	[ -f "$KA_LOG" ] && KA_LOG0=$(wc -l <"$KA_LOG")
	if [ "$1" != / ]; then
		if grep -q '^ip_vs_mh ' /proc/modules; then
			check "$K: rmmod ip_vs_mh (ours), left by the run before" \
				rmmod ip_vs_mh
		fi
		check "$K: no ip_vs_mh is loaded before it starts" \
			sh -c '! grep -q "^ip_vs_mh " /proc/modules'
		if ! sysroot "$1"; then
			fail "$K: mount /proc, /sys and bind /dev, /tmp, /run into $1"
			return 1
		fi
		KA_CMD="chroot $1 /usr/sbin/keepalived"
		_v=$($KA_CMD --version 2>&1 | head -n 1)
		# shellcheck disable=SC2016 # expanded by sh -c
		check "$K: runs in its root: $_v" \
			sh -c 'echo "$1" | grep -q "^Keepalived v"' _ "$_v"
	else
		info "$K: $($KA_CMD --version 2>&1 | head -n 1)"
	fi

	# --- keepalived: lb_algo mh, mh-port ----------------------------------------
	ka_conf mh 1 2 3 4
	ka_start
	wait_until "$K creates $S with 4 real servers" 30 nr_dests_is 4
	ipvsadm -Ln
	ipvsadm -Ln | grep -E "^UDP +$V:80 " | sed 's/^/# /'
	check "$K: ipvsadm -Ln shows $S with scheduler mh" \
		sh -c "ipvsadm -Ln | grep -Eq '^UDP +$V:80 +mh( |\$)'"
	check "$K: IPVS autoloaded our ip_vs_mh (its /proc/net/ip_vs_maglev lists $S)" \
		svc_listed "$S"
	check "$K: the loaded ip_vs_mh is ours (updates/, /sys/module/ip_vs_mh/parameters/table_size)" \
		[ -r /sys/module/ip_vs_mh/parameters/table_size ]
	expect_eq "$K: $S has flags mh-port (0x10)" "$(svc_field "$S" flags)" 0x10
	check "$K: ipvsadm -Ln shows the flag as mh-port" \
		sh -c "ipvsadm -Ln | grep -Eq '^UDP +$V:80 +mh +\(mh-port\)'"
	sim_cmds 1 2 3 4 >"$T/s4"
	phase base
	sim_check "$K: 4 real servers" "$T/s4" base
	d_base=$(svc_field "$S" digest)
	for i in 1 2 3 4; do
		info "base: $(on base 10.1.$i.1:80) flows on 10.1.$i.1:80"
	done

	# Real server 2's listener goes away: TCP_CHECK fails, inhibit_on_failure
	# sets its weight to 0 instead of removing it.
	unlisten 2
	wait_until "$K: 10.1.2.1:80 fails its TCP_CHECK and gets weight 0" 30 \
		dest_is 10.1.2.1:80 0
	ka_log | grep -E 'TCP connection to \[10\.1\.2\.1\].* failed|(Disabling|Removing) service \[10\.1\.2\.1\]' |
		tail -n 2 | sed 's/^/# /'
	phase down
	r=$(on base 10.1.2.1:80)
	m=$(moved base down)
	o=$(moved_from_others base down 10.1.2.1:80)
	info "$K, rs2 down: ${m% *} of 300 flows moved (rs2 had $r), $o of the other servers' flows moved"
	expect_eq "$K, rs2 down: only rs2's flows moved" "${m% *}" "$r"
	expect_eq "$K, rs2 down: no other server's flow moved" "$o" 0
	expect_eq "$K, rs2 down: no flow on rs2" "$(on down 10.1.2.1:80)" 0
	{ cat "$T/s4"; echo "WEIGHT 10.1.2.1:80 0"; } >"$T/s4d"
	sim_check "$K, rs2 weight 0" "$T/s4d" down

	# The listener comes back: weight 1 again, the previous table exactly.
	listener 2
	wait_until "$K: 10.1.2.1:80 passes its TCP_CHECK and gets weight 1 again" 30 \
		dest_is 10.1.2.1:80 1
	phase up
	expect_eq "$K, rs2 back: the digest is the one from before" \
		"$(svc_field "$S" digest)" "$d_base"
	m=$(moved base up)
	info "$K, rs2 back: ${m% *} of 300 flows differ from the base phase"
	expect_eq "$K, rs2 back: every flow is on its base-phase server" "${m% *}" 0

	# Reload (SIGHUP) with a fifth real server.
	ka_conf mh 1 2 3 4 5
	kill -HUP "$KA_PID"
	wait_until "$K reload: $S gets the fifth real server" 30 nr_dests_is 5
	sim_cmds 1 2 3 4 5 >"$T/s5"
	phase five
	sim_check "$K reload: 5 real servers" "$T/s5" five
	m=$(moved base five 10.1.5.1:80)
	tot=${m% *} new=${m#* }
	info "$K reload +rs5: $tot of 300 flows moved ($((tot * 100 / 300))%, 1/5 = 20%), $new to rs5, $((tot - new)) between the 4 servers that stay"
	# 300 flows, p = 1/5: 5 sigma is about 35 flows.
	check "$K reload: about 1/5 of the flows moved ($tot of 300)" \
		in_range "$tot" 25 95
	check "$K reload: the moved flows went to rs5 but Maglev's small handover ($((tot - new)) <= 9)" \
		in_range $((tot - new)) 0 9

	# Reload with mh-fallback added: keepalived edits the service's flags
	# (IP_VS_SO_SET_EDIT: flag-1 0x08 beside flag-2 0x10); the table stays.
	d_five=$(svc_field "$S" digest)
	KA_FLAGS='mh-port mh-fallback'
	ka_conf mh 1 2 3 4 5
	KA_FLAGS=
	kill -HUP "$KA_PID"
	wait_until "$K reload: mh-fallback reaches $S" 30 flags_are 0x18
	expect_eq "$K reload: $S has flags mh-fallback and mh-port (0x18)" \
		"$(svc_field "$S" flags)" 0x18
	ipvsadm -Ln | grep -E "^UDP +$V:80 " | sed 's/^/# /'
	check "$K reload: ipvsadm -Ln shows the flags as mh-fallback,mh-port" \
		sh -c "ipvsadm -Ln | grep -Eq '^UDP +$V:80 +mh +\(mh-fallback,mh-port\)'"
	expect_eq "$K reload: with mh-fallback the table is the one from before" \
		"$(svc_field "$S" digest)" "$d_five"
	check "$K still runs" kill -0 "$KA_PID"
	ka_stop
	wait_until "$K removes $S when it stops" 20 sh -c "! ipvsadm -Ln | grep -q '^UDP'"

	# --- keepalived: lb_algo maglev is not a name it knows ------------------------
	ka_conf maglev 1 2 3
	ka_start
	wait_until "$K (lb_algo maglev) creates $V:80 anyway" 30 \
		sh -c "ipvsadm -Ln | grep -q '^UDP  *$V:80'"
	line=$(ka_log | grep "Invalid lvs_scheduler" | tail -n 1)
	info "$K log: $line"
	check "$K: lb_algo maglev logs \"Invalid lvs_scheduler 'maglev' - ignoring\"" \
		sh -c "echo \"\$1\" | grep -q \"Invalid lvs_scheduler 'maglev' - ignoring\"" _ "$line"
	check "$K: ... and creates the service with wlc" \
		sh -c "ipvsadm -Ln | grep -Eq '^UDP +$V:80 +wlc'"
	ka_stop
	run ipvsadm -C

	[ "$1" = / ] || sysroot_umount "$1"
	KP=
}

check "two CPUs" [ "$(grep -c ^processor /proc/cpuinfo)" -ge 2 ]
check "the in-tree ip_vs_mh is not loaded yet" \
	sh -c '! grep -q "^ip_vs_mh " /proc/modules'
check "modprobe resolves ip_vs_mh to updates/ (ours)" \
	sh -c "grep -q '^updates/ip_vs_mh.ko:' /lib/modules/$(uname -r)/modules.dep"

syslogd -n -O "$KA_LOG" &
SYSLOG_PID=$!
setup_net 5
client_addrs 4 $NADDR >/dev/null
warm_up
for i in 1 2 3 4 5; do
	listener $i
	receiver $i
done
receivers_up() {
	for _i in 1 2 3 4 5; do
		ip netns exec "rs$_i" grep -q ':0050 ' /proc/net/udp || return 1
	done
}
wait_until "the real servers' UDP receivers listen" 30 receivers_up
# The same flows are scheduled again in each phase once their connections
# expired: UDP timeout 2 s.
run ipvsadm --set 0 0 2

while read -r root name; do
	ka_run "$root" "$name" </dev/null
done </maglev/keepalived.runs

# --- kube-proxy's IPVS sequences, replayed with ipvsadm -----------------------
# kube-proxy is not available here; these are the operations its IPVS
# proxier performs (scheduler "mh" gets flag-2, 0x10, for port hashing).
info "kube-proxy is not available in the guest: replaying its IPVS operations with ipvsadm"
run ipvsadm -A -u "$V:80" -s mh -b flag-2
for i in 1 2 3; do
	run ipvsadm -a -u "$V:80" -r 10.1.$i.1:80 -m -w 1
done
sim_cmds 1 2 3 >"$T/k"
wait_until "kube-proxy: $S caught up" 20 nr_dests_is 3
expect_eq "kube-proxy: $S has flag-2 (0x10)" "$(svc_field "$S" flags)" 0x10
phase k0
sim_check "kube-proxy: 3 endpoints" "$T/k" k0

# same_size NAME A B: phases A and B had the same table size, as they must:
# the size is fixed (65537 by default) whatever the number of endpoints,
# so Maglev's bounds hold on every change (at most 1% of the flows moved
# on a delete of a drained endpoint, a handover of at most 9 of 300 flows
# between endpoints that stay). A size that changed fails.
same_size() {
	if [ "$2" = "$3" ]; then
		pass "$1: the table size stays $2"
		return 0
	fi
	fail "$1: the table size changed $2 -> $3"
	return 1
}

# Graceful termination of endpoint 3: weight 0, wait, delete.
run ipvsadm -e -u "$V:80" -r 10.1.3.1:80 -m -w 0
echo "WEIGHT 10.1.3.1:80 0" >>"$T/k"
wait_until "kube-proxy: weight 0 reaches the table" 20 dest_is 10.1.3.1:80 0
phase k1
sz_k1=$(svc_field "$S" size)
sim_check "kube-proxy graceful termination, weight 0" "$T/k" k1
expect_eq "kube-proxy graceful termination, weight 0: no live endpoint's flow moved" \
	"$(moved_from_others k0 k1 10.1.3.1:80)" 0
m=$(moved k0 k1)
expect_eq "kube-proxy graceful termination, weight 0: exactly the terminating endpoint's flows moved" \
	"${m% *}" "$(on k0 10.1.3.1:80)"
run ipvsadm -d -u "$V:80" -r 10.1.3.1:80
echo "REMOVE_NODE 10.1.3.1:80" >>"$T/k"
wait_until "kube-proxy: the delete reaches the table" 20 nr_dests_is 2
phase k2
sz_k2=$(svc_field "$S" size)
sim_check "kube-proxy graceful termination, deleted" "$T/k" k2
m=$(moved k1 k2)
info "kube-proxy graceful termination: deleting the drained endpoint moved ${m% *} of 300 flows (maglev-sim: $(sim_moved k1 k2))"
expect_eq "kube-proxy graceful termination, deleted: moved flows as maglev-sim predicts" \
	"${m% *}" "$(sim_moved k1 k2)"
same_size "kube-proxy graceful termination, deleted" "$sz_k1" "$sz_k2" &&
	check "kube-proxy graceful termination, deleted: at most 1% of the flows moved (${m% *})" \
		in_range "${m% *}" 0 3

# Rolling update: endpoint 4 added, old endpoint 1 to weight 0, deleted.
run ipvsadm -a -u "$V:80" -r 10.1.4.1:80 -m -w 1
echo "ADD_NODE 10.1.4.1:80 1" >>"$T/k"
wait_until "kube-proxy: the new endpoint reaches the table" 20 nr_dests_is 3
phase k3
sz_k3=$(svc_field "$S" size)
sim_check "kube-proxy rolling update, new endpoint" "$T/k" k3
m=$(moved k2 k3 10.1.4.1:80)
info "kube-proxy rolling update: adding endpoint 4 moved ${m% *} of 300 flows, ${m#* } to it"
expect_eq "kube-proxy rolling update, new endpoint: moved flows as maglev-sim predicts" \
	"${m% *}" "$(sim_moved k2 k3)"
same_size "kube-proxy rolling update, new endpoint" "$sz_k2" "$sz_k3" &&
	check "kube-proxy rolling update, new endpoint: the moved flows went to it but Maglev's small handover ($((${m% *} - ${m#* })) <= 9)" \
		in_range $((${m% *} - ${m#* })) 0 9
run ipvsadm -e -u "$V:80" -r 10.1.1.1:80 -m -w 0
echo "WEIGHT 10.1.1.1:80 0" >>"$T/k"
wait_until "kube-proxy: the old endpoint's weight 0 reaches the table" 20 \
	dest_is 10.1.1.1:80 0
phase k4
sz_k4=$(svc_field "$S" size)
sim_check "kube-proxy rolling update, old endpoint weight 0" "$T/k" k4
expect_eq "kube-proxy rolling update, old weight 0: no live endpoint's flow moved" \
	"$(moved_from_others k3 k4 10.1.1.1:80)" 0
run ipvsadm -d -u "$V:80" -r 10.1.1.1:80
echo "REMOVE_NODE 10.1.1.1:80" >>"$T/k"
wait_until "kube-proxy: deleting the old endpoint reaches the table" 20 nr_dests_is 2
phase k5
sz_k5=$(svc_field "$S" size)
sim_check "kube-proxy rolling update, old endpoint deleted" "$T/k" k5
m=$(moved k4 k5)
info "kube-proxy rolling update: deleting the drained endpoint moved ${m% *} of 300 flows (maglev-sim: $(sim_moved k4 k5))"
expect_eq "kube-proxy rolling update, old deleted: moved flows as maglev-sim predicts" \
	"${m% *}" "$(sim_moved k4 k5)"
same_size "kube-proxy rolling update, old deleted" "$sz_k4" "$sz_k5" &&
	check "kube-proxy rolling update, old deleted: at most 1% of the flows moved (${m% *})" \
		in_range "${m% *}" 0 3
run ipvsadm -C

check "rmmod ip_vs_mh (ours)" rmmod ip_vs_mh

# --- switching over from the in-tree ip_vs_mh (the README's steps) -----------
intree=/lib/modules/$(uname -r)/kernel/net/netfilter/ipvs/ip_vs_mh.ko
check "switch-over: the in-tree ip_vs_mh loads" insmod "$intree"
run ipvsadm -A -u "$V:80" -s mh
check "switch-over: with the in-tree ip_vs_mh serving mh there is no $PROC" \
	[ ! -e "$PROC" ]
check "switch-over: rmmod ip_vs_mh is refused while a service uses mh" \
	sh -c '! rmmod ip_vs_mh 2>/dev/null'
run ipvsadm -D -u "$V:80"
check "switch-over: rmmod ip_vs_mh once no service uses mh" rmmod ip_vs_mh
check "switch-over: modprobe ip_vs_mh now loads ours (updates/)" modprobe ip_vs_mh
check "switch-over: ... $PROC is back" [ -e "$PROC" ]
run ipvsadm -A -u "$V:80" -s mh
check "switch-over: ... and lists the mh service" svc_listed "$S"
run ipvsadm -C
check "switch-over: rmmod ip_vs_mh (ours)" rmmod ip_vs_mh
for i in 1 2 3 4 5; do
	# shellcheck disable=SC2046 # one argument per process
	kill $(ip netns pids "rs$i") 2>/dev/null
done
kill "$SYSLOG_PID"
cleanup_net
finish
