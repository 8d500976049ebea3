#!/bin/sh
# Guest test 7: network namespace isolation. Each namespace's
# /proc/net/ip_vs_maglev lists only its own maglev services; a namespace
# deleted with services configured releases them and the module unloads.
# debug-kernel: yes
. "${0%/*}/lib.sh"

REF=/sys/module/ip_vs_maglev/refcnt

ip netns add n1
ip netns add n2
# IPVS refuses real servers whose address type it cannot tell, as in a
# namespace without a local routing table yet.
ip -n n1 link set lo up
ip -n n2 link set lo up
run ipvsadm -A -t 10.0.0.1:80 -s maglev
run ipvsadm -a -t 10.0.0.1:80 -r 10.1.1.1:80 -m
run ip netns exec n1 ipvsadm -A -t 10.0.0.11:80 -s maglev
run ip netns exec n1 ipvsadm -a -t 10.0.0.11:80 -r 10.1.1.1:80 -m
run ip netns exec n1 ipvsadm -a -t 10.0.0.11:80 -r 10.1.2.1:80 -m
run ip netns exec n2 ipvsadm -A -u 10.0.0.12:53 -s maglev
run ip netns exec n2 ipvsadm -A -t 10.0.0.12:80 -s rr

check "root lists its service" svc_listed "TCP 10.0.0.1:80"
check "n1 lists its service" svc_listed "TCP 10.0.0.11:80" n1
check "n2 lists its service" svc_listed "UDP 10.0.0.12:53" n2
expect_eq "root lists one service" "$(grep -c '^service ' $PROC)" 1
expect_eq "n1 lists one service" \
	"$(ip netns exec n1 grep -c '^service ' $PROC)" 1
expect_eq "n2 lists one service (not its rr one)" \
	"$(ip netns exec n2 grep -c '^service ' $PROC)" 1
expect_eq "n1's service has 2 dests" \
	"$(svc_field "TCP 10.0.0.11:80" dests n1)" 2
if svc_listed "TCP 10.0.0.11:80" || svc_listed "UDP 10.0.0.12:53"; then
	fail "root lists another namespace's service"
else
	pass "root does not list other namespaces' services"
fi
if svc_listed "TCP 10.0.0.1:80" n1 || svc_listed "UDP 10.0.0.12:53" n1; then
	fail "n1 lists another namespace's service"
else
	pass "n1 does not list other namespaces' services"
fi
expect_eq "refcount with three maglev services" "$(cat $REF)" 3

# The same VIP in two namespaces are two services.
run ip netns exec n2 ipvsadm -A -t 10.0.0.1:80 -s maglev
run ip netns exec n2 ipvsadm -a -t 10.0.0.1:80 -r 10.1.9.1:80 -m
expect_eq "root's 10.0.0.1:80 keeps 1 dest" \
	"$(svc_dests "TCP 10.0.0.1:80" | awk '{ print $1 }')" 10.1.1.1:80
expect_eq "n2's 10.0.0.1:80 has its own dest" \
	"$(svc_dests "TCP 10.0.0.1:80" n2 | awk '{ print $1 }')" 10.1.9.1:80

# Deleting namespaces with services configured releases them.
ip netns del n1
ip netns del n2
n=0
while [ "$(cat $REF)" -ne 1 ] && [ $n -lt 100 ]; do
	sleep 0.2
	n=$((n + 1))
done
expect_eq "refcount after deleting the namespaces" "$(cat $REF)" 1
check "root still lists its service" svc_listed "TCP 10.0.0.1:80"
run ipvsadm -C
check "rmmod after the namespaces are gone" rmmod ip_vs_maglev
run insmod "$MAGLEV_KO"
finish
