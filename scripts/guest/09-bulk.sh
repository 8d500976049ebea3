#!/bin/sh
# Guest test 9: 1000 destinations added one by one, one "ipvsadm -a" each,
# to a maglev service and then to an rr service in the same boot. Prints
# both times and their ratio (a benchmark line, not an assertion). Checks
# that the maglev service needed far fewer builds than changes (builds are
# coalesced), that every change is in its final table (gen, table_gen) and
# that the final digest and slot counts equal maglev-sim's.
#
# Under TCG one ipvsadm call takes 50 to 200 ms (about 100 times a real
# machine's) while a build at M = 65537 takes about 10 ms (ten times), so
# the hold-off is raised to 1 s to keep the ratio of change interval to
# hold-off of a real machine with the default 50 ms.
# guest-timeout: 900
. "${0%/*}/lib.sh"

V=10.0.0.1
N=${BULK_N:-1000}

now_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }

# add_all PORT: add the N dests to TCP $V:PORT, one ipvsadm call each;
# prints the milliseconds taken.
add_all() {
	_t0=$(now_ms)
	_bad=0
	while read -r _r; do
		ipvsadm -a -t "$V:$1" -r "$_r" -m -w 1 || _bad=$((_bad + 1))
	done <"$T/dests"
	_t1=$(now_ms)
	[ "$_bad" -eq 0 ] || fail "port $1: $_bad ipvsadm -a calls failed"
	echo $((_t1 - _t0))
}

awk -v n="$N" 'BEGIN {
	for (i = 0; i < n; i++)
		printf "10.%d.%d.%d:80\n", 100 + int(i / 62500),
			int(i / 250) % 250, i % 250 + 1
}' >"$T/dests"

echo 1000 >$PARAMS/holdoff_ms
run ipvsadm -A -t $V:80 -s maglev
run ipvsadm -A -t $V:81 -s rr
wait_caught_up
S="TCP $V:80"

t_mg=$(add_all 80)
t0=$(now_ms)
wait_caught_up
t_catch=$(($(now_ms) - t0))
t_rr=$(add_all 81)

expect_eq "$S: $N dests" "$(svc_field "$S" dests)" "$N"
expect_eq "rr: $N dests" "$(ipvsadm -Ln -t $V:81 | grep -c -- '->.*Masq')" "$N"
builds=$(svc_field "$S" builds)
gen=$(svc_field "$S" gen)
expect_eq "$S: one generation per change" "$gen" $((N + 1))
expect_eq "$S: the table reflects the last change" \
	"$(svc_field "$S" table_gen)" "$gen"
if [ "$builds" -le $((N / 4)) ]; then
	pass "$S: $builds builds for $((N + 1)) changes"
else
	fail "$S: $builds builds for $((N + 1)) changes (want <= $((N / 4)))"
fi
echo "BENCH: $N one-by-one ipvsadm -a: maglev ${t_mg} ms, rr ${t_rr} ms," \
	"ratio $(awk -v a="$t_mg" -v b="$t_rr" 'BEGIN { printf "%.2f", a / b }');" \
	"maglev: $builds builds, caught up ${t_catch} ms after the last add," \
	"last build_ns $(svc_field "$S" build_ns)"

sed 's/^/ADD_NODE /; s/$/ 1/' "$T/dests" >"$T/s"
check_sim "$S $N dests" "$S" "$T/s"
run ipvsadm -C
echo 50 >$PARAMS/holdoff_ms
finish
