#!/bin/sh
# Guest test 1: service and destination life cycle with ipvsadm, IPv4 and
# IPv6, TCP, UDP, SCTP and fwmark. After every change /proc/net/ip_vs_maglev
# shows the change once the service is caught up (pending 0), and its digest
# and slot counts equal maglev-sim's for the same backend list.
. "${0%/*}/lib.sh"

# --- IPv4 TCP: add, edit, drain, restore, delete -----------------------------
S="TCP 10.0.0.1:80"
V=10.0.0.1:80
run ipvsadm -A -t $V -s maglev
check "$S: listed after ipvsadm -A" svc_listed "$S"
expect_eq "$S: no dests yet" "$(svc_field "$S" dests)" 0
# The default size is 65537, whatever the number of dests.
expect_eq "$S: default table size (no dests)" "$(svc_field "$S" size)" 65537
# The default key is all zero; /proc shows its fingerprint.
ZERO_FP=$(key_fp $ZERO_KEY)
expect_eq "$S: default key (all zero)" "$(cat $SYSCTL/maglev_hash_key)" $ZERO_KEY
expect_eq "$S: default key's fingerprint" "$(svc_field "$S" key)" "$ZERO_FP"
expect_eq "$S: no scheduler flags" "$(svc_field "$S" flags)" 0x0
expect_eq "$S: one build" "$(svc_field "$S" builds)" 1
echo "# $S" >"$T/s4"
check_sim "$S empty" "$S" "$T/s4"

expect_eq "$S: caught up" "$(svc_field "$S" pending)" 0
expect_eq "$S: generation 1 at creation" "$(svc_field "$S" gen)" 1
expect_eq "$S: table of generation 1" "$(svc_field "$S" table_gen)" 1
# One build per change when each is waited for.
run ipvsadm -a -t $V -r 10.1.1.1:80 -m -w 1
echo "ADD_NODE 10.1.1.1:80 1" >>"$T/s4"
wait_caught_up
run ipvsadm -a -t $V -r 10.1.2.1:80 -m -w 2
echo "ADD_NODE 10.1.2.1:80 2" >>"$T/s4"
wait_caught_up
run ipvsadm -a -t $V -r 10.1.3.1:8080 -m -w 3
echo "ADD_NODE 10.1.3.1:8080 3" >>"$T/s4"
expect_eq "$S: 3 dests" "$(svc_field "$S" dests)" 3
expect_eq "$S: 4 builds" "$(svc_field "$S" builds)" 4
expect_eq "$S: generation 4" "$(svc_field "$S" gen)" 4
expect_eq "$S: table of generation 4" "$(svc_field "$S" table_gen)" 4
expect_eq "$S: the default size for 3 dests" "$(svc_field "$S" size)" 65537
# 65537 slots of 2 bits are 16388 bytes with the last slot's load; the
# shared table (slots, header, backends) rounds up to 5 pages, no more,
# and the service's own state beyond it is at most 1 KB.
tmem=$(svc_field "$S" table_mem)
mem=$(svc_field "$S" mem)
if [ "$tmem" -ge 16388 ] && [ "$tmem" -le 20480 ]; then
	pass "$S: table_mem $tmem for 65537 slots of 2 bits and 3 dests"
else
	fail "$S: table_mem '$tmem' for 65537 slots of 2 bits and 3 dests (16388..20480)"
fi
if [ "$mem" -gt "$tmem" ] && [ $((mem - tmem)) -le 1024 ]; then
	pass "$S: the service's own state is $((mem - tmem)) B beyond its table"
else
	fail "$S: mem '$mem' is more than 1 KB beyond table_mem '$tmem'"
fi
check_sim "$S 3 dests" "$S" "$T/s4"
cp "$T/s4" "$T/c.in"
echo CHURN >>"$T/c.in"
expect_eq "$S: churn of the last add equals maglev-sim's" \
	"$(svc_field "$S" churn)" "$(sim "$T/c.in")"
expect_eq "$S: alloc_fail" "$(svc_field "$S" alloc_fail)" 0
# The duration of the last build: the guest's clock has nanosecond steps
# (qemu-run.sh: tsc=reliable), and filling 65537 slots takes at least
# 10 us and well under 10 s, on any kernel and under TCG.
bns=$(svc_field "$S" build_ns)
case $bns in
'' | *[!0-9]*) fail "$S: build_ns '$bns' is not a number" ;;
*)	if [ "${#bns}" -le 10 ] && [ "$bns" -ge 10000 ] &&
	   [ "$bns" -lt 10000000000 ]; then
		pass "$S: build_ns $bns for M=65537 N=3, between 10 us and 10 s"
	else
		fail "$S: build_ns $bns for M=65537 N=3, not between 10 us and 10 s"
	fi ;;
esac
d3=$(svc_field "$S" digest)

run ipvsadm -e -t $V -r 10.1.2.1:80 -m -w 5
echo "WEIGHT 10.1.2.1:80 5" >>"$T/s4"
check_sim "$S weight 2->5" "$S" "$T/s4"
expect_eq "$S: /proc shows the new weight" \
	"$(svc_dests "$S" | awk '$1 == "10.1.2.1:80" { print $2 }')" 5
d5=$(svc_field "$S" digest)

# An edit that keeps the weight rebuilds the same table.
b=$(svc_field "$S" builds)
run ipvsadm -e -t $V -r 10.1.2.1:80 -g -w 5
expect_eq "$S: edit without weight change keeps the digest" \
	"$(svc_field "$S" digest)" "$d5"
expect_eq "$S: ... and its churn is 0" "$(svc_field "$S" churn)" 0
expect_eq "$S: ... and counts a build" "$(svc_field "$S" builds)" $((b + 1))

# Drain: weight 0 keeps the slots of everyone else.
run ipvsadm -e -t $V -r 10.1.2.1:80 -m -w 0
echo "WEIGHT 10.1.2.1:80 0" >>"$T/s4"
check_sim "$S drain 10.1.2.1:80" "$S" "$T/s4"
expect_eq "$S: drained dest owns no slot" \
	"$(svc_dests "$S" | awk '$1 == "10.1.2.1:80" { print $2 "/" $3 }')" 0/0

# A scheduler switch and back remembers the drain (dest->last_weight).
run ipvsadm -E -t $V -s rr
if svc_listed "$S"; then
	fail "$S: still listed after switching to rr"
else
	pass "$S: not listed after switching to rr"
fi
run ipvsadm -E -t $V -s maglev
check_sim "$S back to maglev, still drained" "$S" "$T/s4"

run ipvsadm -e -t $V -r 10.1.2.1:80 -m -w 5
echo "WEIGHT 10.1.2.1:80 5" >>"$T/s4"
expect_eq "$S: restoring the weight restores the digest" \
	"$(svc_field "$S" digest)" "$d5"

run ipvsadm -d -t $V -r 10.1.2.1:80
echo "REMOVE_NODE 10.1.2.1:80" >>"$T/s4"
expect_eq "$S: 2 dests after ipvsadm -d" "$(svc_field "$S" dests)" 2
check_sim "$S after delete" "$S" "$T/s4"

# A dest added with weight 0 owns nothing and does not drain.
run ipvsadm -a -t $V -r 10.1.4.1:80 -m -w 0
echo "ADD_NODE 10.1.4.1:80 0" >>"$T/s4"
check_sim "$S dest added with weight 0" "$S" "$T/s4"
run ipvsadm -d -t $V -r 10.1.4.1:80
run ipvsadm -a -t $V -r 10.1.2.1:80 -m -w 2
run ipvsadm -e -t $V -r 10.1.1.1:80 -m -w 1
expect_eq "$S: same dests and weights give back the same digest" \
	"$(svc_field "$S" digest)" "$d3"

# --- IPv6 --------------------------------------------------------------------
S6="TCP [fd00::1]:80"
V6="[fd00::1]:80"
run ipvsadm -A -t "$V6" -s maglev -b flag-1,flag-2
check "$S6: listed" svc_listed "$S6"
expect_eq "$S6: flags flag-1,flag-2" "$(svc_field "$S6" flags)" 0x18
: >"$T/s6"
for i in 1 2 3 4; do
	run ipvsadm -a -t "$V6" -r "[fd01:$i::1]:80" -m -w $i
	echo "ADD_NODE [fd01:$i::1]:80 $i" >>"$T/s6"
done
check_sim "$S6 4 dests" "$S6" "$T/s6"
run ipvsadm -e -t "$V6" -r "[fd01:3::1]:80" -m -w 0
echo "WEIGHT [fd01:3::1]:80 0" >>"$T/s6"
check_sim "$S6 drain" "$S6" "$T/s6"
run ipvsadm -d -t "$V6" -r "[fd01:1::1]:80"
echo "REMOVE_NODE [fd01:1::1]:80" >>"$T/s6"
check_sim "$S6 delete" "$S6" "$T/s6"

# --- UDP, SCTP, fwmark ---------------------------------------------------------
run ipvsadm -A -u 10.0.0.2:53 -s maglev
run ipvsadm -a -u 10.0.0.2:53 -r 10.1.1.1:53 -m
run ipvsadm -a -u 10.0.0.2:53 -r 10.1.2.1:53 -m
printf 'ADD_NODE 10.1.1.1:53\nADD_NODE 10.1.2.1:53\n' >"$T/su"
check_sim "UDP 10.0.0.2:53" "UDP 10.0.0.2:53" "$T/su"

if ipvsadm -A --sctp-service 10.0.0.3:5000 -s maglev 2>/dev/null; then
	run ipvsadm -a --sctp-service 10.0.0.3:5000 -r 10.1.1.1:5000 -m
	echo "ADD_NODE 10.1.1.1:5000" >"$T/ss"
	check_sim "SCTP 10.0.0.3:5000" "SCTP 10.0.0.3:5000" "$T/ss"
else
	fail "ipvsadm -A --sctp-service"
fi

run ipvsadm -A -f 42 -s maglev -b flag-2
run ipvsadm -a -f 42 -r 10.1.1.1:0 -m
run ipvsadm -a -f 42 -r 10.1.3.1:0 -m -w 7
printf 'ADD_NODE 10.1.1.1:0\nADD_NODE 10.1.3.1:0 7\n' >"$T/sf"
check_sim "FWM 42" "FWM 42" "$T/sf"
expect_eq "FWM 42: flags flag-2" "$(svc_field "FWM 42" flags)" 0x10

run ipvsadm -A -f 43 -6 -s maglev
run ipvsadm -a -f 43 -6 -r "[fd01:1::1]:0" -m
echo "ADD_NODE [fd01:1::1]:0" >"$T/sf6"
check_sim "FWM6 43" "FWM6 43" "$T/sf6"

n=$(grep -c '^service ' $PROC)
expect_eq "/proc lists every maglev service" "$n" 6

# Deleting a service removes it from /proc.
run ipvsadm -D -t $V
if svc_listed "$S"; then fail "$S: listed after ipvsadm -D"; else
	pass "$S: gone after ipvsadm -D"; fi
run ipvsadm -C
expect_eq "/proc is empty after ipvsadm -C" "$(wc -c <$PROC)" 0
finish
