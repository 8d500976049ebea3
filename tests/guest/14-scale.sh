#!/bin/sh
# Guest test 14: scale.
#   - SCALE_SERVICES maglev services (maglev_table_size 251, three dests each),
#     created and deleted twice with ipvsadm -R, next to as many rr services
#     for IPVS's own share of the memory; memory per service from
#     /proc/meminfo deltas, printed next to /proc's "mem" (when the module
#     has it) and the README's "2 bytes per slot";
#   - SCALE_DESTS dests on one service at the default table size;
#   - the largest maglev_table_size (5000011) with SCALE_BIG_DESTS dests.
# Every table is checked against maglev-sim (digest, slot counts).
#
# guest-timeout: 300
. "${0%/*}/lib.sh"

# Sizes; the debug kernel (KASAN, lockdep, kmemleak) gets smaller ones so
# that the run stays within its time.
if [ -e /sys/kernel/debug/kmemleak ]; then
	SCALE_SERVICES=${SCALE_SERVICES:-250}
	SCALE_DESTS=${SCALE_DESTS:-100}
	SCALE_BIG_DESTS=${SCALE_BIG_DESTS:-300}
else
	SCALE_SERVICES=${SCALE_SERVICES:-1000}
	SCALE_DESTS=${SCALE_DESTS:-300}
	SCALE_BIG_DESTS=${SCALE_BIG_DESTS:-1000}
fi
info "services $SCALE_SERVICES, dests $SCALE_DESTS, dests at the largest size $SCALE_BIG_DESTS"
SIZE_MAX=5000011
# README, table_size: slots of 2 bits for 3 dests, 16 bits for 257 or more
DOC_BITS_SMALL=2
DOC_BITS_BIG=16

# mem_used: kB in use (MemTotal - MemFree).
mem_used() {
	awk '$1 == "MemTotal:" { t = $2 } $1 == "MemFree:" { f = $2 }
		END { print t - f }' /proc/meminfo
}

# --- a thousand small services ------------------------------------------
echo 251 >$SYSCTL/maglev_table_size
services rr "$SCALE_SERVICES" 20 >"$T/rr"
printf 'SIZE 251\nADD_NODE 10.1.1.1:53 1\nADD_NODE 10.1.2.1:53 2\nADD_NODE 10.1.3.1:53 3\nDIGEST\n' >"$T/s.small"
want=$(sim "$T/s.small")

# A first rr round that is not measured: what IPVS allocates once, on its
# first services and dests, is not rr's share (without it, maglev's own
# memory per service came out negative).
services rr "$SCALE_SERVICES" 19 | ipvsadm -R
run ipvsadm -C
m0=$(mem_settle)
t0=$(stress_now)
run ipvsadm -R <"$T/rr"
t1=$(stress_now)
m1=$(mem_kernel)
run ipvsadm -C
m2=$(mem_settle)
rr_kb=$((m1 - m0))
info "$SCALE_SERVICES rr services: slab objects+vmalloc +$rr_kb kB ($((rr_kb * 1024 / SCALE_SERVICES)) B each), created in $((t1 - t0)) s"

round=1
while [ $round -le 2 ]; do
	services maglev "$SCALE_SERVICES" $((20 + round)) >"$T/mg"
	awk '$1 == "-A" { print "-D", $2, $3 }' "$T/mg" >"$T/del"
	t0=$(stress_now)
	run ipvsadm -R <"$T/mg"
	stress_wait_caught_up "" 120 || fail "round $round: services still pending"
	t1=$(stress_now)
	m3=$(mem_settle)
	cat $PROC >"$T/proc"
	expect_eq "round $round: $SCALE_SERVICES services in /proc" \
		"$(grep -c '^service ' "$T/proc")" "$SCALE_SERVICES"
	expect_eq "round $round: every service has size 251, 3 dests and maglev-sim's digest" \
		"$(awk -v d="$want" '$1 == "service" {
			for (i = 4; i < NF; i += 2) f[$i] = $(i + 1)
			if (f["size"] == 251 && f["dests"] == 3 && f["digest"] == d)
				n++
		} END { print n + 0 }' "$T/proc")" "$SCALE_SERVICES"
	mg_kb=$((m3 - m2))
	per=$(((mg_kb - rr_kb) * 1024 / SCALE_SERVICES))
	procmem=$(awk '$1 == "service" { for (i = 4; i < NF; i += 2)
		if ($i == "mem") { s += $(i + 1); n++ } }
		END { if (n) printf "%d", s / n; else print "n/a" }' "$T/proc")
	info "round $round: $SCALE_SERVICES maglev services: slab objects+vmalloc +$mg_kb kB, created in $((t1 - t0)) s"
	info "round $round: maglev's own memory per service: $per B measured (slab objects+vmalloc, maglev minus rr); /proc mem $procmem B; README $((251 * DOC_BITS_SMALL / 8)) B of slots"
	t0=$(stress_now)
	# half one by one (ipvsadm -D), the rest with ipvsadm -C
	head -n $((SCALE_SERVICES / 2)) "$T/del" >"$T/del.half"
	run ipvsadm -R <"$T/del.half"
	expect_eq "round $round: half deleted" "$(grep -c '^service ' $PROC)" \
		$((SCALE_SERVICES - SCALE_SERVICES / 2))
	run ipvsadm -C
	t1=$(stress_now)
	m2=$(mem_settle)
	info "round $round: deleted in $((t1 - t0)) s, slab objects+vmalloc $((m2 - m0)) kB above the start"
	expect_eq "round $round: /proc empty after ipvsadm -C" \
		"$(grep -c '^service ' $PROC)" 0
	round=$((round + 1))
done
check "module refcount back to 0" \
	[ "$(cat /sys/module/ip_vs_maglev/refcnt)" -eq 0 ]

# --- hundreds of dests on one service ---------------------------------------
echo 65537 >$SYSCTL/maglev_table_size
S="TCP 10.0.0.1:80"
awk -v n="$SCALE_DESTS" 'BEGIN {
	print "-A -t 10.0.0.1:80 -s maglev"
	for (i = 0; i < n; i++)
		printf "-a -t 10.0.0.1:80 -r 10.2.%d.%d:80 -m -w %d\n",
			int(i / 200), i % 200 + 1, i % 5 + 1
}' >"$T/many"
awk 'BEGIN { print "SIZE 65537" } $1 == "-a" { print "ADD_NODE", $5, $8 }' \
	"$T/many" >"$T/s.many"
t0=$(stress_now)
run ipvsadm -R <"$T/many"
check "$S: caught up" stress_wait_caught_up "" 120
t1=$(stress_now)
info "$S: $SCALE_DESTS dests added in $((t1 - t0)) s; last build $(svc_field "$S" build_ns) ns"
expect_eq "$S: dests" "$(svc_field "$S" dests)" "$SCALE_DESTS"
check_sim "$S, $SCALE_DESTS dests" "$S" "$T/s.many"
# every other one deleted in one batch
awk 'NR % 2 == 0 && $1 == "-a" { print "-d", $2, $3, $4, $5 }' "$T/many" \
	>"$T/many.del"
run ipvsadm -R <"$T/many.del"
awk 'NR % 2 == 0 && $1 == "-a" { print "REMOVE_NODE", $5 }' "$T/many" \
	>>"$T/s.many"
check "$S: caught up" stress_wait_caught_up "" 120
expect_eq "$S: dests after deleting half" "$(svc_field "$S" dests)" \
	$((SCALE_DESTS - SCALE_DESTS / 2))
check_sim "$S, half deleted" "$S" "$T/s.many"
run ipvsadm -C

# --- the largest table -----------------------------------------------------------
# The dests go in at a small size, then one change rebuilds at the largest.
echo 4093 >$SYSCTL/maglev_table_size
S="UDP 10.0.0.1:53"
awk -v n="$SCALE_BIG_DESTS" 'BEGIN {
	print "-A -u 10.0.0.1:53 -s maglev"
	for (i = 0; i < n; i++)
		printf "-a -u 10.0.0.1:53 -r 10.3.%d.%d:53 -m -w %d\n",
			int(i / 200), i % 200 + 1, i % 7 + 1
}' >"$T/big"
run ipvsadm -R <"$T/big"
check "$S: caught up" stress_wait_caught_up "" 120
m0=$(mem_pages)
u0=$(mem_used)
echo $SIZE_MAX >$SYSCTL/maglev_table_size
t0=$(stress_now)
run ipvsadm -e -u 10.0.0.1:53 -r 10.3.0.1:53 -m -w 9
check "$S: caught up" stress_wait_caught_up "" 600
t1=$(stress_now)
m1=$(mem_pages)
u1=$(mem_used)
{
	echo "SIZE 4093"
	awk '$1 == "-a" { print "ADD_NODE", $5, $8 }' "$T/big"
	echo "SIZE $SIZE_MAX"
	echo "WEIGHT 10.3.0.1:53 9"
} >"$T/s.big"
expect_eq "$S: size" "$(svc_field "$S" size)" $SIZE_MAX
expect_eq "$S: dests" "$(svc_field "$S" dests)" "$SCALE_BIG_DESTS"
info "$S: rebuilt at $SIZE_MAX slots with $SCALE_BIG_DESTS dests in $((t1 - t0)) s (build_ns $(svc_field "$S" build_ns))"
pm=$(svc_field "$S" mem)
info "$S: memory +$((m1 - m0)) kB SUnreclaim+VmallocUsed, +$((u1 - u0)) kB MemTotal-MemFree; /proc mem ${pm:-n/a} B; README $((SIZE_MAX * DOC_BITS_BIG / 8 / 1024)) kB of slots"
check_sim "$S at $SIZE_MAX slots" "$S" "$T/s.big"
run ipvsadm -C
echo 65537 >$SYSCTL/maglev_table_size
finish
