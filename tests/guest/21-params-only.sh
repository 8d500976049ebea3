#!/bin/sh
# Guest test 21: the module parameters alone, as on a kernel without sysctl
# support (CONFIG_SYSCTL=n; the vm-nosysctl step boots such a kernel, the
# vm step the default one, where the sysctls exist but are not used here).
# The module loads (with and without parameters), a maglev service with
# three servers built with table_size=509 and hash_key=K serves UDP
# traffic exactly as maglev-sim computes with SIZE 509 and KEY K, /proc
# shows its table (size, key fingerprint, three dests), and the module
# unloads. No forwarding sysctl is needed: the test only counts the
# connections IPVS makes for the client's datagrams. A bad value written to
# a parameter after the load (/sys/module/ip_vs_maglev/parameters/) is
# refused, the parameter keeps its value, and the kernel log says why.
# nosysctl-kernel: yes
. "${0%/*}/lib.sh"

V=$VIP4
S="UDP $V:80"
K=00112233445566778899aabbccddeeff

if [ -d /proc/sys ]; then
	set -- $SYSCTL/maglev_*
	info "this kernel has sysctl support ($# maglev sysctls, not used here)"
else
	info "this kernel has no sysctl support (no /proc/sys)"
fi
check "ip_vs_maglev loaded without parameters" test -d /sys/module/ip_vs_maglev
run rmmod ip_vs_maglev
run insmod "$MAGLEV_KO" table_size=509 hash_key=$K
expect_eq "parameter table_size" "$(cat $PARAMS/table_size)" 509

# param_refused NAME VALUE LOG: writing VALUE to the parameter NAME fails,
# leaves it as it was, and the kernel log gains a line matching LOG.
param_refused() {
	_was=$(cat "$PARAMS/$1")
	_n=$(dmesg | grep -c "$3")
	# shellcheck disable=SC2016 # expanded by the inner sh
	if sh -c 'echo "$1" >"$2"' sh "$2" "$PARAMS/$1" 2>/dev/null; then
		fail "parameter $1: '$2' accepted"
	else
		pass "parameter $1: '$2' refused"
	fi
	expect_eq "parameter $1: unchanged after '$2'" "$(cat "$PARAMS/$1")" "$_was"
	if [ "$(dmesg | grep -c "$3")" -gt "$_n" ]; then
		pass "parameter $1: '$2': the kernel log says why"
	else
		fail "parameter $1: '$2': no kernel log line matching '$3'"
	fi
}
param_refused table_size 1000 'ip_vs_maglev.table_size rejected: table size must be a prime number'
param_refused table_size 5000012 'ip_vs_maglev.table_size rejected: table size must be between 251 and 5000011'
param_refused table_size abc 'ip_vs_maglev.table_size rejected: not a number'
param_refused holdoff_ms 10001 'ip_vs_maglev.holdoff_ms rejected: more than 10000'
param_refused holdoff_ms abc 'ip_vs_maglev.holdoff_ms rejected: not a number'
param_refused hash_key 0123 'ip_vs_maglev.hash_key rejected: not 32 hex digits'
param_refused hash_key "${K%?}g" 'ip_vs_maglev.hash_key rejected: not 32 hex digits'

setup_net 3 2>/dev/null
run ipvsadm -A -u $V:80 -s maglev -b flag-2
{
	echo "SIZE 509"
	echo "KEY $K"
} >"$T/sim"
for i in 1 2 3; do
	run ipvsadm -a -u $V:80 -r "10.1.$i.1:80" -m -w "$i"
	echo "ADD_NODE 10.1.$i.1:80 $i" >>"$T/sim"
done
wait_caught_up
expect_eq "$S: size, dests" \
	"$(svc_field "$S" size) $(svc_field "$S" dests)" "509 3"
expect_eq "$S: key fingerprint of hash_key" "$(svc_field "$S" key)" \
	"$(key_fp $K)"
check_sim "$S" "$S" "$T/sim"
ADDRS=$(client_addrs 4 8)
# shellcheck disable=SC2086 # one address a word
flows $V 80 3000 20 $ADDRS >"$T/flows"
predict "$T/flows" "$T/sim" 1 >"$T/pred"
compare_choices "$S" "$T/flows" "$T/pred" $V 80
run ipvsadm -C
cleanup_net
run rmmod ip_vs_maglev
run insmod "$MAGLEV_KO"
finish
