#!/bin/sh
# Guest side of scripts/stock-smoke.sh, run by guest-init.sh on Debian's
# stock kernel with ip_vs and ip_vs_maglev.ko already loaded.

check() {
	what=$1
	shift
	if "$@"; then echo "PASS: $what"; else echo "FAIL: $what"; fi
}

vip=10.0.0.1:80
proc=/proc/net/ip_vs_maglev
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

check "$proc exists" [ -r $proc ]
# Tables are built asynchronously: wait until no service shows "pending 1".
n=0
while grep -q ' pending 1 ' $proc 2>/dev/null && [ $n -lt 600 ]; do
	sleep 0.1
	n=$((n + 1))
done
cat $proc >/tmp/proc.out 2>&1
cat /tmp/proc.out
check "$proc shows the service with dests 3" \
	grep -Eq "^service TCP $vip .* dests 3 " /tmp/proc.out
n=$(grep -Ec '^  dest 10\.0\.1\.[123]:80 weight 1 slots [1-9]' /tmp/proc.out)
check "$proc shows 3 dests with slots ($n)" [ "$n" -eq 3 ]

check "ipvsadm -D" ipvsadm -D -t $vip
n=$(grep -c '^service ' $proc)
check "$proc lists no service after ipvsadm -D ($n)" [ "$n" -eq 0 ]
check "rmmod ip_vs_maglev" rmmod ip_vs_maglev
