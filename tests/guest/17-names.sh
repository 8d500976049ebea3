#!/bin/sh
# Guest test 17: backend names and weights userspace agrees with. The kernel
# names each destination exactly as "ipvsadm -Ln" (glibc's inet_ntop)
# prints it, also for the IPv6 forms where the kernel's own %pI6c differs
# (IPv4-compatible ::a.b.c.d, ISATAP-style ...:5efe:a.b.c.d), so maglev-sim
# fed from an "ipvsadm -Ln" listing computes the kernel's table. Weights
# above 65535, up to INT_MAX, are scaled, never refused.
. "${0%/*}/lib.sh"

INT_MAX=2147483647

# wait_built: until no service shows "pending 1" (builds may run off the
# configuration path; without a pending field there is nothing to wait for).
wait_built() {
	_i=0
	while grep -q ' pending 1' $PROC && [ $_i -lt 300 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
}

# listing SERVICE-OPTS: "NAME WEIGHT" per real server of "ipvsadm -Ln".
listing() {
	# shellcheck disable=SC2086 # SERVICE-OPTS is "-t ADDR:PORT"
	ipvsadm -Ln $1 | awk '$1 == "->" && $2 != "RemoteAddress:Port" {
		print $2, $4 }' | sort
}

# check_names TEXT SERVICE SERVICE-OPTS: /proc's dest names and weights
# equal "ipvsadm -Ln"'s, and maglev-sim fed from that listing gives the
# service's digest and slot counts.
check_names() {
	listing "$3" >"$T/ln"
	svc_dests "$2" | awk '{ print $1, $2 }' | sort >"$T/proc"
	if [ -s "$T/ln" ] && cmp -s "$T/ln" "$T/proc"; then
		pass "$1: /proc names and weights equal ipvsadm -Ln's"
	else
		fail "$1: /proc names differ from ipvsadm -Ln's"
		diff "$T/ln" "$T/proc"
	fi
	awk '{ print "ADD_NODE " $1 " " $2 }' "$T/ln" >"$T/s"
	check_sim "$1 from ipvsadm -Ln" "$2" "$T/s"
}

# --- IPv6: the forms where %pI6c and inet_ntop differ -----------------------
S6="TCP [fd00::1]:80"
run ipvsadm -A -t '[fd00::1]:80' -s maglev
# written in other spellings than the canonical ones
for d in '[0:0:0:0:0:0:1.2.3.4]:80 3' \
	 '[2001:DB8:0:0:0:5EFE:10.0.0.1]:80 70000' \
	 "[2001:db8:0:0:1:0:0:1]:8080 $INT_MAX" \
	 '[1:0:1:0:1:0:1:0]:80 1' \
	 '[2001:db8:0:1:1:1:1:1]:443 2' \
	 '[2001:db8:aaaa:0bcd::]:80 1'; do
	run ipvsadm -a -t '[fd00::1]:80' -r "${d% *}" -m -w "${d#* }"
done
wait_built
expect_eq "$S6: six dests" "$(svc_field "$S6" dests)" 6
expect_eq "$S6: weights up to INT_MAX build" "$(svc_field "$S6" build_fail)" 0
for n in '[::1.2.3.4]:80' '[2001:db8::5efe:a00:1]:80' \
	 '[2001:db8::1:0:0:1]:8080' '[1:0:1:0:1:0:1:0]:80' \
	 '[2001:db8:aaaa:bcd::]:80'; do
	check "$S6: dest named $n" grep -qF "  dest $n " $PROC
done
check_names "$S6" "$S6" "-t [fd00::1]:80"

# INT_MAX next to 1: the light dest keeps one or two slots of 65537.
light=$(svc_dests "$S6" | awk '$1 == "[1:0:1:0:1:0:1:0]:80" { print $3 }')
check "$S6: weight 1 next to INT_MAX keeps 1..2 slots ($light)" \
	[ "${light:-0}" -ge 1 -a "${light:-0}" -le 2 ]

# Draining and restoring a huge weight.
d=$(svc_field "$S6" digest)
run ipvsadm -e -t '[fd00::1]:80' -r '[2001:db8::1:0:0:1]:8080' -m -w 0
wait_built
expect_eq "$S6: the INT_MAX dest drained" \
	"$(svc_dests "$S6" | awk '$1 == "[2001:db8::1:0:0:1]:8080" { print $3 }')" 0
run ipvsadm -e -t '[fd00::1]:80' -r '[2001:db8::1:0:0:1]:8080' -m -w $INT_MAX
wait_built
expect_eq "$S6: restoring INT_MAX restores the table" \
	"$(svc_field "$S6" digest)" "$d"

# --- IPv4, and the 70000 : 1 ratio ------------------------------------------
S4="UDP 10.0.0.1:53"
run ipvsadm -A -u 10.0.0.1:53 -s maglev
run ipvsadm -a -u 10.0.0.1:53 -r 10.2.0.1:53 -m -w 70000
run ipvsadm -a -u 10.0.0.1:53 -r 10.2.0.2:5353 -m -w 1
wait_built
expect_eq "$S4: weight 70000 builds" "$(svc_field "$S4" build_fail)" 0
light=$(svc_dests "$S4" | awk '$1 == "10.2.0.2:5353" { print $3 }')
check "$S4: weight 1 next to 70000 keeps 1..2 slots ($light)" \
	[ "${light:-0}" -ge 1 -a "${light:-0}" -le 2 ]
check_names "$S4" "$S4" "-u 10.0.0.1:53"

run ipvsadm -C
finish
