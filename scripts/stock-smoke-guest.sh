#!/bin/sh
# Guest side of scripts/stock-smoke.sh, run by guest-init.sh on Debian's
# stock kernel with ip_vs and ip_vs_maglev.ko already loaded.

check() {
	what=$1
	shift
	if "$@"; then echo "PASS: $what"; else echo "FAIL: $what"; fi
}

vip=10.0.0.1:80
check "ipvsadm -A -s maglev" ipvsadm -A -t $vip -s maglev
for i in 1 2 3; do
	check "ipvsadm -a real server $i" ipvsadm -a -t $vip -r 10.0.1.$i:80 -m
done
ipvsadm -Ln >/tmp/ipvsadm.out
cat /tmp/ipvsadm.out
check "ipvsadm -Ln shows the maglev service" \
	grep -Eq "^TCP +$vip +maglev" /tmp/ipvsadm.out
n=$(grep -Ec -- '-> 10\.0\.1\.[123]:80 +Masq' /tmp/ipvsadm.out)
check "ipvsadm -Ln shows 3 real servers ($n)" [ "$n" -eq 3 ]
check "ipvsadm -D" ipvsadm -D -t $vip
check "rmmod ip_vs_maglev" rmmod ip_vs_maglev
