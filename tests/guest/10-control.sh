#!/bin/sh
# Guest test 10: the control path.
# 1. Every network namespace has its own maglev_table_size and
#    maglev_hash_key: with different values in the root namespace and in
#    n1, a write in one changes nothing in the other (size, key
#    fingerprint, gen); a size write rebuilds that namespace's services with
#    no ipvsadm edit, and the digests equal maglev-sim's in each. Traffic is
#    hashed with its own namespace's key: n1's clients (local sources on a
#    dummy link) go where maglev-sim says with n1's key KB, which the root's
#    key KA would send elsewhere.
# 2. ipvsadm never waits for a running build: right after a drain starts a
#    build of M = 5000011 slots and many destinations (seconds under TCG),
#    the drain itself, an "ipvsadm -A" in another namespace, an "ipvsadm
#    -a" and an "ipvsadm -e" to that very service all return before that
#    build's table is published (table_gen unchanged), and the build ran
#    meanwhile: the first table published after them is the drain's own
#    (its table_gen is the drain's gen, older than the calls'), so it was
#    built from the set the drain left and published after the calls
#    returned. Orders of events, no clock: their times are printed next to
#    the build's (benchmark figures); the ipvsadm times bound how long our
#    callbacks hold IPVS's mutex. On the kcsan kernel, where every memory
#    access is instrumented (a build of 5000011 slots took 41 s), M is
#    2000003: still seconds.
# guest-timeout: 240
# kcsan-kernel: yes
# debug-kernel: yes
. "${0%/*}/lib.sh"

CATCHUP_TIMEOUT=120
now_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }
KA=00112233445566778899aabbccddeeff
KB=ffeeddccbbaa99887766554433221100

ip netns add n1
ip netns add n2
ip netns exec n2 ipvsadm -A -t 10.0.0.12:80 -s rr
# The root namespace: size 509, key KA; n1: size 1021, key KB.
ns_sysctl "" maglev_table_size 509 || fail "root: maglev_table_size 509"
ns_sysctl "" maglev_hash_key $KA || fail "root: maglev_hash_key"
ns_sysctl n1 maglev_table_size 1021 || fail "n1: maglev_table_size 1021"
ns_sysctl n1 maglev_hash_key $KB || fail "n1: maglev_hash_key"
for ns in "" n1; do
	in_ns "$ns" ipvsadm -A -u 10.0.0.1:53 -s maglev || fail "ipvsadm -A $ns"
	in_ns "$ns" ipvsadm -a -u 10.0.0.1:53 -r 10.1.1.1:53 -m -w 2 ||
		fail "ipvsadm -a $ns"
	in_ns "$ns" ipvsadm -a -u 10.0.0.1:53 -r 10.1.2.1:53 -m -w 3 ||
		fail "ipvsadm -a $ns"
done
S="UDP 10.0.0.1:53"
printf 'ADD_NODE 10.1.1.1:53 2\nADD_NODE 10.1.2.1:53 3\n' >"$T/nodes"
wait_caught_up
wait_caught_up n1
FPA=$(key_fp $KA)
FPB=$(key_fp $KB)
FPZ=$(key_fp $ZERO_KEY)

# --- 1. per-namespace sysctls --------------------------------------------------
# state NS: "size KEYFP gen" of the service in NS ("" for the root).
state() {
	echo "$(svc_field "$S" size "$1") $(svc_field "$S" key "$1") $(svc_field "$S" gen "$1")"
}
expect_eq "root: size 509, KA's fingerprint" \
	"$(svc_field "$S" size) $(svc_field "$S" key)" "509 $FPA"
expect_eq "n1: size 1021, KB's fingerprint" \
	"$(svc_field "$S" size n1) $(svc_field "$S" key n1)" "1021 $FPB"
{ echo "SIZE 509"; cat "$T/nodes"; } >"$T/s.root"
{ echo "SIZE 1021"; cat "$T/nodes"; } >"$T/s.n1"
check_sim "root: size 509" "$S" "$T/s.root"
d1=$(svc_field "$S" digest n1)
{ cat "$T/s.n1"; echo DIGEST; } >"$T/sim.n1"
expect_eq "n1: digest equals maglev-sim's for size 1021" "$d1" \
	"$(sim "$T/sim.n1" | tail -n 1)"

# Traffic in n1 is hashed with n1's key KB while the root's is KA: 40
# client addresses of n1's own (IPVS schedules locally made connections
# too; the datagrams then leave by a dummy link), each one flow.
{
	echo "link set lo up"
	echo "link add d0 type dummy"
	echo "link set d0 up"
	awk 'BEGIN { for (i = 1; i <= 40; i++)
		printf "addr add 10.5.0.%d/24 dev d0\n", i }'
	echo "route add default dev d0"
} | ip -n n1 -batch - || fail "n1: dummy link and client addresses"
# shellcheck disable=SC2046 # one address a word
ip netns exec n1 udpflows 10.0.0.1 53 5000 1 \
	$(awk 'BEGIN { for (i = 1; i <= 40; i++) print "10.5.0." i }') \
	>"$T/f.n1"
{ cat "$T/s.n1"; echo "KEY $KB"; } >"$T/k.n1"
predict "$T/f.n1" "$T/k.n1" 0 >"$T/p.n1"
compare_choices "n1: flows with n1's key KB" "$T/f.n1" "$T/p.n1" 10.0.0.1 53 n1
{ cat "$T/s.n1"; echo "KEY $KA"; } >"$T/ka.n1"
predict "$T/f.n1" "$T/ka.n1" 0 >"$T/pa.n1"
changed=$(awk 'NR == FNR { p[$1 " " $2] = $3; next }
	p[$1 " " $2] != $3 { n++ } END { print n + 0 }' "$T/pa.n1" "$T/p.n1")
check "n1: the root's key KA would send $changed of 40 flows elsewhere" \
	[ "$changed" -gt 0 ]

# A size write in the root namespace rebuilds there, not in n1.
g0=$(svc_field "$S" gen)
n1_before=$(state n1)
ns_sysctl "" maglev_table_size 2039 || fail "root: maglev_table_size 2039"
expect_eq "root: size 2039 without an edit" "$(svc_field "$S" size)" 2039
expect_eq "root: one more generation" "$(svc_field "$S" gen)" $((g0 + 1))
expect_eq "root: key unchanged by the size write" "$(svc_field "$S" key)" "$FPA"
printf 'SIZE 2039\nREBUILD\n' >>"$T/s.root"
check_sim "root: size 2039" "$S" "$T/s.root"
expect_eq "n1: size, key and gen untouched by root's size write" \
	"$(state n1)" "$n1_before"
expect_eq "n1: maglev_table_size still 1021" \
	"$(ns_sysctl n1 maglev_table_size)" 1021

# A key write in n1 changes n1's key only, and rebuilds nothing.
root_before=$(state "")
g1=$(svc_field "$S" gen n1)
ns_sysctl n1 maglev_hash_key $ZERO_KEY || fail "n1: maglev_hash_key zero"
expect_eq "n1: the zero key's fingerprint" "$(svc_field "$S" key n1)" "$FPZ"
expect_eq "n1: the key write does not rebuild" "$(svc_field "$S" gen n1)" "$g1"
expect_eq "n1: digest unchanged" "$(svc_field "$S" digest n1)" "$d1"
expect_eq "root: size, key and gen untouched by n1's key write" \
	"$(state "")" "$root_before"
expect_eq "root: maglev_hash_key still KA" \
	"$(ns_sysctl "" maglev_hash_key)" $KA

# A size write in n1 rebuilds there, not in the root namespace.
ns_sysctl n1 maglev_table_size 65537 || fail "n1: maglev_table_size 65537"
expect_eq "n1: size 65537 without an edit" "$(svc_field "$S" size n1)" 65537
expect_eq "n1: one more generation" "$(svc_field "$S" gen n1)" $((g1 + 1))
printf 'SIZE 65537\nREBUILD\n' >>"$T/s.n1"
{ cat "$T/s.n1"; echo DIGEST; } >"$T/sim.n1"
expect_eq "n1: digest equals maglev-sim's for size 65537" \
	"$(svc_field "$S" digest n1)" "$(sim "$T/sim.n1" | tail -n 1)"
expect_eq "root: untouched by n1's size write" "$(state "")" "$root_before"
# The module parameters are untouched by all of it.
expect_eq "parameter table_size unchanged" "$(cat $PARAMS/table_size)" 65537
expect_eq "parameter hash_key unchanged" "$(cat $PARAMS/hash_key)" $ZERO_KEY
ns_sysctl "" maglev_hash_key $ZERO_KEY || fail "root: maglev_hash_key zero"
ns_sysctl "" maglev_table_size 65537 || fail "root: maglev_table_size 65537"
in_ns n1 ipvsadm -C
ipvsadm -C

# --- 2. a big build does not hold up ipvsadm ---------------------------------
NB=${BIG_N:-500}
BIG_M=5000011
[ -e /sys/kernel/debug/kcsan ] && BIG_M=2000003
echo $BIG_M >$SYSCTL/maglev_table_size
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
info "M=$BIG_M N=$NB: first build took $((bns / 1000000)) ms"

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

# A drain needs two fills: the longest build there is. It starts at once;
# the calls after it must not wait for it.
tg0=$(svc_field_now "$B" table_gen)
t_start=$(now_ms)
run ipvsadm -e -t $V:80 -r 10.100.0.2:80 -m -w 0
g_drain=$(svc_field_now "$B" gen)
t0=$(now_ms)
run ip netns exec n1 ipvsadm -A -t 10.0.0.12:80 -s maglev
busy_a=$(($(now_ms) - t0))
t0=$(now_ms)
run ipvsadm -a -t $V:80 -r 10.200.0.1:80 -m -w 1
busy_add=$(($(now_ms) - t0))
t0=$(now_ms)
run ipvsadm -e -t $V:80 -r 10.100.0.3:80 -m -w 5
busy_e=$(($(now_ms) - t0))
t_calls=$(now_ms)
tg_calls=$(svc_field_now "$B" table_gen)
g_calls=$(svc_field_now "$B" gen)
# The first table published after tg0: whose set, when, and how long that
# build ran (the next build, of M = $BIG_M slots too, takes seconds).
n=0
while tg_first=$(svc_field_now "$B" table_gen) && [ "$tg_first" = "$tg0" ] &&
	[ $n -lt 2400 ]; do
	sleep 0.05
	n=$((n + 1))
done
t_pub=$(now_ms)
b_ms=$(($(svc_field_now "$B" build_ns) / 1000000))
w=$((t_calls - t_start))
p=$((t_pub - t_start))
info "ipvsadm calls took $w ms from the drain on; its build was published after $p ms and ran $b_ms ms"
expect_eq "no table was published while the drain, -A (other netns), -a and -e ran (table_gen)" \
	"$tg_calls" "$tg0"
# Started at the drain, it ran through the calls: the first table
# published after them is the one of the drain's generation, and the calls
# made newer ones.
expect_eq "the first table published after the calls is the drain's (table_gen = the drain's gen; gen $g_calls after the calls)" \
	"$tg_first" "$g_drain"
check "the calls made newer generations than the drain's ($g_calls > $g_drain)" \
	[ "$g_calls" -gt "$g_drain" ]
check "n1's new service is listed" svc_listed "TCP 10.0.0.12:80" n1
t0=$(now_ms)
wait_caught_up
catch=$(($(now_ms) - t0))
bns=$(svc_field "$B" build_ns)
echo "BENCH: M=$BIG_M N=$NB: build_ns $bns (last build); during builds" \
	"ipvsadm -A (other netns) ${busy_a} ms, -a ${busy_add} ms, -e ${busy_e} ms;" \
	"idle -A ${idle_a} ms, -e ${idle_e} ms; caught up ${catch} ms after"
expect_eq "$B: every change in the table" "$(svc_field "$B" dests)" $((NB + 1))
expect_eq "$B: no failed build" "$(svc_field "$B" build_fail)/$(svc_field "$B" alloc_fail)" 0/0
ipvsadm -C
in_ns n1 ipvsadm -C
ip netns del n1
ip netns del n2
echo 65537 >$SYSCTL/maglev_table_size
finish
