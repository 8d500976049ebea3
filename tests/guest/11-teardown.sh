#!/bin/sh
# Guest test 11: builds pending or running while things go away, and
# injected allocation failures during builds.
# 1. A burst of changes to services with M = 5000011, then at once
#    "ipvsadm -C" and rmmod: rmmod succeeds (module unload waits for the
#    builds still running), three times (once on the debug kernel).
# 2. The same in a network namespace that is then deleted: its services are
#    released and the module unloads.
# 3. Where the kernel has failslab (KFLAVOUR=debug): slab allocations of the
#    workqueue's kernel threads fail while a destination is added under
#    traffic; the build is retried until it succeeds (alloc_fail counts the
#    failures), every flow is served meanwhile, and the final table equals
#    maglev-sim's.
# 4. Then failslab fails the allocation of the set's entry for a server
#    that "ipvsadm -a" adds: the set is incomplete, and with no other change
#    the build records the server from IPVS's list and publishes it.
# 5. Where the kernel has fail_page_alloc (KFLAVOUR=debug): page
#    allocations of the same threads fail, order 0 included, so that a
#    build's vmalloc'd memory (its scratch, its table) is what fails; the
#    failure is counted, the build retried, the final table maglev-sim's.
# TEARDOWN_PARTS (GUEST_ENV) picks parts. The harness fails the test on
# any kernel report (KASAN, lockdep, ...).
# guest-timeout: 300
# kcsan-kernel: yes
# debug-kernel: yes
. "${0%/*}/lib.sh"

V=10.0.0.1
REF=/sys/module/ip_vs_maglev/refcnt
# TEARDOWN_PARTS (GUEST_ENV): the parts to run, as digits (default 12345;
# 4 and 5 use 3's service, so 3 runs whenever either does).
PARTS=${TEARDOWN_PARTS:-12345}
part() { case $PARTS in *"$1"*) return 0 ;; esac; return 1; }

# burst NETNS: two maglev services with 300 dests at M = 5000011, then 20
# edits in a row; returns with builds queued or running.
burst() {
	{
		echo "-A -t $V:80 -s maglev"
		echo "-A -u $V:80 -s maglev -b flag-2"
		awk -v v="$V" 'BEGIN { for (i = 0; i < 300; i++) {
			r = sprintf("10.%d.%d.%d:80", 100, int(i / 250), i % 250 + 1)
			printf "-a -t %s:80 -r %s -m -w %d\n", v, r, i % 5 + 1
			printf "-a -u %s:80 -r %s -m\n", v, r } }'
		_e=1
		while [ $_e -le 20 ]; do
			echo "-e -t $V:80 -r 10.100.0.$_e:80 -m -w 0"
			_e=$((_e + 1))
		done
	} >"$T/burst"
	in_ns "$1" ipvsadm -R <"$T/burst" || fail "ipvsadm -R (burst) in '$1'"
}

# --- 1. ipvsadm -C and rmmod with builds pending -----------------------------
# Three cycles; one on the debug kernel (KASAN, kmemleak), where a burst's
# builds take ten times as long and one cycle has the same windows.
CYCLES=3
[ -e /sys/kernel/debug/kmemleak ] && CYCLES=1
part 1 || CYCLES=0
i=1
while [ $i -le $CYCLES ]; do
	echo 5000011 >$SYSCTL/maglev_table_size
	burst ""
	# What this is about: builds still queued or running (a build of
	# 5000011 slots takes far longer than this read).
	p=$(grep -c ' pending 1 ' $PROC)
	ipvsadm -C
	if rmmod ip_vs_maglev; then
		pass "cycle $i: rmmod right after ipvsadm -C"
	else
		fail "cycle $i: rmmod right after ipvsadm -C"
	fi
	check "cycle $i: builds were pending at ipvsadm -C ($p of 2 services)" \
		[ "$p" -gt 0 ]
	run insmod "$MAGLEV_KO"
	i=$((i + 1))
done

# --- 2. netns deletion with builds pending -----------------------------------
if part 2; then
	echo 5000011 >$SYSCTL/maglev_table_size
	ip netns add gone
	# Up, or Debian's kernel (CONFIG_IP_MULTIPLE_TABLES) finds no unicast
	# address type for the real servers in the new namespace.
	ip -n gone link set lo up
	ns_sysctl gone maglev_table_size 5000011 ||
		fail "gone: maglev_table_size 5000011 refused"
	burst gone
	burst ""
	p=$(ip netns exec gone grep -c ' pending 1 ' $PROC)
	ip netns del gone
	check "builds were pending in the namespace deleted ($p of 2 services)" \
		[ "$p" -gt 0 ]
	n=0
	while [ "$(cat $REF)" -ne 2 ] && [ $n -lt 300 ]; do
		sleep 0.2
		n=$((n + 1))
	done
	expect_eq "the deleted namespace's services are released" "$(cat $REF)" 2
	ipvsadm -C
	check "rmmod after the namespace is gone" rmmod ip_vs_maglev
	run insmod "$MAGLEV_KO"
fi

# --- 3. failslab during builds under traffic ---------------------------------
FS=/sys/kernel/debug/failslab
if ! part 3 && ! part 4 && ! part 5; then
	finish
fi
if [ ! -d $FS ]; then
	# The debug kernel (the one with kmemleak) is the one meant to test it.
	if [ -e /sys/kernel/debug/kmemleak ]; then
		fail "part 3: the debug kernel has no failslab (CONFIG_FAILSLAB)"
	else
		skip "part 3: no failslab in this kernel (CONFIG_FAILSLAB, KFLAVOUR=debug); injected build failures not tested"
	fi
	finish
fi

setup_net 3
warm_up
udp_service3 "$T/s"
S="UDP $V:80"
d=$(svc_field "$S" digest)
addrs=$(client_addrs 4 10)

# No failure (times 0) and the filters set before the probability: until
# then any allocation, a timer's in softirq too, could fail with a stack
# dump (seen on the debug kernel: ndisc_send_rs() from addrconf_rs_timer()).
echo 0 >$FS/times
echo 0 >$FS/verbose
echo 1 >$FS/interval
echo 0 >$FS/space
echo N >$FS/ignore-gfp-wait
echo N >$FS/cache-filter
echo Y >$FS/task-filter
echo 100 >$FS/probability
n=0
port=10000
while [ "$(svc_field_now "$S" alloc_fail)" = 0 ] && [ $n -lt 4 ]; do
	n=$((n + 1))
	wait_caught_up
	kworkers 1
	echo 4 >$FS/times
	run ipvsadm -a -u $V:80 -r 10.1.$n.2:80 -m
	echo "ADD_NODE 10.1.$n.2:80" >>"$T/s"
	# shellcheck disable=SC2086
	NOWAIT=1 flows $V 80 $port 20 $addrs >>"$T/f"
	port=$((port + 20))
done
info "failslab: alloc_fail $(svc_field_now "$S" alloc_fail) after $n adds"
check "$S: failed builds are counted in alloc_fail" \
	[ "$(svc_field_now "$S" alloc_fail)" -gt 0 ]
wait_caught_up
echo 0 >$FS/times
kworkers 0
conns_of "$T/f" $V 80 >"$T/c"
expect_eq "every flow sent during the failures was served" \
	"$(wc -l <"$T/c")" "$(wc -l <"$T/f")"
expect_eq "$S: caught up after the retries" "$(svc_field "$S" pending)" 0
expect_eq "$S: no other failure" "$(svc_field "$S" build_fail)" 0
check "$S: the table changed" [ "$(svc_field "$S" digest)" != "$d" ]
check_sim "$S after the retries" "$S" "$T/s"

# --- 4. a destination that could not be recorded -----------------------------
# failslab fails the first allocation from kmalloc-cg-96, the cache of the
# set's entries (struct maglev_dest, 92 bytes), of the task of one
# "ipvsadm -a": IPVS adds the server, the module cannot record it. With no
# other change of the service, the build that change queued records it
# from IPVS's list and publishes the table with it, within the hold-off.
if part 4; then
	C96=/sys/kernel/slab/kmalloc-cg-96/failslab
	echo 1 >$C96 || fail "part 4: no failslab for kmalloc-cg-96"
	echo Y >$FS/cache-filter
	echo 1 >$FS/times
	warned=$(dmesg | grep -c "no memory to record a maglev destination")
	# shellcheck disable=SC2016 # expanded by the inner sh
	sh -c 'echo 1 >/proc/self/make-it-fail && exec "$@"' sh \
		ipvsadm -a -u $V:80 -r 10.1.1.9:80 -m || fail "part 4: ipvsadm -a refused"
	echo "ADD_NODE 10.1.1.9:80" >>"$T/s"
	echo 0 >$FS/times
	echo 0 >$C96
	echo N >$FS/cache-filter
	check "part 4: the set could not record the server (the log says so)" \
		[ "$(dmesg | grep -c "no memory to record a maglev destination")" -gt "$warned" ]
	# The hold-off (50 ms) and the build: seconds on the debug kernel, not 60.
	if wait_caught_up "" 10; then
		pass "part 4: the service caught up with no other change"
	fi
	expect_eq "$S: the set is complete again" "$(svc_field_now "$S" incomplete)" 0
	expect_eq "$S: the table has the server" \
		"$(svc_dests "$S" | grep -c '^10.1.1.9:80 1 ')" 1
	check_sim "$S after the repair" "$S" "$T/s"
fi

# --- 5. fail_page_alloc: a vmalloc'd build allocation fails -------------------
# Page allocations of the workqueue's threads fail (order 0 too, sleeping
# ones too), which is where a table or the build's scratch comes from once
# it is larger than a page (vmalloc: a 65537-slot build's scratch is over
# 100 KB): under KASAN and kmemleak, the failed build frees what it had,
# is retried, and publishes the servers' table.
FP=/sys/kernel/debug/fail_page_alloc
if ! part 5; then
	:
elif [ -d $FP ]; then
	echo 0 >$FP/times
	echo 0 >$FP/verbose
	echo 1 >$FP/interval
	echo N >$FP/ignore-gfp-wait
	echo N >$FP/ignore-gfp-highmem
	echo 0 >$FP/min-order
	echo Y >$FP/task-filter
	echo 100 >$FP/probability
	a=$(svc_field_now "$S" alloc_fail)
	n=0
	while [ "$(svc_field_now "$S" alloc_fail)" = "$a" ] && [ $n -lt 4 ]; do
		n=$((n + 1))
		wait_caught_up
		kworkers 1
		echo 2 >$FP/times
		run ipvsadm -a -u $V:80 -r 10.2.$n.2:80 -m -w 2
		echo "ADD_NODE 10.2.$n.2:80 2" >>"$T/s"
		wait_caught_up
	done
	echo 0 >$FP/times
	kworkers 0
	info "fail_page_alloc: alloc_fail $a -> $(svc_field_now "$S" alloc_fail) after $n adds"
	check "$S: builds whose page allocations failed are counted in alloc_fail" \
		[ "$(svc_field_now "$S" alloc_fail)" -gt "$a" ]
	wait_caught_up
	expect_eq "$S: caught up after the page allocation failures" \
		"$(svc_field "$S" pending)" 0
	check_sim "$S after the page allocation failures" "$S" "$T/s"
elif [ -e /sys/kernel/debug/kmemleak ]; then
	fail "part 5: the debug kernel has no fail_page_alloc (CONFIG_FAIL_PAGE_ALLOC)"
else
	skip "part 5: no fail_page_alloc in this kernel (KFLAVOUR=debug); injected page allocation failures not tested"
fi
cleanup_net
finish
