#!/bin/sh
# Guest test 8: a rebuild that fails keeps the previous table serving.
# More destinations than table slots is rejected by the table builder
# (build_fail), and so is a weight above 65535; where the kernel has
# failslab, an injected allocation failure while a destination is deleted
# (alloc_fail) leaves the old table in place.  A destination that the old
# table still maps keys to but that was removed or set to weight 0 is never
# chosen, and its keys are not dropped.  The next change rebuilds.
. "${0%/*}/lib.sh"

V=10.0.0.1
S="TCP $V:80"

# --- too many destinations for the table size -------------------------------
echo 251 >$PARAMS/table_size
{
	echo "-A -t $V:80 -s maglev"
	i=1
	while [ $i -le 251 ]; do
		echo "-a -t $V:80 -r 10.2.$((i / 200)).$((i % 200 + 1)):80 -m"
		i=$((i + 1))
	done
} >"$T/restore"
run ipvsadm -R <"$T/restore"
expect_eq "$S: 251 dests in 251 slots" "$(svc_field "$S" dests)" 251
echo "SIZE 251" >"$T/s"
awk '$1 == "-a" { print "ADD_NODE " $5 }' "$T/restore" >>"$T/s"
check_sim "$S 251 dests" "$S" "$T/s"
d=$(svc_field "$S" digest)
expect_eq "$S: no failure yet" "$(svc_field "$S" build_fail)" 0

run ipvsadm -a -t $V:80 -r 10.3.0.1:80 -m
expect_eq "$S: a 252nd dest fails the rebuild" "$(svc_field "$S" build_fail)" 1
expect_eq "$S: ... the old table stays (dests)" "$(svc_field "$S" dests)" 251
expect_eq "$S: ... the old table stays (digest)" "$(svc_field "$S" digest)" "$d"
check "the kernel log says why" \
	sh -c "dmesg | grep -q '$S: table rebuild (size 251, 252 dests) failed: more backends than table slots'"
run ipvsadm -d -t $V:80 -r 10.2.0.2:80
expect_eq "$S: the next change rebuilds" "$(svc_field "$S" builds)" 253
printf 'REMOVE_NODE 10.2.0.2:80\nADD_NODE 10.3.0.1:80\n' >>"$T/s"
check_sim "$S after the rebuild" "$S" "$T/s"
run ipvsadm -C
echo 65537 >$PARAMS/table_size

# --- weight 0 while a failed rebuild keeps the old table --------------------
# A weight above 65535 (IPVS takes up to INT_MAX) fails every rebuild, so
# the table from before keeps mapping keys to a dest whose weight is then
# set to 0.  Without flag-1 those keys still get a dest: a drained or
# removed dest is never a reason to drop a connection.
setup_net 3
warm_up
udp_service3 "$T/s0"
S="UDP $V:80"
d=$(svc_field "$S" digest)
run ipvsadm -e -u $V:80 -r 10.1.1.1:80 -m -w 70000
expect_eq "$S: weight 70000 fails the rebuild" "$(svc_field "$S" build_fail)" 1
check "the kernel log says why" \
	sh -c "dmesg | grep -q '$S: table rebuild .* failed: backend weight must be 0 to 65535'"
run ipvsadm -e -u $V:80 -r 10.1.2.1:80 -m -w 0
expect_eq "$S: ... and so does the next change" "$(svc_field "$S" build_fail)" 2
expect_eq "$S: the old table stays" "$(svc_field "$S" digest)" "$d"
addrs=$(client_addrs 4 10)
# shellcheck disable=SC2086
flows $V 80 10000 30 $addrs >"$T/f0"
predict "$T/f0" "$T/s0" 1 | sort >"$T/p0"
conns $V 80 | awk '$2 >= 10000 && $2 < 10030' | sort >"$T/c0"
expect_eq "$S: every flow is served without flag-1" \
	"$(wc -l <"$T/c0")" "$(wc -l <"$T/f0")"
expect_eq "$S: no flow goes to the weight-0 dest" \
	"$(grep -c ' 10\.1\.2\.1:80$' "$T/c0")" 0
check "$S: some flows mapped to the weight-0 dest" \
	[ "$(grep -c ' 10\.1\.2\.1:80$' "$T/p0")" -gt 0 ]
bad=$(awk 'NR == FNR { p[$1 " " $2] = $3; next }
	p[$1 " " $2] != "10.1.2.1:80" && p[$1 " " $2] != $3 { n++ }
	END { print n + 0 }' "$T/p0" "$T/c0")
expect_eq "$S: the other flows keep their dest" "$bad" 0
run ipvsadm -C
cleanup_net

# --- injected allocation failure ---------------------------------------------
FS=/sys/kernel/debug/failslab
# The table for M=251 and 21..22 dests (about 3 KiB: header, 112 bytes per
# dest, 526 for the slots) comes from kmalloc-4k, which little else that
# "ipvsadm -d" does in its own task allocates from.
CACHE=/sys/kernel/slab/kmalloc-4k/failslab
if [ ! -d $FS ] || ! echo 0 2>/dev/null >$CACHE; then
	info "no failslab in this kernel: allocation failure not tested"
	finish
fi

setup_net 3
warm_up
echo 251 >$PARAMS/table_size
run ipvsadm -A -u $V:80 -s maglev -b flag-2
echo "SIZE 251" >"$T/s"
i=1
while [ $i -le 22 ]; do
	r=10.1.$(((i - 1) % 3 + 1)).$(((i - 1) / 3 + 1)):80
	run ipvsadm -a -u $V:80 -r "$r" -m
	echo "ADD_NODE $r" >>"$T/s"
	i=$((i + 1))
done
S="UDP $V:80"
d=$(svc_field "$S" digest)
GONE=10.1.2.1:80

echo 100 >$FS/probability
echo 1 >$FS/interval
echo 0 >$FS/space
echo 0 >$FS/verbose
echo N >$FS/ignore-gfp-wait
echo Y >$FS/task-filter
echo Y >$FS/cache-filter
# Allocations with __GFP_NOWARN before ours (a netlink reply, say) may
# take the first failures silently: allow one more failure each attempt.
n=0
while [ "$(svc_field "$S" alloc_fail)" = 0 ] && [ $n -lt 4 ]; do
	n=$((n + 1))
	# The dest is gone if the failures hit only other allocations.
	ipvsadm -Ln -u $V:80 | grep -q " $GONE " ||
		run ipvsadm -a -u $V:80 -r $GONE -m
	echo $n >$FS/times
	echo 1 >$CACHE
	# Only this subshell, then ipvsadm, has make-it-fail set.
	(echo 1 >/proc/self/make-it-fail && exec ipvsadm -d -u $V:80 -r $GONE) \
		>/dev/null 2>&1
	echo 0 >$CACHE
done
echo 0 >$FS/times
info "failslab: the rebuild failed at attempt $n"
expect_eq "$S: an allocation failure is counted" "$(svc_field "$S" alloc_fail)" 1
if ipvsadm -Ln -u $V:80 | grep -q " $GONE "; then
	fail "ipvsadm -d $GONE did not delete the dest"
else
	pass "ipvsadm -d $GONE deleted the dest in IPVS"
fi
expect_eq "$S: the old table stays (dests)" "$(svc_field "$S" dests)" 22
expect_eq "$S: the old table stays (digest)" "$(svc_field "$S" digest)" "$d"
check "the kernel log reports the failure" \
	sh -c "dmesg | grep -q '$S: table rebuild (size 251, 21 dests) failed: out of memory'"

# The old table still maps keys to the deleted dest: those flows fall back
# to the others even without flag-1, the others keep their dest.
addrs=$(client_addrs 4 10)
# shellcheck disable=SC2086
flows $V 80 20000 30 $addrs >"$T/f"
predict "$T/f" "$T/s" 1 | sort >"$T/p"
conns $V 80 | awk '$2 >= 20000 && $2 < 20030' | sort >"$T/c"
expect_eq "no flow goes to the deleted dest" \
	"$(grep -c ' 10\.1\.2\.1:80$' "$T/c")" 0
expect_eq "flows of the deleted dest are served too" \
	"$(wc -l <"$T/c")" "$(wc -l <"$T/f")"
bad=$(awk -v g=$GONE 'NR == FNR { p[$1 " " $2] = $3; next }
	p[$1 " " $2] != g && p[$1 " " $2] != $3 { n++ }
	END { print n + 0 }' "$T/p" "$T/c")
expect_eq "the others keep their dest" "$bad" 0

run ipvsadm -E -u $V:80 -s maglev -b flag-1,flag-2
# shellcheck disable=SC2086
flows $V 80 30000 30 $addrs >"$T/f2"
conns $V 80 | awk '$2 >= 30000' >"$T/c2"
expect_eq "with flag-1 every flow is served" "$(wc -l <"$T/c2")" "$(wc -l <"$T/f2")"
expect_eq "with flag-1 no flow goes to the deleted dest" \
	"$(grep -c ' 10\.1\.2\.1:80$' "$T/c2")" 0

run ipvsadm -e -u $V:80 -r 10.1.1.1:80 -m
echo "REMOVE_NODE $GONE" >>"$T/s"
expect_eq "$S: the next change rebuilds without the dest" \
	"$(svc_field "$S" dests)" 21
check_sim "$S after the rebuild" "$S" "$T/s"
cleanup_net
echo 65537 >$PARAMS/table_size
finish
