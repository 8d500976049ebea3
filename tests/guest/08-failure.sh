#!/bin/sh
# Guest test 8: the previous table serves until the next one is published.
# A maglev_table_size below the number of destinations gives the next prime
# that holds them (no failure).  While a build is pending (held off), a
# destination just set to weight 0 or just removed is never chosen although
# the published table still maps keys to it, and its keys are not dropped
# (no flag-1); the other keys keep their destination; the write of the
# hold-off itself rebuilds nothing.  Injected allocation failures are
# tested in 11-teardown.sh.
# debug-kernel: yes
. "${0%/*}/lib.sh"

V=10.0.0.1
S="TCP $V:80"

# --- more destinations than maglev_table_size ------------------------------
echo 251 >$SYSCTL/maglev_table_size
{
	echo "-A -t $V:80 -s maglev"
	i=1
	while [ $i -le 252 ]; do
		echo "-a -t $V:80 -r 10.2.$((i / 200)).$((i % 200 + 1)):80 -m"
		i=$((i + 1))
	done
} >"$T/restore"
run ipvsadm -R <"$T/restore"
expect_eq "$S: 252 dests with maglev_table_size 251" "$(svc_field "$S" dests)" 252
expect_eq "$S: ... in the next prime, 257 slots" "$(svc_field "$S" size)" 257
expect_eq "$S: ... and no failure" "$(svc_field "$S" build_fail)" 0
echo "SIZE 257" >"$T/s"
awk '$1 == "-a" { print "ADD_NODE " $5 }' "$T/restore" >>"$T/s"
check_sim "$S 252 dests" "$S" "$T/s"
run ipvsadm -C
echo 65537 >$SYSCTL/maglev_table_size

# --- weight 0 and removal while a build is pending ----------------------------
# With maglev_holdoff_ms=4000 a change made within 4 s of the end of a build
# waits for its own build that long: flows sent right after ipvsadm returns meet
# the previous table. The debug kernel (KASAN, kmemleak) sends them five
# times slower, and slower still while make check's other guests load the
# host: it gets the largest hold-off, 10 s, and sends 10 flows from each
# client address instead of 30.
HOLDOFF=4000
NFLOWS=30
if [ -e /sys/kernel/debug/kmemleak ]; then
	HOLDOFF=10000
	NFLOWS=10
fi
setup_net 3
warm_up
udp_service3 "$T/s0"
S="UDP $V:80"
addrs=$(client_addrs 4 10)
wait_caught_up
# A hold-off write applies from the next build and rebuilds nothing.
g=$(svc_field "$S" gen)
b=$(svc_field "$S" builds)
echo $HOLDOFF >$SYSCTL/maglev_holdoff_ms
expect_eq "maglev_holdoff_ms $HOLDOFF: nothing rebuilt (gen, builds, pending)" \
	"$(svc_field_now "$S" gen) $(svc_field_now "$S" builds) $(svc_field_now "$S" pending)" \
	"$g $b 0"
# After a quiet period a change builds at once; the hold-off starts after.
run ipvsadm -e -u $V:80 -r 10.1.1.1:80 -m -w 1
d=$(svc_field "$S" digest)

# pending_flows NAME FIRST_PORT: flows right after a change, then check that
# the change was still pending when they had been sent.
pending_flows() {
	# shellcheck disable=SC2086
	NOWAIT=1 flows $V 80 "$2" $NFLOWS $addrs >"$T/f.$1"
	if [ "$(svc_field_now "$S" pending)" = 1 ]; then
		pass "$1: flows sent while the build was pending"
	else
		fail "$1: the build had finished before the flows were sent"
	fi
	conns_of "$T/f.$1" $V 80 >"$T/c.$1"
}

run ipvsadm -e -u $V:80 -r 10.1.2.1:80 -m -w 0
pending_flows drain 10000
expect_eq "drain: the old table was still published" \
	"$(svc_field_now "$S" digest)" "$d"
predict "$T/f.drain" "$T/s0" 1 | sort >"$T/p.drain"
expect_eq "drain: every flow is served without flag-1" \
	"$(wc -l <"$T/c.drain")" "$(wc -l <"$T/f.drain")"
expect_eq "drain: no flow goes to the weight-0 dest" \
	"$(grep -c ' 10\.1\.2\.1:80$' "$T/c.drain")" 0
check "drain: some flows mapped to the weight-0 dest" \
	[ "$(grep -c ' 10\.1\.2\.1:80$' "$T/p.drain")" -gt 0 ]
bad=$(awk 'NR == FNR { p[$1 " " $2] = $3; next }
	p[$1 " " $2] != "10.1.2.1:80" && p[$1 " " $2] != $3 { n++ }
	END { print n + 0 }' "$T/p.drain" "$T/c.drain")
expect_eq "drain: the other flows keep their dest" "$bad" 0
echo "WEIGHT 10.1.2.1:80 0" >>"$T/s0"
check_sim "$S drained" "$S" "$T/s0"
cp "$T/s0" "$T/s1"

# The drain's build may have ended long before this point on a slow guest
# (the checks above take seconds on the debug kernel), leaving less of its
# hold-off than the flows need. An edit that changes nothing still makes a
# build (the same table, found in the cache); the removal right after it
# has the whole hold-off.
run ipvsadm -e -u $V:80 -r 10.1.1.1:80 -m -w 1
wait_caught_up
run ipvsadm -d -u $V:80 -r 10.1.3.1:80
pending_flows remove 20000
predict "$T/f.remove" "$T/s1" 1 | sort >"$T/p.remove"
expect_eq "remove: every flow is served without flag-1" \
	"$(wc -l <"$T/c.remove")" "$(wc -l <"$T/f.remove")"
expect_eq "remove: no flow goes to the removed dest" \
	"$(grep -c ' 10\.1\.3\.1:80$' "$T/c.remove")" 0
check "remove: some flows mapped to the removed dest" \
	[ "$(grep -c ' 10\.1\.3\.1:80$' "$T/p.remove")" -gt 0 ]
bad=$(awk 'NR == FNR { p[$1 " " $2] = $3; next }
	p[$1 " " $2] != "10.1.3.1:80" && p[$1 " " $2] != $3 { n++ }
	END { print n + 0 }' "$T/p.remove" "$T/c.remove")
expect_eq "remove: the other flows keep their dest" "$bad" 0
echo "REMOVE_NODE 10.1.3.1:80" >>"$T/s1"
check_sim "$S after the removal" "$S" "$T/s1"
run ipvsadm -C
cleanup_net
echo 50 >$SYSCTL/maglev_holdoff_ms
finish
