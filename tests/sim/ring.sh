#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of maglev-sim's rings (ALGO ring64, ALGO ring32): the check values
# and worked examples of seeds 002 and 004, seed 002's stages ch1..ch5 with
# their thresholds, ties, order independence, bad input, randomized runs
# against ring_model.py (an independent Python model) and lookup speed.
#
#   tests/sim/ring.sh [path/to/maglev-sim]
#
# Prints one "PASS: ..." or "FAIL: ..." line per check, then
# "N passed, N failed"; exits 1 if any check failed.  Needs python3.
set -u
shopt -s lastpipe

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
MODEL=$HERE/ring_model.py

SIM=${1:-${MAGLEV_SIM:-}}
if [ -z "$SIM" ]; then
	make -s -C "$TOP" tools >&2 || { echo "FAIL: make tools"; exit 1; }
	SIM=$TOP/build/maglev-sim
fi
[ -x "$SIM" ] || { echo "FAIL: no executable $SIM"; exit 1; }
# the interpreter itself, not a wrapper such as pyenv's shim (it is run often)
PY=$(python3 -c 'import sys; print(sys.executable)') ||
	{ echo "FAIL: python3 missing"; exit 1; }

. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

rc=0
sim() {
	"$SIM" >"$TMP/out" 2>"$TMP/err"
	rc=$?
}

expect() {
	local desc=$1

	shift
	if "$@"; then
		pass "$desc"
	else
		fail "$desc"
	fi
}

# out_is TEXT: stdout, lines joined by spaces, is TEXT
out_is() { [ "$(tr '\n' ' ' <"$TMP/out")" = "$1" ]; }

# keys N: LOOKUP key0 .. key<N-1> (the keys of seed 002's stages)
keys() { seq 0 $(($1 - 1)) | sed 's/^/LOOKUP key/'; }
# nodes FROM TO: ADD_NODE node<FROM> .. node<TO>
nodes() { seq "$1" "$2" | sed 's/^/ADD_NODE node/'; }
# share FILE: busiest owner's share of the lines of FILE, in percent
share() {
	sort "$1" | uniq -c | sort -rn |
		awk -v n="$(wc -l <"$1")" 'NR == 1 { printf "%.2f", 100 * $1 / n }'
}
# le A B: A <= B for decimals
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }

# --- help -------------------------------------------------------------------

"$SIM" --help >"$TMP/help" 2>&1
expect "--help documents ALGO, POSITION and that rings ignore weights" \
	sh -c "grep -q '^  ALGO ring64 <V>' '$TMP/help' &&
	       grep -q '^  ALGO ring32' '$TMP/help' &&
	       grep -q '^  POSITION <text>' '$TMP/help' &&
	       grep -q 'rings ignore weights' '$TMP/help'"

# --- seed 002 check values --------------------------------------------------

expect "ring_model.py reproduces the seeds' check values" \
	"$PY" "$MODEL" --check
printf 'ALGO ring64 1\nPOSITION a\n' | sim
expect "seed 002: 'a' is at 198367012849983736" \
	test "$rc" -eq 0 -a "$(cat "$TMP/out")" = 198367012849983736

{
	echo "ALGO ring64 1"
	printf 'ADD_NODE %s\n' n1 n2 n3
	printf 'POSITION %s\n' n1#0 n2#0 n3#0
} | sim
paste -d' ' - <(printf '%s\n' n1 n2 n3) <"$TMP/out" | sort -n -k1,1 |
	cut -d' ' -f2 | tr '\n' ' ' >"$TMP/order"
expect "seed 002: with one point each, n1 n2 n3 sort as n2 n3 n1" \
	test "$(cat "$TMP/order")" = "n2 n3 n1 "

# keys on the points themselves, and 60 others, some past the top (wrap)
{
	echo "ALGO ring64 1"
	printf 'ADD_NODE %s\n' n1 n2 n3
	printf 'LOOKUP %s\n' n1#0 n2#0 n3#0
	seq 0 59 | sed 's/^/LOOKUP k/'
	echo "POSITION n1#0"
	seq 0 59 | sed 's/^/POSITION k/'
} >"$TMP/ex"
sim <"$TMP/ex"
"$PY" "$MODEL" <"$TMP/ex" >"$TMP/model"
top=$(sed -n 64p "$TMP/out")
wraps=$(sed -n '65,$p' "$TMP/out" | paste -d' ' - <(sed -n 4,63p "$TMP/out") |
	awk -v top="$top" 'length($1) > length(top) ||
		(length($1) == length(top) && $1 > top) { print $2 }' |
	sort -u | tr '\n' ' ')
expect "seed 002: a key at a point's position belongs to that point" \
	test "$(head -3 "$TMP/out" | tr '\n' ' ')" = "n1 n2 n3 "
expect "seed 002: keys past the top point wrap to n2 (got '$wraps')" \
	test "$wraps" = "n2 "
expect "seed 002: 60 lookups match ring_model.py" \
	cmp -s "$TMP/out" "$TMP/model"

# --- seed 004 worked example --------------------------------------------------

cat >"$TMP/ex" <<'EOF'
ALGO ring32
ADD_NODE ember
ADD_NODE iron
ADD_NODE onyx
ADD_NODE opal
ADD_NODE iron
POSITION ember
POSITION iron
POSITION onyx
POSITION opal
LOOKUP gob
POSITION gob
LOOKUP ogre
POSITION ogre
LOOKUP hag
POSITION hag
LOOKUP ember
ADD_NODE amber
POSITION amber
LOOKUP ogre
LOOKUP gob
LOOKUP hag
LOOKUP ember
REMOVE_NODE onyx
LOOKUP imp
POSITION imp
REMOVE_NODE onyx
EOF
sim <"$TMP/ex"
expect "seed 004: positions 438014020 1269809787 2591078921 3512059719" \
	test "$(sed -n 1,4p "$TMP/out" | tr '\n' ' ')" = \
	"438014020 1269809787 2591078921 3512059719 "
expect "seed 004: gob -> iron, ogre -> onyx, hag -> ember (wrap), ember -> ember" \
	test "$(sed -n 5,11p "$TMP/out" | tr '\n' ' ')" = \
	"iron 1109104011 onyx 1758641738 ember 3787390207 ember "
expect "seed 004: amber at 1876213440 takes ogre, and only ogre" \
	test "$(sed -n 12,16p "$TMP/out" | tr '\n' ' ')" = \
	"1876213440 amber iron ember ember "
expect "seed 004: without onyx, imp (2481405089) -> opal" \
	test "$(sed -n 17,18p "$TMP/out" | tr '\n' ' ')" = "opal 2481405089 "
expect "seed 004: adding iron twice and removing onyx twice are refused" \
	test "$rc" -eq 1 -a "$(cut -d: -f2 "$TMP/err" | tr '\n' ' ')" = \
	" line 6  line 27 " -a "$(wc -l <"$TMP/out")" -eq 18

# ties: 16cd and gwzx collide under FNV-1a 32; the lower name owns both
for order in "gwzx 16cd" "16cd gwzx"; do
	# shellcheck disable=SC2086
	{
		echo "ALGO ring32"
		printf 'ADD_NODE %s\n' $order opal
		printf 'POSITION %s\n' 16cd gwzx
		printf 'LOOKUP %s\n' gwzx 16cd
		echo "REMOVE_NODE 16cd"
		echo "LOOKUP gwzx"
	} | sim
	expect "seed 004 tie (added $order): 16cd owns the shared position" \
		out_is "1799261081 1799261081 16cd 16cd gwzx "
done

# --- seed 002 stages ----------------------------------------------------------

{ echo "ALGO ring64 64"; echo "ADD_NODE node0"; keys 200; } | sim
expect "ch1: one server (64 points): all 200 keys go to it" \
	test "$rc" -eq 0 -a "$(sort -u "$TMP/out")" = node0 \
	-a "$(wc -l <"$TMP/out")" -eq 200

{ echo "ALGO ring64 128"; nodes 0 7; keys 4000; keys 4000; } | sim
head -4000 "$TMP/out" >"$TMP/own8"
busy=$(share "$TMP/own8")
expect "ch2: 8 servers x 128 points, 4000 keys: busiest $busy% <= 27%" \
	le "$busy" 27
expect "ch3: locating twice gives the same answers" \
	cmp -s "$TMP/own8" <(tail -n +4001 "$TMP/out")
{ echo "ALGO ring64 128"; seq 7 -1 0 | sed 's/^/ADD_NODE node/'; keys 4000; } |
	sim
expect "ch3: servers added in reverse order give the same answers" \
	cmp -s "$TMP/own8" "$TMP/out"
{
	echo "ALGO ring64 128"
	printf 'ADD_NODE node%s\n' 5 2 7 0 3 6 1 4
	keys 4000
} | sim
expect "ch3: servers added in shuffled order give the same answers" \
	cmp -s "$TMP/own8" "$TMP/out"
# the seed's counter-example: one point per server at its bare name
{
	echo "ALGO ring64 1"
	seq 0 7 | sed 's/^/POSITION node/'
	seq 0 3999 | sed 's/^/POSITION key/'
} | sim
bare=$("$PY" -c '
import bisect, collections, sys
pos = [int(x) for x in open(sys.argv[1])]
pts = sorted((p, i) for i, p in enumerate(pos[:8]))
c = collections.Counter(pts[bisect.bisect_left(pts, (k, -1)) % 8][1]
			for k in pos[8:])
print("%.2f" % (100 * max(c.values()) / 4000))' "$TMP/out")
expect "ch2: a ring with one point per server at its bare name fails: $bare% > 27%" \
	test "$bare" != "" -a "$(awk -v a="$bare" 'BEGIN { print (a > 27) }')" = 1

{ echo "ALGO ring64 128"; nodes 0 8; keys 4000; } | sim
paste -d' ' "$TMP/own8" "$TMP/out" | awk '$1 != $2' >"$TMP/moved"
moved=$(awk -v n="$(wc -l <"$TMP/moved")" 'BEGIN { printf "%.2f", n / 40 }')
expect "ch4: adding node8 moves $moved% of keys (<= 28%)" \
	test "$(wc -l <"$TMP/out")" -eq 4000 -a -s "$TMP/moved" -a \
	"$(awk -v a="$moved" 'BEGIN { print (a <= 28) }')" = 1
expect "ch4: every moved key moved to node8" \
	test "$(cut -d' ' -f2 "$TMP/moved" | sort -u)" = node8

{ echo "ALGO ring64 128"; nodes 0 7; echo "REMOVE_NODE node3"; keys 4000; } |
	sim
paste -d' ' "$TMP/own8" "$TMP/out" | awk '$1 != $2' >"$TMP/moved"
moved=$(awk -v n="$(wc -l <"$TMP/moved")" 'BEGIN { printf "%.2f", n / 40 }')
expect "ch5: removing node3 moves $moved% of keys (<= 28%)" \
	test -s "$TMP/moved" -a \
	"$(awk -v a="$moved" 'BEGIN { print (a <= 28) }')" = 1
expect "ch5: only node3's keys moved, all of them" \
	test "$(cut -d' ' -f1 "$TMP/moved" | sort -u)" = node3 -a \
	"$(wc -l <"$TMP/moved")" -eq "$(grep -cx node3 "$TMP/own8")"

# ch5's long run: 600 actions over 12 servers and 2000 keys, 60% locate,
# 20% add, 20% remove, against the model
"$PY" - "$TMP/run600" <<'EOF'
import random, sys
r = random.Random(600)
with open(sys.argv[1], "w") as f:
    print("ALGO ring64 128", file=f)
    for _ in range(600):
        x = r.random()
        if x < 0.6:
            print("LOOKUP key%d" % r.randrange(2000), file=f)
        elif x < 0.8:
            print("ADD_NODE node%d" % r.randrange(12), file=f)
        else:
            print("REMOVE_NODE node%d" % r.randrange(12), file=f)
EOF
sim <"$TMP/run600"
"$PY" "$MODEL" <"$TMP/run600" >"$TMP/model" 2>"$TMP/merr"
expect "ch5: 600 mixed actions match ring_model.py exactly" \
	cmp -s "$TMP/out" "$TMP/model"
expect "ch5: the same adds and removes are refused as in the model" \
	cmp -s <(cut -d: -f1,2 "$TMP/err") <(cut -d: -f1,2 "$TMP/merr")

# --- randomized runs against the model --------------------------------------

gen() {
	"$PY" - "$1" <<'EOF'
import random, sys
r = random.Random(int(sys.argv[1]))
pool = ["10.0.%d.%d:%d" % (r.randrange(3), r.randrange(256), r.choice((80, 443)))
        for _ in range(30)] + ["a", "b", "ab", "a#1", "16cd", "gwzx"]
algos = ["ALGO ring64 1", "ALGO ring64 2", "ALGO ring64 7",
         "ALGO ring64 128", "ALGO ring32"]
print(r.choice(algos))
for _ in range(1500):
    x = r.random()
    if x < 0.01:
        print(r.choice(algos))
    elif x < 0.015:
        print("ALGO maglev")
        print(r.choice(algos))
    elif x < 0.15:
        print("ADD_NODE %s %d" % (r.choice(pool), r.randrange(4)))
    elif x < 0.25:
        print("REMOVE_NODE %s" % r.choice(pool))
    elif x < 0.3:
        print("POSITION %s" % r.choice(pool + ["k%d" % r.randrange(99)]))
    else:
        print("LOOKUP %s" % r.choice(pool + ["%d.%d.%d.%d:%d" % (
            r.randrange(256), r.randrange(256), r.randrange(256),
            r.randrange(256), r.randrange(65536))] * 3))
EOF
}
for seed in 1 2 3 4 5 6; do
	gen "$seed" >"$TMP/rand"
	sim <"$TMP/rand"
	"$PY" "$MODEL" <"$TMP/rand" >"$TMP/model" 2>"$TMP/merr"
	if cmp -s "$TMP/out" "$TMP/model" &&
	   cmp -s <(cut -d: -f1,2 "$TMP/err") <(cut -d: -f1,2 "$TMP/merr") &&
	   [ "$(wc -l <"$TMP/out")" -gt 900 ]; then
		pass "random run $seed: $(wc -l <"$TMP/out") answers and $(wc -l <"$TMP/err") refusals match ring_model.py"
	else
		fail "random run $seed differs from ring_model.py"
		diff "$TMP/model" "$TMP/out" | head -5
	fi
done

# --- bad input changes nothing ------------------------------------------------

long=$(printf 'x%.0s' $(seq 1 65))
state() { seq 0 39 | sed 's/^/LOOKUP k/'; echo "POSITION k"; }
bad=(
	'ALGO ring64 0'
	'ALGO ring64 1025'
	'ALGO ring64'
	'ALGO ring64 x'
	'ALGO ring64 -1'
	'ALGO ring64 99999999999'
	'ALGO ring32 1'
	'ALGO maglev 1'
	'ALGO ring128 1'
	'ALGO'
	"ADD_NODE $long"
	"REMOVE_NODE $long"
	'ADD_NODE a'
	'ADD_NODE x -1'
	'ADD_NODE x 1x'
	'REMOVE_NODE nosuch'
	'WEIGHT a 2'
	'REBUILD'
	'CHURN'
	'OWNER 0'
	'LOOKUP_ADDR 10.0.0.1'
	'COUNTS'
	'DIGEST'
	'SHOW'
	'STATS'
	'LOOKUP a b'
	'POSITION'
)
for algo in "ring64 16" ring32; do
	{
		echo "ALGO $algo"
		printf 'ADD_NODE %s\n' a b c 10.0.0.1:80
		state
		printf '%s\n' "${bad[@]}"
		state
	} | sim
	n=$(($(wc -l <"$TMP/out") / 2))
	expect "ALGO $algo: ${#bad[@]} bad lines give one error: line each, exit 1" \
		test "$rc" -eq 1 -a \
		"$(grep -c '^error: line [0-9]*: ' "$TMP/err")" -eq "${#bad[@]}" \
		-a "$(wc -l <"$TMP/err")" -eq "${#bad[@]}"
	expect "ALGO $algo: bad lines leave the ring and the algorithm untouched" \
		cmp -s <(head -n "$n" "$TMP/out") <(tail -n +"$((n + 1))" "$TMP/out")
done
expect "ALGO ring64 0 says the range 1..1024" grep -q '1..1024' "$TMP/err"

printf 'ADD_NODE a\nADD_NODE b 3\nDIGEST\nPOSITION x\nALGO ring64 0\nALGO foo\nDIGEST\n' |
	sim
expect "ALGO maglev: POSITION and bad ALGO lines are errors, the table stays" \
	test "$rc" -eq 1 -a "$(wc -l <"$TMP/err")" -eq 3 -a \
	"$(sed -n 1p "$TMP/out")" = "$(sed -n 2p "$TMP/out")"

# ALGO maglev with more servers than SIZE builds at the fitted size (the
# smallest prime >= the number of servers, docs/specification.md)
{
	echo "SIZE 251"
	echo "ALGO ring32"
	seq 1 252 | sed 's/^/ADD_NODE s/'
	echo "ALGO maglev"
	echo "STATS"
} | sim
expect "ALGO maglev with 252 servers and SIZE 251 builds 257 slots" \
	test "$rc" -eq 0 -a ! -s "$TMP/err" -a \
	"$(grep -o 'size=[0-9]* next_size=[0-9]* key=[0-9a-f]* backends=[0-9]* filled=[0-9]*' "$TMP/out")" = \
	"size=257 next_size=251 key=714c8345 backends=252 filled=257"

# --- the set is kept across ALGO --------------------------------------------

maglev_set='ADD_NODE a 1
ADD_NODE b 3
ADD_NODE c 2
ADD_NODE d 2
WEIGHT c 0'
{
	echo "$maglev_set"
	echo DIGEST
	echo "ALGO ring64 128"
	echo "ALGO ring32"
	echo "ALGO maglev"
	echo DIGEST
	echo SHOW
} | sim
expect "maglev -> ring64 -> ring32 -> maglev keeps weights and draining (same DIGEST)" \
	test "$rc" -eq 0 -a "$(sed -n 1p "$TMP/out")" = \
	"$(sed -n 2p "$TMP/out")" -a "$(grep -c 'drain=2' "$TMP/out")" -eq 1
{
	echo "ALGO ring32"
	echo "ADD_NODE a 1"
	echo "ADD_NODE b 3"
	echo "ADD_NODE x 5"
	echo "REMOVE_NODE x"
	echo "ADD_NODE d 2"
	echo "ALGO maglev"
	echo DIGEST
	printf 'ADD_NODE a 1\nADD_NODE b 3\nADD_NODE d 2\nDIGEST\n' |
		sed 's/^/#/'
} >"$TMP/ex"
sim <"$TMP/ex"
d1=$(cat "$TMP/out")
sed -n 's/^#//p' "$TMP/ex" | sim
expect "servers added under a ring keep their weights for ALGO maglev" \
	test -n "$d1" -a "$d1" = "$(cat "$TMP/out")"
{
	echo "ALGO ring64 128"
	nodes 0 7
	keys 500
	echo "ALGO maglev"
	echo "ALGO ring64 128"
	keys 500
} | sim
expect "ring64 -> maglev -> ring64 gives the same owners" \
	cmp -s <(head -500 "$TMP/out") <(tail -n +501 "$TMP/out")

# --- speed: O(log points) lookups -------------------------------------------

"$PY" - "$TMP/big" <<'EOF'
import random, sys
r = random.Random(13)
with open(sys.argv[1], "w") as f:
    print("ALGO ring32", file=f)
    for i in range(20000):
        print("ADD_NODE s%d-%d" % (i, r.randrange(10**6)), file=f)
    for i in range(100000):
        print("LOOKUP k%d" % r.randrange(10**9), file=f)
EOF
start=$(date +%s%N)
sim <"$TMP/big"
ms=$((($(date +%s%N) - start) / 1000000))
echo "ring32: 2*10^4 servers and 10^5 lookups in $ms ms"
"$PY" "$MODEL" <"$TMP/big" >"$TMP/model"
expect "ring32, 2*10^4 servers, 10^5 lookups: match the model, $ms ms (< 10 s)" \
	test "$rc" -eq 0 -a "$ms" -lt 10000 -a "$(wc -l <"$TMP/out")" -eq 100000 \
	-a "$(md5sum <"$TMP/out")" = "$(md5sum <"$TMP/model")"

summary
