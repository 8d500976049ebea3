#!/bin/sh
# Guest test 19: hardening (not a stress test, so not in 13-15; 18 is sync).
# a. No window without a server: with maglev_holdoff_ms 3000, connections
#    opened within a millisecond of "ipvsadm -a" returning (connprobe: one
#    process, no interpreter start-up between) are never refused: (i) the
#    first server of a service created empty, (ii) one server restored
#    after every weight went to 0. The service's build is still held off
#    when the last connection is answered (asserted: pending 1 after the
#    probe), so every connection met the table from before the change.
#    The same with rr, for comparison; both counts are printed. (iii) Until
#    the first table, flows spread over the servers with a weight.
# b. Clients cannot aim: 1000 source ports that maglev-sim says the zero
#    key sends to one server all go there; under a random secret key the
#    same flows spread over the servers by their slot shares (5 sigma).
# c. The key is not readable without privilege: an unprivileged user can
#    read neither the sysctl nor the parameter, nor write the key; uid 0
#    without capabilities (an ordinary container's root) finds it in no
#    file of the parameters, the sysctls or /proc, nor in the log; a user
#    namespace owning a new network namespace sees and sets only its own
#    namespace's key, and can change neither its table size nor its
#    hold-off (0444, the parameters' values); /proc/net/ip_vs_maglev
#    shows only fingerprints.
# d. Memory is charged: a service created (and changed) from a child
#    memory cgroup with table size 5000011 raises that cgroup's
#    memory.current by at least the table's memory ("mem" in /proc), which goes again after the deletion.
# e. Bounded concurrency: the workqueue's max_active is 4 (WQ_SYSFS).
# f. Readers of /proc/net/ip_vs_maglev keep no superseded table alive: three
#    descriptors left open across three rebuilds leave one table stored.
# The debug kernel runs c, d, e and f.
# guest-timeout: 300
# debug-kernel: yes
. "${0%/*}/lib.sh"

CATCHUP_TIMEOUT=60
V=$VIP4

setup_net 3
warm_up
# Refusals are ICMP port unreachable from the director (ip_vs_leave); no
# rate limit, so that every refused attempt is seen as refused.
sysctl -qw net.ipv4.icmp_ratelimit=0
sysctl -qw net.ipv4.icmp_msgs_per_sec=100000 2>/dev/null
sysctl -qw net.ipv4.icmp_msgs_burst=100000 2>/dev/null
for i in 1 2 3; do
	ip netns exec "rs$i" tcpfleet server "rs$i" 80 &
	SERVERS="${SERVERS:-} $!"
done
sleep 0.5

# a and b check timing and statistics, which the debug kernel (KASAN,
# lockdep, kmemleak) does not check better: it runs c, d and e, the key's
# and the charge's lifetimes (test 13 replaces keys under traffic there).
if [ -e /sys/kernel/debug/kmemleak ]; then
	info "debug kernel: parts a and b left out (timing and statistics); c's service and key"
	udp_service3 "$T/s3"
	S="UDP $V:80"
	K=$(random_key)
	ns_sysctl "" maglev_hash_key "$K" || fail "random key refused"
else

# --- a. no window without a server ------------------------------------------------
NPROBE=50

# probe TEXT PORT SCHED CMD...: run CMD with connprobe, then NPROBE
# connections from "cl" to $V:PORT at once; sets PROBE ("connected C
# refused R other O first_us F last_us L"). For maglev: all connected, none
# refused; for other schedulers the figures are printed only.
probe() {
	_what=$1 _port=$2 _sched=$3
	shift 3
	PROBE=$(connprobe -n /run/netns/cl -t 3000 $NPROBE $V "$_port" -- "$@")
	echo "RESULT: $_sched $_what: $PROBE"
	# shellcheck disable=SC2086 # the words of connprobe's line
	set -- $PROBE
	if [ "$_sched" != maglev ]; then
		info "$_sched $_what: $4 of $NPROBE refused, $6 other"
		return
	fi
	# Served by the new table, the probe would prove nothing.
	expect_eq "$_sched $_what: the change's build still held off after the probe" \
		"$(svc_field_now "TCP $V:$_port" pending)" 1
	if [ "$4" = 0 ] && [ "$2" = $NPROBE ]; then
		pass "$_sched $_what: $NPROBE connections right after ipvsadm returned, none refused ($PROBE)"
	else
		fail "$_sched $_what: not every connection served right after ipvsadm returned ($PROBE)"
	fi
}

# holdoff MS: the root namespace's hold-off (the module parameter on a
# module without the sysctl, so that part a measures the old code too).
holdoff() {
	if [ -e $SYSCTL/maglev_holdoff_ms ]; then
		ns_sysctl "" maglev_holdoff_ms "$1"
	else
		echo "$1" >$PARAMS/holdoff_ms
	fi || fail "hold-off $1 ms refused"
}
holdoff 3000
for sched in maglev rr; do
	# Not port 80: part b counts the UDP connections to $V:80.
	P=8080
	[ $sched = rr ] && P=8081
	run ipvsadm -A -t $V:$P -s $sched
	wait_caught_up
	probe "(i) first server of an empty service" $P $sched \
		ipvsadm -a -t $V:$P -r 10.1.1.1:80 -m -w 1
	run ipvsadm -a -t $V:$P -r 10.1.2.1:80 -m -w 1
	run ipvsadm -a -t $V:$P -r 10.1.3.1:80 -m -w 1
	wait_caught_up
	for i in 1 2 3; do
		run ipvsadm -e -t $V:$P -r "10.1.$i.1:80" -m -w 0
	done
	wait_caught_up
	[ $sched = maglev ] && expect_eq "maglev: the table has only weight-0 dests" \
		"$(svc_dests "TCP $V:$P" | awk '$2 != 0' | wc -l)" 0
	probe "(ii) one server restored after all weights 0" $P $sched \
		ipvsadm -e -t $V:$P -r 10.1.2.1:80 -m -w 1
done
# (iii) Until the first table, new connections spread over the servers with
# a weight, by the client hash: a flag-2 UDP service created empty (its
# first build, of no server, runs at once) gets three servers within the
# hold-off, and 300 flows from distinct ports sent while the build waits
# (pending 1 after them) reach all three, at least 50 each (a third is
# 100, 5 sigma is 41). They all went to the last server added.
run ipvsadm -A -u $V:8082 -s maglev -b flag-2
wait_caught_up
for i in 1 2 3; do
	run ipvsadm -a -u $V:8082 -r "10.1.$i.1:80" -m -w 1
done
NOWAIT=1 flows $V 8082 30000 300 "$(client_addrs 4 1 200)" >/dev/null
expect_eq "maglev (iii): the first table still held off after the flows" \
	"$(svc_field_now "UDP $V:8082" pending)" 1
conns $V 8082 | awk '{ c[$3]++ } END { for (d in c) print d, c[d] }' |
	sort >"$T/first"
echo "RESULT: maglev (iii) before the first table: $(tr '\n' ' ' <"$T/first")"
expect_eq "maglev (iii): servers that got flows before the first table" \
	"$(awk '$2 >= 50' "$T/first" | wc -l)" 3
run ipvsadm -D -u $V:8082
holdoff 50
ipvsadm -C

# --- b. clients cannot aim --------------------------------------------------------
# NAIM aimed flows among NCAND candidates (a third of them go to one
# server). The second round goes to V2:80, a service with the same real
# servers: the client key has no VIP in it, so the same flows meet the same
# table there, as new connections, without waiting for the first round's
# to expire.
NAIM=1000
NCAND=4000
V2=10.0.0.2
ip addr add $V2/32 dev lo
udp_service3 "$T/s3"
S="UDP $V:80"
run ipvsadm -A -u $V2:80 -s maglev -b flag-2
for i in 1 2 3; do
	run ipvsadm -a -u $V2:80 -r "10.1.$i.1:80" -m -w 1
done
caddr=$(client_addrs 4 1 100)
FIRST=20000
awk -v a="$caddr" -v f=$FIRST -v n=$NCAND 'BEGIN {
	for (p = f; p < f + n; p++) print a, p }' >"$T/cand"
predict "$T/cand" "$T/s3" 1 >"$T/cand.zero"
awk '$3 == "10.1.1.1:80"' "$T/cand.zero" | head -n $NAIM >"$T/aim"
naim=$(wc -l <"$T/aim")
expect_eq "maglev-sim finds $NAIM ports aimed at 10.1.1.1:80 under the zero key" \
	"$naim" $NAIM

# round TAG VIP: send the NCAND candidate flows (the aimed ones among them)
# to VIP:80, then count the aimed flows' connections per dest into
# $T/aim.TAG.
round() {
	flows "$2" 80 $FIRST $NCAND "$caddr" >/dev/null
	conns "$2" 80 >"$T/conns.$1"
	awk 'NR == FNR { a[$1 " " $2] = 1; next }
		($1 " " $2) in a { print }' "$T/aim" "$T/conns.$1" >"$T/aim.$1"
	expect_eq "$1: every aimed flow got a connection" \
		"$(wc -l <"$T/aim.$1")" "$naim"
}

round zero $V
onrs1=$(awk '$3 == "10.1.1.1:80"' "$T/aim.zero" | wc -l)
expect_eq "zero key: the aimed flows all reach 10.1.1.1:80" "$onrs1" "$naim"

K=$(random_key)
ns_sysctl "" maglev_hash_key "$K" || fail "random key refused"
fp=$(svc_field "$S" key)
if [ -n "$fp" ] && [ "$fp" = "$(key_fp "$K")" ]; then
	pass "the random key's fingerprint in /proc ($fp) is maglev-sim's"
else
	fail "the random key's fingerprint in /proc: '$fp', maglev-sim says '$(key_fp "$K")'"
fi
expect_eq "UDP $V2:80: the table of $S (one server set, shared)" \
	"$(svc_field "UDP $V2:80" table)" "$(svc_field "$S" table)"
round secret $V2
spread=$(awk '{ c[$3]++ } END { for (d in c) printf "%s=%d ", d, c[d] }' \
	"$T/aim.secret")
echo "RESULT: spread of the $naim aimed flows under a random key: $spread"
check_shares "random key: the aimed flows" "$S" "$T/aim.secret"
onrs1=$(awk '$3 == "10.1.1.1:80"' "$T/aim.secret" | wc -l)
info "random key: $onrs1 of $naim aimed flows on 10.1.1.1:80"
cp "$T/s3" "$T/s3k"
echo "KEY $K" >>"$T/s3k"
awk '{ print $1, $2 }' "$T/aim" >"$T/aim.flows"
predict "$T/aim.flows" "$T/s3k" 1 >"$T/aim.pred"
compare_choices "random key: the aimed flows" "$T/aim.flows" "$T/aim.pred" $V2 80
run ipvsadm -D -u $V2:80

fi	# a and b, not on the debug kernel

# --- c. the key is not readable without privilege ---------------------------------
NOBODY=65534
expect_eq "root reads the key" "$(cat $SYSCTL/maglev_hash_key)" "$K"
if out=$(asuser $NOBODY cat $SYSCTL/maglev_hash_key 2>&1); then
	fail "uid $NOBODY reads maglev_hash_key: $out"
else
	pass "uid $NOBODY cannot read maglev_hash_key"
fi
if out=$(asuser $NOBODY cat $PARAMS/hash_key 2>&1); then
	fail "uid $NOBODY reads the parameter hash_key: $out"
else
	pass "uid $NOBODY cannot read the parameter hash_key"
fi
# shellcheck disable=SC2016 # expanded by the inner sh
if asuser $NOBODY sh -c 'echo "$1" >"$2"' sh $ZERO_KEY \
	$SYSCTL/maglev_hash_key 2>/dev/null; then
	fail "uid $NOBODY writes maglev_hash_key"
else
	pass "uid $NOBODY cannot write maglev_hash_key"
fi
expect_eq "the key is unchanged" "$(cat $SYSCTL/maglev_hash_key)" "$K"
# /proc shows the fingerprint only, to anybody.
asuser $NOBODY cat $PROC >"$T/proc.nobody" 2>&1 ||
	fail "uid $NOBODY cannot read $PROC"
check "uid $NOBODY sees the service in $PROC" grep -q "^service $S " "$T/proc.nobody"
if grep -qi "$K" "$T/proc.nobody" ||
	grep -Eq '[0-9a-fA-F]{32}' "$T/proc.nobody"; then
	fail "$PROC shows a key"
elif [ -z "$(svc_field "$S" key)" ]; then
	fail "$PROC shows no key fingerprint"
else
	pass "$PROC shows no 32-hex key, only the fingerprint $(svc_field "$S" key)"
fi

# A user namespace of uid NOBODY owning a new network namespace. Its owner
# could read its key, so it starts with the public (zero) key, not with
# the secret the parameter hash_key holds.
# The table size and the hold-off, which set what its builds cost the
# shared workqueue, are read-only there (0444, as IPVS's own resource
# sysctls) and keep the module parameters' values.
K3=0f1e2d3c4b5a69788796a5b4c3d2e1f0
echo "$K" >$PARAMS/hash_key || fail "parameter hash_key refused the key"
expect_eq "root reads the parameter hash_key" "$(cat $PARAMS/hash_key)" "$K"
# An ordinary container's root: uid 0 of the initial user namespace without
# a capability, which file modes let in. It reads every file that could
# show the key; the key is in none, nor in the kernel log.
# shellcheck disable=SC2016 # expanded by the inner sh
asuser -C 0 sh -c 'grep ^Cap /proc/self/status
	for f in "$@"; do echo "== $f"; cat "$f" 2>&1; done' sh $PROC \
	$PARAMS/* $SYSCTL/maglev_* >"$T/nocaps" 2>&1
sed 's/^/#   /' "$T/nocaps"
check "asuser -C: uid 0 with no capability" \
	grep -Eq '^CapEff:[[:space:]]+0+$' "$T/nocaps"
check "uid 0 without capabilities reads $PROC" grep -q "^service $S " "$T/nocaps"
if grep -qi "$K" "$T/nocaps"; then
	fail "uid 0 without CAP_NET_ADMIN reads the key: $(grep -i -B1 "$K" "$T/nocaps" | tr '\n' ' ')"
else
	pass "uid 0 without CAP_NET_ADMIN reads the key nowhere ($PROC, $PARAMS, $SYSCTL)"
fi
if dmesg | grep -qi "$K"; then
	fail "the kernel log shows the key"
else
	pass "the kernel log does not show the key"
fi
echo 70 >$PARAMS/holdoff_ms || fail "parameter holdoff_ms 70 refused"
# shellcheck disable=SC2016 # expanded by the inner sh
if asuser -U $NOBODY sh -c '
	s=/proc/sys/net/ipv4/vs
	echo "size $(cat $s/maglev_table_size)"
	echo "key $(cat $s/maglev_hash_key)"
	echo "$1" >$s/maglev_hash_key && echo "wrote $(cat $s/maglev_hash_key)"
	echo "modes $(stat -c %a $s/maglev_table_size $s/maglev_holdoff_ms $s/maglev_hash_key | tr "\n" " ")"
	echo "holdoff $(cat $s/maglev_holdoff_ms)"
	echo 251 2>/dev/null >$s/maglev_table_size && echo "size written"
	echo 0 2>/dev/null >$s/maglev_holdoff_ms && echo "holdoff written"
	echo "size now $(cat $s/maglev_table_size)"
	echo "holdoff now $(cat $s/maglev_holdoff_ms)"
	echo "proc $(cat /proc/net/ip_vs_maglev | wc -l)"
	if nsenter -t 1 -n cat $s/maglev_hash_key 2>/dev/null; then
		echo "entered the host namespace"
	fi
' sh $K3 >"$T/userns" 2>&1; then
	pass "an unprivileged user namespace with its own network namespace ran"
else
	fail "an unprivileged user namespace with its own network namespace: $(cat "$T/userns")"
fi
sed 's/^/#   /' "$T/userns"
expect_eq "userns: its namespace's size is the default" \
	"$(sed -n 's/^size \([0-9a-z]*\)$/\1/p' "$T/userns")" "$(cat $PARAMS/table_size)"
expect_eq "userns: its namespace starts with the public key, not hash_key" \
	"$(sed -n 's/^key //p' "$T/userns")" $ZERO_KEY
expect_eq "userns: it sets its own namespace's key" \
	"$(sed -n 's/^wrote //p' "$T/userns")" $K3
expect_eq "userns: maglev_table_size, maglev_holdoff_ms read-only, the key 0600" \
	"$(sed -n 's/^modes //p' "$T/userns")" "444 444 600 "
expect_eq "userns: its hold-off is the parameter's" \
	"$(sed -n 's/^holdoff \([0-9]*\)$/\1/p' "$T/userns")" 70
if grep -q "written" "$T/userns"; then
	fail "userns: wrote a resource sysctl: $(grep written "$T/userns" | tr '\n' ' ')"
else
	pass "userns: cannot write maglev_table_size nor maglev_holdoff_ms"
fi
expect_eq "userns: its table size stays the parameter's" \
	"$(sed -n 's/^size now //p' "$T/userns")" "$(cat $PARAMS/table_size)"
expect_eq "userns: its hold-off stays the parameter's" \
	"$(sed -n 's/^holdoff now //p' "$T/userns")" 70
expect_eq "userns: its /proc/net/ip_vs_maglev is empty" \
	"$(sed -n 's/^proc //p' "$T/userns")" 0
if grep -q "entered the host namespace\|$K" "$T/userns"; then
	fail "userns: reached the host namespace's key"
else
	pass "userns: cannot reach the host namespace's key"
fi
expect_eq "the host's key is unchanged" "$(cat $SYSCTL/maglev_hash_key)" "$K"
expect_eq "the host's table size is unchanged" \
	"$(cat $SYSCTL/maglev_table_size)" 65537
ns_sysctl "" maglev_hash_key $ZERO_KEY || fail "zero key refused"
echo $ZERO_KEY >$PARAMS/hash_key || fail "parameter hash_key: zero key refused"
echo 50 >$PARAMS/holdoff_ms || fail "parameter holdoff_ms 50 refused"
ipvsadm -C

# --- d. memory charged to the creator's cgroup --------------------------------------
CG=/sys/fs/cgroup
if ! grep -q ' cgroup2 ' /proc/mounts; then
	mkdir -p $CG
	mount -t cgroup2 none $CG || fail "mount cgroup2"
fi
echo +memory >$CG/cgroup.subtree_control || fail "enable the memory controller"
mkdir -p $CG/maglev
ns_sysctl "" maglev_table_size 5000011 || fail "maglev_table_size 5000011"
before=$(cat $CG/maglev/memory.current)
B="TCP 10.0.0.2:80"
# shellcheck disable=SC2016 # expanded by the inner sh
sh -c 'echo $$ >"$1/cgroup.procs" || exit 1
	ipvsadm -A -t 10.0.0.2:80 -s maglev &&
	ipvsadm -a -t 10.0.0.2:80 -r 10.1.1.1:80 -m &&
	ipvsadm -a -t 10.0.0.2:80 -r 10.1.2.1:80 -m &&
	ipvsadm -a -t 10.0.0.2:80 -r 10.1.3.1:80 -m' sh $CG/maglev ||
	fail "ipvsadm in the child cgroup"
wait_caught_up
mem=$(svc_field "$B" mem)
after=$(cat $CG/maglev/memory.current)
grow=$((after - before))
echo "RESULT: memory.current of the creator's cgroup: $before -> $after (+$grow bytes), table mem $mem"
# Three servers at 5000011 slots: 2 bits a slot, 1250003 bytes.
if [ -n "$mem" ] && [ "$mem" -ge 1250003 ] && [ "$grow" -ge "$mem" ]; then
	pass "the table ($mem bytes) is charged to the creator's cgroup (+$grow)"
else
	fail "the table ($mem bytes) is not charged to the creator's cgroup (+$grow)"
fi
run ipvsadm -D -t 10.0.0.2:80
n=50
# The table's charge goes. Uncharged pages may wait in the per-CPU charge
# stocks (MEMCG_CHARGE_BATCH, 64 pages per CPU) before memory.current
# shows them, so up to that much of the table may still be counted; what
# the cgroup's tasks left (ipvsadm's own slab) may stay too.
stock=$(($(nproc) * 64 * 4096))
left=$((after - ${mem:-0} + stock))
while [ $n -gt 0 ] && [ "$(cat $CG/maglev/memory.current)" -gt "$left" ]; do
	sleep 0.2
	n=$((n - 1))
done
gone=$(cat $CG/maglev/memory.current)
echo "RESULT: memory.current after the deletion: $gone"
if [ "${mem:-0}" -gt "$stock" ] && [ "$gone" -le "$left" ]; then
	pass "the charge goes with the service ($after -> $gone)"
else
	fail "the charge stays after the deletion ($after -> $gone)"
fi
ns_sysctl "" maglev_table_size 65537 || fail "maglev_table_size 65537"

# --- e. bounded build concurrency ---------------------------------------------------
WQ=/sys/bus/workqueue/devices
if [ -d $WQ ]; then
	expect_eq "workqueue ip_vs_maglev: max_active" \
		"$(cat $WQ/ip_vs_maglev/max_active 2>/dev/null)" 4
else
	# Our test kernels have CONFIG_SYSFS (kconfig/base.config) and the
	# workqueue is WQ_SYSFS: without the directory nothing says max_active.
	fail "no $WQ (CONFIG_SYSFS or the workqueue's sysfs missing): max_active not checked"
fi

# --- f. readers pin no superseded table ---------------------------------------------
# Three descriptors of $PROC, each open after reading the namespace's and
# the service's lines, while the service gets a new table after each: the
# store keeps only the current table. (A reader used to hold the table of
# the last service line it read until its next service line or its close:
# anybody could keep one superseded table alive per descriptor.)
ns_tables() {
	awk '$1 == "namespace" { for (i = 2; i < NF; i += 2)
		if ($i == "tables") print $(i + 1) }' $PROC
}
ipvsadm -C
run ipvsadm -A -t 10.0.0.3:80 -s maglev
run ipvsadm -a -t 10.0.0.3:80 -r 10.1.1.1:80 -m
wait_caught_up
for fd in 3 4 5; do
	eval "exec $fd<$PROC"
	eval "read -r _line <&$fd && read -r _line <&$fd" ||
		fail "f: descriptor $fd: no service line"
	run ipvsadm -a -t 10.0.0.3:80 -r "10.1.$((fd - 1)).1:80" -m
	wait_caught_up
done
n=50
while [ "$(ns_tables)" != 1 ] && [ $n -gt 0 ]; do
	sleep 0.1
	n=$((n - 1))
done
expect_eq "f: tables stored with 3 readers open over 3 rebuilds (the current one only)" \
	"$(ns_tables)" 1
exec 3<&- 4<&- 5<&-
run ipvsadm -D -t 10.0.0.3:80

# shellcheck disable=SC2086
kill $SERVERS 2>/dev/null
cleanup_net
finish
