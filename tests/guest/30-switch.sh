#!/bin/sh
# Guest test 30: "ipvsadm -E" switches a live service's scheduler between
# maglev, rr and mh under traffic.
#
# A TCP service (NAT, flag-2, three real servers answering with their
# names, tcpfleet) holds 30 connections opened before the switches, and a
# client opens SWITCH_CONNS more over the switches (10 a second) while the
# service goes maglev -> rr -> maglev -> mh -> maglev -> rr -> mh -> maglev.
# Each switch is made by connprobe, which opens 20 connections the moment
# ipvsadm returns: none may be refused (rr, mh and maglev all have
# servers; maglev serves from its spare until its first table is built).
# The background connections may be refused only while an "ipvsadm -E"
# runs: IPVS unbinds the old scheduler, waits for a grace period with
# none, then binds the new one, and a SYN in that window gets ICMP port
# unreachable (ip_vs_leave()), whatever the schedulers. Counted, not
# timed with a slack: a refused connection's connect() came before the
# end of the "ipvsadm -E" that refused it (cause before effect, one
# clock), so each refusal belongs to the first switch that ended after it;
# in the order they were opened, each switch's refusals must form at most
# one run (every SYN of its window is refused), and none may come after
# the last switch. A refusal away from a switch, or a scheduler that
# refuses now and then, makes a second run for a switch. Then: every connection
# still live and answered by its first server, maglev never logged "no
# destination available", the final table and 30 new connections equal
# maglev-sim's, and after "ipvsadm -C" the module unloads.
# With the mh build (MH_COMPAT=1: ip_vs_mh.ko, registering "mh"), where
# the kernel's own mh is a module that can be unloaded (Debian's kernels):
# the same, switching our "mh" with rr and sh (mh -> rr -> mh -> sh -> mh),
# its table from /proc/net/ip_vs_maglev against maglev-sim, and ip_vs_mh
# unloads after. On the test kernels, whose mh is built in, that part is
# a SKIP (guest 23 checks that the mh build's load fails there).
# The debug kernel (KASAN, lockdep, kmemleak) runs it too.
#
# guest-timeout: 150
# debug-kernel: yes
# mh-compat: yes
. "${0%/*}/lib.sh"

V=$VIP4
C=10.9.255.253
NBG=${SWITCH_CONNS:-150}
for c in tcpfleet connprobe; do
	command -v $c >/dev/null 2>&1 || { fail "no $c in the guest"; finish; }
done

setup_net 3
warm_up
# Every refusal is seen as one (19 does the same).
sysctl -qw net.ipv4.icmp_ratelimit=0
pids=
for i in 1 2 3; do
	ip netns exec "rs$i" tcpfleet server "rs$i" 80 &
	pids="$pids $!"
done
_t=0
for i in 1 2 3; do
	until ip netns exec "rs$i" grep -q ':0050 .* 0A ' /proc/net/tcp6; do
		_t=$((_t + 1))
		[ $_t -lt 100 ] || { fail "rs$i does not listen"; break; }
		sleep 0.1
	done
done
mkfifo "$T/cmd" "$T/ans"
/usr/sbin/ip netns exec cl tcpfleet client $C $V <"$T/cmd" >"$T/ans" &
pids="$pids $!"
exec 4>"$T/cmd" 5<"$T/ans"

: >"$T/s"
for i in 1 2 3; do echo "ADD_NODE 10.1.$i.1:80 1" >>"$T/s"; done

# uptime: /proc/uptime's seconds (the clock of tcpfleet's OPENED column).
uptime_now() { read -r _u _ </proc/uptime; echo "$_u"; }

# switch SCHED PORT SEQUENCE...: from the service's scheduler to each of
# SEQUENCE in turn, by connprobe (20 connections at once after each
# ipvsadm -E), under the background connections of the client. Windows
# ("START END") go to $T/windows.
switches() {
	_port=$1
	shift
	for _to in "$@"; do
		_s=$(uptime_now)
		_r=$(connprobe -n /run/netns/cl -t 5000 20 $V "$_port" -- \
			ipvsadm -E -t $V:"$_port" -s "$_to" -b flag-2)
		_e=$(uptime_now)
		echo "$_s $_e" >>"$T/windows"
		# shellcheck disable=SC2086 # connprobe's words
		set -- $_r
		if [ "${2:-}" = 20 ] && [ "${4:-}" = 0 ] && [ "${6:-}" = 0 ]; then
			pass "switch to $_to: 20 connections right after ipvsadm -E returned, none refused"
		else
			fail "switch to $_to: right after ipvsadm -E: $_r"
		fi
		# The module's own record of the service: there while it
		# schedules (init_service), gone once it no longer does
		# (done_service); the kernel's rr, mh or sh have none.
		_want=0
		[ "$_to" = "$_home" ] && _want=1
		expect_eq "switch to $_to: $PROC lists the service only while $_home schedules it" \
			"$(awk -v s="TCP $V:$_port" '$1 == "service" && $2 " " $3 == s' $PROC 2>/dev/null | wc -l)" "$_want"
		sleep 1
	done
}

# run_switches LABEL SCHED...: the whole check with the scheduler names
# SCHED... (the first is the one the service starts and ends with).
run_switches() {
	_label=$1
	shift
	_home=$1
	: >"$T/windows"
	kmsg_mark "30 $_label"
	run ipvsadm -A -t $V:80 -s "$_home" -b flag-2
	for i in 1 2 3; do run ipvsadm -a -t $V:80 -r "10.1.$i.1:80" -m -w 1; done
	wait_caught_up
	cmd open 80 30 1
	expect_eq "$_label: 30 connections before the switches" "$ANS" \
		"ok live 30 reset 0 wrong 0 timeout 0 failed 0"
	# The background: NBG connections over NBG/10 s; the answer is read
	# after the switches.
	echo "open 80 $NBG $((NBG / 10))" >&4
	sleep 0.5
	shift
	switches 80 "$@" "$_home"
	read -r ANS <&5
	info "$_label: background opening: $ANS"
	cmd round 2 30
	cmd list "$T/list"
	# Refused: failed to open. Each belongs to the first switch that
	# ended after its connect(); per switch, at most one run of them in
	# the order of their connect().
	_out=$(sort -k7,7n "$T/list" | awk 'FILENAME == ARGV[1] { e[++n] = $2; next }
		{
			w = 0
			for (i = n; i >= 1; i--)
				if ($7 <= e[i])
					w = i
		}
		$5 == "failed" {
			f++
			t = t " " $7
			if (!w)
				after++
			else if (!(in_run && w == last) && ++runs[w] > 1)
				extra++
			in_run = 1
			last = w
			next
		}
		{ in_run = 0 }
		END { print f + 0, extra + 0, after + 0, t }' "$T/windows" -)
	# shellcheck disable=SC2086
	set -- $_out
	info "$_label: $1 of $((NBG + 30)) connections refused, over $(wc -l <"$T/windows") switches"
	expect_eq "$_label: refused connections: runs beyond one per ipvsadm -E, refused after the last" \
		"$2 $3" "0 0"
	[ "$2 $3" = "0 0" ] || { info "refused at$(echo "$_out" | cut -d' ' -f4-)"; info "windows: $(tr '\n' ';' <"$T/windows")"; }
	_nl=$(awk '$5 == "live"' "$T/list" | wc -l)
	_bad=$(awk '$5 != "live" && $5 != "failed"' "$T/list" | wc -l)
	expect_eq "$_label: connections reset, answered by another server or timed out" "$_bad" 0
	info "$_label: $_nl connections live after the switches"
	if ! _klog=$(kmsg_since "30 $_label"); then
		fail "$_label: the kernel log lost this part's mark (its ring wrapped): 'no destination available' cannot be looked for"
	elif echo "$_klog" | grep -q 'no destination available'; then
		fail "$_label: the kernel logged 'no destination available'"
		echo "$_klog" | grep 'no destination available' | head -n 3
	else
		pass "$_label: no 'no destination available' logged"
	fi
	check_sim "$_label: back to $_home" "TCP $V:80" "$T/s"
	cmd close
	cmd open 80 30 1
	cmd list "$T/list2"
	awk -v c=$C '{ print c, $2 }' "$T/list2" >"$T/keys"
	predict "$T/keys" "$T/s" 1 | awk '{ split($3, a, "."); print $2, "rs" a[3] }' >"$T/pred"
	_r=$(awk 'FILENAME == ARGV[1] { o[$1] = $2; next } { n++; if (o[$2] != $3) bad++ }
		END { print n + 0, bad + 0 }' "$T/pred" "$T/list2")
	expect_eq "$_label: new connections after the switches, answered by another server than maglev-sim's" \
		"$_r" "30 0"
	cmd close
	run ipvsadm -C
}

# --- the module, with the kernel's rr and mh --------------------------------------------
run_switches "maglev" maglev rr maglev mh maglev rr mh
check "ip_vs_maglev unloads after the switches" rmmod ip_vs_maglev

# --- the mh build ------------------------------------------------------------------
MH_KO=${MAGLEV_DIR:-/maglev}/mh/ip_vs_mh.ko
if grep -q '^ip_vs_mh ' /proc/modules; then
	if [ ! -f "$MH_KO" ]; then
		fail "no $MH_KO (vm-test.sh builds it with MH_COMPAT=1)"
	elif ! rmmod ip_vs_mh; then
		fail "the kernel's ip_vs_mh does not unload"
	elif ! out=$(insmod "$MH_KO" 2>&1); then
		fail "insmod the mh build: $out"
	else
		pass "the mh build loaded in place of the kernel's ip_vs_mh"
		run_switches "mh build" mh rr mh sh
		check "the mh build (ip_vs_mh) unloads after the switches" rmmod ip_vs_mh
	fi
else
	skip "mh build: the kernel's own mh is built in, so ip_vs_mh.ko cannot register 'mh' here (guest 23 checks that)"
fi

echo quit >&4
exec 4>&- 5<&-
# shellcheck disable=SC2086
kill $pids 2>/dev/null
wait 2>/dev/null
cleanup_net
finish
