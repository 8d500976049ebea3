#!/bin/sh
# Guest test 23: a module load that fails after the module set up its
# namespaces leaves no RCU callback behind.
#
# The test kernel has IPVS's own mh built in (kconfig/base.config), so
# the MH_COMPAT build (ip_vs_mh.ko, registering "mh"; vm-test.sh builds it
# into /maglev/mh/ for the tests marked "# mh-compat: yes") registers its
# pernet subsystem, then fails in register_ip_vs_scheduler().
# Unregistering the subsystem runs every namespace's exit, which frees its
# key with call_rcu(); those callbacks must have run before the module's
# text is freed (unregister_pernet_subsys() waits for them with
# rcu_barrier()). With namespaces present and synchronize_rcu() woken
# straight from the grace period (rcutree.rcu_normal_wake_from_gp=1: the
# module loader's grace periods queue no callback that would flush ours),
# each insmod must fail with the scheduler's error, and the kernel must
# stay clean through the grace periods that follow (the harness fails the
# test on any kernel report; the debug kernel has KASAN).
# On the debug kernel the callbacks are lazy (rcu_nocbs=all, lazy RCU):
# call_rcu() holds them up to 10 s unless something flushes them. A
# callback left queued when the load fails runs long after the module's
# text was unmapped, and the guest oopses in the wait below: a
# deterministic failure, where on the default kernel it takes a race
# (seen: a call_rcu() added after unregister_pernet_subsys() oopsed in
# rcu_do_batch()).
# debug-kernel: yes
# debug-kernel-args: rcu_nocbs=all rcutree.enable_rcu_lazy=1
# mh-compat: yes
. "${0%/*}/lib.sh"

MH_KO=${MAGLEV_DIR:-/maglev}/mh/ip_vs_mh.ko
if [ ! -f "$MH_KO" ]; then
	fail "no $MH_KO (vm-test.sh builds it with MH_COMPAT=1)"
	finish
fi
# The same sysctls and /proc file would clash with ip_vs_maglev.ko's (a
# failure before the path under test, and a proc warning): unload it.
check "rmmod ip_vs_maglev" rmmod ip_vs_maglev
if ipvsadm -A -t 10.0.0.9:80 -s mh; then
	pass "IPVS has its own mh (built in)"
	ipvsadm -D -t 10.0.0.9:80
else
	fail "no built-in mh: the MH_COMPAT build would load"
fi

i=1
while [ $i -le 8 ]; do
	ip netns add "mh$i"
	i=$((i + 1))
done
W=/sys/module/rcutree/parameters/rcu_normal_wake_from_gp
L=/sys/module/rcutree/parameters/enable_rcu_lazy
if [ -e /sys/kernel/debug/kmemleak ]; then
	# The debug kernel: the wait is deterministic only with lazy callbacks.
	expect_eq "debug kernel: lazy RCU callbacks are on" "$(cat $L 2>&1)" Y
	check "debug kernel: RCU callbacks offloaded (rcu_nocbs)" \
		sh -c 'dmesg | grep -q "Offload RCU callbacks from CPUs"'
fi
w0=$(cat $W 2>/dev/null)
[ -n "$w0" ] && echo 1 >$W

bad=0
other=0
i=1
while [ $i -le 20 ]; do
	if out=$(insmod "$MH_KO" 2>&1); then
		fail "insmod of the MH_COMPAT build succeeded beside the built-in mh"
		rmmod ip_vs_mh
		bad=$((bad + 1))
		break
	fi
	case $out in
	*"Invalid argument"*) ;;
	*) other=$((other + 1)); info "insmod: $out" ;;
	esac
	i=$((i + 1))
done
expect_eq "20 loads of the MH_COMPAT build fail with EINVAL" "$bad $other" "0 0"
if dmesg | grep -q '\[mh\] scheduler already existed'; then
	pass "the load failed in register_ip_vs_scheduler()"
else
	fail "no 'scheduler already existed' message: not the path under test"
fi
check "ip_vs_mh is not loaded" sh -c '! grep -q "^ip_vs_mh " /proc/modules'

# Grace periods and callbacks after the failed loads: lazy ones are
# flushed after 10 s at the latest.
sleep 12
i=1
while [ $i -le 8 ]; do
	ip netns del "mh$i"
	i=$((i + 1))
done
ip netns add after
ip netns del after
sleep 2
[ -n "$w0" ] && echo "$w0" >$W
check "ip_vs_maglev.ko loads again" insmod "$MAGLEV_KO"
check "a maglev service after the failed loads" \
	ipvsadm -A -t 10.0.0.9:80 -s maglev
ipvsadm -C
finish
