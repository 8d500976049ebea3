#!/bin/sh
# Guest test 9: 1000 destinations added one by one to a maglev service and
# to an rr service in the same boot, alternating (/proc/uptime clock, 10 ms
# steps). Each add is its own IPVS command (its own add_dest callback): the
# first BULK_PROC_N (default 50) with one "ipvsadm -a" process each, the
# rest as "-a" lines of "ipvsadm -R" in chunks of 100, since under TCG one
# ipvsadm process costs about 120 ms and 2000 of them would take four
# minutes. Prints the times and their ratio (a benchmark line, not an
# assertion). Checks that the maglev service needed far fewer builds than
# changes (builds are coalesced), that every change is in its final table
# (gen, table_gen) and that the final digest and slot counts equal
# maglev-sim's.
#
# Under TCG a build at M = 65537 takes about 10 ms (ten times a real
# machine's), so the hold-off is raised to 1 s to keep the ratio of change
# interval to hold-off of a real machine with the default 50 ms.
# guest-timeout: 240
. "${0%/*}/lib.sh"

V=10.0.0.1
N=${BULK_N:-1000}
P=${BULK_PROC_N:-50}

now_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }

# add_all: add the N dests to TCP $V:80 (maglev) and TCP $V:81 (rr),
# alternating so both see the same machine load: the first $P with one
# ipvsadm call each, the rest in "ipvsadm -R" chunks of 100 "-a" lines.
# Prints the milliseconds spent on maglev and on rr, and the number of
# calls that failed.
add_all() {
	_mg=0 _rr=0 _bad=0
	head -n "$P" "$T/dests" >"$T/proc"
	while read -r _r; do
		_t0=$(now_ms)
		ipvsadm -a -t "$V:80" -r "$_r" -m -w 1 || _bad=$((_bad + 1))
		_t1=$(now_ms)
		ipvsadm -a -t "$V:81" -r "$_r" -m -w 1 || _bad=$((_bad + 1))
		_t2=$(now_ms)
		_mg=$((_mg + _t1 - _t0))
		_rr=$((_rr + _t2 - _t1))
	done <"$T/proc"
	tail -n +"$((P + 1))" "$T/dests" | awk -v d="$T" '{
		print > sprintf("%s/chunk.%04d", d, int((NR - 1) / 100)) }'
	for _c in "$T"/chunk.*; do
		[ -f "$_c" ] || continue
		sed "s/^/-a -t $V:80 -m -w 1 -r /" "$_c" >"$T/r80"
		sed "s/^/-a -t $V:81 -m -w 1 -r /" "$_c" >"$T/r81"
		_t0=$(now_ms)
		ipvsadm -R <"$T/r80" || _bad=$((_bad + 1))
		_t1=$(now_ms)
		ipvsadm -R <"$T/r81" || _bad=$((_bad + 1))
		_t2=$(now_ms)
		_mg=$((_mg + _t1 - _t0))
		_rr=$((_rr + _t2 - _t1))
	done
	echo "$_mg $_rr $_bad"
}

awk -v n="$N" 'BEGIN {
	for (i = 0; i < n; i++)
		printf "10.%d.%d.%d:80\n", 100 + int(i / 62500),
			int(i / 250) % 250, i % 250 + 1
}' >"$T/dests"

echo 3000 >$SYSCTL/maglev_holdoff_ms
run ipvsadm -A -t $V:80 -s maglev
run ipvsadm -A -t $V:81 -s rr
wait_caught_up
S="TCP $V:80"

# shellcheck disable=SC2046 # three numbers
set -- $(add_all)
t_mg=$1 t_rr=$2
expect_eq "every ipvsadm -a succeeded (failures)" "$3" 0
t0=$(now_ms)
wait_caught_up
t_catch=$(($(now_ms) - t0))

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
echo "BENCH: $N one-by-one adds ($P ipvsadm -a, the rest ipvsadm -R): maglev ${t_mg} ms, rr ${t_rr} ms," \
	"ratio $(awk -v a="$t_mg" -v b="$t_rr" 'BEGIN { printf "%.2f", a / b }');" \
	"maglev: $builds builds, caught up ${t_catch} ms after the last add," \
	"last build_ns $(svc_field "$S" build_ns)"

sed 's/^/ADD_NODE /; s/$/ 1/' "$T/dests" >"$T/s"
check_sim "$S $N dests" "$S" "$T/s"
run ipvsadm -C
echo 50 >$SYSCTL/maglev_holdoff_ms
finish
