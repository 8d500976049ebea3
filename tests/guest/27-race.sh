#!/bin/sh
# Guest test 27: builds that read the destination list while IPVS edits it.
# The module of this test is a test build (header line "# module-build:",
# scripts/vm-test.sh): MAGLEV_TEST_DELAY_MS makes a build wait that many
# ms on each destination it reads, so a build of N servers reads the list
# for N times as long, and an ipvsadm -R batch lands in the middle of the
# read at will. Every round waits until the service is caught up and its
# hold-off is over, changes a weight (a build starts at once and reads the
# list), and at a random point of that read sends one ipvsadm -R batch:
# a. TCP service: every server deleted and added again, in a random order
#    (IPVS takes a deleted destination back from its trash at once and
#    links it at the head of the service's list);
# b. the service deleted and created again with the same address and its
#    servers added again (they come back from the trash, linked on the
#    new service's list);
# c. a fwmark service (-f 27, servers named with port :0): a and b in
#    turns.
# A read that races a (or c's a) meets destinations twice or misses some;
# one that races b reads on from the deleted service's list into the new
# one's and may take its list head for a destination.
# Checks: no build failed (no "maglev table build ... failed" line in the
# kernel log since this test began; a failed build leaves the table
# behind its service); while the batches run, /proc/net/ip_vs_maglev is
# polled and every table published names only the service's own servers,
# each once, as many as its "dests"; after the last round the service
# catches up (pending 0) and its digest and slot counts equal maglev-sim's
# for the final servers. The harness fails it on any kernel report
# (refcount, KASAN on the debug kernel). Rounds are bounded in number
# (RACE_ROUNDS, 4: on the tree that walked IPVS's list, a and c failed 26
# of 28 rounds; the debug kernel runs b and c only) and in
# time (RACE_SECONDS a case); RACE_CASES picks cases. Prints per round
# when the batch went and what the kernel logged (most kinds of kernel
# report are printed once a boot: a later round's may go unseen).
# guest-timeout: 300
# debug-kernel: yes
# module-build: MAGLEV_TEST_DELAY_MS=40
. "${0%/*}/lib.sh"

# The delay of the test build, from the header above.
DELAY_MS=$(sed -n 's/^# module-build:.*MAGLEV_TEST_DELAY_MS=\([0-9][0-9]*\).*/\1/p' "$0" |
	head -n 1)
N=${RACE_N:-30}
ROUNDS=${RACE_ROUNDS:-4}
CASE_SECONDS=${RACE_SECONDS:-60}
# RACE_CASES: the cases to run (GUEST_ENV="RACE_CASES=b" for one).
CASES=${RACE_CASES:-a b c}
# The debug kernel (KASAN, kmemleak) runs everything but the delays 5 to
# 10 times slower: from the weight change to the batch its process starts
# take 1.5 s, more than the read of the list (1.2 s), so a's batch never
# meets the read it aims at (no failure in 8 rounds there). It runs b
# and c.
if [ -e /sys/kernel/debug/kmemleak ]; then
	CASE_SECONDS=${RACE_SECONDS:-240}
	CASES=${RACE_CASES:-b c}
fi
SIZE=1021
V=10.0.0.1
MARK=27
CATCHUP_TIMEOUT=60
MARKER="ip_vs_maglev guest test 27: start $$"
WALK_MS=$((N * DELAY_MS))

now_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }
# sleep_ms MS
sleep_ms() { sleep "$(($1 / 1000)).$(printf %03d $(($1 % 1000)))"; }
# failed_lines: the failed builds the kernel logged since this test began.
failed_lines() {
	dmesg | sed -n "/$MARKER/,\$p" | grep 'maglev table build .*failed'
}
failed_count() { failed_lines | wc -l; }
# reports: the first lines of the kernel's reports since this test began
# (the harness fails the boot on them; here they are told per case and
# round).
reports() {
	dmesg | sed -n "/$MARKER/,\$p" |
		grep -E 'WARNING:|BUG:|Oops|KASAN|UBSAN|refcount_t:|general protection|list_(add|del) corruption'
}
reports_count() { reports | wc -l; }

echo "$MARKER" >/dev/kmsg
if ! dmesg | grep -q "$MARKER"; then
	fail "the kernel log does not show this test's start marker"
	finish
fi
if [ -z "$DELAY_MS" ] || [ "$DELAY_MS" -le 0 ]; then
	fail "no MAGLEV_TEST_DELAY_MS in this test's module-build header"
	finish
fi
echo $SIZE >$SYSCTL/maglev_table_size || fail "maglev_table_size $SIZE"

# The servers 10.1.0.1 .. 10.1.0.N: weight I % 3 + 1, but server 1's
# weight W1 (1 or 2), which each round flips to start a build.
W1=1
# servers SVCARG PORT: the -a lines of every server, in a random order.
# shellcheck disable=SC3028 # busybox ash has $RANDOM
servers() {
	awk -v svc="$1" -v port="$2" -v n="$N" -v w1="$W1" -v seed="$RANDOM" '
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
			printf "-a %s -r 10.1.0.%d:%d -m -w %d\n", svc, k, port,
				k == 1 ? w1 : k % 3 + 1
		}
	}'
}
# sim_nodes PORT: maglev-sim's commands for the servers now configured.
sim_nodes() {
	echo "SIZE $SIZE"
	awk -v port="$1" -v n="$N" -v w1="$W1" 'BEGIN {
		for (k = 1; k <= n; k++)
			printf "ADD_NODE 10.1.0.%d:%d %d\n", k, port,
				k == 1 ? w1 : k % 3 + 1
	}'
}
# batch KIND SVCARG PORT: one round's ipvsadm -R lines. KIND dests: every
# server deleted (in a random order), then added again (in another);
# service: the service deleted, created again, its servers added again.
batch() {
	if [ "$1" = service ]; then
		echo "-D $2"
		echo "-A $2 -s maglev"
	else
		servers "$2" "$3" | awk '{ print "-d", $2, $3, $4, $5 }'
	fi
	servers "$2" "$3"
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
while [ $i -le "$N" ]; do
	echo "TCP $V:80 10.1.0.$i:80" >>"$T/allow"
	echo "FWM $MARK 10.1.0.$i:0" >>"$T/allow"
	i=$((i + 1))
done
: >"$T/poll.out"
(
	while [ ! -e "$T/poll.stop" ]; do
		awk -f "$T/poll.awk" "$T/allow" $PROC >>"$T/poll.out"
		sleep 0.1
	done
) &
poller=$!

# --- the rounds ---------------------------------------------------------------
# race_case NAME SVCARG PORT SERVICE KINDS: a service (ipvsadm SVCARG,
# servers on PORT, SERVICE as /proc names it) and its rounds, the batch
# of each taking the KINDS ("dests", "service") in turns.
# shellcheck disable=SC2086,SC3028 # SVCARG and KINDS are words; busybox ash has $RANDOM
race_case() {
	_name=$1 _svc=$2 _port=$3 _s=$4 _kinds=$5
	{ echo "-A $_svc -s maglev"; servers "$_svc" "$_port"; } >"$T/batch"
	run ipvsadm -R <"$T/batch"
	wait_caught_up || return
	# The test build reads the list slowly: a build of the N servers,
	# started by a weight change past the hold-off, takes at least
	# N * DELAY_MS ms until it is published. _o: the ms from the
	# change to the next command (process starts: far more on the debug
	# kernel), left out of the read's time when a round aims its batch.
	sleep 1.1
	W1=2
	_t0=$(now_ms)
	run ipvsadm -e $_svc -r 10.1.0.1:$_port -m -w $W1
	sleep_ms 0
	_o=$(($(now_ms) - _t0))
	wait_caught_up
	_b=$(($(now_ms) - _t0))
	if [ $((_b * 10)) -lt $((WALK_MS * 9)) ]; then
		fail "$_name: a build of $N servers took $_b ms, not the ${WALK_MS} ms or more of the test build's delays (is this the MAGLEV_TEST_DELAY_MS=$DELAY_MS build?)"
		return
	fi
	pass "$_name: a build of $N servers takes $_b ms (the test build's ${DELAY_MS} ms a server; $_o ms to the next command)"
	_span=$((WALK_MS - _o - 2 * DELAY_MS))
	[ $_span -ge $DELAY_MS ] || _span=$DELAY_MS
	_f0=$(failed_count)
	_k0=$(reports_count)
	_bad=0
	_r=1
	_end=$(($(now_ms) + CASE_SECONDS * 1000))
	set -- $_kinds
	while [ $_r -le "$ROUNDS" ] && [ "$(now_ms)" -lt $_end ]; do
		_kind=$1
		shift
		set -- "$@" "$_kind"
		# Past the hold-off of the last build (at most 1 s after it).
		sleep 1.1
		W1=$((3 - W1))
		batch "$_kind" "$_svc" "$_port" >"$T/batch"
		_fb=$(failed_count)
		_kb=$(reports_count)
		# A random point of the read, after the change's own commands.
		_x=$((RANDOM % _span))
		echo "guest test 27: $_name round $_r ($_kind), batch in $_x ms" >/dev/kmsg
		_t0=$(now_ms)
		run ipvsadm -e $_svc -r 10.1.0.1:$_port -m -w $W1
		sleep_ms $_x
		run ipvsadm -R <"$T/batch"
		_t2=$(now_ms)
		wait_caught_up || break
		_fr=$(($(failed_count) - _fb))
		_kr=$(($(reports_count) - _kb))
		[ "$_fr" -eq 0 ] || _bad=$((_bad + 1))
		info "$_name round $_r ($_kind): weight change, ${_x} ms sleep, batch of $(wc -l <"$T/batch") lines: $((_t2 - _t0)) ms (the read takes ${WALK_MS} ms); caught up $(($(now_ms) - _t2)) ms after; failed builds logged: $_fr, kernel report lines: $_kr"
		_r=$((_r + 1))
	done
	_r=$((_r - 1))
	_fn=$(($(failed_count) - _f0))
	if [ "$_fn" -eq 0 ]; then
		pass "$_name: no build failed in $_r rounds"
	else
		fail "$_name: $_fn builds failed, in $_bad of $_r rounds"
		failed_lines | tail -n "$_fn" | head -n 5
	fi
	_kn=$(($(reports_count) - _k0))
	if [ "$_kn" -eq 0 ]; then
		pass "$_name: no kernel report in $_r rounds"
	else
		fail "$_name: $_kn lines of kernel reports in $_r rounds (most kinds are reported once a boot)"
		reports | tail -n "$_kn" | head -n 5
	fi
	check "$_name: $_r rounds ran (of $ROUNDS, in ${CASE_SECONDS}s)" [ "$_r" -ge 2 ]
	sim_nodes "$_port" >"$T/sim.$_name"
	expect_eq "$_name: caught up after the rounds" "$(svc_field "$_s" pending)" 0
	check_sim "$_name: the final servers" "$_s" "$T/sim.$_name"
	info "$_name: build_fail $(svc_field_now "$_s" build_fail) on the service now"
	run ipvsadm -D $_svc
}

for c in $CASES; do
	case $c in
	a) race_case a "-t $V:80" 80 "TCP $V:80" dests ;;
	b) race_case b "-t $V:80" 80 "TCP $V:80" service ;;
	c) race_case c "-f $MARK" 0 "FWM $MARK" "dests service" ;;
	*) fail "RACE_CASES: no case '$c'" ;;
	esac
done

: >"$T/poll.stop"
wait $poller
for s in "TCP $V:80" "FWM $MARK"; do
	recs=$(grep -c "^REC $s " "$T/poll.out")
	case $s:$CASES in
	TCP*:*[ab]*|FWM*:*c*) ;;
	*) continue ;;
	esac
	tables=$(grep "^REC $s " "$T/poll.out" | awk '{ print $5 }' | sort -u | wc -l)
	bad=$(grep -c "^BAD $s " "$T/poll.out")
	if [ "$bad" -eq 0 ] && [ "$recs" -gt 0 ]; then
		pass "$s: $recs readings of /proc ($tables distinct digests) name only its own servers, each once"
	else
		fail "$s: $bad of $recs readings of /proc name other servers or one twice"
		grep "^BAD $s " "$T/poll.out" | sort | uniq -c | head -n 5
	fi
done
n=$(failed_count)
expect_eq "no failed build in the kernel log since the test began" "$n" 0
dmesg | sed -n "/$MARKER/,\$p" | grep -E 'callbacks suppressed|maglev' | head -n 20 |
	sed 's/^/# dmesg: /'
echo 65537 >$SYSCTL/maglev_table_size
finish
