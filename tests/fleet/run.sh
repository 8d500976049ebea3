#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host tests of maglev-fleet (tools/maglev-fleet.c) on real captures of
# /proc/net/ip_vs_maglev from guest tests 12 and 18 (tests/data/fleet/,
# see its README), and on cases derived from them by the edits written
# out below (never presented as captures):
#
#   tests/fleet/run.sh [path/to/maglev-fleet]
#
# Checks the fleet verdicts, the reasons, the exit statuses (0 agree,
# 1 differ, 2 usage or input error, 3 pending), the line numbers of input
# errors, and that "maglev-fleet prom" output is valid Prometheus text
# format (promcheck.awk; and python3's prometheus_client parser when it is
# installed) with the values of the file.  Prints PASS:/FAIL: lines, then
# "N passed, N failed".
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
D=$TOP/tests/data/fleet
FLEET=${1:-}
if [ -z "$FLEET" ]; then
	make -s -C "$TOP" build/maglev-fleet >&2 || { echo "FAIL: build maglev-fleet"; exit 1; }
	FLEET=$TOP/build/maglev-fleet
fi

. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# fleet ARGS...: run maglev-fleet; stdout in $TMP/out, stderr in $TMP/err,
# exit status in $rc.
rc=0
fleet() {
	rc=0
	"$FLEET" "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
}

# verdict TEXT WANT_RC [LINE...]: the last run exited WANT_RC and printed
# every LINE (a fixed string, whole line) on stdout.
verdict() {
	local text=$1 want=$2 l miss=
	shift 2
	for l in "$@"; do
		grep -qxF -- "$l" "$TMP/out" || miss="$miss [$l]"
	done
	if [ "$rc" = "$want" ] && [ -z "$miss" ]; then
		pass "$text"
	else
		fail "$text: exit $rc (want $want), missing lines:$miss"
		sed 's/^/  | /' "$TMP/out" "$TMP/err"
	fi
}

# bad TEXT WANT_STDERR ARGS...: maglev-fleet ARGS fails with status 2 and
# this exact message on stderr.
bad() {
	local text=$1 want=$2
	shift 2
	fleet "$@"
	if [ "$rc" = 2 ] && [ "$(cat "$TMP/err")" = "$want" ] &&
		[ ! -s "$TMP/out" ]; then
		pass "$text"
	else
		fail "$text: exit $rc, stderr '$(cat "$TMP/err")', want 2 and '$want'"
	fi
}

# three NAME: the captures NAME.lb1 NAME.lb2 NAME.lb3 of directory $1.
three() { echo "$1/$2.lb1" "$1/$2.lb2" "$1/$2.lb3"; }

# real_captures DIR KEY WHAT: the checks on the captures of guest tests
# 12 and 18 in DIR/12 and DIR/18, whose service lines show the key as
# KEY ("seed 0" in the captures made before the keyed hash, the default
# key's fingerprint in those after); WHAT names them in the results.
real_captures() {
	local C=$1 K=$2 W=$3
	# shellcheck disable=SC2046
	fleet check $(three "$C/12" setup)
	verdict "$W: test 12 set-up: all agree" 0 \
		"OK: 2 maglev services agree on 3 load balancers (setup.lb1, setup.lb2, setup.lb3)"
	fleet check lb1="$C/12/roll-lb1.lb1" lb2="$C/12/roll-lb1.lb2" lb3="$C/12/roll-lb1.lb3"
	verdict "$W: test 12 rolling update, lb1 updated: rs5 missing on lb2, lb3" 1 \
		"DISAGREE: 1 of 2 maglev services differ across 3 load balancers (lb1, lb2, lb3)" \
		"TCP 10.0.0.1:83: differs" \
		"  dest 10.2.0.5:83: weight 1 on lb1; missing on lb2, lb3"
	if grep -q '^TCP 10.0.0.1:80' "$TMP/out"; then
		fail "$W: test 12 rolling update: port 80, which agrees, is reported"
	else
		pass "$W: test 12 rolling update: port 80, which agrees, is not reported"
	fi
	fleet check -v lb1="$C/12/roll-done.lb1" lb2="$C/12/roll-done.lb2" lb3="$C/12/roll-done.lb3"
	verdict "$W: test 12 rolling update done: all agree, -v lists them" 0 \
		"OK: 2 maglev services agree on 3 load balancers (lb1, lb2, lb3)" \
		"TCP 10.0.0.1:83: agrees on all 3: digest $(awk '$3 == "10.0.0.1:83" { for (i = 4; i < NF; i++) if ($i == "digest") print $(i + 1) }' "$C/12/roll-done.lb1") key $K size 65537 flags 0x10 dests 5"

	if [ -d "$C/18" ]; then
		fleet check lb1="$C/18/weight-lb1.lb1" lb2="$C/18/weight-lb1.lb2" lb3="$C/18/weight-lb1.lb3"
		verdict "$W: test 18 rolling re-weight, lb1 done: rs3's weight differs" 1 \
			"TCP 10.0.0.1:84: differs" \
			"  dest 10.2.0.3:84: weight 2 on lb1; weight 1 on lb2, lb3"
		fleet check lb1="$C/18/flags.lb1" lb2="$C/18/flags.lb2" lb3="$C/18/flags.lb3"
		verdict "$W: test 18 lb2 without port hashing: flags differ, digests do not" 1 \
			"TCP 10.0.0.1:86: differs" \
			"  flags: 0x10 on lb1, lb3; 0x0 on lb2 (0x10 flag-2 port hashing, 0x8 flag-1 fallback)"
		if grep -q '^  digest' "$TMP/out"; then
			fail "$W: test 18 flags: a digest difference is reported"
		else
			pass "$W: test 18 flags: no digest difference reported (flags do not change the table)"
		fi
		if [ -f "$C/18/pending.lb1" ]; then
			fleet check lb1="$C/18/pending.lb1" lb2="$C/18/pending.lb2" lb3="$C/18/pending.lb3"
			verdict "$W: test 18 pending on lb1: status 3, not called a disagreement" 3 \
				"PENDING: 1 of 3 maglev services have tables still being built on 3 load balancers, none differs otherwise (lb1, lb2, lb3)"
			if grep -q '^TCP 10.0.0.1:86: pending on lb1 (gen [0-9]*, table_gen [0-9]*): its table has not caught up' "$TMP/out"; then
				pass "$W: test 18 pending: names lb1 and its generations"
			else
				fail "$W: test 18 pending: no line naming lb1's generations"
			fi
		fi
	else
		fail "no captures of guest test 18 in $D/18"
	fi
}

echo "== maglev-fleet check on real captures"
real_captures "$D" "seed 0" "seed format"
real_captures "$D/key" "$(awk 'NR == 1 { for (i = 1; i < NF; i++) if ($i == "key") print $(i + 1) }' "$D/key/12/setup.lb1")" "key format"
real_captures "$D/ns" "$(awk '$1 == "service" { for (i = 1; i < NF; i++) if ($i == "key") print $(i + 1); exit }' "$D/ns/12/setup.lb1")" "namespace-line format"

echo "== guest 26's captures: drains, restores, modules, save"
# capture26 DIR BUILD: the checks on guest 26's captures of one build.
capture26() {
	local C=$1 B=$2 W="26 ${1#"$D"/26}: $2"
	fleet check lb1="$C/$B-drain.lb1" lb2="$C/$B-drain.lb2"
	verdict "$W: rs3 draining on both LBs: agree" 0 \
		"OK: 1 maglev services agree on 2 load balancers (lb1, lb2)"
	fleet check lb1="$C/$B-plain.lb1" lb3="$C/$B-plain.lb3"
	verdict "$W: lb3 restored with plain ipvsadm -S/-R: the drain is lost" 1 \
		"TCP 10.0.0.1:80: differs" \
		"  dest 10.2.0.3:80: weight 0 draining from 1 on lb1; weight 0 added at 0 on lb3 (restored at weight 0 during a drain: restore it as draining, maglev-fleet save)"
	fleet save "$C/$B-save.proc" <"$C/$B-save.ipvsadm-S"
	if [ "$rc" = 0 ] && cmp -s "$TMP/out" "$C/$B-save.rules"; then
		pass "$W: save makes from ipvsadm -S and /proc the rules the guest saved"
	else
		fail "$W: save: exit $rc: $(diff "$TMP/out" "$C/$B-save.rules" | head -n 5) $(cat "$TMP/err")"
	fi
	# (Debian's kernel has its own ip_vs_mh loaded beside ip_vs_maglev.)
	local why="no maglev module is loaded (ip_vs_maglev or ip_vs_mh): not installed for the running kernel, or not loaded yet"
	grep -q '^module ip_vs_mh version - ' "$C/$B-noproc.lb1" &&
		why="a module without a version is loaded: the kernel's own, another table (did the DKMS build fail for the running kernel?)"
	fleet check lb1="$C/$B-noproc.lb1" lb2="$C/$B-collect.lb2"
	verdict "$W: an LB without the module" 1 \
		"lb1: no /proc/net/ip_vs_maglev ($(awk '{ print "module " $2 ", version " $4 }' "$C/$B-noproc.lb1")): $why"
	if grep -q '^module version' "$TMP/out"; then
		fail "$W: the LB without the /proc file is reported twice (its version too)"
	else
		pass "$W: the LB without the /proc file is not compared for its version"
	fi
	fleet check "$C/$B-collect.lb1" "$C/$B-collect.lb2"
	verdict "$W: collect's files at the end agree and name the module" 0 \
		"OK: 1 maglev services agree on 2 load balancers ($B-collect.lb1, $B-collect.lb2); module ip_vs_$([ "$B" = mh ] && echo mh || echo maglev) 0.2, 64-bit kernels"
}
capture26 "$D/26" maglev
capture26 "$D/26/newest" maglev
capture26 "$D/26/newest" mh
fleet check lb1="$D/26/newest/mh-intree.lb1" lb2="$D/26/newest/mh-collect.lb2"
verdict "26 newest: the kernel's own ip_vs_mh on lb1 (a failed DKMS build)" 1 \
	"lb1: no /proc/net/ip_vs_maglev (module ip_vs_mh, version -): a module without a version is loaded: the kernel's own, another table (did the DKMS build fail for the running kernel?)" \
	"  service: missing on lb1; present on lb2"

echo "== derived cases (edits of real captures)"
# A service missing on one LB: lb2's port 80 block deleted.
awk '$1 == "service" { skip = ($3 == "10.0.0.1:80") } !skip' \
	"$D/12/setup.lb2" >"$TMP/nosvc.lb2"
fleet check lb1="$D/12/setup.lb1" lb2="$TMP/nosvc.lb2" lb3="$D/12/setup.lb3"
verdict "derived: service missing on lb2" 1 \
	"TCP 10.0.0.1:80: differs" \
	"  service: missing on lb2; present on lb1, lb3"
# Another table size on lb3: "size 65537" becomes "size 131071".
sed 's/ size 65537 / size 131071 /' "$D/12/setup.lb3" >"$TMP/size.lb3"
fleet check lb1="$D/12/setup.lb1" lb2="$D/12/setup.lb2" lb3="$TMP/size.lb3"
verdict "derived: size differs on lb3" 1 \
	"  size: 65537 on lb1, lb2; 131071 on lb3 (table_size differs, or a service has more destinations than it)"
# The new format: "seed 0" becomes "key 5eed0001" (lb2: "key 0badc0de").
for lb in lb1 lb2 lb3; do
	sed 's/ seed 0 / key 5eed0001 /' "$D/12/setup.$lb" >"$TMP/key.$lb"
done
fleet check lb1="$TMP/key.lb1" lb2="$TMP/key.lb2" lb3="$TMP/key.lb3"
verdict "derived: key format, same key everywhere" 0 \
	"OK: 2 maglev services agree on 3 load balancers (lb1, lb2, lb3)"
sed 's/ key 5eed0001 / key 0badc0de /' "$TMP/key.lb2" >"$TMP/key2.lb2"
fleet check lb1="$TMP/key.lb1" lb2="$TMP/key2.lb2" lb3="$TMP/key.lb3"
verdict "derived: key differs on lb2 (same digests)" 1 \
	"DISAGREE: 2 of 2 maglev services differ across 3 load balancers (lb1, lb2, lb3)" \
	"  key: 5eed0001 on lb1, lb3; 0badc0de on lb2 (client hash keys differ: the same client is looked up in another slot)"
fleet check lb1="$D/12/setup.lb1" lb2="$TMP/key.lb2"
verdict "derived: old (seed) and new (key) format side by side differ" 1 \
	"  key: seed 0 on lb1; 5eed0001 on lb2 (client hash keys differ: the same client is looked up in another slot)"
# Same servers and size, another digest: a drained server's history.
sed 's/ digest [0-9a-f]* / digest 0123456789abcdef /' "$D/12/setup.lb3" >"$TMP/dig.lb3"
fleet check lb1="$D/12/setup.lb1" lb2="$D/12/setup.lb2" lb3="$TMP/dig.lb3"
if grep -q "(same destinations, weights and size: a drained destination's history, or different module versions)" "$TMP/out" &&
	[ "$rc" = 1 ]; then
	pass "derived: digest alone differs, explained"
else
	fail "derived: digest alone differs: exit $rc, $(cat "$TMP/out")"
fi
# An LB with no maglev service at all (an empty file).
: >"$TMP/empty"
fleet check lb1="$D/12/setup.lb1" lb2="$TMP/empty"
verdict "derived: an LB without services" 1 \
	"  service: missing on lb2; present on lb1"
# README's make demo transcript: the older line without pending/gen/mem.
fleet check a="$D/readme-demo.txt" b="$D/readme-demo.txt"
verdict "README transcript (older format) parses and agrees with itself" 0 \
	"OK: 1 maglev services agree on 2 load balancers (a, b)"

echo "== drains (edits of real captures: the drain field)"
# "drain D" at the end of the dest lines; 10.2.0.2:84 is at weight 0 in
# lb2's and lb3's key/18 weight-lb1 captures (which agree): made draining
# from 1 on "lb1" and "lb2", added at 0 on "lb3".
drain_fmt() {
	awk -v d="$2" '$1 == "dest" { $0 = "  " $0 " drain " ($2 == "10.2.0.2:84" && $4 == 0 ? d : 0) } { print }' "$1"
}
drain_fmt "$D/key/18/weight-lb1.lb2" 1 >"$TMP/dr.lb1"
drain_fmt "$D/key/18/weight-lb1.lb3" 1 >"$TMP/dr.lb2"
# (and lb3's port 84 digest another, as a table without the drain has)
drain_fmt "$D/key/18/weight-lb1.lb3" 0 |
	sed '1s/ digest [0-9a-f]* / digest 0123456789abcdef /' >"$TMP/dr.lb3"
if grep -q '10.2.0.2:84 weight 0 slots 0 drain 1$' "$TMP/dr.lb1"; then
	pass "drains: the edit made 10.2.0.2:84 draining on lb1"
else
	fail "drains: the capture has no 10.2.0.2:84 at weight 0: $(grep -c 'drain 1' "$TMP/dr.lb1")"
fi
fleet check lb1="$TMP/dr.lb1" lb2="$TMP/dr.lb2"
verdict "drains: the same drain on lb1 and lb2 agrees" 0 \
	"OK: 3 maglev services agree on 2 load balancers (lb1, lb2)"
fleet check lb1="$TMP/dr.lb1" lb2="$TMP/dr.lb2" lb3="$TMP/dr.lb3"
verdict "drains: draining on lb1, lb2 and added at 0 on lb3 differ" 1 \
	"TCP 10.0.0.1:84: differs" \
	"  dest 10.2.0.2:84: weight 0 draining from 1 on lb1, lb2; weight 0 added at 0 on lb3 (restored at weight 0 during a drain: restore it as draining, maglev-fleet save)"
sed 's/ weight 1 slots \([0-9]*\) drain 0$/ weight 1 slots \1 drain 1/' "$TMP/dr.lb1" >"$TMP/drbad"
bad "drains: a drain with a weight" \
	"maglev-fleet: $TMP/drbad:2: drain 1 with weight 1 (only a weight 0 drains)" check "$TMP/drbad"

echo "== modules (the module line of maglev-fleet collect)"
# with_module FILE LINE: LINE, then FILE.
with_module() { echo "$2"; cat "$1"; }
M='module ip_vs_maglev version 0.2 bits 64 proc yes'
for lb in lb1 lb2 lb3; do with_module "$TMP/dr.lb1" "$M" >"$TMP/m.$lb"; done
fleet check "$TMP/m.lb1" "$TMP/m.lb2" "$TMP/m.lb3"
verdict "modules: one version, one word size: OK names them" 0 \
	"OK: 3 maglev services agree on 3 load balancers (m.lb1, m.lb2, m.lb3); module ip_vs_maglev 0.2, 64-bit kernels"
with_module "$TMP/dr.lb1" 'module ip_vs_mh version 0.1 bits 64 proc yes' >"$TMP/m.lb3"
fleet check "$TMP/m.lb1" "$TMP/m.lb2" "$TMP/m.lb3"
verdict "modules: a mixed version is a disagreement" 1 \
	"DISAGREE: 0 of 3 maglev services differ across 3 load balancers, and their modules do (m.lb1, m.lb2, m.lb3)" \
	"module version: 0.2 on m.lb1, m.lb2; 0.1 on m.lb3 (a mixed fleet: finish the upgrade or the rollback; NEWS says which versions move clients)"
with_module "$TMP/dr.lb1" 'module ip_vs_mh version 0.2 bits 32 proc yes' >"$TMP/m.lb3"
fleet check "$TMP/m.lb1" "$TMP/m.lb2" "$TMP/m.lb3"
verdict "modules: a 32-bit kernel among 64-bit ones (the mh build of the same version is no difference)" 1 \
	"kernel word size: 64 on m.lb1, m.lb2; 32 on m.lb3 bits (32-bit kernels hash clients with HalfSipHash, 64-bit ones with SipHash: the same tables, other servers)"
if grep -q '^module version' "$TMP/out"; then
	fail "modules: ip_vs_mh 0.2 and ip_vs_maglev 0.2 reported as a version difference"
else
	pass "modules: ip_vs_mh 0.2 and ip_vs_maglev 0.2 are one version"
fi
echo 'module ip_vs_mh version - bits 64 proc missing' >"$TMP/m.lb3"
fleet check "$TMP/m.lb1" "$TMP/m.lb2" "$TMP/m.lb3"
verdict "modules: the kernel's own ip_vs_mh (no version, no /proc file) on lb3" 1 \
	"m.lb3: no /proc/net/ip_vs_maglev (module ip_vs_mh, version -): a module without a version is loaded: the kernel's own, another table (did the DKMS build fail for the running kernel?)" \
	"  service: missing on m.lb3; present on m.lb1, m.lb2"
{ echo "$M"; echo "$M"; } >"$TMP/m2"
bad "modules: a module line twice" "maglev-fleet: $TMP/m2:2: module line twice (line 1)" check "$TMP/m2"
{ cat "$TMP/dr.lb1"; echo "$M"; } >"$TMP/m3"
bad "modules: a module line after the services" \
	"maglev-fleet: $TMP/m3:$(($(wc -l <"$TMP/dr.lb1") + 1)): module line after a namespace or service line" check "$TMP/m3"
echo 'module ip_vs_maglev version 0.2 bits 16 proc yes' >"$TMP/m4"
bad "modules: bits 16" "maglev-fleet: $TMP/m4:1: bad bits '16' (32 or 64)" check "$TMP/m4"
{ echo 'module ip_vs_mh version - bits 64 proc missing'; head -n 1 "$TMP/dr.lb1"; } >"$TMP/m5"
bad "modules: service lines after 'proc missing'" "maglev-fleet: $TMP/m5:2: a line after 'proc missing'" check "$TMP/m5"

echo "== collect (a fake /sys and /proc under -r ROOT)"
bits=$(case $(uname -m) in *64|s390x|alpha) echo 64 ;; *) echo 32 ;; esac)
R=$TMP/root
mkdir -p "$R/sys/module/ip_vs_mh" "$R/proc/net"
fleet collect -r "$R"
if [ "$rc" = 0 ] && [ "$(cat "$TMP/out")" = "module ip_vs_mh version - bits $bits proc missing" ]; then
	pass "collect: the kernel's own ip_vs_mh: no version, no /proc file"
else
	fail "collect: in-tree mh: exit $rc: $(cat "$TMP/out" "$TMP/err")"
fi
echo 0.2 >"$R/sys/module/ip_vs_mh/version"
cp "$TMP/dr.lb1" "$R/proc/net/ip_vs_maglev"
fleet collect -r "$R"
if [ "$rc" = 0 ] && [ "$(head -n 1 "$TMP/out")" = "module ip_vs_mh version 0.2 bits $bits proc yes" ] &&
	[ "$(sed 1d "$TMP/out")" = "$(cat "$TMP/dr.lb1")" ]; then
	pass "collect: the mh build: its version, then the /proc file as it is"
else
	fail "collect: mh build: exit $rc: $(head -n 2 "$TMP/out" "$TMP/err")"
fi
mkdir -p "$R/sys/module/ip_vs_maglev"
echo 0.3 >"$R/sys/module/ip_vs_maglev/version"
fleet collect -r "$R"
if [ "$(head -n 1 "$TMP/out")" = "module ip_vs_maglev version 0.3 bits $bits proc yes" ]; then
	pass "collect: ip_vs_maglev beside the kernel's ip_vs_mh: ip_vs_maglev"
else
	fail "collect: ip_vs_maglev and ip_vs_mh: $(head -n 1 "$TMP/out")"
fi
fleet collect -x
if [ "$rc" = 2 ]; then pass "collect: a bad option: exit 2"; else fail "collect -x: exit $rc"; fi

echo "== save (ipvsadm -S -n into an ipvsadm -R script that restores drains)"
# The rules of the key/18 set-up as ipvsadm -S -n prints them.
awk '$1 == "service" { split($3, a, ":"); svc = $3
		print "-A -t " svc " -s maglev -b flag-2" }
	$1 == "dest" { print "-a -t " svc " -r " $2 " -g -w " $4 }' "$TMP/dr.lb1" >"$TMP/rules"
fleet save "$TMP/dr.lb1" <"$TMP/rules"
if [ "$rc" = 0 ] &&
	[ "$(grep -c . "$TMP/out")" = "$(($(grep -c . "$TMP/rules") + 1))" ] &&
	grep -qxF -- "-a -t 10.0.0.1:84 -r 10.2.0.2:84 -g -w 1" "$TMP/out" &&
	[ "$(tail -n 1 "$TMP/out")" = "-e -t 10.0.0.1:84 -r 10.2.0.2:84 -g -w 0" ] &&
	[ "$(grep -v '10.2.0.2:84' "$TMP/out")" = "$(grep -v '10.2.0.2:84' "$TMP/rules")" ] &&
	grep -qxF "maglev-fleet save: 1 draining destination restored as draining" "$TMP/err"; then
	pass "save: the draining 10.2.0.2:84 is added at weight 1 and set to 0 last; every other line as it was"
else
	fail "save: exit $rc: $(cat "$TMP/out" "$TMP/err" | head -n 20)"
fi
fleet save --drains "$TMP/dr.lb1" <"$TMP/rules"
if [ "$rc" = 0 ] && [ "$(cat "$TMP/out")" = "$(printf '%s\n' \
	"-e -t 10.0.0.1:84 -r 10.2.0.2:84 -g -w 1" "-e -t 10.0.0.1:84 -r 10.2.0.2:84 -g -w 0")" ]; then
	pass "save --drains: only the two edits of the draining destination"
else
	fail "save --drains: exit $rc: $(cat "$TMP/out" "$TMP/err")"
fi
fleet save "$TMP/dr.lb3" <"$TMP/rules"
if [ "$rc" = 0 ] && [ "$(cat "$TMP/out")" = "$(cat "$TMP/rules")" ]; then
	pass "save: added at weight 0 (drain 0): the rules unchanged"
else
	fail "save: added at 0: exit $rc: $(cat "$TMP/err")"
fi
sed 's/-r 10.2.0.2:84 -g -w 0/-r 10.2.0.2:84 -g -w 3/' "$TMP/rules" >"$TMP/rules2"
fleet save "$TMP/dr.lb1" <"$TMP/rules2"
if [ "$rc" = 3 ] && grep -q "TCP 10.0.0.1:84 10.2.0.2:84 has weight 3 here and 0 in $TMP/dr.lb1" "$TMP/err"; then
	pass "save: rules and file that differ: exit 3"
else
	fail "save: differing rules: exit $rc: $(cat "$TMP/err")"
fi
fleet save "$D/key/18/pending.lb1" <"$TMP/rules"
if [ "$rc" = 3 ] && grep -q "TCP 10.0.0.1:86 is pending: its table is not its configuration yet" "$TMP/err"; then
	pass "save: a pending service: exit 3, wait for pending 0"
else
	fail "save: pending: exit $rc: $(cat "$TMP/err")"
fi
# IPv6 and fwmark services: names normalised as the kernel writes them.
cat >"$TMP/v6.proc" <<'EOT'
service TCP [2001:db8::1]:80 size 251 key 714c8345 flags 0x0 dests 2 builds 1 churn 251 build_ns 1 alloc_fail 0 build_fail 0 digest 0000000000000001 pending 0 gen 3 table_gen 3
  dest [2001:db8::a]:80 weight 0 slots 0 drain 2
  dest [2001:db8::b]:80 weight 1 slots 251 drain 0
service FWM6 7 size 251 key 714c8345 flags 0x0 dests 2 builds 1 churn 251 build_ns 1 alloc_fail 0 build_fail 0 digest 0000000000000002 pending 0 gen 3 table_gen 3
  dest [2001:db8::a]:0 weight 0 slots 0 drain 5
  dest [2001:db8::b]:0 weight 1 slots 251 drain 0
EOT
cat >"$TMP/v6.rules" <<'EOT'
-A -t [2001:0db8::1]:80 -s maglev
-a -t [2001:0db8::1]:80 -r [2001:db8:0::a]:80 -i -w 0
-a -t [2001:0db8::1]:80 -r [2001:db8::b]:80 -i -w 1
-A -f 7 -6 -s maglev
-a -f 7 -6 -r [2001:db8::a]:0 -g -w 0
-a -f 7 -6 -r [2001:db8::b]:0 -g -w 1
-A -f 7 -s maglev
-a -f 7 -r 10.2.0.1:0 -g -w 0
EOT
fleet save "$TMP/v6.proc" <"$TMP/v6.rules"
if [ "$rc" = 0 ] && grep -qxF -- "-a -t [2001:0db8::1]:80 -r [2001:db8:0::a]:80 -i -w 2" "$TMP/out" &&
	grep -qxF -- "-a -f 7 -6 -r [2001:db8::a]:0 -g -w 5" "$TMP/out" &&
	grep -qxF -- "-a -f 7 -r 10.2.0.1:0 -g -w 0" "$TMP/out" &&
	[ "$(tail -n 2 "$TMP/out")" = "$(printf '%s\n' "-e -t [2001:0db8::1]:80 -r [2001:db8:0::a]:80 -i -w 0" "-e -f 7 -6 -r [2001:db8::a]:0 -g -w 0")" ]; then
	pass "save: IPv6 (written another way) and IPv6 fwmark drains restored, the IPv4 fwmark service (not in the file) left alone"
else
	fail "save: IPv6/fwmark: exit $rc: $(cat "$TMP/out" "$TMP/err")"
fi
bad "save: a file argument and an option" \
	"maglev-fleet save: usage: ipvsadm -S -n | maglev-fleet save [--drains] [FILE]" save -x

echo "== usage and input errors (exit 2)"
bad "no arguments" "$("$FLEET" 2>&1 >/dev/null)"
fleet check
if [ "$rc" = 2 ]; then pass "check without FILE: exit 2"; else fail "check without FILE: exit $rc"; fi
bad "a missing file" "maglev-fleet: $TMP/nonexistent: No such file or directory" \
	check "$TMP/nonexistent"
bad "two LBs with one label" \
	"maglev-fleet: two load balancers called 'x': use LABEL=FILE" \
	check x="$D/12/setup.lb1" x="$D/12/setup.lb2"
sed '1s/ digest .*//' "$D/12/setup.lb1" >"$TMP/cut"
bad "a service line cut short" "maglev-fleet: $TMP/cut:1: no digest on the service line" \
	check "$TMP/cut"
sed '3s/ weight 1 / weight x /' "$D/12/setup.lb1" >"$TMP/w"
bad "a bad weight names line 3" "maglev-fleet: $TMP/w:3: bad weight 'x'" check "$TMP/w"
sed '1s/ digest \([0-9a-f]*\) / digest \1f /' "$D/12/setup.lb1" >"$TMP/d"
bad "a 17-digit digest" "maglev-fleet: $TMP/d:1: bad digest '$(awk 'NR == 1 { print $(NF - 8) }' "$D/12/setup.lb1")f'" check "$TMP/d"
sed 1d "$D/12/setup.lb1" >"$TMP/nos"
bad "dest lines before any service" "maglev-fleet: $TMP/nos:1: dest line before any service line" check "$TMP/nos"
cat "$D/12/setup.lb1" "$D/12/setup.lb1" >"$TMP/twice"
bad "a service twice" "maglev-fleet: $TMP/twice:11: service TCP 10.0.0.1:80 listed twice (line 1)" check "$TMP/twice"
{ echo '# collected from lb1'; echo; echo 'servce TCP 10.0.0.1:80'; } >"$TMP/typo"
bad "an unknown line kind, after a comment and a blank line" \
	"maglev-fleet: $TMP/typo:3: neither a module, namespace, service nor dest line: 'servce'" check "$TMP/typo"
sed '1s/ seed 0 / seed 0 key 00000000 /' "$D/12/setup.lb1" >"$TMP/both"
bad "both seed and key" "maglev-fleet: $TMP/both:1: both key and seed" check "$TMP/both"
sed '1s/TCP 10.0.0.1:80/TCP 10.0.0.300:80/' "$D/12/setup.lb1" >"$TMP/vip"
bad "a bad VIP" "maglev-fleet: $TMP/vip:1: bad service 'TCP 10.0.0.300:80' (PROTO is TCP, UDP, SCTP, FWM or FWM6; VIP A.B.C.D:port, [IPv6]:port or a mark)" check "$TMP/vip"
printf 'service TCP 10.0.0.1:80 size\n' >"$TMP/odd"
bad "a field without its value" "maglev-fleet: $TMP/odd:1: 'size' has no value" check "$TMP/odd"
bad "prom with two files" "maglev-fleet prom: one FILE at most" prom "$D/12/setup.lb1" "$D/12/setup.lb2"

# The shared-table format: a namespace line first, and "table", "shared"
# and "table_mem" at the end of the service lines. The table ids are each
# LB's own: check does not compare them.
shared_fmt() {
	awk -v id="$2" 'NR == 1 { print "namespace services 4 tables 2 fills 7 found 3 mem 9000" }
		$1 == "service" { $0 = $0 " table " id++ " shared 2 table_mem 700" }
		{ print }' "$1"
}
shared_fmt "$D/12/setup.lb1" 1 >"$TMP/sh.lb1"
shared_fmt "$D/12/setup.lb2" 40 >"$TMP/sh.lb2"
fleet check "$TMP/sh.lb1" "$TMP/sh.lb2"
if [ "$rc" = 0 ] && grep -q '^OK: ' "$TMP/out"; then
	pass "check: the shared-table format agrees, table ids not compared"
else
	fail "check: shared-table format: exit $rc: $(head -n 3 "$TMP/out" "$TMP/err")"
fi
{ head -n 1 "$TMP/sh.lb1"; cat "$TMP/sh.lb1"; } >"$TMP/ns2"
bad "a namespace line twice" "maglev-fleet: $TMP/ns2:2: namespace line twice (line 1)" check "$TMP/ns2"
{ sed 1d "$TMP/sh.lb1"; head -n 1 "$TMP/sh.lb1"; } >"$TMP/nsl"
bad "a namespace line after the services" "maglev-fleet: $TMP/nsl:$(wc -l <"$TMP/sh.lb1"): namespace line after a service line" check "$TMP/nsl"
sed '1s/ fills 7 / fills x /' "$TMP/sh.lb1" >"$TMP/nsb"
bad "a bad namespace value" "maglev-fleet: $TMP/nsb:1: bad fills 'x'" check "$TMP/nsb"

echo "== maglev-fleet prom"
PY=
for p in /usr/bin/python3 python3; do
	if "$p" -c 'import prometheus_client.parser' 2>/dev/null; then
		PY=$p
		break
	fi
done
# make check installs python3-prometheus-client (CHECK_PKGS in
# scripts/lib.sh); without it the parser's checks fail rather than vanish.
[ -n "$PY" ] ||
	fail "prom: python3's prometheus_client is missing (apt-get install python3-prometheus-client)"
for f in "$D"/12/* "$D"/18/* "$D"/key/12/* "$D"/key/18/* "$D"/ns/12/* "$D"/ns/18/* "$D"/26/*.lb? "$D"/26/*.fig "$D"/26/newest/*.lb? "$D/readme-demo.txt" "$TMP/key.lb1" "$TMP/sh.lb1" "$TMP/m.lb1" "$TMP/m.lb3"; do
	[ -f "$f" ] || continue
	n=${f#"$D"/}
	n=${n#"$TMP"/}
	fleet prom "$f"
	if [ "$rc" != 0 ]; then
		fail "prom $n: exit $rc: $(cat "$TMP/err")"
		continue
	fi
	if awk -f "$HERE/promcheck.awk" "$TMP/out" >"$TMP/pc"; then
		pass "prom $n: valid text format ($(cat "$TMP/pc"))"
	else
		fail "prom $n: $(head -n 3 "$TMP/pc")"
	fi
	if [ -n "$PY" ]; then
		if "$PY" "$HERE/promparse.py" "$f" <"$TMP/out" >"$TMP/py" 2>&1; then
			pass "prom $n: prometheus_client parses it, values match the file ($(cat "$TMP/py"))"
		else
			fail "prom $n: prometheus_client: $(tail -n 3 "$TMP/py")"
		fi
	fi
done
fleet prom "$D/12/setup.lb1"
if grep -qxF 'ip_vs_maglev_table_info{service="TCP 10.0.0.1:80",digest="c5d9d97c318cbfbe",key="seed:0"} 1' "$TMP/out"; then
	pass "prom: table_info carries digest and key"
else
	fail "prom: no table_info line for port 80"
fi
fleet prom "$TMP/sh.lb1"
if grep -qx 'ip_vs_maglev_table_fills_total 7' "$TMP/out" &&
   grep -qx 'ip_vs_maglev_memory_bytes 9000' "$TMP/out" &&
   grep -q '^ip_vs_maglev_table_shared_services{service="TCP 10.0.0.1:80"} 2$' "$TMP/out"; then
	pass "prom: the namespace's fills and memory, each service's sharing"
else
	fail "prom: shared-table format: $(grep -c . "$TMP/out") lines"
fi
fleet prom "$TMP/key.lb1"
if grep -q '^ip_vs_maglev_table_info{service="TCP 10.0.0.1:80",digest="[0-9a-f]\{16\}",key="5eed0001"} 1$' "$TMP/out"; then
	pass "prom: key format's fingerprint in table_info"
else
	fail "prom: key format's table_info"
fi
fleet prom "$TMP/m.lb3"
if grep -qx 'ip_vs_maglev_proc_present 0' "$TMP/out" &&
   grep -qx 'ip_vs_maglev_module_info{module="ip_vs_mh",version="-",bits="64"} 1' "$TMP/out" &&
   grep -qx 'ip_vs_maglev_services 0' "$TMP/out"; then
	pass "prom: the kernel's own ip_vs_mh: proc_present 0, its module without a version"
else
	fail "prom: no /proc file: $(head -n 8 "$TMP/out")"
fi
fleet prom "$TMP/m.lb1"
if grep -qx 'ip_vs_maglev_dest_drain_weight{service="TCP 10.0.0.1:84",dest="10.2.0.2:84"} 1' "$TMP/out" &&
   grep -qx 'ip_vs_maglev_module_info{module="ip_vs_maglev",version="0.2",bits="64"} 1' "$TMP/out"; then
	pass "prom: the drain weight per dest, the module's version and word size"
else
	fail "prom: drain/module: $(grep -c . "$TMP/out") lines"
fi
# --metrics lists exactly the families prom prints for a file with every
# line kind (module, namespace, service, dest with drain).
"$FLEET" prom --metrics | cut -f 1,2 | sort >"$TMP/list"
{ echo "$M"; awk '$1 == "dest" { $0 = "  " $0 " drain 0" } { print }' "$TMP/sh.lb1"; } >"$TMP/full"
fleet prom "$TMP/full"
awk '$1 == "#" && $2 == "TYPE" { print $3 "\t" $4 }' "$TMP/out" | sort >"$TMP/printed"
if [ -s "$TMP/list" ] && cmp -s "$TMP/list" "$TMP/printed"; then
	pass "prom --metrics lists the $(wc -l <"$TMP/list") families prom prints, with their types"
else
	fail "prom --metrics and prom's families differ: $(diff "$TMP/list" "$TMP/printed" | head -n 5)"
fi
# A build with no memory to count its churn shows "churn -" (issue 30):
# accepted, and that service's churn gauge left out.
sed '0,/ churn [0-9]* /s// churn - /' "$D/12/setup.lb1" >"$TMP/churn.lb1"
fleet prom "$TMP/churn.lb1"
if [ "$rc" = 0 ] && grep -q ' churn - ' "$TMP/churn.lb1" &&
   [ "$(grep -c '^ip_vs_maglev_last_build_churn_slots{' "$TMP/out")" = \
     "$(($(grep -c '^service ' "$TMP/churn.lb1") - 1))" ]; then
	pass "prom: 'churn -' (not counted) is accepted, its gauge left out"
else
	fail "prom: 'churn -': exit $rc: $(head -n 2 "$TMP/err")"
fi

summary
