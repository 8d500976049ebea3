#!/bin/sh
# Guest test 5: parameters and sysctls.
# - Defaults of the sysctls net.ipv4.vs.maglev_{table_size,holdoff_ms,
#   hash_key} and of the module parameters; the key files are mode 0600.
# - Invalid sysctl values (a table size that is not a prime in
#   251..5000011, a hold-off above 10000 ms, a key that is not 32 hex
#   digits) are refused, leave the value alone and are explained in the
#   kernel log, at info level with IPVS's prefix "IPVS: ".
# - A table size write rebuilds the namespace's services at once (gen + 1).
# - A key write changes the choices as maglev-sim's KEY predicts, shows the
#   key's fingerprint in /proc and does not rebuild (gen, digest unchanged).
# - Module parameters at insmod are the defaults of the init namespace and
#   of namespaces created later, but for hash_key, which only the init
#   namespace starts with: a namespace made with "ip netns add" starts with
#   the public zero key, never the host's; a later parameter write changes
#   only namespaces created after it.
. "${0%/*}/lib.sh"

V=10.0.0.1
S="UDP $V:80"
K1=0123456789abcdef0123456789abcdef
K2=fedcba98765432100123456789abcdef

# sysctl NAME: this namespace's value.
sysctl_get() { cat "$SYSCTL/$1"; }

# refused TEXT NAME VALUE...: every VALUE written to the sysctl NAME fails
# and leaves its value as it was.
refused() {
	_what=$1 _name=$2
	shift 2
	_was=$(sysctl_get "$_name")
	for _v in "$@"; do
		if ns_sysctl "" "$_name" "$_v"; then
			fail "$_what: '$_v' accepted"
		else
			pass "$_what: '$_v' rejected"
		fi
	done
	expect_eq "$_what: value unchanged after the rejected writes" \
		"$(sysctl_get "$_name")" "$_was"
}

# logged TEXT PATTERN: the kernel log has a line matching PATTERN, at
# info level (6) with IPVS's prefix: bad input is the writer's error, not
# the kernel's.
logged() {
	# A kernel with CONFIG_PRINTK_TIME puts "[    3.16] " after the level.
	if dmesg -r | sed -E 's/^(<[0-9]+>)\[ *[0-9.]+\] /\1/' |
	   grep -q "^<6>IPVS: .*$2"; then
		pass "$1 (info level, IPVS: prefix)"
	elif dmesg | grep -q "$2"; then
		fail "$1: logged, but not at info level with 'IPVS: ': $(dmesg -r | grep "$2" | head -n 1)"
	else
		fail "$1: no kernel log line '$2'"
	fi
}

# --- defaults and modes ----------------------------------------------------------
ZERO_FP=$(key_fp $ZERO_KEY)
[ -n "$ZERO_FP" ] || fail "maglev-sim gives no FINGERPRINT for KEY $ZERO_KEY"
expect_eq "sysctl maglev_table_size default" "$(sysctl_get maglev_table_size)" 65537
expect_eq "sysctl maglev_holdoff_ms default" "$(sysctl_get maglev_holdoff_ms)" 50
expect_eq "sysctl maglev_hash_key default" "$(sysctl_get maglev_hash_key)" $ZERO_KEY
expect_eq "parameter table_size default" "$(cat $PARAMS/table_size)" 65537
expect_eq "parameter holdoff_ms default" "$(cat $PARAMS/holdoff_ms)" 50
expect_eq "parameter hash_key default" "$(cat $PARAMS/hash_key)" $ZERO_KEY
expect_eq "no parameter hash_seed any more" \
	"$(ls $PARAMS/hash_seed 2>/dev/null)" ""
expect_eq "parameter hash_key mode" "$(stat -c %a $PARAMS/hash_key)" 600
expect_eq "sysctl maglev_hash_key mode" \
	"$(stat -c %a $SYSCTL/maglev_hash_key)" 600
expect_eq "sysctl maglev_table_size mode" \
	"$(stat -c %a $SYSCTL/maglev_table_size)" 644
expect_eq "sysctl maglev_holdoff_ms mode" \
	"$(stat -c %a $SYSCTL/maglev_holdoff_ms)" 644

# --- invalid values ----------------------------------------------------------------
refused "maglev_table_size" maglev_table_size \
	0 1 2 4 250 65536 65535 5000012 5000021 4294967311 -1 abc 251x "" \
	auto Auto autoo "auto 251" 0x0
logged "the kernel log explains a non-prime size" \
	'maglev_table_size rejected: table size must be a prime'
logged "the kernel log explains an out-of-range size" \
	'maglev_table_size rejected: table size must be between'
logged "the kernel log names what replaced auto" \
	'maglev_table_size rejected: auto is no longer a table size: the size is fixed, 65537 by default'
# The log gives the reason, never the writer's text.
if dmesg | grep -q "251x\|autoo"; then
	fail "the kernel log repeats a rejected value's text: $(dmesg | grep "251x\|autoo" | head -n 1)"
else
	pass "the kernel log does not repeat a rejected value's text"
fi
refused "maglev_holdoff_ms" maglev_holdoff_ms 10001 20000 4294967296 -1 abc ""
logged "the kernel log explains a hold-off out of range" \
	'maglev_holdoff_ms rejected: more than 10000'
refused "maglev_hash_key" maglev_hash_key \
	0123456789abcdef0123456789abcde 0123456789abcdef0123456789abcdef0 \
	0123456789abcdef0123456789abcdeg 0x23456789abcdef0123456789abcdef \
	"0123456789abcdef 123456789abcdef" ""
logged "the kernel log explains a bad key" \
	'maglev_hash_key rejected: not 32 hex digits'

check "maglev_table_size 5000011 accepted" ns_sysctl "" maglev_table_size 5000011
check "maglev_table_size 65537 accepted" ns_sysctl "" maglev_table_size 65537
check "maglev_holdoff_ms 10000 accepted" ns_sysctl "" maglev_holdoff_ms 10000
check "maglev_holdoff_ms 0 accepted" ns_sysctl "" maglev_holdoff_ms 0
check "maglev_holdoff_ms 50 accepted" ns_sysctl "" maglev_holdoff_ms 50
check "upper-case hex key accepted" ns_sysctl "" maglev_hash_key \
	0123456789ABCDEF0123456789ABCDEF
expect_eq "the key reads back in lower case" "$(sysctl_get maglev_hash_key)" $K1
check "the zero key accepted" ns_sysctl "" maglev_hash_key $ZERO_KEY

# --- a table size write rebuilds -------------------------------------------------
setup_net 3
warm_up
run ipvsadm -A -u $V:80 -s maglev -b flag-2
: >"$T/s"
for i in 1 2; do
	run ipvsadm -a -u $V:80 -r "10.1.$i.1:80" -m
	echo "ADD_NODE 10.1.$i.1:80" >>"$T/s"
done
expect_eq "$S: the default key's fingerprint" "$(svc_field "$S" key)" "$ZERO_FP"

g=$(svc_field "$S" gen)
check "maglev_table_size 251 accepted" ns_sysctl "" maglev_table_size 251
expect_eq "maglev_table_size reads back 251" "$(sysctl_get maglev_table_size)" 251
expect_eq "the parameter table_size is not changed by the sysctl" \
	"$(cat $PARAMS/table_size)" 65537
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
check "maglev_table_size 251 again accepted" ns_sysctl "" maglev_table_size 251
expect_eq "writing the same size changes nothing" "$(svc_field "$S" gen)" "$g"
check "maglev_table_size 65537 accepted" ns_sysctl "" maglev_table_size 65537
printf "SIZE 65537\nREBUILD\n" >>"$T/s"
expect_eq "back to size 65537" "$(svc_field "$S" size)" 65537
check_sim "$S size 65537" "$S" "$T/s"
g=$(svc_field "$S" gen)
d=$(svc_field "$S" digest)
refused "maglev_table_size with a service" maglev_table_size auto
expect_eq "a refused auto rebuilds nothing" \
	"$(svc_field "$S" gen) $(svc_field "$S" digest)" "$g $d"
run ipvsadm -e -u $V:80 -r 10.1.3.1:80 -m -w 0
echo 'WEIGHT 10.1.3.1:80 0' >>"$T/s"
expect_eq "a drain keeps 65537 slots" "$(svc_field "$S" size)" 65537
check_sim "$S size 65537, one drained" "$S" "$T/s"

# --- a key write changes the choices without a rebuild -----------------------------
if have_udpflows; then naddr=10 nport=100; else naddr=3 nport=10; fi
addrs=$(client_addrs 4 $naddr)
# shellcheck disable=SC2086
flows $V 80 20000 $nport $addrs >"$T/f0"
predict "$T/f0" "$T/s" 1 >"$T/p0"
compare_choices "zero key" "$T/f0" "$T/p0" $V 80

d=$(svc_field "$S" digest)
g=$(svc_field "$S" gen)
b=$(svc_field "$S" builds)
check "maglev_hash_key $K1 accepted" ns_sysctl "" maglev_hash_key $K1
expect_eq "maglev_hash_key reads back" "$(sysctl_get maglev_hash_key)" $K1
expect_eq "the parameter hash_key is not changed by the sysctl" \
	"$(cat $PARAMS/hash_key)" $ZERO_KEY
expect_eq "/proc shows the key's fingerprint (maglev-sim's)" \
	"$(svc_field_now "$S" key)" "$(key_fp $K1)"
expect_eq "the key write does not rebuild: gen" "$(svc_field_now "$S" gen)" "$g"
expect_eq "the key write does not rebuild: builds" \
	"$(svc_field_now "$S" builds)" "$b"
expect_eq "the key write does not rebuild: pending" \
	"$(svc_field_now "$S" pending)" 0
expect_eq "the key does not change the table" "$(svc_field "$S" digest)" "$d"
# shellcheck disable=SC2086
flows $V 80 30000 $nport $addrs >"$T/f1"
cp "$T/s" "$T/s1"
echo "KEY $K1" >>"$T/s1"
predict "$T/f1" "$T/s1" 1 >"$T/p1"
compare_choices "key $K1" "$T/f1" "$T/p1" $V 80
predict "$T/f1" "$T/s" 1 >"$T/p1.zero"
changed=$(awk 'NR == FNR { p[$1 " " $2] = $3; next }
	p[$1 " " $2] != $3 { n++ } END { print n + 0 }' "$T/p1.zero" "$T/p1")
info "key $K1 changes $changed of $(wc -l <"$T/f1") choices"
check "the key changes choices" [ "$changed" -gt 0 ]

cleanup_net

# --- module parameters at insmod ------------------------------------------------
run rmmod ip_vs_maglev
for a in table_size=1000 holdoff_ms=10001 hash_key=0123 hash_key=${K1}0; do
	if insmod "$MAGLEV_KO" "$a" 2>/dev/null; then
		fail "insmod $a accepted"
		rmmod ip_vs_maglev
	else
		pass "insmod $a rejected"
	fi
done
# table_size=auto, left in a modprobe.d file by an earlier version, loads
# with the default and one warning that names the replacement.
dmesg -C
run insmod "$MAGLEV_KO" table_size=auto
expect_eq "insmod table_size=auto: loads with the default" \
	"$(cat $PARAMS/table_size) $(sysctl_get maglev_table_size)" "65537 65537"
expect_eq "insmod table_size=auto: one warning naming the replacement" \
	"$(dmesg | grep -c 'table_size=auto ignored, the size stays 65537: auto is no longer a table size')" 1
run rmmod ip_vs_maglev
run insmod "$MAGLEV_KO" table_size=509 hash_key=$K1
expect_eq "insmod table_size=509: parameter" "$(cat $PARAMS/table_size)" 509
expect_eq "insmod: init namespace's maglev_table_size" \
	"$(sysctl_get maglev_table_size)" 509
expect_eq "insmod: init namespace's maglev_hash_key" \
	"$(sysctl_get maglev_hash_key)" $K1
ip netns add n1
# IPVS takes a real server only at a unicast address; on a kernel with
# CONFIG_IP_MULTIPLE_TABLES (Debian's) an address has that type in a new
# namespace only once the namespace has an interface up.
ip -n n1 link set lo up
expect_eq "n1 (created after insmod): maglev_table_size" \
	"$(ns_sysctl n1 maglev_table_size)" 509
expect_eq "n1: maglev_hash_key is the public key, not the host's" \
	"$(ns_sysctl n1 maglev_hash_key)" $ZERO_KEY
run ipvsadm -A -t $V:80 -s maglev
run ipvsadm -a -t $V:80 -r 10.1.1.1:80 -m
expect_eq "a new service uses table_size=509" "$(svc_field "TCP $V:80" size)" 509
expect_eq "a new service shows hash_key's fingerprint" \
	"$(svc_field "TCP $V:80" key)" "$(key_fp $K1)"
printf 'SIZE 509\nADD_NODE 10.1.1.1:80\n' >"$T/s2"
check_sim "TCP $V:80 size 509" "TCP $V:80" "$T/s2"

# A parameter write changes only namespaces created after it.
g=$(svc_field "TCP $V:80" gen)
run sh -c "echo 1021 >$PARAMS/table_size"
run sh -c "echo $K2 >$PARAMS/hash_key"
expect_eq "parameter table_size reads back 1021" "$(cat $PARAMS/table_size)" 1021
expect_eq "parameter hash_key reads back" "$(cat $PARAMS/hash_key)" $K2
expect_eq "init namespace keeps maglev_table_size 509" \
	"$(sysctl_get maglev_table_size)" 509
expect_eq "init namespace keeps its key" "$(sysctl_get maglev_hash_key)" $K1
expect_eq "n1 keeps maglev_table_size 509" "$(ns_sysctl n1 maglev_table_size)" 509
expect_eq "n1 keeps its key" "$(ns_sysctl n1 maglev_hash_key)" $ZERO_KEY
expect_eq "the init namespace's service is not rebuilt" \
	"$(svc_field "TCP $V:80" gen)" "$g"
expect_eq "... and keeps size 509" "$(svc_field "TCP $V:80" size)" 509
ip netns add n2
ip -n n2 link set lo up
expect_eq "n2 (created after the write): maglev_table_size" \
	"$(ns_sysctl n2 maglev_table_size)" 1021
expect_eq "n2: maglev_hash_key is the public key, not hash_key" \
	"$(ns_sysctl n2 maglev_hash_key)" $ZERO_KEY
for n in n1 n2; do
	in_ns $n ipvsadm -A -t $V:80 -s maglev || fail "$n: ipvsadm -A"
	in_ns $n ipvsadm -a -t $V:80 -r 10.1.1.1:80 -m || fail "$n: ipvsadm -a"
done
expect_eq "n1's service: size 509" "$(svc_field "TCP $V:80" size n1)" 509
expect_eq "n1's service: the public key's fingerprint" \
	"$(svc_field "TCP $V:80" key n1)" "$(key_fp $ZERO_KEY)"
expect_eq "n2's service: size 1021" "$(svc_field "TCP $V:80" size n2)" 1021
expect_eq "n2's service: the public key's fingerprint" \
	"$(svc_field "TCP $V:80" key n2)" "$(key_fp $ZERO_KEY)"
run ipvsadm -C
for n in n1 n2; do
	in_ns $n ipvsadm -C
	ip netns del $n
done
finish
