#!/bin/sh
# Guest test 20: builds under a memory cgroup (cgroup v2).
# a. A build that does not fit fails, it does not OOM-kill: a service with
#    three servers at maglev_table_size 5000011 is made from a cgroup whose
#    memory.max then leaves 4 MiB, less than the next table (2.5 MB of 4-bit slots) and its
#    scratch area (10 MB: the fill runs on 16-bit slots); a task waits in that cgroup. Adding a fourth server from
#    there must count alloc_fail, kill nothing (memory.events oom and
#    oom_kill stay 0, the task lives, the kernel log has no OOM report), and
#    the old table keeps serving: same digest, and new flows go to the
#    owners maglev-sim gives for the three servers. With room again, the
#    retry publishes the four-server table.
# b. A build is charged to the task that made the change, and the service
#    does not pin the cgroup of the one that created it: a service made
#    from cgroup "creator" gets a server from cgroup "changer", whose
#    memory.current grows by the table's "mem", while the creator's
#    memory.stat "vmalloc" (the table's pages, counted exactly, unlike
#    memory.current with its per-CPU charge stocks) goes from at least the
#    old table's 625002 bytes to 0; after rmdir of the creator's cgroup its memcg is
#    released (cgroup.stat nr_dying_descendants of the root returns to what
#    it was), with the service still there.
# c. Writes of maglev_table_size racing ipvsadm -D pin no memory cgroup
#    and put no reference twice (see the part's comment).
# guest-timeout: 300
# debug-kernel: yes
. "${0%/*}/lib.sh"

CATCHUP_TIMEOUT=60
V=$VIP4
S="UDP $V:80"
CG=/sys/fs/cgroup

# in_cg CGROUP CMD...: run CMD as a task of CGROUP.
in_cg() {
	# shellcheck disable=SC2016,SC2317 # expanded by the inner sh; run calls it
	sh -c 'echo $$ >"$1/cgroup.procs" || exit 1; shift; exec "$@"' sh "$@"
}

# cg_event CGROUP NAME: the counter NAME of CGROUP's memory.events.
cg_event() {
	awk -v k="$2" '$1 == k { print $2 }' "$1/memory.events"
}

# cg_vmalloc_until CGROUP OP N: the "vmalloc" of CGROUP's memory.stat
# once it is OP N (test's -ge, -eq), or after 10 s the last reading
# ("none" if the field is missing): memory statistics are flushed every
# 2 s, or when a reader finds enough updates pending.
cg_vmalloc_until() {
	_n=50
	while :; do
		_v=$(awk '$1 == "vmalloc" { print $2 }' "$1/memory.stat")
		test "${_v:-0}" "$2" "$3" && break
		_n=$((_n - 1))
		[ $_n -gt 0 ] || break
		sleep 0.2
	done
	echo "${_v:-none}"
}

# dying: nr_dying_descendants of the root cgroup.
dying() {
	awk '$1 == "nr_dying_descendants" { print $2 }' $CG/cgroup.stat
}

# oom_reports: OOM killer reports in the kernel log so far (not the
# module's own "failed: out of memory" lines).
oom_reports() {
	dmesg | grep -cE 'invoked oom-killer|Killed process|oom-kill:'
}

if ! grep -q ' cgroup2 ' /proc/mounts; then
	mkdir -p $CG
	mount -t cgroup2 none $CG || fail "mount cgroup2"
fi
echo +memory >$CG/cgroup.subtree_control || fail "enable the memory controller"

setup_net 4
warm_up
echo 5000011 >$SYSCTL/maglev_table_size || fail "maglev_table_size 5000011"

# --- a. a build that does not fit fails without an OOM kill ---------------------
mkdir $CG/tight
run in_cg $CG/tight ipvsadm -A -u $V:80 -s maglev -b flag-2
echo "SIZE 5000011" >"$T/sim3"
for i in 1 2 3; do
	run in_cg $CG/tight ipvsadm -a -u $V:80 -r "10.1.$i.1:80" -m -w 1
	echo "ADD_NODE 10.1.$i.1:80 1" >>"$T/sim3"
done
wait_caught_up
d0=$(svc_field "$S" digest)
a0=$(svc_field "$S" alloc_fail)
expect_eq "$S: three servers at 5000011 slots" \
	"$(svc_field "$S" dests) $(svc_field "$S" size)" "3 5000011"
ADDRS=$(client_addrs 4 20)
# shellcheck disable=SC2086 # one address a word
flows $V 80 1000 10 $ADDRS >"$T/f1"
predict "$T/f1" "$T/sim3" 1 >"$T/p1"
compare_choices "$S before the change" "$T/f1" "$T/p1" $V 80

# Not through in_cg: a function in the background is a subshell, and $!
# would be that subshell, not the task in the cgroup.
# shellcheck disable=SC2016 # expanded by the inner sh
sh -c 'echo $$ >"$1/cgroup.procs" || exit 1; exec sleep 600' sh $CG/tight &
victim=$!
sleep 0.2
oom0=$(oom_reports)
cur=$(cat $CG/tight/memory.current)
echo $((cur + 4 * 1048576)) >$CG/tight/memory.max || fail "set memory.max"
echo "RESULT: cgroup tight: memory.current $cur, memory.max $(cat $CG/tight/memory.max), table mem $(svc_field "$S" mem)"
run in_cg $CG/tight ipvsadm -a -u $V:80 -r 10.1.4.1:80 -m -w 1
n=200
while [ $n -gt 0 ] && [ "$(svc_field_now "$S" alloc_fail)" = "$a0" ]; do
	sleep 0.05
	n=$((n - 1))
done
a1=$(svc_field_now "$S" alloc_fail)
if [ "$a1" -gt "$a0" ]; then
	pass "$S: the build that does not fit fails (alloc_fail $a0 -> $a1)"
else
	fail "$S: no failed build counted (alloc_fail $a0 -> $a1)"
fi
expect_eq "cgroup tight: memory.events oom" "$(cg_event $CG/tight oom)" 0
expect_eq "cgroup tight: memory.events oom_kill" \
	"$(cg_event $CG/tight oom_kill)" 0
check "the task in cgroup tight lives" kill -0 $victim
expect_eq "no OOM report in the kernel log" "$(oom_reports)" "$oom0"
expect_eq "$S: the old table serves (digest)" "$(svc_field_now "$S" digest)" "$d0"
expect_eq "$S: the old table serves (dests, pending)" \
	"$(svc_field_now "$S" dests) $(svc_field_now "$S" pending)" "3 1"
# shellcheck disable=SC2086 # one address a word
NOWAIT=1 flows $V 80 2000 10 $ADDRS >"$T/f2"
predict "$T/f2" "$T/sim3" 1 >"$T/p2"
compare_choices "$S while the build fails" "$T/f2" "$T/p2" $V 80

echo max >$CG/tight/memory.max
wait_caught_up
expect_eq "$S: with room again the retry publishes four servers" \
	"$(svc_field "$S" dests)" 4
kill $victim 2>/dev/null
wait $victim 2>/dev/null
run ipvsadm -D -u $V:80
# The killed task leaves its cgroup a moment after wait returns.
n=50
while [ $n -gt 0 ] && ! rmdir $CG/tight 2>/dev/null; do
	sleep 0.1
	n=$((n - 1))
done
[ -d $CG/tight ] && fail "rmdir of cgroup tight"

# --- b. charged to the changer, the creator's cgroup not pinned -------------------
B="UDP 10.0.0.2:80"
mkdir $CG/creator $CG/changer
# Cgroups removed before (tight) go first, so that the count below moves
# with the creator's cgroup alone.
n=200
while [ $n -gt 0 ] && [ "$(dying)" -gt 0 ]; do
	sleep 0.1
	n=$((n - 1))
done
dy0=$(dying)
run in_cg $CG/creator ipvsadm -A -u 10.0.0.2:80 -s maglev
run in_cg $CG/creator ipvsadm -a -u 10.0.0.2:80 -r 10.1.1.1:80 -m
run in_cg $CG/creator ipvsadm -a -u 10.0.0.2:80 -r 10.1.3.1:80 -m
wait_caught_up
m1=$(svc_field "$B" mem)
# Two servers at 5000011 slots: 1 bit a slot, 625002 bytes of slots.
v1=$(cg_vmalloc_until $CG/creator -ge 625002)
sleep 1
k1=$(cat $CG/creator/memory.current)
c0=$(cat $CG/changer/memory.current)
run in_cg $CG/changer ipvsadm -a -u 10.0.0.2:80 -r 10.1.2.1:80 -m
wait_caught_up
expect_eq "$B: three servers" "$(svc_field "$B" dests)" 3
mem=$(svc_field "$B" mem)
sleep 1
c1=$(cat $CG/changer/memory.current)
k2=$(cat $CG/creator/memory.current)
v2=$(cg_vmalloc_until $CG/creator -eq 0)
echo "RESULT: changer memory.current $c0 -> $c1, creator $k1 -> $k2 (vmalloc $v1 -> $v2), table mem $mem"
# Three servers at 5000011 slots: 2 bits a slot, 1250003 bytes of slots;
# the creator's table had two servers, 1 bit a slot, half of that.
if [ "${mem:-0}" -ge 1250003 ] && [ $((c1 - c0)) -ge "$mem" ]; then
	pass "$B: the build is charged to the changer's cgroup (+$((c1 - c0)), mem $mem)"
else
	fail "$B: the build is not charged to the changer's cgroup (+$((c1 - c0)), mem $mem)"
fi
# memory.current keeps uncharged pages in per-CPU charge stocks (up to 64
# pages a CPU, 512 KB here: most of the old table), so it cannot say
# whether the table went; memory.stat's vmalloc counts the pages exactly:
# the creator held the old table's, and now holds none.
if [ "$v1" -ge 625002 ] 2>/dev/null && [ "$v2" = 0 ]; then
	pass "$B: the creator's cgroup lost the old table's charge (vmalloc $v1 -> 0, old mem $m1)"
else
	fail "$B: the creator's cgroup still holds a table (vmalloc $v1 -> $v2, memory.current $k1 -> $k2, old mem $m1)"
fi
check "rmdir of the creator's cgroup" rmdir $CG/creator
n=200
while [ $n -gt 0 ] && [ "$(dying)" -gt "$dy0" ]; do
	sleep 0.1
	n=$((n - 1))
done
echo "RESULT: nr_dying_descendants $dy0 before, $(dying) after the rmdir"
if [ "$(dying)" -le "$dy0" ]; then
	pass "the creator's memory cgroup is released while its service lives"
else
	fail "the creator's memory cgroup stays dying (pinned) while its service lives"
fi
check "$B: the service is still there" svc_listed "$B"
run ipvsadm -C
rmdir $CG/changer
echo 65537 >$SYSCTL/maglev_table_size

# --- c. table-size writes racing deletions pin no cgroup --------------------------
# A write of maglev_table_size walks the namespace's services under RCU
# without a reference (maglev_rebuild_net()); one that reaches a service
# that ipvsadm -D just deleted must neither store the writer's memcg
# reference in it (never put: the writer's cgroup stays dying after its
# rmdir) nor put the service's own a second time (a refcount underflow).
# From cgroup "racer": RACE_ROUNDS times 16 services made, given a server
# and deleted, while a task of the same cgroup writes the size in a loop;
# the control cgroup "calm" makes and deletes its own 16 services alike,
# without writes. Both removed, nr_dying_descendants must come back to
# what it was, and the kernel log must have no refcount report.
RACE_ROUNDS=${RACE_ROUNDS:-30}
mkdir $CG/racer $CG/calm
n=200
while [ $n -gt 0 ] && [ "$(dying)" -gt 0 ]; do
	sleep 0.1
	n=$((n - 1))
done
dy0=$(dying)
for net in 3 4; do
	i=1
	while [ $i -le 16 ]; do
		echo "-A -u 10.0.$net.$i:80 -s maglev"
		echo "-a -u 10.0.$net.$i:80 -r 10.1.1.1:80 -m"
		i=$((i + 1))
	done >"$T/race$net.add"
	sed -n 's/^-A -u \([^ ]*\) .*/-D -u \1/p' "$T/race$net.add" >"$T/race$net.del"
done
# shellcheck disable=SC2016 # expanded by the inner sh
churn='i=0; while [ $i -lt $1 ]; do ipvsadm -R <"$2.add"; ipvsadm -R <"$2.del"; i=$((i + 1)); done'
in_cg $CG/racer sh -c "$churn" sh "$RACE_ROUNDS" "$T/race3" &
p1=$!
in_cg $CG/calm sh -c "$churn" sh "$RACE_ROUNDS" "$T/race4" &
p2=$!
# No file from racer's tasks: a tmpfs page charged to it would pin it.
# shellcheck disable=SC2016 # expanded by the inner sh
in_cg $CG/racer sh -c 'n=0; while [ ! -e "$1" ]; do echo 251 >"$2"; echo 509 >"$2"; n=$((n + 2)); done; echo "RESULT: $n size writes from cgroup racer"' \
	sh "$T/stop" $SYSCTL/maglev_table_size &
p3=$!
wait $p1
wait $p2
touch "$T/stop"
wait $p3
echo "RESULT: $RACE_ROUNDS rounds of 16 services made and deleted in cgroups racer and calm"
run ipvsadm -C
echo 65537 >$SYSCTL/maglev_table_size
n=50
while [ $n -gt 0 ] && ! rmdir $CG/racer 2>/dev/null; do
	sleep 0.1
	n=$((n - 1))
done
check "rmdir of cgroup racer" test ! -d $CG/racer
check "rmdir of cgroup calm" rmdir $CG/calm
n=300
while [ $n -gt 0 ] && [ "$(dying)" -gt "$dy0" ]; do
	sleep 0.1
	n=$((n - 1))
done
echo "RESULT: nr_dying_descendants $dy0 before, $(dying) 30 s at most after the rmdirs"
if [ "$(dying)" -le "$dy0" ]; then
	pass "size writes racing deletions: the writers' and the control's memory cgroups are released"
else
	fail "size writes racing deletions: $(($(dying) - dy0)) memory cgroup(s) stay dying (a reference left in a deleted service)"
fi
expect_eq "no refcount report in the kernel log" \
	"$(dmesg | grep -cE 'refcount_t|percpu ref|css_release')" 0

cleanup_net
finish
