#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make compare" at a reduced size, with its output checked for sanity:
# every algorithm and backend count has a row, the figures are in range
# (balance >= 1, shares within 0..100, rings never move keys between
# backends that stay, ring memory is points plus names), and the table and
# both charts are written.  Prints PASS/FAIL lines, then "N passed, N
# failed".  COMPARE_NS, COMPARE_KEYS and COMPARE_RUNS override the size.
# The awk conditions below are single-quoted on purpose:
# shellcheck disable=SC2016
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

npass=0
nfail=0
expect() {
	local desc=$1

	shift
	if "$@"; then
		echo "PASS: $desc"
		npass=$((npass + 1))
	else
		echo "FAIL: $desc"
		nfail=$((nfail + 1))
	fi
}

ns=${COMPARE_NS:-2 8 50 300}
export COMPARE_NS=$ns COMPARE_KEYS=${COMPARE_KEYS:-20000}
export COMPARE_RUNS=${COMPARE_RUNS:-3} COMPARE_OUT=$TMP/out
start=$(date +%s%N)
"$TOP/scripts/compare.sh" >"$TMP/table" 2>"$TMP/err"
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
cat "$TMP/table"
expect "make compare (N = $ns, $COMPARE_KEYS keys) exits 0 in $ms ms" \
	test "$rc" -eq 0
[ "$rc" -eq 0 ] || sed 's/^/  /' "$TMP/err"

# rows: algo N balance arc add_moved add_stay add_ideal rm_moved rm_stay
# mem lookup_ns build_us
algos="maglev-251 maglev-4093 maglev-65537 ring64-1 ring64-128 ring64-1024"
missing=
for a in $algos; do
	for n in $ns; do
		if [ "$a" = maglev-251 ] && [ "$n" -gt 251 ]; then
			grep -Eq "^$a +$n +\(more backends than slots\)" \
				"$TMP/table" || missing="$missing $a/$n"
		else
			grep -Eq "^$a +$n( +[0-9.]+){10}$" "$TMP/table" ||
				missing="$missing $a/$n"
		fi
	done
done
expect "a row of 10 figures per algorithm and N${missing:+ (missing:$missing)}" \
	test -z "$missing"

# check NAME AWK-CONDITION: every measured row satisfies the condition
check() {
	local bad

	bad=$(awk -v ns="$ns" "NF == 12 && \$1 ~ /^(maglev|ring64)-/ &&
		!($2) { print \$1 \"/\" \$2 }" "$TMP/table" | tr '\n' ' ')
	expect "$1${bad:+ (not: $bad)}" test -z "$bad"
}
check "balance and arc are >= 1 and <= N" \
	'$3 >= 0.999 && $4 >= 0.999 && $3 <= $2 && $4 <= $2'
check "Maglev balance is within one slot of ideal" \
	'$1 !~ /^maglev-[0-9]/ || $3 <= (int(substr($1, 8) / $2) + 1) * $2 / substr($1, 8) + 0.001'
check "maglev-65537 (the default): balance within 2% of even" \
	'$1 != "maglev-65537" || $3 <= 1.02'
check "maglev-65537 (the default): at most 2% moved between backends that stay" \
	'$1 != "maglev-65537" || ($6 <= 2 && $9 <= 2)'
check "moved shares are within 0..100 and something moves" \
	'$5 > 0 && $5 <= 100 && $8 > 0 && $8 <= 100 && $6 >= 0 && $9 >= 0 && $6 <= $5 && $9 <= $8'
check "a ring never moves keys between backends that stay" \
	'$1 !~ /^ring/ || ($6 == 0 && $9 == 0)'
check "ring memory is 16 bytes a point plus 68 a name" \
	'$1 !~ /^ring/ || $10 == $2 * (16 * substr($1, 8) + 68)'
# packed slots: W = ceil(log2 N) bits
check "Maglev memory is at least W/8 bytes a slot" \
	'$1 !~ /^maglev-[0-9]/ || $10 >= substr($1, 8) * int(log($2 - 1) / log(2) + 1.000001) / 8'
check "lookup and build times are positive" '$11 > 0 && $12 > 0'
# seed 002's ch4 and ch5 limits hold for the ring with 128 points at N = 8
check "ring64-128 at N = 8: adding or removing one moves at most 28%" \
	'$1 != "ring64-128" || $2 != 8 || ($5 <= 28 && $8 <= 28)'

expect "compare.tsv has one block per algorithm" \
	test "$(grep -c '^# \(maglev\|ring64\)-' "$TMP/out/compare.tsv" 2>/dev/null)" -eq 6

expect "compare.png is a PNG image" \
	sh -c "head -c 8 '$TMP/out/compare.png' | od -An -c | grep -q 'P   N   G'"
expect "compare.svg is an SVG drawing with six panels" \
	sh -c "grep -q '<svg' '$TMP/out/compare.svg' &&
	       [ \$(grep -c 'Lookup of a hashed key\|Memory a lookup\|Balance:' '$TMP/out/compare.svg') -ge 3 ]"

echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
