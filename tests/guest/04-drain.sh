#!/bin/sh
# Guest test 4: drain and restore, and the flag-1 fallback.
# Setting a destination's weight to 0 moves only the new flows that mapped
# to it, spreads them over the others as maglev-sim predicts, and drops
# none; restoring the weight gives back the original digest and choices.
# An overloaded destination makes its flows fail without flag-1 and go
# elsewhere with it, while every other flow keeps its destination.
. "${0%/*}/lib.sh"

setup_net 3
warm_up
V=10.0.0.1
S="UDP $V:80"
if have_udpflows; then naddr=10 nport=100; else naddr=3 nport=10; fi
addrs=$(client_addrs 4 $naddr)

udp_service3 "$T/s"
d0=$(svc_field "$S" digest)
check_sim "$S" "$S" "$T/s"

# phase NAME FIRST_PORT: send a fresh set of flows, keep them in $T/f.NAME
# and IPVS's choices for them in $T/c.NAME.
phase() {
	# shellcheck disable=SC2086
	flows $V 80 "$2" $nport $addrs >"$T/f.$1"
	conns $V 80 | awk -v lo="$2" -v hi=$(($2 + nport)) \
		'$2 >= lo && $2 < hi' | sort >"$T/c.$1"
}

phase before 10000
predict "$T/f.before" "$T/s" 1 >"$T/p.before"
compare_choices "before drain" "$T/f.before" "$T/p.before" $V 80

# Drain 10.1.2.1:80.
run ipvsadm -e -u $V:80 -r 10.1.2.1:80 -m -w 0
cp "$T/s" "$T/s.drain"
echo "WEIGHT 10.1.2.1:80 0" >>"$T/s.drain"
check_sim "$S drained" "$S" "$T/s.drain"
phase drain 20000
predict "$T/f.drain" "$T/s.drain" 1 >"$T/p.drain"
compare_choices "drained" "$T/f.drain" "$T/p.drain" $V 80
expect_eq "no new flow goes to the drained dest" \
	"$(grep -c ' 10\.1\.2\.1:80$' "$T/c.drain")" 0
# Compare each drained-phase flow with where it would have gone undrained.
predict "$T/f.drain" "$T/s" 1 | sort >"$T/p.undrained"
moved=$(awk 'NR == FNR { u[$1 " " $2] = $3; next }
	{ k = $1 " " $2 } u[k] != $3 && u[k] != "10.1.2.1:80" { bad++ }
	u[k] == "10.1.2.1:80" { m++ }
	END { print bad + 0, m + 0 }' "$T/p.undrained" "$T/c.drain")
expect_eq "flows not on the drained dest keep their dest" "${moved% *}" 0
info "drained: ${moved#* } of $(wc -l <"$T/f.drain") new flows moved off 10.1.2.1:80"
check "some flows did move" [ "${moved#* }" -gt 0 ]

# Restore.
run ipvsadm -e -u $V:80 -r 10.1.2.1:80 -m -w 1
expect_eq "restoring the weight restores the digest" \
	"$(svc_field "$S" digest)" "$d0"
phase restored 30000
predict "$T/f.restored" "$T/s" 1 >"$T/p.restored"
compare_choices "restored" "$T/f.restored" "$T/p.restored" $V 80

# Fallback: 10.1.1.1:80 already has connections; an upper threshold of 1
# marks it overloaded.
run ipvsadm -e -u $V:80 -r 10.1.1.1:80 -m -w 1 -x 1
nodest0=$(dmesg | grep -c 'no destination available')
phase overload 40000
predict "$T/f.overload" "$T/s" 1 | sort >"$T/p.overload"
want=$(awk '$3 != "10.1.1.1:80"' "$T/p.overload" | wc -l)
expect_eq "without flag-1 only the overloaded dest's flows fail" \
	"$(wc -l <"$T/c.overload")" "$want"
cmp_bad=$(awk 'NR == FNR { p[$1 " " $2] = $3; next }
	p[$1 " " $2] != $3 { n++ } END { print n + 0 }' \
	"$T/p.overload" "$T/c.overload")
expect_eq "without flag-1 the others keep their dest" "$cmp_bad" 0
# The overload phase's own message, not one from earlier in the boot.
nodest=$(( $(dmesg | grep -c 'no destination available') - nodest0 ))
if [ "$nodest" -gt 0 ]; then
	pass "the kernel logged 'no destination available' during the overload phase ($nodest times)"
else
	fail "no 'no destination available' message during the overload phase without flag-1"
fi

run ipvsadm -E -u $V:80 -s maglev -b flag-1,flag-2
expect_eq "flags now flag-1,flag-2" "$(svc_field "$S" flags)" 0x18
phase fallback 50000
expect_eq "with flag-1 every flow gets a connection" \
	"$(wc -l <"$T/c.fallback")" "$(wc -l <"$T/f.fallback")"
expect_eq "with flag-1 no flow goes to the overloaded dest" \
	"$(grep -c ' 10\.1\.1\.1:80$' "$T/c.fallback")" 0
predict "$T/f.fallback" "$T/s" 1 | sort >"$T/p.fallback"
cmp_bad=$(awk 'NR == FNR { p[$1 " " $2] = $3; next }
	p[$1 " " $2] != "10.1.1.1:80" && p[$1 " " $2] != $3 { n++ }
	END { print n + 0 }' "$T/p.fallback" "$T/c.fallback")
expect_eq "with flag-1 the flows of available dests keep their dest" \
	"$cmp_bad" 0
spread=$(awk '{ c[$3]++ } END { for (d in c) printf "%s=%d ", d, c[d] }' \
	"$T/c.fallback")
info "with flag-1: $spread"

cleanup_net
finish
