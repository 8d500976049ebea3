#!/bin/sh
# Guest test 27: builds that sit in the windows where callbacks run beside
# them. The module is the test build MAGLEV_RACE=1 (the module-build
# header line below, scripts/vm-test.sh; Kbuild, kunit/maglev_race.h): a
# build that reaches a window armed through the parameter race_window sits
# there race_ms. The windows are those of the design, where the set's
# mutex is not held and the callbacks go on:
#  1. between the copy's allocation and its taking the mutex
#     (maglev_copy_set(): servers added meanwhile must make it allocate
#     again);
#  2. between the end of the copy and the publish (maglev_build_table():
#     a change meanwhile must leave the service pending; a service or a
#     namespace deleted meanwhile must get nothing published, and its
#     build must end cleanly).
# Each round arms one window, starts a build with one weight change (one
# callback), waits until the build sits in the window (race_in), and sends
# one batch:
#  dests:   every server of the service deleted and the next set added
#           (ipvsadm -R, random orders; IPVS takes them back from its
#           trash);
#  service: the service deleted and created again with the next set;
#  sysctl:  net.ipv4.vs.maglev_table_size written (1021 and 2039 in
#           turns: every service of the namespace is rebuilt), then a
#           dests batch;
#  netns:   a service of 30 servers in a namespace of its own, deleted
#           with "ip netns del".
# A service's set goes from its first 10 servers to all 30 and back in
# turns, and the rounds in window 1 are those that grow it: the copy has
# room for 10 and finds 30 (with its re-check under the mutex dropped, it
# writes past its allocation: KASAN on the debug kernel). The TCP service
# 10.0.0.1:80 and the fwmark service 27 (servers on port 0) take dests
# and service rounds in both windows.
# Checks: every round's batch met its window (race_overlaps: the service
# changed while its build sat there, as race_windows says it did; fewer
# than all rounds is a FAIL); after every round the services catch up
# and each one's digest equals maglev-sim's for its servers and table
# size (for the namespace's service, before its round); while the rounds
# run, every table /proc/net/ip_vs_maglev shows (polled) names only the
# service's own servers, each once, as many as its "dests", and each
# service showed both of its sets; at the end the slot counts equal
# maglev-sim's and no build failed (build_fail, alloc_fail). The harness
# fails the boot on any kernel report on its console (KASAN, lockdep,
# DEBUG_LIST and kmemleak on the debug kernel, KCSAN on the kcsan one).
# RACE_ROUNDS (GUEST_ENV): rounds, by default the 12 of the list below
# once; more go round it again. RACE_WINDOW_MS: a window's length, by
# default 1 s more than twice what the setup's 31-line batch took, so
# that a batch started once the build is in the window ends in it.
# guest-timeout: 120
# debug-kernel: yes
# kcsan-kernel: yes
# module-build: MAGLEV_RACE=1
. "${0%/*}/lib.sh"

N=30
NP=10
V=10.0.0.1
MARK=27
NS=race27
SIZE=1021
CATCHUP_TIMEOUT=60
# The rounds: SERVICE:KIND:WINDOW. Each root service's set flips every
# round it has, so the rounds in window 1 grow it.
LIST="tcp:dests:1 tcp:dests:2 tcp:service:1 tcp:service:2
fwm:dests:1 fwm:service:2 fwm:service:1 fwm:dests:2
tcp:sysctl:1 tcp:sysctl:2 ns:netns:1 ns:netns:2"
ROUNDS=${RACE_ROUNDS:-12}

now_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }
# par NAME: the test build's parameter race_NAME.
par() { read -r _pv <"$PARAMS/race_$1" && echo "$_pv"; }
# wait_par NAME MIN SECONDS: until race_NAME is MIN or more; false after
# SECONDS.
wait_par() {
	_wp=$(($3 * 20))
	while [ "$(par "$1")" -lt "$2" ]; do
		_wp=$((_wp - 1))
		[ $_wp -gt 0 ] || return 1
		sleep 0.05
	done
}

if [ ! -w "$PARAMS/race_window" ]; then
	fail "no $PARAMS/race_window: not the MAGLEV_RACE=1 test build"
	finish
fi
SIZE0=$(cat $SYSCTL/maglev_table_size)
echo $SIZE >$SYSCTL/maglev_table_size || fail "maglev_table_size $SIZE"

# A root service: KEY tcp or fwm. svc_of KEY sets _svc (ipvsadm's
# words), _port (its servers'), _name (/proc's), and _n and _w1 from
# n_KEY (servers: NP or N) and w1_KEY (server 1's weight, 1 or 2, which
# each round's first change flips).
svc_of() {
	case $1 in
	tcp) _svc="-t $V:80" _port=80 _name="TCP $V:80" ;;
	fwm) _svc="-f $MARK" _port=0 _name="FWM $MARK" ;;
	esac
	eval "_n=\$n_$1 _w1=\$w1_$1"
}
# shellcheck disable=SC2034 # read by svc_of's eval
n_tcp=$NP n_fwm=$NP w1_tcp=1 w1_fwm=1

# servers SVCARG PORT COUNT W1 OP: the lines OP (-a or -d) of servers
# 10.1.0.1 .. 10.1.0.COUNT, in a random order; weight I % 3 + 1, server
# 1's W1.
# shellcheck disable=SC3028 # busybox ash has $RANDOM
servers() {
	awk -v svc="$1" -v port="$2" -v n="$3" -v w1="$4" -v op="$5" \
		-v seed="$RANDOM" '
	BEGIN {
		srand(seed)
		for (i = 1; i <= n; i++)
			o[i] = i
		for (i = n; i > 1; i--) {
			j = int(rand() * i) + 1
			t = o[i]; o[i] = o[j]; o[j] = t
		}
		for (i = 1; i <= n; i++) {
			k = o[i]
			if (op == "-d")
				printf "-d %s -r 10.1.0.%d:%d\n", svc, k, port
			else
				printf "-a %s -r 10.1.0.%d:%d -m -w %d\n", svc,
					k, port, k == 1 ? w1 : k % 3 + 1
		}
	}'
}
# sim_in PORT COUNT W1 SIZE: maglev-sim's commands for those servers.
sim_in() {
	echo "SIZE $4"
	awk -v port="$1" -v n="$2" -v w1="$3" 'BEGIN {
		for (k = 1; k <= n; k++)
			printf "ADD_NODE 10.1.0.%d:%d %d\n", k, port,
				k == 1 ? w1 : k % 3 + 1
	}'
}
# snap_caught_up [NETNS]: wait until one reading of /proc (of NETNS,
# default this one) shows every service caught up (pending 0), and keep
# that reading in $T/snap: the digests compared are the ones it shows, not
# a later table's (a build that marked a change as built before building
# it shows pending 0 until the hold-off's rebuild, 1 s on). FAIL after
# CATCHUP_TIMEOUT seconds.
snap_caught_up() {
	_wn=$((CATCHUP_TIMEOUT * 20))
	# shellcheck disable=SC2016 # an awk program
	while [ "$(in_ns "${1:-}" awk -v snap="$T/snap" '{ print >snap }
		$1 == "service" { p = "x"
			for (i = 4; i < NF; i += 2)
				if ($i == "pending")
					p = $(i + 1)
			if (p != 0)
				n++
		} END { close(snap); print n + 0 }' $PROC)" != 0 ]; do
		_wn=$((_wn - 1))
		if [ $_wn -le 0 ]; then
			fail "services of netns '${1:-}' not caught up after ${CATCHUP_TIMEOUT}s"
			cat "$T/snap"
			return 1
		fi
		sleep 0.05
	done
}
# digest_ok WHAT NAME PORT COUNT W1 SIZE: the digest of service NAME in
# the caught-up reading $T/snap equals maglev-sim's; FAIL with both if
# not.
digest_ok() {
	sim_in "$3" "$4" "$5" "$6" >"$T/sim.in"
	echo DIGEST >>"$T/sim.in"
	_sd=$(sim "$T/sim.in" | sed -n 1p)
	_kd=$(awk -v s="$2" '$1 == "service" && $2 " " $3 == s {
		for (i = 4; i < NF; i += 2)
			if ($i == "digest")
				print $(i + 1)
	}' "$T/snap")
	[ -n "$_kd" ] && [ "$_kd" = "$_sd" ] && return
	fail "$1: $2: digest '$_kd' in /proc, maglev-sim says '$_sd' for its $4 servers, size $6"
	grep "^service $2 " "$T/snap"
	return 1
}

# --- the poller ---------------------------------------------------------------
# Every table /proc shows for a service in $T/allow ("SERVICE NAME" of
# each server it may name) names only those, each once, and as many as
# its "dests" field. One line per service record goes to $T/poll.out:
# "REC SERVICE table_gen digest dests" or "BAD SERVICE what".
cat >"$T/poll.awk" <<'EOF'
function done_rec() {
	if (cur == "")
		return
	if (nd != want)
		print "BAD", cur, "dests " want " but " nd " dest lines"
	print "REC", cur, tg, dg, nd
	cur = ""
}
NR == FNR { allow[$1 " " $2 " " $3] = 1; known[$1 " " $2] = 1; next }
$1 == "service" {
	done_rec()
	if (!(($2 " " $3) in known))
		next
	cur = $2 " " $3
	nd = 0
	delete seen
	for (i = 4; i < NF; i += 2) {
		if ($i == "dests") want = $(i + 1)
		if ($i == "table_gen") tg = $(i + 1)
		if ($i == "digest") dg = $(i + 1)
	}
	next
}
$1 == "dest" && cur != "" {
	nd++
	if (!((cur " " $2) in allow))
		print "BAD", cur, "names " $2 ", not one of its servers"
	if ($2 in seen)
		print "BAD", cur, "names " $2 " twice"
	seen[$2] = 1
}
END { done_rec() }
EOF
: >"$T/allow"
i=1
while [ $i -le $N ]; do
	echo "TCP $V:80 10.1.0.$i:80" >>"$T/allow"
	echo "FWM $MARK 10.1.0.$i:0" >>"$T/allow"
	i=$((i + 1))
done

# --- the services -------------------------------------------------------------
# Both root services with their small sets, by way of all N servers: the
# first batch's time sets the window's length.
for k in tcp fwm; do
	svc_of $k
	{ echo "-A $_svc -s maglev"; servers "$_svc" "$_port" $N 1 -a; } >"$T/batch"
	_t0=$(now_ms)
	run ipvsadm -R <"$T/batch"
	[ $k = tcp ] && B=$(($(now_ms) - _t0))
	servers "$_svc" "$_port" $N 1 -d |
		awk -v np=$NP '{ split($5, a, "[.:]"); if (a[4] > np) print }' >"$T/batch"
	run ipvsadm -R <"$T/batch"
done
WIN_MS=${RACE_WINDOW_MS:-$((2 * B + 1000))}
echo "$WIN_MS" >"$PARAMS/race_ms"
snap_caught_up || finish
for k in tcp fwm; do
	svc_of $k
	digest_ok "setup" "$_name" "$_port" "$_n" "$_w1" $SIZE
done
info "a window is $WIN_MS ms (a batch of $((N + 1)) lines took $B ms)"

: >"$T/poll.out"
(
	while [ ! -e "$T/poll.stop" ]; do
		awk -f "$T/poll.awk" "$T/allow" $PROC >>"$T/poll.out"
		sleep 0.1
	done
) &
poller=$!

# --- the rounds ---------------------------------------------------------------
# batch KEY KIND: the batch of a root service's round, to $T/batch; flips
# its set (n_KEY).
batch() {
	svc_of "$1"
	_next=$((N + NP - _n))
	{
		if [ "$2" = service ]; then
			echo "-D $_svc"
			echo "-A $_svc -s maglev"
		else
			servers "$_svc" "$_port" "$_n" "$_w1" -d
		fi
		servers "$_svc" "$_port" "$_next" "$_w1" -a
	} >"$T/batch"
	eval "n_$1=$_next"
}

overlapped=0 rounds=0 nsrounds=0 w1_ok=0 w1_n=0 w2_ok=0 w2_n=0 digests=0
r=1
# shellcheck disable=SC2086 # LIST is words
set -- $LIST
while [ $r -le "$ROUNDS" ]; do
	_spec=$1
	shift
	set -- "$@" "$_spec"
	_key=${_spec%%:*} _w=${_spec##*:}
	_kind=${_spec#*:}
	_kind=${_kind%:*}
	_ns=
	if [ "$_kind" = netns ]; then
		# A namespace of its own: its service, all N servers.
		_ns=$NS
		nsrounds=$((nsrounds + 1))
		ip netns add "$_ns"
		ip -n "$_ns" link set lo up
		ns_sysctl "$_ns" maglev_table_size $SIZE ||
			fail "round $r: maglev_table_size $SIZE in $_ns"
		_svc="-t $V:80" _port=80 _name="TCP $V:80" _n=$N _w1=1
		{ echo "-A $_svc -s maglev"; servers "$_svc" 80 $N 1 -a; } >"$T/batch"
		run ip netns exec "$_ns" ipvsadm -R <"$T/batch"
		snap_caught_up "$_ns" &&
			digest_ok "round $r ($_ns)" "$_name" 80 $N 1 $SIZE &&
			digests=$((digests + 1))
		_w1=2
	else
		svc_of "$_key"
		_w1=$((3 - _w1))
		eval "w1_$_key=$_w1"
		batch "$_key" "$_kind"
	fi
	_w0=$(par windows)
	_o0=$(par overlaps)
	echo "$_w" >"$PARAMS/race_window"
	# One callback starts the build.
	# shellcheck disable=SC2086 # _svc is words
	run in_ns "$_ns" ipvsadm -e $_svc -r "10.1.0.1:$_port" -m -w "$_w1"
	if ! wait_par in 1 15; then
		echo 0 >"$PARAMS/race_window"
		fail "round $r ($_spec): no build sat in window $_w within 15 s"
	fi
	_t0=$(now_ms)
	case $_kind in
	netns)	ip netns del "$_ns" ;;
	sysctl)	SIZE=$((SIZE == 1021 ? 2039 : 1021))
		echo $SIZE >$SYSCTL/maglev_table_size ||
			fail "round $r: maglev_table_size $SIZE"
		run ipvsadm -R <"$T/batch" ;;
	*)	run ipvsadm -R <"$T/batch" ;;
	esac
	_tb=$(($(now_ms) - _t0))
	wait_par windows $((_w0 + 1)) $((WIN_MS / 1000 + 30)) ||
		fail "round $r ($_spec): the window did not end"
	_dw=$(($(par windows) - _w0))
	_do=$(($(par overlaps) - _o0))
	# The first reading where every root service is caught up, at once.
	snap_caught_up
	_caught=$?
	rounds=$((rounds + 1))
	eval "w${_w}_n=\$((w${_w}_n + 1))"
	if [ $_dw -eq 1 ] && [ $_do -eq 1 ]; then
		overlapped=$((overlapped + 1))
		eval "w${_w}_ok=\$((w${_w}_ok + 1))"
	fi
	_what="ipvsadm -R of $(wc -l <"$T/batch") lines"
	[ "$_kind" = netns ] && _what="ip netns del"
	[ "$_kind" = sysctl ] && _what="maglev_table_size $SIZE and $_what"
	info "round $r ($_key $_kind, window $_w): $_what took $_tb ms in the $WIN_MS ms window; windows sat in: $_dw, with the service changed: $_do"
	# Caught up, each root service equals maglev-sim's table.
	if [ $_caught -eq 0 ]; then
		for k in tcp fwm; do
			svc_of $k
			digest_ok "round $r ($_spec)" "$_name" "$_port" "$_n" "$_w1" $SIZE &&
				digests=$((digests + 1))
		done
	fi
	if [ "$_kind" = netns ] && ip netns list | grep -qw "$_ns"; then
		fail "round $r: namespace $_ns still listed after ip netns del"
	fi
	r=$((r + 1))
done

expect_eq "rounds whose batch met the window (window 1: $w1_ok of $w1_n, window 2: $w2_ok of $w2_n)" \
	"$overlapped" "$rounds"
expect_eq "digests equal to maglev-sim's after the rounds (2 a round, the namespace's before its own)" \
	"$digests" "$((2 * rounds + nsrounds))"

: >"$T/poll.stop"
wait $poller
for k in tcp fwm; do
	svc_of $k
	recs=$(grep -c "^REC $_name " "$T/poll.out")
	tables=$(grep "^REC $_name " "$T/poll.out" | awk '{ print $5 }' | sort -u | wc -l)
	bad=$(grep -c "^BAD $_name " "$T/poll.out")
	if [ "$bad" -eq 0 ] && [ "$recs" -gt 0 ]; then
		pass "$_name: $recs readings of /proc ($tables distinct digests) name only its own servers, each once"
	else
		fail "$_name: $bad of $recs readings of /proc name other servers or one twice"
		grep "^BAD $_name " "$T/poll.out" | sort | uniq -c | head -n 5
	fi
	check "$_name: the readings saw at least 2 tables (its sets of $NP and $N servers)" [ "$tables" -ge 2 ]
	sim_in "$_port" "$_n" "$_w1" $SIZE >"$T/sim.$k"
	check_sim "$_name: the final servers" "$_name" "$T/sim.$k"
	expect_eq "$_name: no build failed (build_fail alloc_fail)" \
		"$(svc_field_now "$_name" build_fail) $(svc_field_now "$_name" alloc_fail)" "0 0"
	# shellcheck disable=SC2086 # _svc is words
	run ipvsadm -D $_svc
done
echo "$SIZE0" >$SYSCTL/maglev_table_size
finish
