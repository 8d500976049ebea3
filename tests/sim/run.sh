#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Shell tests of maglev-sim's protocol.
#
#   tests/sim/run.sh [path/to/maglev-sim]
#
# Builds build/maglev-sim with "make tools" when no binary is given (or
# MAGLEV_SIM is not set).  Prints one "PASS: ..." or "FAIL: ..." line per
# check, then "N passed, N failed"; exits 1 if any check failed.
#
# The golden files golden/NAME.out are made by model.py, an independent
# Python model of the specification: "tests/sim/run.sh --regen" rewrites
# them (review the diff!).  The run also checks that the model still
# produces them, and runs random scripts through both: without python3
# (which "make check" installs) each of those checks fails.
set -u
# "... | sim" must set rc in this shell
shopt -s lastpipe

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)

if [ "${1:-}" = --regen ]; then
	for f in "$HERE"/golden/*.in; do
		python3 "$HERE/model.py" <"$f" >"${f%.in}.out" || exit 1
	done
	exit 0
fi

SIM=${1:-${MAGLEV_SIM:-}}
if [ -z "$SIM" ]; then
	make -s -C "$TOP" tools >&2 || { echo "FAIL: make tools"; exit 1; }
	SIM=$TOP/build/maglev-sim
fi
[ -x "$SIM" ] || { echo "FAIL: no executable $SIM"; exit 1; }

. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# sim: run maglev-sim on stdin; stdout in $TMP/out, stderr in $TMP/err,
# exit status in $rc.
rc=0
sim() {
	"$SIM" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
}

# expect DESC CONDITION...: pass if the command succeeds.
expect() {
	local desc=$1

	shift
	if "$@"; then
		pass "$desc"
	else
		fail "$desc"
	fi
}

# nodes PREFIX N [WEIGHT]: ADD_NODE lines
nodes() {
	local i

	for i in $(seq 1 "$2"); do
		echo "ADD_NODE $1$i ${3:-1}"
	done
}

# --- help and a clean run -------------------------------------------------

"$SIM" --help >"$TMP/help" 2>&1
rc=$?
missing=
for c in SIZE KEY FINGERPRINT ADD_NODE REMOVE_NODE WEIGHT REBUILD CHURN OWNER LOOKUP \
	 LOOKUP_ADDR COUNTS DIGEST SHOW STATS; do
	grep -q "^  $c\b" "$TMP/help" || missing="$missing $c"
done
expect "--help exits 0 and documents every command${missing:+ (missing:$missing)}" \
	test "$rc" -eq 0 -a -z "$missing"

printf '# comment\n\n   \nSIZE 65537\nADD_NODE a\nadd_node b 2\nCOUNTS\n' | sim
expect "a good script exits 0, comments, blank lines, lower case" \
	test "$rc" -eq 0 -a ! -s "$TMP/err" -a \
	"$(tr '\n' ' ' <"$TMP/out")" = "a 21846 b 43691 "

printf 'OWNER 0\nLOOKUP k\nLOOKUP_ADDR 10.0.0.1:80\nCOUNTS\nCHURN\nDIGEST\n' |
	sim
expect "an empty table answers '-' and CHURN 0" \
	test "$rc" -eq 0 -a "$(head -4 "$TMP/out" | tr '\n' ' ')" = "- - - 0 "

# --- errors change nothing ------------------------------------------------

state='DIGEST
COUNTS
SHOW
STATS
CHURN
OWNER 0
FINGERPRINT
LOOKUP key
LOOKUP_ADDR 10.0.0.1:80'
long=$(printf 'x%.0s' $(seq 1 65))
bad=(
	'FOO'
	'ADD_NODE'
	'ADD_NODE x 1 2'
	'ADD_NODE a'
	'ADD_NODE x 2147483648'
	'ADD_NODE x 4294967296'
	'ADD_NODE x -1'
	'ADD_NODE x 1x'
	'ADD_NODE x +1'
	"ADD_NODE $long"
	'REMOVE_NODE nosuch'
	'REMOVE_NODE'
	'WEIGHT nosuch 1'
	'WEIGHT a'
	'WEIGHT a abc'
	'WEIGHT a 99999999999999999999'
	'WEIGHT a 2147483648'
	'WEIGHT a -1'
	'SIZE 7'
	'SIZE 65536'
	'SIZE 5000021'
	'SIZE 0'
	'SIZE abc'
	'SIZE 99999999999'
	'SIZE'
	'KEY'
	'KEY 0'
	'KEY -1'
	'KEY 0x000102030405060708090a0b0c0d0e0f'
	'KEY 0x0102030405060708090a0b0c0d0e0f'
	'KEY 000102030405060708090a0b0c0d0e0'
	'KEY 000102030405060708090a0b0c0d0e0f0'
	'KEY 000102030405060708090a0b0c0d0e0g'
	'KEY g00102030405060708090a0b0c0d0e0f'
	'KEY 00010203040506070809 0a0b0c0d0e0f'
	'KEY 00010203-0405-0607-0809-0a0b0c0d'
	'KEY 00010203040506070809+a0b0c0d0e0f'
	'KEY  0001020304050607 08090a0b0c0d0e0f'
	'FINGERPRINT x'
	'OWNER 65537'
	'OWNER -1'
	'LOOKUP'
	'LOOKUP a b'
	'LOOKUP_ADDR 10.0.0.256'
	'LOOKUP_ADDR 10.0.0.1:65536'
	'LOOKUP_ADDR 10.0.0.1:'
	'LOOKUP_ADDR [::1'
	'LOOKUP_ADDR [::1]x'
	'LOOKUP_ADDR [10.0.0.1]:80'
	'LOOKUP_ADDR host:80'
	'CHURN now'
	'DIGEST x'
)
{
	printf 'ADD_NODE a\nADD_NODE b 3\nADD_NODE c 0\nADD_NODE d\n'
	printf 'WEIGHT d 0\nKEY 0123456789abcdef0123456789ABCDEF\nSIZE 1009\n%s\n' \
		"$state"
	printf '%s\n' "${bad[@]}"
	printf '%s\n' "$state"
} | sim
nstate=$(($(sed -n '$=' "$TMP/out") / 2))
head -n "$nstate" "$TMP/out" >"$TMP/before"
tail -n +"$((nstate + 1))" "$TMP/out" >"$TMP/after"
expect "errors leave table, set, key and pending size untouched" \
	cmp -s "$TMP/before" "$TMP/after"
expect "errors set exit status 1" test "$rc" -eq 1
expect "one 'error: line N:' per bad line (${#bad[@]})" \
	test "$(grep -c '^error: line [0-9]*: ' "$TMP/err")" -eq "${#bad[@]}" \
	-a "$(wc -l <"$TMP/err")" -eq "${#bad[@]}"
first=$((7 + $(echo "$state" | wc -l) + 1))
expect "error line numbers count every input line" \
	test "$(head -1 "$TMP/err" | cut -d: -f2)" = " line $first" \
	-a "$(tail -1 "$TMP/err" | cut -d: -f2)" = \
	" line $((first + ${#bad[@]} - 1))"
expect "SIZE errors give maglev_check_size's reason" \
	grep -q 'prime' "$TMP/err"

printf 'ADD_NODE a\nFOO\nDIGEST\n' | sim
expect "processing continues after an error" \
	test "$rc" -eq 1 -a "$(wc -l <"$TMP/out")" -eq 1

# More backends than slots: the table grows to the smallest prime >= N
# (257 for 252, 307 for 300), SIZE stays as set and applies again once the
# backends fit.
{
	echo "SIZE 251"
	nodes n 251
	echo STATS
	echo "ADD_NODE n252"
	echo STATS
	echo CHURN
	echo COUNTS
} | sim
expect "N > M: the table takes the next prime >= N, SIZE stays" \
	test "$rc" -eq 0 -a ! -s "$TMP/err" -a \
	"$(sed -n 1p "$TMP/out" | cut -d' ' -f1-2)" = "size=251 next_size=251" -a \
	"$(sed -n 2p "$TMP/out" | cut -d' ' -f1-2)" = "size=257 next_size=251" -a \
	"$(sed -n 3p "$TMP/out")" = 257
# shellcheck disable=SC2016 # awk's own variables
expect "N > M: every backend gets a slot" \
	awk 'NR > 3 { s += $2; if ($2 < 1) bad = 1; n++ }
	     END { exit bad || s != 257 || n != 252 }' "$TMP/out"
{
	nodes n 300
	echo "SIZE 251"
	echo REBUILD
	echo STATS
	echo "REMOVE_NODE n300"
	echo STATS
	for i in $(seq 1 48); do echo "REMOVE_NODE n$i"; done
	echo STATS
	echo CHURN
} | sim
expect "SIZE below N: 300 -> 307, 299 -> 307, 251 -> 251 with CHURN M" \
	test "$rc" -eq 0 -a ! -s "$TMP/err" -a \
	"$(grep -o '^size=[0-9]* next_size=[0-9]*' "$TMP/out" | tr '\n' ' ')" = \
	"size=307 next_size=251 size=307 next_size=251 size=251 next_size=251 " \
	-a "$(tail -n 1 "$TMP/out")" = 251

# --- weights up to INT_MAX ------------------------------------------------

{
	echo "SIZE 65537"
	echo "ADD_NODE heavy 70000"
	echo "ADD_NODE light 1"
	echo COUNTS
	echo "WEIGHT heavy 2147483647"
	echo COUNTS
	echo "WEIGHT light 2147483647"
	echo COUNTS
} | sim
mapfile -t o <"$TMP/out"
expect "70000:1 and INT_MAX:1 keep the light one at 1..2 of 65537 slots" \
	test "$rc" -eq 0 -a ! -s "$TMP/err" -a \
	"${o[1]#light }" -ge 1 -a "${o[1]#light }" -le 2 -a \
	"${o[3]#light }" -ge 1 -a "${o[3]#light }" -le 2 -a \
	$((${o[0]#heavy } + ${o[1]#light })) -eq 65537
expect "INT_MAX:INT_MAX splits evenly (${o[4]}, ${o[5]})" \
	test $((${o[4]#heavy } - ${o[5]#light })) -ge -1 -a \
	$((${o[4]#heavy } - ${o[5]#light })) -le 1

# --- churn to an empty table ----------------------------------------------

{
	echo "SIZE 65537"
	nodes n 3
	echo "REMOVE_NODE n1"
	echo "REMOVE_NODE n2"
	echo "REMOVE_NODE n3"
	echo CHURN
	echo "ADD_NODE z 0"
	echo CHURN
	echo "ADD_NODE a 1"
	echo CHURN
	echo "WEIGHT a 0"
	echo CHURN
	echo "OWNER 7"
} | sim
expect "CHURN to an empty table is M, empty to empty 0, drain to empty M" \
	test "$(tr '\n' ' ' <"$TMP/out")" = "65537 0 65537 65537 - "

# --- SIZE applies at the next rebuild -------------------------------------

printf 'SIZE 65537\nADD_NODE a\nADD_NODE b\nSIZE 251\nSTATS\nOWNER 300\nREBUILD\nSTATS\nCHURN\n' |
	sim
expect "SIZE takes effect at the next rebuild; CHURN counts all slots" \
	test "$rc" -eq 0 -a "$(sed -n 1p "$TMP/out" | cut -d' ' -f1-2)" = \
	"size=65537 next_size=251" -a \
	"$(sed -n 3p "$TMP/out" | cut -d' ' -f1)" = "size=251" -a \
	"$(sed -n 4p "$TMP/out")" = 251

# --- churn ----------------------------------------------------------------

{
	echo "SIZE 65537"
	nodes be 5
	echo DIGEST
	echo "ADD_NODE be6"
	echo CHURN
	echo "REMOVE_NODE be6"
	echo CHURN
	echo DIGEST
} | sim
mapfile -t o <"$TMP/out"
lo=$((65537 * 16 / 100))
hi=$((65537 * 18 / 100))
expect "CHURN 5->6 is within 16%..18% of M (${o[1]})" \
	test "${o[1]}" -ge "$lo" -a "${o[1]}" -le "$hi"
expect "CHURN 6->5 is within 16%..18% of M (${o[2]})" \
	test "${o[2]}" -ge "$lo" -a "${o[2]}" -le "$hi"
expect "5->6->5 gives back the same DIGEST" test "${o[0]}" = "${o[3]}"

{
	echo "SIZE 65537"
	nodes n 10
	echo "ADD_NODE zero 0"
	echo CHURN
	echo "WEIGHT n3 1"
	echo CHURN
	echo REBUILD
	echo CHURN
} | sim
expect "adding a weight-0 backend, a same-weight WEIGHT and REBUILD: CHURN 0" \
	test "$(tr '\n' ' ' <"$TMP/out")" = "0 0 0 "

# --- balance --------------------------------------------------------------

# balanced FILE: max - min of COUNTS <= 1 and the sum is M
balanced() {
	awk -v m="$2" 'NR == 1 { lo = hi = $2 }
		{ s += $2; if ($2 < lo) lo = $2; if ($2 > hi) hi = $2 }
		END { exit !(hi - lo <= 1 && s == m) }' "$1"
}
for n in 3 7 100 1000; do
	{ echo "SIZE 65537"; nodes "10.0.0.$n-" "$n" 5; echo COUNTS; } | sim
	expect "COUNTS balanced within 1 for $n equal weights, sum M" \
		balanced "$TMP/out" 65537
done
{ echo "SIZE 251"; nodes x 250; echo COUNTS; } | sim
expect "COUNTS balanced within 1 for 250 backends in 251 slots" \
	balanced "$TMP/out" 251

{
	echo "SIZE 65537"
	echo "ADD_NODE w1 1"
	echo "ADD_NODE w2 2"
	echo "ADD_NODE w3 3"
	echo "ADD_NODE w6 6"
	echo COUNTS
} | sim
expect "COUNTS follow weights 1:2:3:6 within 1 slot per turn" \
	awk '{ w = substr($1, 2); e = 65537 * w / 12
	       if ($2 < e - w || $2 > e + w) bad = 1 }
	     END { exit bad }' "$TMP/out"

# --- the default size -----------------------------------------------------

# A fixed 65537 whatever the number of backends, weight 0 included: the
# slot width (ceil(log2 N) bits) and the table bytes follow N, M never.
{
	echo STATS
	for n in 1 2 3 5 6 100 1000; do
		while [ "$(grep -c . <<<"${added:-}")" -lt "$n" ]; do
			added=$(printf '%s\nx' "${added:-}")
			echo "ADD_NODE 10.2.$((${#added} / 250)).$((${#added} % 250)):80"
		done
		echo STATS
	done
	echo "ADD_NODE zero 0"
	echo STATS
} | sim
expect "default size: M 65537 for N 0..1001" \
	test "$rc" -eq 0 -a ! -s "$TMP/err" -a \
	"$(grep -o '^size=[0-9]* next_size=[0-9]*' "$TMP/out" | sort -u)" = \
	"size=65537 next_size=65537" -a "$(grep -c '^size=' "$TMP/out")" -eq 9
expect "default size: slot widths 0, 1, 2, 3, 3, 7, 10, 10 bits and table bytes" \
	test "$(grep -o 'width=[0-9]* bytes=[0-9]*' "$TMP/out" | tr '\n' ' ')" = \
	"width=0 bytes=36 width=0 bytes=36 width=1 bytes=8228 width=2 bytes=16420 width=3 bytes=24612 width=3 bytes=24612 width=7 bytes=57380 width=10 bytes=81956 width=10 bytes=81956 "

# "auto", the size of earlier versions that followed N, is refused by name
# and changes nothing.
{ nodes n 3; echo DIGEST; echo "SIZE auto"; echo REBUILD; echo DIGEST; echo STATS; } | sim
mapfile -t o <"$TMP/out"
expect "SIZE auto: refused with the reason, the table and size stay" \
	test "$rc" -eq 1 -a "${o[0]}" = "${o[1]}" -a \
	"${o[2]%% key*}" = "size=65537 next_size=65537" -a \
	"$(grep -c 'error: line 5: size auto: no longer a size; the table size is fixed, 65537 by default' "$TMP/err")" -eq 1

# 1000 equal backends at the default: every share within 1% of even.
{ nodes "10.3.0." 1000; echo COUNTS; } | sim
# shellcheck disable=SC2016 # awk's own variables
expect "default size: 1000 equal backends' slot shares within 1% of even" \
	awk '{ s += $2; c[NR] = $2 }
	     END { e = s / NR; for (i in c) if (c[i] < e * 0.99 || c[i] > e * 1.01) exit 1
		   exit s != 65537 || NR != 1000 }' "$TMP/out"

# Add one backend to N and remove one of N at the default, N = 5 and 10:
# about 1/(N+1) and 1/N of the slots move, and none between the backends
# that stay but a few (under 1 %).
for n in 5 10; do
	{ nodes m $n; echo "ADD_NODE m$((n + 1))"; echo CHURN; echo "REMOVE_NODE m1"; echo CHURN; } | sim
	mapfile -t o <"$TMP/out"
	# shellcheck disable=SC2016 # awk's own variables
	expect "default size: $n -> $((n + 1)) -> $n backends move about 1/$((n + 1)) and 1/$((n + 1)) of the slots" \
		awk -v a="${o[0]}" -v r="${o[1]}" -v n=$n 'BEGIN {
			m = 65537; ideal = m / (n + 1)
			exit !(a >= ideal * 0.98 && a <= ideal + m / 100 &&
			       r >= ideal * 0.98 && r <= ideal + m / 100) }'
done

# --- insertion order ------------------------------------------------------

for i in $(seq 1 40); do
	echo "ADD_NODE 10.0.$((i / 8)).$i:80 $((i % 4))"
done >"$TMP/add"
echo "ADD_NODE [2001:db8::1]:80 2" >>"$TMP/add"
order() {
	{ cat; printf 'DIGEST\nCOUNTS\n'; } | sim
	cp "$TMP/out" "$TMP/order.$1"
}
order fwd <"$TMP/add"
tac "$TMP/add" | order rev
awk 'NR % 2' "$TMP/add" >"$TMP/shuf"
awk '!(NR % 2)' "$TMP/add" | tac >>"$TMP/shuf"
order shuf <"$TMP/shuf"
sort "$TMP/add" | order sorted
expect "DIGEST and COUNTS do not depend on ADD_NODE order" \
	test "$(md5sum "$TMP"/order.* | cut -d' ' -f1 | sort -u | wc -l)" -eq 1

# --- draining -------------------------------------------------------------

owners() {
	local i

	for i in $(seq 0 1008); do
		echo "OWNER $i"
	done
}
{
	echo "SIZE 1009"
	for i in 1 2 3 4 5; do
		echo "ADD_NODE rs$i $i"
	done
	echo DIGEST
	owners
	echo "WEIGHT rs3 0"
	echo CHURN
	owners
	echo COUNTS
	echo "WEIGHT rs3 3"
	echo CHURN
	echo DIGEST
} | sim
d0=$(sed -n 1p "$TMP/out")
sed -n 2,1010p "$TMP/out" >"$TMP/own0"
churn=$(sed -n 1011p "$TMP/out")
sed -n 1012,2020p "$TMP/out" >"$TMP/own1"
sed -n 2021,2025p "$TMP/out" >"$TMP/counts"
moved=$(paste -d' ' "$TMP/own0" "$TMP/own1" | awk '$1 != $2' | wc -l)
moved_other=$(paste -d' ' "$TMP/own0" "$TMP/own1" |
	awk '$1 != $2 && $1 != "rs3"' | wc -l)
had=$(grep -c '^rs3$' "$TMP/own0")
expect "drain moves only the drained backend's slots ($moved of $had)" \
	test "$moved" -eq "$had" -a "$moved_other" -eq 0 -a "$churn" -eq "$had"
expect "a drained backend owns nothing" grep -qx 'rs3 0' "$TMP/counts"
expect "drain then restore gives back the original DIGEST" \
	test "$(sed -n 2027p "$TMP/out")" = "$d0" \
	-a "$(sed -n 2026p "$TMP/out")" -eq "$had"

{
	nodes n 4 2
	echo DIGEST
	echo "REMOVE_NODE n2"
	echo DIGEST
	echo "ADD_NODE n2 0"
	echo DIGEST
	echo "WEIGHT n2 0"
	echo "WEIGHT n2 2"
	echo DIGEST
} | sim
mapfile -t o <"$TMP/out"
expect "a backend added with weight 0 does not drain" \
	test "${o[1]}" != "${o[2]}" -a "${o[0]}" = "${o[3]}"

# --- LOOKUP_ADDR ----------------------------------------------------------

# hkey N: the N-th of the test's hash keys, 32 hex digits
hkey() {
	printf '%016x%016x' "$1" $((0x9e3779b97f4a7c15 * $1))
}
# keys ADDR...: "LOOKUP_ADDR" of each address under 32 hash keys, 100 backends
keys() {
	local s a

	nodes be 100
	for s in $(seq 1 32); do
		echo "KEY $(hkey "$s")"
		for a in "$@"; do
			echo "LOOKUP_ADDR $a"
		done
	done
}
# differ A B: the owners of A and B differ for at least one key
differ() {
	keys "$1" "$2" | sim
	[ "$rc" -eq 0 ] && paste -d' ' - - <"$TMP/out" | awk '$1 != $2' |
		grep -q .
}
same() {
	keys "$1" "$2" | sim
	[ "$rc" -eq 0 ] && ! paste -d' ' - - <"$TMP/out" | awk '$1 != $2' |
		grep -q .
}
expect "LOOKUP_ADDR distinguishes 10.0.0.1:81 and 10.0.0.2:80" \
	differ 10.0.0.1:81 10.0.0.2:80
expect "LOOKUP_ADDR distinguishes 10.0.0.1:80 and 10.0.0.1:81" \
	differ 10.0.0.1:80 10.0.0.1:81
expect "LOOKUP_ADDR hashes the port only when given (10.0.0.1, 10.0.0.1:0)" \
	differ 10.0.0.1 10.0.0.1:0
expect "LOOKUP_ADDR distinguishes [2001:db8::1]:80 and 2001:db8::1" \
	differ '[2001:db8::1]:80' 2001:db8::1
expect "LOOKUP_ADDR [2001:db8::1] is 2001:db8::1" \
	same '[2001:db8::1]' 2001:db8::1
expect "LOOKUP_ADDR ::ffff:10.0.0.1 is not 10.0.0.1" \
	differ ::ffff:10.0.0.1 10.0.0.1
expect "LOOKUP_ADDR 2001:db8:0:0::1 is 2001:db8::1" \
	same 2001:db8:0:0::1 2001:db8::1
{
	nodes be 100
	for s in $(seq 1 32); do
		echo "KEY $(hkey "$s")"
		echo "LOOKUP_ADDR 10.0.0.1:80"
		echo "LOOKUP 10.0.0.1:80"
	done
} | sim
expect "LOOKUP_ADDR hashes bytes, not the text" \
	sh -c "paste -d' ' - - <'$TMP/out' | awk '\$1 != \$2' | grep -q ."

# The two forms of hsiphash (64- and 32-bit kernels) choose differently but
# build the same table.
{
	nodes be 100
	echo DIGEST
	for s in $(seq 1 64); do
		echo "LOOKUP_ADDR 10.0.0.$s:80"
	done
} >"$TMP/forms.in"
sim <"$TMP/forms.in"
cp "$TMP/out" "$TMP/form64"
sim -32 <"$TMP/forms.in"
expect "-32: the same table (DIGEST), other owners for most addresses" \
	test "$rc" -eq 0 -a "$(head -n 1 "$TMP/out")" = \
	"$(head -n 1 "$TMP/form64")" -a \
	"$(paste -d' ' "$TMP/form64" "$TMP/out" | awk '$1 != $2' | wc -l)" \
	-gt 40

# --- hash keys --------------------------------------------------------------

# The default key is all zero; its fingerprint, from tests/sim/model.py
# (an independent SipHash-2-4), is 714c8345, and the reference vectors' key
# 000102..0f has 5bd3642f.
{
	echo FINGERPRINT
	echo STATS
	echo "KEY 000102030405060708090A0B0C0D0E0F"
	echo FINGERPRINT
	echo STATS
	echo "KEY 00000000000000000000000000000000"
	echo FINGERPRINT
} | sim
expect "FINGERPRINT and STATS key=: 714c8345 by default, 5bd3642f for 00..0f" \
	test "$rc" -eq 0 -a ! -s "$TMP/err" -a \
	"$(sed -n '1p;3p;5p' "$TMP/out" | tr '\n' ' ')" = \
	"714c8345 5bd3642f 714c8345 " -a \
	"$(sed -n '2p;4p' "$TMP/out" | cut -d' ' -f3 | tr '\n' ' ')" = \
	"key=714c8345 key=5bd3642f "

# A key changes the lookups, never the table: same DIGEST and COUNTS, and
# the old key gives back the old owners.
lookups() {
	local i

	for i in $(seq 1 64); do
		echo "LOOKUP_ADDR 10.1.$((i / 8)).$i:$((1000 + i))"
		echo "LOOKUP client$i"
	done
}
{
	nodes be 20
	echo DIGEST
	echo COUNTS
	lookups
	echo "KEY $(hkey 99)"
	echo DIGEST
	echo COUNTS
	lookups
	echo "KEY 00000000000000000000000000000000"
	lookups
} | sim
sed -n 1,21p "$TMP/out" >"$TMP/table0"
sed -n 22,149p "$TMP/out" >"$TMP/look0"
sed -n 150,170p "$TMP/out" >"$TMP/table1"
sed -n 171,298p "$TMP/out" >"$TMP/look1"
sed -n 299,426p "$TMP/out" >"$TMP/look2"
expect "KEY moves lookups but not the table; the old key gives them back" \
	test "$rc" -eq 0 -a ! -s "$TMP/err" -a "$(wc -l <"$TMP/out")" -eq 426 \
	-a "$(paste -d' ' "$TMP/look0" "$TMP/look1" | awk '$1 != $2' | wc -l)" \
	-gt 64 && cmp -s "$TMP/table0" "$TMP/table1" &&
	cmp -s "$TMP/look0" "$TMP/look2"

# --- random scripts: maglev-sim against the independent model -------------

# Weights from 0 to INT_MAX (many above 65535), sizes below and above the
# number of backends, drains, removals down to an empty table: maglev-sim
# and model.py must print the same DIGEST, CHURN and COUNTS throughout, and
# the same owners of text and address keys under random hash keys (KEY),
# with the client hash of 64-bit kernels (seeds 1..8) and with -32 that of
# 32-bit ones (seeds 9..12).  awk's srand(seed) makes every run the same.
have_python=
command -v python3 >/dev/null && have_python=1
for seed in 1 2 3 4 5 6 7 8 9 10 11 12; do
	if [ -z "$have_python" ]; then
		fail "random script $seed: no python3 to run model.py (apt-get install python3)"
		continue
	fi
	form=()
	[ "$seed" -gt 8 ] && form=(-32)
	awk -v seed="$seed" 'BEGIN {
		srand(seed)
		split("251 257 263 1009 2003", sizes)
		print "SIZE " sizes[1 + int(rand() * 5)]
		n = 0
		for (step = 0; step < 40; step++) {
			r = rand()
			if (r < 0.45 || n == 0) {
				k = rand()
				if (k < 0.1) w = 0
				else if (k < 0.4) w = 1 + int(rand() * 10)
				else if (k < 0.7) w = 60000 + int(rand() * 10000)
				else w = int(rand() * 2147483647) + 1
				name = "b" int(rand() * 400)
				if (rand() < 0.2)
					name = "[2001:DB8:0::" ++v6 "]:80"
				if (!(name in have)) {
					have[name] = 1; names[n++] = name
					print "ADD_NODE " name " " w
				}
			} else if (r < 0.7) {
				i = int(rand() * n)
				print "WEIGHT " names[i] " " \
					(rand() < 0.4 ? 0 : int(rand() * 2147483647))
			} else if (r < 0.85) {
				i = int(rand() * n)
				print "REMOVE_NODE " names[i]
				delete have[names[i]]
				names[i] = names[--n]
			} else if (r < 0.93) {
				print "SIZE " sizes[1 + int(rand() * 5)]
				print "REBUILD"
			} else {
				k = ""
				for (j = 0; j < 4; j++)
					k = k sprintf("%08x",
						int(rand() * 4294967296))
				print "KEY " (rand() < 0.5 ? k : toupper(k))
				print "FINGERPRINT"
			}
			print "DIGEST"
			print "CHURN"
			a = int(rand() * 256)
			print "LOOKUP_ADDR 10.0." a "." int(rand() * 256)
			print "LOOKUP_ADDR 192.168.0." a ":" int(rand() * 65536)
			print "LOOKUP_ADDR [2001:db8::" a "]:" int(rand() * 65536)
			print "LOOKUP_ADDR fe80::" sprintf("%x", a)
			print "LOOKUP client" int(rand() * 100000)
		}
		for (i = 0; i < n; i++)
			print "REMOVE_NODE " names[i]
		print "CHURN"
		print "COUNTS"
	}' >"$TMP/rand.in"
	sim "${form[@]}" <"$TMP/rand.in"
	python3 "$HERE/model.py" "${form[@]}" <"$TMP/rand.in" \
		>"$TMP/rand.model" 2>&1
	if [ "$rc" -eq 0 ] && [ ! -s "$TMP/err" ] &&
	   cmp -s "$TMP/out" "$TMP/rand.model"; then
		pass "random script $seed${form:+ ($form)}: maglev-sim equals model.py"
	else
		fail "random script $seed${form:+ ($form)}: maglev-sim differs from model.py"
		diff "$TMP/rand.model" "$TMP/out" | head -5
		head -3 "$TMP/err"
	fi
done

# --- golden transcripts from the independent model -------------------------

for f in "$HERE"/golden/*.in; do
	name=$(basename "$f" .in)
	sim <"$f"
	if [ "$rc" -eq 0 ] && [ ! -s "$TMP/err" ] &&
	   cmp -s "$TMP/out" "${f%.in}.out"; then
		pass "golden $name: maglev-sim prints golden/$name.out"
	else
		fail "golden $name: maglev-sim differs from golden/$name.out"
		diff "${f%.in}.out" "$TMP/out" | head -5
		head -3 "$TMP/err"
	fi
	if [ -n "$have_python" ]; then
		python3 "$HERE/model.py" <"$f" >"$TMP/model" 2>&1
		expect "golden $name: model.py still produces it" \
			cmp -s "$TMP/model" "${f%.in}.out"
	else
		fail "golden $name: no python3 to check that model.py still produces it (apt-get install python3)"
	fi
done

summary
