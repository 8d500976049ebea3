#!/bin/sh
# Guest side of scripts/deb-test.sh, on Debian's stock 6.12 kernel with
# ip_vs and ip_vs_maglev.ko (built by DKMS from ip-vs-maglev-dkms) loaded
# by guest-init.sh: the stock smoke test on it, then ip_vs_mh.ko (built by
# DKMS from ip-vs-mh-maglev-dkms) is loaded in its place and serves a
# service with scheduler mh.

sh "${0%/*}/stock-smoke.sh"

check() {
	what=$1
	shift
	if "$@"; then echo "PASS: $what"; else echo "FAIL: $what"; fi
}

vip=10.0.0.1:80
proc=/proc/net/ip_vs_maglev
check "ip-vs-mh-maglev-dkms: ip_vs_maglev is unloaded first" \
	sh -c '! grep -q "^ip_vs_maglev " /proc/modules'
# Only one of the two at a time: with ip_vs_maglev loaded the loader
# refuses ip_vs_mh (both export maglev_build) before its init could
# trip over the second /proc/net/ip_vs_maglev.
check "ip-vs-maglev-dkms: insmod ip_vs_maglev.ko again" \
	insmod /maglev/ip_vs_maglev.ko
check "ip-vs-mh-maglev-dkms: insmod ip_vs_mh.ko is refused while ip_vs_maglev is loaded" \
	sh -c '! insmod /maglev/ip_vs_mh.ko 2>/dev/null'
check "... the kernel log says: exports duplicate symbol maglev_build" \
	sh -c 'dmesg | grep -q "ip_vs_mh: exports duplicate symbol maglev_build"'
check "ip-vs-maglev-dkms: rmmod ip_vs_maglev" rmmod ip_vs_maglev
check "ip-vs-mh-maglev-dkms: insmod ip_vs_mh.ko" insmod /maglev/ip_vs_mh.ko
check "ip-vs-mh-maglev-dkms: ipvsadm -A -s mh -b mh-port" \
	ipvsadm -A -t $vip -s mh -b flag-2
for i in 1 2 3; do
	ipvsadm -a -t $vip -r 10.0.1.$i:80 -m
done
# With asynchronous table builds the table may lag a moment: poll (10 s).
n=50
while ! grep -Eq "^service TCP $vip .*flags 0x10 dests 3 " $proc &&
	[ $n -gt 0 ]; do
	sleep 0.2
	n=$((n - 1))
done
cat $proc
check "ip-vs-mh-maglev-dkms: $proc shows the mh service with flag 0x10, 3 dests" \
	grep -Eq "^service TCP $vip .*flags 0x10 dests 3 " $proc
check "ip-vs-mh-maglev-dkms: /sys/module/ip_vs_mh/parameters/table_size" \
	[ -r /sys/module/ip_vs_mh/parameters/table_size ]
check "ip-vs-mh-maglev-dkms: ipvsadm -D" ipvsadm -D -t $vip
check "ip-vs-mh-maglev-dkms: rmmod ip_vs_mh" rmmod ip_vs_mh
