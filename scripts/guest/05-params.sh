#!/bin/sh
# Guest test 5: module parameters. Writes of table_size that are not a
# prime in 251..5000011 fail and leave the value alone; a valid one
# rebuilds every service at once. hash_seed changes the choices (as
# maglev-sim predicts with SEED) and is shown in /proc. Bad values at insmod
# fail too.
. "${0%/*}/lib.sh"

V=10.0.0.1
S="UDP $V:80"

expect_eq "table_size default" "$(cat $PARAMS/table_size)" 65537
expect_eq "hash_seed default" "$(cat $PARAMS/hash_seed)" 0
for v in 0 1 2 4 250 65536 65535 5000012 5000021 4294967311 -1 abc 251x ""; do
	if echo "$v" >$PARAMS/table_size 2>/dev/null; then
		fail "table_size '$v' accepted"
	else
		pass "table_size '$v' rejected"
	fi
done
expect_eq "table_size unchanged after rejected writes" \
	"$(cat $PARAMS/table_size)" 65537
check "the kernel log explains a rejection" \
	sh -c "dmesg | grep -q 'table_size 65536 rejected: table size must be a prime'"
check "the kernel log explains an out-of-range size" \
	sh -c "dmesg | grep -q 'table_size 5000021 rejected: table size must be between'"

check "table_size 5000011 accepted" sh -c "echo 5000011 >$PARAMS/table_size"
check "table_size 65537 accepted" sh -c "echo 65537 >$PARAMS/table_size"

setup_net 3
warm_up
run ipvsadm -A -u $V:80 -s maglev -b flag-2
: >"$T/s"
for i in 1 2; do
	run ipvsadm -a -u $V:80 -r "10.1.$i.1:80" -m
	echo "ADD_NODE 10.1.$i.1:80" >>"$T/s"
done

g=$(svc_field "$S" gen)
check "table_size 251 accepted" sh -c "echo 251 >$PARAMS/table_size"
expect_eq "table_size reads back 251" "$(cat $PARAMS/table_size)" 251
expect_eq "the service is rebuilt at size 251 at once" \
	"$(svc_field "$S" size)" 251
expect_eq "... as a change of its own" "$(svc_field "$S" gen)" $((g + 1))
printf 'SIZE 251\nREBUILD\n' >>"$T/s"
check_sim "$S size 251" "$S" "$T/s"
expect_eq "churn of a size change counts every slot" \
	"$(svc_field "$S" churn)" 251
run ipvsadm -a -u $V:80 -r 10.1.3.1:80 -m
echo 'ADD_NODE 10.1.3.1:80' >>"$T/s"
check_sim "$S size 251, 3 dests" "$S" "$T/s"
g=$(svc_field "$S" gen)
check "table_size 251 again accepted" sh -c "echo 251 >$PARAMS/table_size"
expect_eq "writing the same size changes nothing" "$(svc_field "$S" gen)" "$g"
check "table_size 65537 accepted" sh -c "echo 65537 >$PARAMS/table_size"
printf "SIZE 65537\nREBUILD\n" >>"$T/s"
expect_eq "back to size 65537" "$(svc_field "$S" size)" 65537
check_sim "$S size 65537" "$S" "$T/s"
d=$(svc_field "$S" digest)

if have_udpflows; then naddr=10 nport=100; else naddr=3 nport=10; fi
addrs=$(client_addrs 4 $naddr)
# shellcheck disable=SC2086
flows $V 80 20000 $nport $addrs >"$T/f0"
predict "$T/f0" "$T/s" 1 >"$T/p0"
compare_choices "seed 0" "$T/f0" "$T/p0" $V 80

seed=12345678901234567890
check "hash_seed $seed accepted" sh -c "echo $seed >$PARAMS/hash_seed"
expect_eq "hash_seed reads back" "$(cat $PARAMS/hash_seed)" $seed
expect_eq "the service is rebuilt with the seed at once" \
	"$(svc_field "$S" seed)" $seed
expect_eq "the seed does not change the table" "$(svc_field "$S" digest)" "$d"
# shellcheck disable=SC2086
flows $V 80 30000 $nport $addrs >"$T/f1"
cp "$T/s" "$T/s1"
echo "SEED $seed" >>"$T/s1"
predict "$T/f1" "$T/s1" 1 >"$T/p1"
compare_choices "seed $seed" "$T/f1" "$T/p1" $V 80
predict "$T/f1" "$T/s" 1 >"$T/p1.seed0"
changed=$(awk 'NR == FNR { p[$1 " " $2] = $3; next }
	p[$1 " " $2] != $3 { n++ } END { print n + 0 }' "$T/p1.seed0" "$T/p1")
info "seed $seed changes $changed of $(wc -l <"$T/f1") choices"
check "the seed changes choices" [ "$changed" -gt 0 ]

cleanup_net

# Parameters at insmod.
run rmmod ip_vs_maglev
if insmod "$MAGLEV_KO" table_size=1000 2>/dev/null; then
	fail "insmod table_size=1000 accepted"
	rmmod ip_vs_maglev
else
	pass "insmod table_size=1000 rejected"
fi
run insmod "$MAGLEV_KO" table_size=509 hash_seed=7
expect_eq "insmod table_size=509" "$(cat $PARAMS/table_size)" 509
run ipvsadm -A -t $V:80 -s maglev
run ipvsadm -a -t $V:80 -r 10.1.1.1:80 -m
expect_eq "a new service uses table_size=509" "$(svc_field "TCP $V:80" size)" 509
expect_eq "a new service uses hash_seed=7" "$(svc_field "TCP $V:80" seed)" 7
printf 'SIZE 509\nADD_NODE 10.1.1.1:80\n' >"$T/s2"
check_sim "TCP $V:80 size 509" "TCP $V:80" "$T/s2"
run ipvsadm -C
finish
