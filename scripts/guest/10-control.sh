#!/bin/sh
# Guest test 10: the control path.
# 1. Writing table_size and hash_seed rebuilds every maglev service, in
#    every network namespace, with no ipvsadm edit; /proc shows the new
#    size and seed and the digests equal maglev-sim's.
# 2. While a service with M = 5000011 and many destinations rebuilds, an
#    "ipvsadm -A" in another namespace and an "ipvsadm -a" to that very
#    service complete without waiting for the build. Prints their times next
#    to the build's (benchmark figures); the ipvsadm times bound how long our
#    callbacks hold IPVS's mutex.
# guest-timeout: 240
. "${0%/*}/lib.sh"

CATCHUP_TIMEOUT=120
now_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }

ip netns add n1
ip netns add n2
ip netns exec n2 ipvsadm -A -t 10.0.0.12:80 -s rr
for ns in "" n1; do
	in_ns "$ns" ipvsadm -A -u 10.0.0.1:53 -s maglev || fail "ipvsadm -A $ns"
	in_ns "$ns" ipvsadm -a -u 10.0.0.1:53 -r 10.1.1.1:53 -m -w 2 ||
		fail "ipvsadm -a $ns"
	in_ns "$ns" ipvsadm -a -u 10.0.0.1:53 -r 10.1.2.1:53 -m -w 3 ||
		fail "ipvsadm -a $ns"
done
S="UDP 10.0.0.1:53"
printf 'ADD_NODE 10.1.1.1:53 2\nADD_NODE 10.1.2.1:53 3\n' >"$T/s"
wait_caught_up
wait_caught_up n1
g0=$(svc_field "$S" gen)
g1=$(svc_field "$S" gen n1)

# --- 1. parameters apply at once ---------------------------------------------
echo 509 >$PARAMS/table_size
for ns in root n1; do
	n=$ns
	[ $n = root ] && n=
	expect_eq "$ns: size 509 without an edit" "$(svc_field "$S" size "$n")" 509
	expect_eq "$ns: seed still 0" "$(svc_field "$S" seed "$n")" 0
done
expect_eq "root: one more generation" "$(svc_field "$S" gen)" $((g0 + 1))
expect_eq "n1: one more generation" "$(svc_field "$S" gen n1)" $((g1 + 1))
printf 'SIZE 509\nREBUILD\n' >>"$T/s"
check_sim "root: size 509" "$S" "$T/s"
expect_eq "n1: same digest as root" "$(svc_field "$S" digest n1)" \
	"$(svc_field "$S" digest)"
echo 99 >$PARAMS/hash_seed
for ns in root n1; do
	n=$ns
	[ $n = root ] && n=
	expect_eq "$ns: seed 99 without an edit" "$(svc_field "$S" seed "$n")" 99
	expect_eq "$ns: size stays 509" "$(svc_field "$S" size "$n")" 509
done
echo 0 >$PARAMS/hash_seed
echo 65537 >$PARAMS/table_size
expect_eq "n1: back to size 65537" "$(svc_field "$S" size n1)" 65537
expect_eq "n1: back to seed 0" "$(svc_field "$S" seed n1)" 0
in_ns n1 ipvsadm -C
ipvsadm -C

# --- 2. a big build does not hold up ipvsadm ---------------------------------
NB=${BIG_N:-500}
echo 5000011 >$PARAMS/table_size
V=10.0.0.1
{
	echo "-A -t $V:80 -s maglev"
	awk -v n="$NB" -v v="$V" 'BEGIN { for (i = 0; i < n; i++)
		printf "-a -t %s:80 -r 10.%d.%d.%d:80 -m -w %d\n", v,
			100 + int(i / 62500), int(i / 250) % 250, i % 250 + 1,
			i % 7 + 1 }'
} >"$T/restore"
run ipvsadm -R <"$T/restore"
B="TCP $V:80"
wait_caught_up
bns=$(svc_field "$B" build_ns)
info "M=5000011 N=$NB: first build took $((bns / 1000000)) ms"

# Idle figures first.
t0=$(now_ms)
run ip netns exec n1 ipvsadm -A -t 10.0.0.11:80 -s rr
idle_a=$(($(now_ms) - t0))
t0=$(now_ms)
run ipvsadm -e -t $V:80 -r 10.100.0.1:80 -m -w 9
idle_e=$(($(now_ms) - t0))
wait_caught_up
# Past the hold-off after the last build, so the next change builds at once.
sleep 1.2

# A drain needs two fills: the longest build there is.
run ipvsadm -e -t $V:80 -r 10.100.0.2:80 -m -w 0
t0=$(now_ms)
run ip netns exec n1 ipvsadm -A -t 10.0.0.12:80 -s maglev
busy_a=$(($(now_ms) - t0))
t0=$(now_ms)
run ipvsadm -a -t $V:80 -r 10.200.0.1:80 -m -w 1
busy_add=$(($(now_ms) - t0))
t0=$(now_ms)
run ipvsadm -e -t $V:80 -r 10.100.0.3:80 -m -w 5
busy_e=$(($(now_ms) - t0))
if [ "$(svc_field_now "$B" pending)" = 1 ]; then
	pass "ipvsadm -A in another netns, -a and -e completed while the build was pending"
else
	fail "the build had finished before the ipvsadm calls were timed"
fi
check "n1's new service is listed" svc_listed "TCP 10.0.0.12:80" n1
t0=$(now_ms)
wait_caught_up
catch=$(($(now_ms) - t0))
bns=$(svc_field "$B" build_ns)
echo "BENCH: M=5000011 N=$NB: build_ns $bns (last build); during builds" \
	"ipvsadm -A (other netns) ${busy_a} ms, -a ${busy_add} ms, -e ${busy_e} ms;" \
	"idle -A ${idle_a} ms, -e ${idle_e} ms; caught up ${catch} ms after"
expect_eq "$B: every change in the table" "$(svc_field "$B" dests)" $((NB + 1))
expect_eq "$B: no failed build" "$(svc_field "$B" build_fail)/$(svc_field "$B" alloc_fail)" 0/0
ipvsadm -C
in_ns n1 ipvsadm -C
ip netns del n1
ip netns del n2
echo 65537 >$PARAMS/table_size
finish
