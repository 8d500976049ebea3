# shellcheck shell=sh
# Helpers for the guest tests in this directory (busybox sh). Source it:
#	. "${0%/*}/lib.sh"
#
# Environment from scripts/guest-init.sh: MAGLEV_KO (the module, already
# loaded), MAGLEV_SIM (maglev-sim), MAGLEV_DIR. Every check prints one
# "PASS: text" or "FAIL: text" line, or "SKIP: text" for one that cannot
# run on this kernel (counted and reported by make check, not a failure);
# a test ends with finish, which exits 1 if any check failed, also in a
# subshell.

MAGLEV_KO=${MAGLEV_KO:-/maglev/ip_vs_maglev.ko}
MAGLEV_SIM=${MAGLEV_SIM:-/maglev/maglev-sim}
PROC=/proc/net/ip_vs_maglev
# shellcheck disable=SC2034 # used by the tests
PARAMS=/sys/module/ip_vs_maglev/parameters
# The namespace's sysctls maglev_table_size, maglev_holdoff_ms and
# maglev_hash_key. /proc/sys/net follows the reading task's network
# namespace: use ns_sysctl to reach another namespace's.
# shellcheck disable=SC2034 # used by the tests
SYSCTL=/proc/sys/net/ipv4/vs
# The default client hash key (all zero: public).
# shellcheck disable=SC2034 # used by the tests
ZERO_KEY=00000000000000000000000000000000
NFAIL=0
T=$(mktemp -d /tmp/mgtest.XXXXXX)

# busybox sh runs its own applets before anything on PATH; the tests need
# iproute2's ip (netns, veth, -batch).
ip() { /usr/sbin/ip "$@"; }

pass() { echo "PASS: $*"; }
# A failure in a subshell ($(...), a pipeline) counts too: $T/failed.
fail() { echo "FAIL: $*"; NFAIL=$((NFAIL + 1)); : >>"$T/failed"; }
skip() { echo "SKIP: $*"; }
info() { echo "# $*"; }

# check TEXT CMD...: PASS if CMD succeeds.
check() {
	_what=$1
	shift
	if "$@"; then pass "$_what"; else fail "$_what"; fi
}

# expect_eq TEXT GOT WANT
expect_eq() {
	if [ "$2" = "$3" ]; then
		pass "$1 ($2)"
	else
		fail "$1: got '$2', want '$3'"
	fi
}

# finish: the end of a test. It says so ("@@ FINISH": a test that exits
# any other way, early or on a shell error, fails in scripts/results.awk)
# and exits 1 if any check failed.
finish() {
	echo "@@ FINISH"
	[ "$NFAIL" -eq 0 ] && [ ! -e "$T/failed" ]
	exit
}

# run CMD...: run a command that must succeed, FAIL (with its output) if not.
run() {
	if ! _out=$("$@" 2>&1); then
		fail "$*: $_out"
		return 1
	fi
}

# --- /proc/net/ip_vs_maglev ------------------------------------------------
#
# Tables are built asynchronously: after an ipvsadm edit or a parameter
# write, a service shows "pending 1" until the table reflecting it is
# published. svc_field, svc_dests, svc_listed and flows first wait for that
# (wait_caught_up); svc_field_now reads without waiting.

# wait_caught_up [NETNS] [SECONDS]: wait until every maglev service of
# NETNS (default: this one) shows pending 0; FAIL and return 1 after
# SECONDS (default 60, or $CATCHUP_TIMEOUT), or at once if a service line
# has no pending field (a module that cannot say is not caught up). The
# FAIL goes to stderr, so that it is seen and counted when the caller is
# inside $(...), as svc_field's callers are.
wait_caught_up() {
	_wn=$(( ${2:-${CATCHUP_TIMEOUT:-60}} * 20 ))
	while :; do
		# shellcheck disable=SC2016 # an awk program
		_wc=$(in_ns "${1:-}" awk '$1 == "service" { p = ""
				for (i = 4; i < NF; i += 2)
					if ($i == "pending")
						p = $(i + 1)
				if (p == "")
					m++
				else if (p != 0)
					n++
			} END { print (m ? "missing" : n + 0) }' $PROC)
		case $_wc in
		0) return 0 ;;
		missing)
			fail "services of netns '${1:-}' without a pending field in $PROC" >&2
			in_ns "${1:-}" grep '^service' $PROC >&2
			return 1 ;;
		esac
		_wn=$((_wn - 1))
		if [ "$_wn" -le 0 ]; then
			fail "services of netns '${1:-}' not caught up after ${2:-${CATCHUP_TIMEOUT:-60}}s" >&2
			in_ns "${1:-}" grep '^service' $PROC >&2
			return 1
		fi
		sleep 0.05
	done
}

# svc_field SERVICE KEY [NETNS]: value of KEY on the service line of SERVICE
# ("TCP 10.0.0.1:80", "FWM 42") once caught up. Empty if the service is not
# listed.
svc_field() {
	wait_caught_up "${3:-}"
	svc_field_now "$@"
}

# svc_field_now SERVICE KEY [NETNS]: as svc_field, without waiting.
svc_field_now() {
	in_ns "${3:-}" cat $PROC | awk -v s="$1" -v k="$2" '
		$1 == "service" && $2 " " $3 == s {
			for (i = 4; i < NF; i += 2)
				if ($i == k)
					print $(i + 1)
		}'
}

# svc_dests SERVICE [NETNS]: "NAME WEIGHT SLOTS" per dest of SERVICE.
svc_dests() {
	wait_caught_up "${2:-}"
	in_ns "${2:-}" cat $PROC | awk -v s="$1" '
		$1 == "service" { on = ($2 " " $3 == s); next }
		on && $1 == "dest" { print $2, $4, $6 }'
}

# svc_listed SERVICE [NETNS]: true if SERVICE is in the namespace's /proc.
svc_listed() {
	wait_caught_up "${2:-}"
	in_ns "${2:-}" cat $PROC |
		awk -v s="$1" '$1 == "service" && $2 " " $3 == s { f = 1 }
			END { exit !f }'
}

# in_ns NETNS CMD...: run CMD in NETNS, or here if NETNS is empty.
in_ns() {
	_ns=$1
	shift
	if [ -n "$_ns" ]; then
		ip netns exec "$_ns" "$@"
	else
		"$@"
	fi
}

# ns_sysctl NETNS NAME [VALUE]: print the sysctl net.ipv4.vs.NAME of NETNS
# (empty: this one), or write VALUE to it (false if refused).
ns_sysctl() {
	if [ $# -ge 3 ]; then
		# shellcheck disable=SC2016 # expanded by the inner sh
		in_ns "$1" sh -c 'echo "$1" >"/proc/sys/net/ipv4/vs/$2"' sh \
			"$3" "$2" 2>/dev/null
	else
		in_ns "$1" cat "/proc/sys/net/ipv4/vs/$2"
	fi
}

# --- maglev-sim --------------------------------------------------------------

# key_fp KEY: maglev-sim's fingerprint of the hash key KEY (32 hex digits),
# 8 hex digits as /proc shows it; empty if maglev-sim cannot say.
key_fp() {
	printf 'KEY %s\nFINGERPRINT\n' "$1" | "$MAGLEV_SIM" 2>/dev/null |
		awk 'length($0) == 8 && /^[0-9a-f]+$/ { print; exit }'
}

# random_key: 32 hex digits from /dev/urandom.
random_key() {
	od -An -tx1 -N16 /dev/urandom | tr -d ' \n'
}

# sim FILE: run maglev-sim on the commands in FILE (stderr to stdout).
sim() {
	"$MAGLEV_SIM" <"$1" 2>&1
}

# check_sim TEXT SERVICE CMDFILE: the digest and the slot counts of SERVICE
# in /proc equal maglev-sim's for the commands in CMDFILE (which must end
# with a table matching SERVICE; DIGEST and COUNTS are appended here).
check_sim() {
	cp "$3" "$T/sim.in"
	printf 'DIGEST\nCOUNTS\n' >>"$T/sim.in"
	sim "$T/sim.in" >"$T/sim.out"
	_sd=$(sed -n 1p "$T/sim.out")
	_kd=$(svc_field "$2" digest)
	if [ -n "$_kd" ] && [ "$_kd" = "$_sd" ]; then
		pass "$1: digest $_kd equals maglev-sim's"
	else
		fail "$1: digest '$_kd' in /proc, maglev-sim says '$_sd'"
		cat "$T/sim.out"
		cat $PROC
	fi
	sed 1d "$T/sim.out" >"$T/sim.counts"
	svc_dests "$2" | awk '{ print $1, $3 }' >"$T/k.counts"
	if cmp -s "$T/sim.counts" "$T/k.counts"; then
		pass "$1: slot counts equal maglev-sim's"
	else
		fail "$1: slot counts differ from maglev-sim's"
		diff "$T/sim.counts" "$T/k.counts"
	fi
}

# --- network -----------------------------------------------------------------
#
# setup_net NRS: the guest's root namespace is the director. Namespace "cl"
# is the client, joined by veth c0 (director: 10.9.255.254/16, fd09::fe/64)
# / c1 (clients from client_addrs: 10.9.0.1.., fd09::1..). Namespaces rs1..rsNRS are real servers
# joined by veth rIa / rIb: director 10.1.I.254, fd01:I::fe; server
# 10.1.I.1, fd01:I::1, with the VIPs 10.0.0.1 and fd00::1 on lo for direct
# routing. The director has the VIPs on lo too.

VIP4=10.0.0.1
VIP6=fd00::1

setup_net() {
	_nrs=$1
	sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	sysctl -qw net.ipv4.vs.conntrack=0 2>/dev/null
	# One "ip -batch" per namespace: on the debug kernel every process
	# started costs a quarter of a second.
	ip netns add cl
	_i=1
	while [ "$_i" -le "$_nrs" ]; do
		ip netns add "rs$_i"
		_i=$((_i + 1))
	done
	{
		echo "addr add $VIP4/32 dev lo"
		echo "addr add $VIP6/128 dev lo nodad"
		echo "link add c0 type veth peer name c1 netns cl"
		echo "addr add 10.9.255.254/16 dev c0"
		echo "addr add fd09::fe/64 dev c0 nodad"
		echo "link set c0 up"
		_i=1
		while [ "$_i" -le "$_nrs" ]; do
			echo "link add r${_i}a type veth peer name r${_i}b netns rs$_i"
			echo "addr add 10.1.$_i.254/24 dev r${_i}a"
			echo "addr add fd01:$_i::fe/64 dev r${_i}a nodad"
			echo "link set r${_i}a up"
			_i=$((_i + 1))
		done
	} | ip -batch - || fail "setup_net: the director's links"
	ip -n cl -batch - <<-EOF || fail "setup_net: namespace cl"
		link set lo up
		link set c1 up
		addr add 10.9.255.253/16 dev c1
		addr add fd09::fd/64 dev c1 nodad
		route add default via 10.9.255.254
		route add ::/0 via fd09::fe
	EOF
	_i=1
	while [ "$_i" -le "$_nrs" ]; do
		ip -n "rs$_i" -batch - <<-EOF || fail "setup_net: namespace rs$_i"
			link set lo up
			addr add $VIP4/32 dev lo
			addr add $VIP6/128 dev lo nodad
			addr add 10.1.$_i.1/24 dev r${_i}b
			addr add fd01:$_i::1/64 dev r${_i}b nodad
			link set r${_i}b up
			route add default via 10.1.$_i.254
			route add ::/0 via fd01:$_i::fe
		EOF
		_i=$((_i + 1))
	done
}

# udp_service3 SIMCMDS: UDP service $VIP4:80 with flag-2 and the real
# servers 10.1.1.1:80 .. 10.1.3.1:80 (NAT, weight 1); the maglev-sim
# commands for the same backends go to SIMCMDS.
udp_service3() {
	run ipvsadm -A -u $VIP4:80 -s maglev -b flag-2
	: >"$1"
	for _i in 1 2 3; do
		run ipvsadm -a -u $VIP4:80 -r "10.1.$_i.1:80" -m -w 1
		echo "ADD_NODE 10.1.$_i.1:80 1" >>"$1"
	done
}

# client_addrs FAMILY N [FIRST]: add N client addresses (from number FIRST,
# default 1) in "cl", print them.
client_addrs() {
	awk -v fam="$1" -v n="$2" -v first="${3:-1}" 'BEGIN {
		for (i = first; i < first + n; i++)
			if (fam == 6)
				printf "fd09::%x\n", i
			else
				printf "10.9.%d.%d\n", int(i / 250), i % 250 + 1
	}' >"$T/addrs"
	awk -v fam="$1" '{
		if (fam == 6)
			print "addr add " $1 "/64 dev c1 nodad"
		else
			print "addr add " $1 "/16 dev c1"
	}' "$T/addrs" | ip -n cl -batch -
	cat "$T/addrs"
}

# warm_up: resolve the neighbours on every link before the flows start, so
# that no datagram waits in (or overflows) an unresolved neighbour queue.
warm_up() {
	ip netns exec cl ping -c 1 -W 2 10.9.255.254 >/dev/null 2>&1
	ip netns exec cl ping6 -c 1 -W 2 fd09::fe >/dev/null 2>&1
	for _ns in $(ip netns list | awk '$1 ~ /^rs/ { print $1 }'); do
		_i=${_ns#rs}
		ping -c 1 -W 2 "10.1.$_i.1" >/dev/null 2>&1
		ping6 -c 1 -W 2 "fd01:$_i::1" >/dev/null 2>&1
	done
}

# flows VIP PORT FIRST NR ADDR...: send one UDP datagram from each ADDR and
# source port FIRST..FIRST+NR-1 in "cl" to VIP:PORT, print "ADDR PORT" per
# flow sent. Uses udpflows when the initramfs has it, socat otherwise.
# Waits for the tables to catch up first, unless NOWAIT=1.
flows() {
	[ "${NOWAIT:-0}" = 1 ] || wait_caught_up >&2
	_vip=$1 _port=$2 _first=$3 _nr=$4
	shift 4
	if command -v udpflows >/dev/null 2>&1; then
		ip netns exec cl udpflows "$_vip" "$_port" "$_first" "$_nr" "$@"
		return
	fi
	case $_vip in
	*:*) _fam=6 _dst="[$_vip]" ;;
	*) _fam=4 _dst=$_vip ;;
	esac
	for _a in "$@"; do
		case $_a in *:*) _b="[$_a]" ;; *) _b=$_a ;; esac
		_p=$_first
		while [ "$_p" -lt $((_first + _nr)) ]; do
			echo x | ip netns exec cl socat -u - \
				"UDP$_fam-SENDTO:$_dst:$_port,bind=$_b:$_p" &&
				echo "$_a $_p"
			_p=$((_p + 1))
		done
	done
}

# have_udpflows: true if flows can send thousands of flows quickly.
have_udpflows() { command -v udpflows >/dev/null 2>&1; }

# conns VIP PORT [NETNS]: "CLIENT_ADDR CLIENT_PORT DEST" per IPVS
# connection to VIP:PORT (DEST as "A.B.C.D:port" or "[v6]:port"), from
# ipvsadm -Lcn in NETNS (default: this one).
conns() {
	case $1 in *:*) _v="[$1]:$2" ;; *) _v="$1:$2" ;; esac
	in_ns "${3:-}" ipvsadm -Lcn | awk -v v="$_v" '
		$5 == v {
			c = $4
			n = split(c, a, ":")
			port = a[n]
			addr = substr(c, 1, length(c) - length(port) - 1)
			gsub(/^\[|\]$/, "", addr)
			print addr, port, $6
		}'
}

# conns_of FLOWS VIP PORT [NETNS]: conns' lines of the flows in FLOWS
# ("ADDR PORT" lines), sorted. /proc/net/ip_vs_conn resumes each read() at
# a position counted over the whole connection table, every namespace's:
# a connection that expires meanwhile (a load's, a deleted namespace's)
# makes the reader skip live ones. So while flows are missing, up to four
# more listings 1 s apart are added (their union); a connection that does
# not exist is missing from all of them, and a flow with two connections
# still gives two lines.
conns_of() {
	: >"$T/conns_of"
	_try=0
	while :; do
		conns "$2" "$3" "${4:-}" |
			awk 'NR == FNR { f[$1 " " $2] = 1; next }
				($1 " " $2) in f' "$1" - >>"$T/conns_of"
		sort -u -o "$T/conns_of" "$T/conns_of"
		_nc=$(awk '{ print $1, $2 }' "$T/conns_of" | sort -u | wc -l)
		if [ "$_nc" -ge "$(wc -l <"$1")" ] || [ $_try -ge 4 ]; then
			break
		fi
		_try=$((_try + 1))
		sleep 1
	done
	cat "$T/conns_of"
}

# predict FLOWS SIMCMDS PORTS: maglev-sim's owner for each "ADDR PORT" line
# of FLOWS, given the backend commands in SIMCMDS; with PORTS=1 the port is
# part of the key (flag-2). Prints "ADDR PORT OWNER".
predict() {
	cp "$2" "$T/pred.in"
	awk -v ports="$3" '{
		a = $1
		if (ports == 1) {
			if (a ~ /:/)
				a = "[" a "]"
			a = a ":" $2
		}
		print "LOOKUP_ADDR " a
	}' "$1" >>"$T/pred.in"
	sim "$T/pred.in" >"$T/pred.out"
	awk 'NR == FNR { o[NR] = $1; next } { print $1, $2, o[FNR] }' \
		"$T/pred.out" "$1"
}

# compare_choices TEXT FLOWS PREDICTED VIP PORT [NETNS]: every flow in
# FLOWS has an IPVS connection (in NETNS, default this one) to the
# destination PREDICTED says ("ADDR PORT OWNER"). The flows' connections
# (conns_of) are left in $T/conns.
compare_choices() {
	conns_of "$2" "$4" "$5" "${6:-}" >"$T/conns"
	sort "$3" >"$T/pred.sorted"
	_nf=$(wc -l <"$2")
	_nc=$(wc -l <"$T/conns")
	_bad=$(awk 'NR == FNR { p[$1 " " $2] = $3; next }
		($1 " " $2) in p && p[$1 " " $2] != $3 { n++ }
		END { print n + 0 }' "$T/pred.sorted" "$T/conns")
	expect_eq "$1: every flow got a connection" "$_nc" "$_nf"
	if [ "$_bad" -eq 0 ] && [ "$_nf" -gt 0 ]; then
		pass "$1: all $_nf choices equal maglev-sim's LOOKUP_ADDR"
	else
		fail "$1: $_bad of $_nf choices differ from maglev-sim's"
		awk 'NR == FNR { p[$1 " " $2] = $3; next }
			($1 " " $2) in p && p[$1 " " $2] != $3 {
				print "  " $0 " predicted " p[$1 " " $2]
			}' "$T/pred.sorted" "$T/conns" | head -n 5
	fi
}

# check_shares TEXT SERVICE CONNS [SIM]: per-dest connection counts in
# CONNS ("ADDR PORT DEST") are within 5 sigma of the slot shares in /proc
# or, with SIM (maglev-sim commands: ADD_NODE, WEIGHT, REMOVE_NODE), of
# the weights the test gave, which the table is to follow (binomial;
# busybox awk has no sqrt, so squares are compared). It fails on no flows
# or no dest with a share, on a dest with no share (or none listed) that
# got more than 5 flows, and on too few flows to tell: each dest with a
# share must expect more than 5 sigma, so that a dest that got no flow is
# outside its band (30 flows on 3 equal dests are too few: 10 +- 12.9).
check_shares() {
	if [ -n "${4:-}" ]; then
		awk '$1 == "ADD_NODE" || $1 == "WEIGHT" { w[$2] = $3 }
			$1 == "REMOVE_NODE" { delete w[$2] }
			END { for (d in w) print d, 0, w[d] }' "$4" >"$T/shares"
		_of=weights
	else
		svc_dests "$2" >"$T/shares"
		_of="slot shares"
	fi
	_res=$(awk 'FILENAME == ARGV[1] { s[$1] = $3; tot += $3; next }
		{ c[$3]++; n++; if (!($3 in s)) s[$3] = 0 }
		END {
			if (!tot || !n) {
				print "no flows or no share: " n + 0 " flows, total share " tot + 0 " BAD"
				exit
			}
			bad = 0
			for (d in s) {
				p = s[d] / tot
				e = n * p
				var = n * p * (1 - p)
				if (var < 1)
					var = 1
				dev = c[d] - e
				printf "%s=%d/%.0f ", d, c[d], e
				if (dev * dev > 25 * var)
					bad = 1
				if (p > 0 && e * e <= 25 * var) {
					printf "(too few flows: %d, the band of %s includes 0) ", n, d
					bad = 1
				}
			}
			print (bad ? "BAD" : "OK")
		}' "$T/shares" "$3")
	case $_res in
	*OK) pass "$1: flows per dest match the $_of ($_res)" ;;
	*) fail "$1: flows per dest do not match the $_of ($_res)" ;;
	esac
}

# kmsg_mark NAME: a line in the kernel log, for kmsg_since NAME.
kmsg_mark() { echo "maglev-test: mark $1" >/dev/kmsg; }

# kmsg_since NAME: the kernel log from kmsg_mark NAME on; status 1 when
# the mark is no longer in the ring (it wrapped): then nothing after it
# can be told absent. (The host judges kernel reports from the console,
# which keeps everything; this is for a test's own messages.)
kmsg_since() {
	dmesg >"$T/kmsg"
	grep -q "maglev-test: mark $1\$" "$T/kmsg" || return 1
	sed -n "/maglev-test: mark $1\$/,\$p" "$T/kmsg"
}

cleanup_net() {
	ipvsadm -C 2>/dev/null
	for _ns in $(ip netns list 2>/dev/null | awk '{ print $1 }'); do
		ip netns del "$_ns"
	done
}

# --- stress and scale tests (13-15): helpers prefixed stress_ ---------------
#
# They run on the module as it is: "pending" on the service lines (builds
# asynchronous) is used when present and not required.

STRESS_SECONDS=${STRESS_SECONDS:-20}

# stress_has_pending [NETNS]: true if /proc's service lines carry "pending"
# (the module builds tables asynchronously); needs one maglev service.
stress_has_pending() {
	in_ns "${1:-}" cat $PROC | grep -q '^service .* pending [0-9]'
}

# stress_wait_caught_up [NETNS] [SECONDS]: wait until every maglev service
# of the namespace shows "pending 0"; false at once if a service line has
# no pending field, and after SECONDS (default 60) with services still
# pending.
stress_wait_caught_up() {
	_n=$((${2:-60} * 10))
	while :; do
		_st=$(in_ns "${1:-}" cat $PROC |
			awk '$1 == "service" { p = ""
				for (i = 4; i < NF; i += 2)
					if ($i == "pending")
						p = $(i + 1)
				if (p == "")
					m = 1
				else if (p != 0)
					f = 1
			} END { print (m ? "missing" : (f ? "pending" : "done")) }')
		case $_st in
		done) return 0 ;;
		missing) return 1 ;;
		esac
		_n=$((_n - 1))
		[ "$_n" -gt 0 ] || return 1
		sleep 0.1
	done
}

# stress_now: seconds since the epoch.
stress_now() { date +%s; }

# stress_pick VAR WORD...: set VAR to one of the words, at random (no
# subshell: forks are what costs most under TCG).
stress_pick() {
	_pv=$1
	shift
	# shellcheck disable=SC3028 # busybox ash has $RANDOM
	shift $((RANDOM % $#))
	eval "$_pv=\$1"
}

# stress_count NAME N: add N to the counter NAME (a file under $T, so that
# background loops can count; each adds a line, so they never race).
stress_count() { echo "$2" >>"$T/cnt.$1"; }

# stress_get NAME: the counter NAME.
stress_get() {
	if [ -f "$T/cnt.$1" ]; then
		awk '{ n += $1 } END { print n + 0 }' "$T/cnt.$1"
	else
		echo 0
	fi
}

# stress_proc_vs_ipvsadm TEXT [NETNS]: the maglev services and their dests
# in /proc equal those of "ipvsadm -Ln" (names; weights up to 65535 too,
# since /proc shows the weight a table was built with).
stress_proc_vs_ipvsadm() {
	in_ns "${2:-}" ipvsadm -Ln | awk '
		/^(TCP|UDP|SCTP|FWM) / {
			on = ($3 == "maglev" || $4 == "maglev")
			if (!on)
				next
			p = $1
			if (p == "FWM" && $3 == "IPv6")
				p = "FWM6"
			s = p " " $2
			print s
			next
		}
		on && $1 == "->" && $2 != "RemoteAddress:Port" {
			w = ($4 <= 65535) ? $4 : "big"
			print s, $2, w
		}' | sort >"$T/pv.ipvsadm"
	in_ns "${2:-}" cat $PROC | awk '
		$1 == "service" { s = $2 " " $3; print s }
		$1 == "dest" {
			w = ($4 <= 65535) ? $4 : "big"
			print s, $2, w
		}' | sort >"$T/pv.proc"
	if cmp -s "$T/pv.ipvsadm" "$T/pv.proc"; then
		pass "$1: /proc lists the services and dests of ipvsadm -Ln ($(grep -c -v ' .* ' "$T/pv.proc") services, $(grep -c ' .* ' "$T/pv.proc") dests)"
	else
		fail "$1: /proc and ipvsadm -Ln differ"
		diff "$T/pv.ipvsadm" "$T/pv.proc" | head -n 20
	fi
}

# stress_is_valid_size N: true if N is a table size the sysctl accepts:
# a prime in 251..5000011 (maglev_check_size()).
stress_is_valid_size() {
	awk -v n="$1" 'BEGIN {
		if (n !~ /^[0-9]+$/ || n < 251 || n > 5000011)
			exit 1
		for (d = 2; d * d <= n; d++)
			if (n % d == 0)
				exit 1
		exit 0
	}'
}

# --- memory and service batches (tests 14, 15) ---------------------------

# mem_kernel: kB of kernel objects in use: slab objects (/proc/slabinfo,
# active objects times their size, so that slab pages kept after a free do
# not count) plus vmalloc, after waiting a grace period so that freed tables
# are back. Whole-page counters (SUnreclaim, MemFree) move by megabytes
# with cached slab pages and the per-CPU page lists.
mem_kernel() {
	sleep 1
	{
		awk 'FNR > 2 { b += $2 * $4 } END { print int(b / 1024) }' \
			/proc/slabinfo
		awk '$1 == "VmallocUsed:" { print $2 }' /proc/meminfo
	} | awk '{ n += $1 } END { print n }'
}

# mem_settle: mem_kernel once the kernel's memory stops shrinking (at most
# 20 more readings, 1.5 s apart): the services and dests "ipvsadm -C"
# deleted, and the tables a newer build replaced, are freed after RCU
# grace periods, which take longer while the host is busy with other
# guests; a figure taken before they are freed counts them (22180 B
# measured against 21000 B in /proc, twice in make check, in guest 15).
mem_settle() {
	_a=$(mem_kernel)
	_n=0
	while [ $_n -lt 20 ]; do
		sleep 0.5
		_b=$(mem_kernel)
		[ $((_a - _b)) -le 8 ] && break
		_a=$_b
		_n=$((_n + 1))
	done
	echo "$_b"
}

# mem_pages: kB of unreclaimable slab pages (large kmalloc()s included)
# plus vmalloc.
mem_pages() {
	awk '$1 == "SUnreclaim:" || $1 == "VmallocUsed:" { n += $2 }
		END { print n }' /proc/meminfo
}

# services SCHED N NET [distinct]: "ipvsadm -R" lines for N UDP services
# 10.NET.X.Y:53 with three dests of weights 1, 2, 3, the same three for all
# (port 53), or with "distinct" each service's own (port 1000 + its number). Each round takes other VIPs: IPVS
# keeps deleted dests in its trash for a while and takes them back for the
# same service, which would hide their memory.
services() {
	awk -v s="$1" -v n="$2" -v net="$3" -v distinct="${4:-}" 'BEGIN {
		for (i = 0; i < n; i++) {
			v = sprintf("10.%d.%d.%d:53", net, int(i / 250), i % 250 + 1)
			print "-A -u " v " -s " s
			# distinct: each service its own port, so no two share
			# a table
			p = distinct ? 1000 + i : 53
			for (d = 1; d <= 3; d++)
				print "-a -u " v " -r 10.1." d ".1:" p " -m -w " d
		}
	}'
}

# kworkers: set make-it-fail (1) or clear it (0) on the unbound workqueue
# threads, which run the builds.
kworkers() {
	for _p in /proc/[0-9]*; do
		case $(cat "$_p/comm" 2>/dev/null) in
		kworker/u*) echo "$1" >"$_p/make-it-fail" 2>/dev/null ;;
		esac
	done
}

# --- fleets (12-fleet.sh, 18-sync.sh) -----------------------------------------

# fleet_capture NAME "NS...": save each namespace's /proc/net/ip_vs_maglev as
# $T/cap.NAME.NS and print it as "# capture NAME NS | LINE" lines, so that
# the host can take real transcripts from the results (tests/fleet/
# extract.sh; tests/data/fleet/ holds some).
fleet_capture() {
	_fc=$1
	for _ns in $2; do
		in_ns "$_ns" cat $PROC >"$T/cap.$_fc.$_ns"
		sed "s/^/# capture $_fc $_ns | /" "$T/cap.$_fc.$_ns"
	done
}

# fleet_check TEXT WANT NAME "NS..." [REGEX]: run "maglev-fleet check" on
# the captures NAME of the namespaces NS (labelled with their names); PASS
# if its exit status is WANT (0 agree, 1 disagree, 3 pending) and its
# report has a line matching REGEX (grep -E), if given. Its report is
# printed as "#" lines either way.
fleet_check() {
	_ft=$1 _fw=$2 _fc=$3 _fg=${5:-}
	_fa=
	for _ns in $4; do _fa="$_fa $_ns=$T/cap.$_fc.$_ns"; done
	_frc=0
	# shellcheck disable=SC2086
	maglev-fleet check $_fa >"$T/fleet.out" 2>&1 || _frc=$?
	sed 's/^/# maglev-fleet: /' "$T/fleet.out"
	if [ "$_frc" != "$_fw" ]; then
		fail "$_ft: maglev-fleet check exits $_frc, want $_fw"
	elif [ -n "$_fg" ] && ! grep -qE -- "$_fg" "$T/fleet.out"; then
		fail "$_ft: maglev-fleet check's report has no line matching '$_fg'"
	else
		pass "$_ft: maglev-fleet check exits $_frc${_fg:+, reports \"$_fg\"}"
	fi
}

# --- a fleet of LBs behind an ECMP router (tests 12 and 18) -----------------

# fleet_router_client CL: the router "rt" on the LBs' link (10.2.0.254,
# its eth0) and on the client's (10.9.0.254, up0), and the client "cl" at
# address CL behind it.
fleet_router_client() {
	printf '%s\n' "link set lo up" "addr add 10.2.0.254/24 dev eth0" \
		"link set eth0 up" "link add up0 type veth peer name eth0 netns cl" \
		"addr add 10.9.0.254/24 dev up0" "link set up0 up" |
		ip -n rt -batch - || fail "router links"
	printf '%s\n' "link set lo up" "addr add $1/24 dev eth0" \
		"link set eth0 up" "route add default via 10.9.0.254" |
		ip -n cl -batch - || fail "client link"
}

# fleet_hosts VIP I...: bring up the hosts of a fleet made with eth0 on
# the fleet's bridge: real server rsI (I < 10) or load balancer lb(I - 10),
# at 10.2.0.I with VIP on lo and the router 10.2.0.254 as gateway; a load
# balancer also at 10.4.0.I on eth1 (the sync link).
fleet_hosts() {
	_vip=$1
	shift
	for i in "$@"; do
		case $i in 1?) ns=lb${i#1} ;; *) ns=rs$i ;; esac
		{
			echo "link set lo up"
			echo "addr add 10.2.0.$i/24 dev eth0"
			echo "link set eth0 up"
			echo "addr add $_vip/32 dev lo"
			echo "route add default via 10.2.0.254"
			case $ns in
			lb*) echo "addr add 10.4.0.$i/24 dev eth1"
				echo "link set eth1 up" ;;
			esac
		} | ip -n "$ns" -batch - || fail "$ns links"
	done
}

# fleet_route VIP LB...: the router "rt"'s route to VIP, one nexthop per LB
# (lbN is 10.2.0.1N).
fleet_route() {
	_vip=$1 _nh=
	shift
	for _lb in "$@"; do _nh="$_nh nexthop via 10.2.0.1${_lb#lb}"; done
	# shellcheck disable=SC2086
	ip -n rt route replace $_vip/32 $_nh
}

# fleet_servers N PORT...: a tcpfleet server in each of rs1..rsN on the
# PORTs, their pids in $pids; waits (bounded) until each listens on the
# last PORT.
fleet_servers() {
	_n=$1
	shift
	for _last; do :; done
	_hex=$(printf '%04X' "$_last")
	pids=
	for _i in $(seq "$_n"); do
		/usr/sbin/ip netns exec "rs$_i" tcpfleet server "rs$_i" "$@" &
		pids="$pids $!"
	done
	for _i in $(seq "$_n"); do
		_t=0
		until ip netns exec "rs$_i" grep -q ":$_hex .* 0A " /proc/net/tcp6; do
			_t=$((_t + 1))
			[ $_t -lt 100 ] || { fail "real server rs$_i does not listen"; finish; }
			sleep 0.1
		done
	done
}

# fleet_client CL VIP: a tcpfleet client in namespace "cl" from address CL
# to VIP, driven through fifos in $T (fds 4 and 5); its pid joins $pids.
fleet_client() {
	mkfifo "$T/cmd" "$T/ans"
	/usr/sbin/ip netns exec cl tcpfleet client "$1" "$2" <"$T/cmd" >"$T/ans" &
	pids="$pids $!"
	exec 4>"$T/cmd" 5<"$T/ans"
}

# cmd LINE: one command to the fleet_client; its answer goes to $ANS.
cmd() {
	_t=$(date +%s)
	echo "$*" >&4
	read -r ANS <&5
	info "client: $* -> $ANS ($(($(date +%s) - _t)) s)"
}
