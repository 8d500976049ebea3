#!/bin/sh
# Guest test 6: unload. Each maglev service holds a module reference:
# rmmod is refused while a service uses the scheduler and succeeds after
# "ipvsadm -C", repeatedly, with tables being replaced in between. IPVS
# loads the module on demand. On the debug kernel the harness's kmemleak
# scan after the test (scripts/guest-init.sh) finds nothing.
# debug-kernel: yes
. "${0%/*}/lib.sh"

V=10.0.0.1
REF=/sys/module/ip_vs_maglev/refcnt

expect_eq "refcount with no service" "$(cat $REF)" 0
run ipvsadm -A -t $V:80 -s maglev
run ipvsadm -A -u $V:80 -s maglev
expect_eq "refcount with two services" "$(cat $REF)" 2
for i in 1 2 3; do
	run ipvsadm -a -t $V:80 -r "10.1.$i.1:80" -m
	run ipvsadm -a -u $V:80 -r "10.1.$i.1:80" -m
done
if rmmod ip_vs_maglev 2>/dev/null; then
	fail "rmmod succeeded while two services use maglev"
else
	pass "rmmod refused while two services use maglev"
fi
check "module still loaded" grep -q '^ip_vs_maglev ' /proc/modules
run ipvsadm -D -t $V:80
expect_eq "refcount after deleting one service" "$(cat $REF)" 1
run ipvsadm -C
expect_eq "refcount after ipvsadm -C" "$(cat $REF)" 0
check "rmmod after ipvsadm -C" rmmod ip_vs_maglev
if [ -e /proc/net/ip_vs_maglev ]; then
	fail "/proc/net/ip_vs_maglev still there after rmmod"
else
	pass "/proc/net/ip_vs_maglev removed by rmmod"
fi

# Load, build and replace tables (pending RCU frees), unload, a few times.
i=1
while [ $i -le 3 ]; do
	run insmod "$MAGLEV_KO"
	run ipvsadm -A -t $V:80 -s maglev -b flag-1
	for j in 1 2 3 4; do
		run ipvsadm -a -t $V:80 -r "10.1.$j.1:80" -m -w $j
	done
	run ipvsadm -e -t $V:80 -r 10.1.2.1:80 -m -w 0
	run ipvsadm -d -t $V:80 -r 10.1.3.1:80
	run ipvsadm -E -t $V:80 -s rr
	run ipvsadm -E -t $V:80 -s maglev
	run ipvsadm -D -t $V:80
	check "cycle $i: rmmod right after the last table was replaced" \
		rmmod ip_vs_maglev
	i=$((i + 1))
done

# IPVS asks for "ip_vs_maglev" with request_module() when a service names
# the scheduler; give the guest a module directory for modprobe.
kver=$(uname -r)
mkdir -p "/lib/modules/$kver/extra"
cp "$MAGLEV_KO" "/lib/modules/$kver/extra/"
if depmod "$kver" 2>/dev/null && [ -x /bin/modprobe ]; then
	echo /bin/modprobe >/proc/sys/kernel/modprobe
	run ipvsadm -A -t $V:80 -s maglev
	check "IPVS loaded ip_vs_maglev on demand" \
		grep -q '^ip_vs_maglev ' /proc/modules
	run ipvsadm -C
	run rmmod ip_vs_maglev
else
	# The initramfs has busybox's (scripts/mkinitramfs.sh): ours to fix.
	fail "no depmod/modprobe in the guest: on-demand loading not tested"
fi

# Leave the module loaded, as the guest init expects to remove it.
run insmod "$MAGLEV_KO"
finish
