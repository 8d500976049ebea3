#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/fuzz/run.sh: build the libFuzzer targets of tests/fuzz/ with
# Debian's clang (ASan and UBSan), replay the committed corpus of each
# (tests/fuzz/corpus/<target>/, every crash ever found included), then fuzz
# each for FUZZ_SECONDS (default 20; "make fuzz" sets 300) starting from
# that corpus. Ends with "N passed, N failed".
#
#   fuzz_build  maglev_build()/maglev_prepare() against the specification
#               and the reference fill (tests/maglev_ref.c)
#   fuzz_sim    maglev-sim's line protocol (tools/maglev-sim.c)
#
# New inputs go to build/fuzz/corpus/<target>/, crashes to
# build/fuzz/crash-<target>-*; a crash fails the run. Add a fixed crash to
# tests/fuzz/corpus/<target>/ so that every run replays it.
# FUZZ_TARGETS="fuzz_sim" runs a subset.
set -eu
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/../../scripts/lib.sh"

FUZZ_SECONDS=${FUZZ_SECONDS:-20}
FUZZ_TARGETS=${FUZZ_TARGETS:-fuzz_build fuzz_sim}
CLANG=${CLANG:-clang-14}
need_pkgs clang-14 libclang-rt-14-dev

cd "$TOP"
out=build/fuzz
mkdir -p "$out"
pass=0
fail=0
ok() { echo "PASS: $*"; pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

# shellcheck disable=SC2054 # commas inside -fsanitize=
FLAGS=(-g -O1 -std=gnu11 -Wall -Wextra -Itools/include -Iinclude -Itests -Itools/ring
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
       -fno-omit-frame-pointer)
build() {
	case $1 in
	fuzz_build) "$CLANG" "${FLAGS[@]}" -o "$out/$1" tests/fuzz/fuzz_build.c \
		tests/maglev_ref.c maglev_table.c tools/siphash.c ;;
	fuzz_sim) "$CLANG" "${FLAGS[@]}" -Dmain=maglev_sim_main -o "$out/$1" \
		tests/fuzz/fuzz_sim.c tools/maglev-sim.c maglev_table.c \
		tools/siphash.c tools/ring/ring_hash.c tools/ring/ring_set.c ;;
	*) return 1 ;;
	esac
}
opts() {
	case $1 in
	fuzz_sim) echo "-dict=tests/fuzz/sim.dict -max_len=1024" ;;
	*) echo "-max_len=512" ;;
	esac
}

for t in $FUZZ_TARGETS; do
	if ! build "$t" >"$out/$t.build.log" 2>&1; then
		bad "$t: does not build"
		cat "$out/$t.build.log"
		continue
	fi
	ok "$t: builds with clang, ASan and UBSan"
	seeds=tests/fuzz/corpus/$t
	n=$(find "$seeds" -type f 2>/dev/null | wc -l)
	# shellcheck disable=SC2046
	if [ "$n" -gt 0 ] && "$out/$t" $(opts "$t") -runs=0 "$seeds" \
		>"$out/$t.replay.log" 2>&1; then
		ok "$t: replays the corpus ($n inputs)"
	else
		bad "$t: corpus replay ($n inputs, see $out/$t.replay.log)"
		tail -n 30 "$out/$t.replay.log"
	fi
	[ "$FUZZ_SECONDS" -gt 0 ] || continue
	mkdir -p "$out/corpus/$t"
	rm -f "$out/crash-$t-"*
	# shellcheck disable=SC2046
	if "$out/$t" $(opts "$t") -max_total_time="$FUZZ_SECONDS" \
		-timeout=30 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$out/crash-$t-" "$out/corpus/$t" "$seeds" \
		>"$out/$t.fuzz.log" 2>&1; then
		execs=$(sed -n 's/^stat::number_of_executed_units: *//p' \
			"$out/$t.fuzz.log")
		ok "$t: fuzzed ${FUZZ_SECONDS}s, ${execs:-?} executions, no crash"
	else
		bad "$t: crash after fuzzing (see $out/$t.fuzz.log, $(find "$out" -name "crash-$t-*" | tr '\n' ' '))"
		grep -E -m 5 'fuzz_[a-z]+: |ERROR: |SUMMARY' "$out/$t.fuzz.log" || true
	fi
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
