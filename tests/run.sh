#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host tests: unit tests of maglev_table.c (built with -Werror, ASan and
# UBSan) and the maglev-sim protocol tests.  Ends with "N passed, N failed".
set -eu

cd "$(dirname "$0")/.."
CC=${CC:-cc}
mkdir -p build

pass=0
fail=0
skip=0

# count LOG NAME STATUS: adds the "N passed, N failed[, N skipped]" line
# of a test program's output LOG to the totals; a program that exited
# with a STATUS other than 0 without counting a failure is one more.
count() {
	local line p f s re='^([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?$'

	line=$(grep -E "$re" "$1" | tail -n 1 || true)
	if ! [[ $line =~ $re ]]; then
		echo "FAIL: $2 printed no result line${3:+ (exit status $3)}"
		fail=$((fail + 1))
		return
	fi
	p=${BASH_REMATCH[1]}
	f=${BASH_REMATCH[2]}
	s=${BASH_REMATCH[4]:-0}
	if [ "${3:-0}" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL: $2 exited with status $3 after $p passed, 0 failed"
		f=1
	fi
	pass=$((pass + p))
	fail=$((fail + f))
	skip=$((skip + s))
}

# maglev_table.c's userspace stand-ins first: tools/include/maglev_compat.h
# before include/'s kernel one (include/maglev_table.h includes it as
# <maglev_compat.h>).
USER_INC=(-Itools/include -Iinclude)

log=$(mktemp)
trap 'rm -f "$log"' EXIT

echo "== host unit tests (ASan, UBSan)"
if $CC -O1 -g -std=gnu11 -Wall -Wextra -Werror \
	-fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all "${USER_INC[@]}" -Itests \
	-o build/maglev-test tests/maglev_test.c tests/maglev_ref.c \
	maglev_table.c tools/siphash.c; then
	ASAN_OPTIONS=detect_leaks=1 build/maglev-test 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	sed -n 's/^not ok - /FAIL: host unit test: /p' "$log"
	count "$log" "host unit tests" "$rc"
else
	echo "FAIL: host unit tests do not build"
	fail=$((fail + 1))
fi

echo "== SipHash-2-4, hsiphash and key helpers (reference and kernel vectors; ASan, UBSan)"
if $CC -O1 -g -std=gnu11 -Wall -Wextra -Werror \
	-fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all "${USER_INC[@]}" -Itests \
	-o build/siphash-test tests/siphash_test.c tools/siphash.c \
	maglev_table.c; then
	ASAN_OPTIONS=detect_leaks=1 build/siphash-test 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	sed -n 's/^not ok - /FAIL: siphash test: /p' "$log"
	count "$log" "siphash tests" "$rc"
else
	echo "FAIL: siphash tests do not build"
	fail=$((fail + 1))
fi

# Work counted in basic blocks, not time: the table code alone built with
# -fsanitize-coverage=trace-pc (tests/resched_test.c counts the blocks),
# as the module is otherwise, without sanitizers.
echo "== reschedule points (maglev_table.c built with MAGLEV_RESCHED_TEST)"
if $CC -O2 -g -std=gnu11 -Wall -Wextra -Werror -DMAGLEV_RESCHED_TEST \
	-fsanitize-coverage=trace-pc "${USER_INC[@]}" -Itests \
	-c -o build/resched-table.o maglev_table.c &&
	$CC -O2 -g -std=gnu11 -Wall -Wextra -Werror -DMAGLEV_RESCHED_TEST \
	"${USER_INC[@]}" -Itests -o build/resched-test tests/resched_test.c \
	build/resched-table.o; then
	build/resched-test 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	sed -n 's/^not ok - /FAIL: reschedule test: /p' "$log"
	count "$log" "reschedule tests" "$rc"
else
	echo "FAIL: reschedule tests do not build"
	fail=$((fail + 1))
fi

echo "== ip_vs_mh port of the benchmark (hsiphash vectors, tables)"
if $CC -O1 -g -std=gnu11 -Wall -Wextra -Werror \
	-fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all "${USER_INC[@]}" -Itests -Itools -Itools/bench \
	-o build/mh-port-test tests/mh_port_test.c tools/bench/mh_port.c \
	tests/maglev_ref.c maglev_table.c; then
	build/mh-port-test 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	sed -n 's/^not ok - /FAIL: mh port test: /p' "$log"
	count "$log" "mh port tests" "$rc"
else
	echo "FAIL: mh port tests do not build"
	fail=$((fail + 1))
fi

echo "== maglev-sim tests"
if make -s tools && [ -x tests/sim/run.sh ]; then
	tests/sim/run.sh | tee "$log"
	rc=${PIPESTATUS[0]}
	count "$log" "maglev-sim tests" "$rc"
else
	echo "FAIL: maglev-sim or its tests missing"
	fail=$((fail + 1))
fi

echo "== maglev-fleet tests (fleet check, Prometheus export)"
if [ -x tests/fleet/run.sh ]; then
	tests/fleet/run.sh | tee "$log"
	rc=${PIPESTATUS[0]}
	count "$log" "maglev-fleet tests" "$rc"
else
	echo "FAIL: tests/fleet/run.sh missing"
	fail=$((fail + 1))
fi

echo "== ring unit tests (ASan, UBSan)"
if $CC -O1 -g -std=gnu11 -Wall -Wextra -Werror \
	-fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all "${USER_INC[@]}" -Itools -Itools/ring \
	-o build/ring-test tests/ring_test.c tools/ring/ring_hash.c tools/ring/ring_set.c; then
	ASAN_OPTIONS=detect_leaks=1 build/ring-test 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	sed -n 's/^not ok - /FAIL: ring unit test: /p' "$log"
	count "$log" "ring unit tests" "$rc"
else
	echo "FAIL: ring unit tests do not build"
	fail=$((fail + 1))
fi

echo "== maglev-sim ring tests"
tests/sim/ring.sh | tee "$log"
rc=${PIPESTATUS[0]}
count "$log" "maglev-sim ring tests" "$rc"

echo "== make compare (reduced)"
tests/compare.sh | tee "$log"
rc=${PIPESTATUS[0]}
count "$log" "make compare" "$rc"

echo "== the judging code on made-up input (tests/judge.sh)"
tests/judge.sh 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
count "$log" "judge tests" "$rc"

echo "== doc checker self-test (scripts/doc-check.sh on a small tree)"
# doc_passes WHAT: doc-check passes the tree $dt (a right WHAT).
doc_passes() {
	if scripts/doc-check.sh "$dt" >"$log" 2>&1; then
		echo "PASS: doc-check passes $1"
		pass=$((pass + 1))
	else
		echo "FAIL: doc-check fails $1:"
		grep '^FAIL' "$log"
		fail=$((fail + 1))
	fi
}
# doc_fails WHAT LINE: doc-check fails $dt with a FAIL line matching LINE
# (a grep pattern after "FAIL: docs: ").
doc_fails() {
	if scripts/doc-check.sh "$dt" >"$log" 2>&1; then
		echo "FAIL: doc-check passes $1"
		fail=$((fail + 1))
	elif grep -q "^FAIL: docs: $2" "$log"; then
		echo "PASS: doc-check fails on $1"
		pass=$((pass + 1))
	else
		echo "FAIL: doc-check fails $1 without naming it:"
		cat "$log"
		fail=$((fail + 1))
	fi
}
# A tree whose docs are right passes; the same with a dead link fails.
dt=$(mktemp -d)
mkdir -p "$dt/docs" "$dt/scripts"
printf '.PHONY: all help\nall:\nhelp:\n\t@echo "  make [all]  build"\n\t@echo "  make help   this list"\n' >"$dt/Makefile"
# shellcheck disable=SC2016 # backticks are Markdown
printf '# T\n\n## Part one\n\nSee [one](docs/one.md#more), `make all`, `scripts/x.sh`.\n' >"$dt/README.md"
printf '# One\n\n## More\n\nBack to [the top](../README.md#part-one).\n' >"$dt/docs/one.md"
: >"$dt/scripts/x.sh"
doc_passes "a right tree"
sed -i 's|docs/one.md#more|docs/two.md|' "$dt/README.md"
doc_fails "a dead link" 'README.md:5: link docs/two.md: no such file'
# A figure quoted differently from docs/testing.md's table fails too.
sed -i 's|docs/two.md|docs/one.md#more|' "$dt/README.md"
printf '# Testing\n\n## Current figures\n\n| figure | value | how |\n|---|---|---|\n| demo from nothing | 81 s | a run |\n' >"$dt/docs/testing.md"
printf '\nIt took <!-- figure: demo from nothing -->80 s<!-- /figure -->.\n' >>"$dt/README.md"
doc_fails "a figure two pages give differently" \
	'README.md:[0-9]*: figure "demo from nothing" is "80 s" here, "81 s" in docs/testing.md'
# docs/bad-input.md: a row's quoted check must be a check of the test
# named, not any text of it (here: an info line).
sed -i 's|-->80 s<!--|-->81 s<!--|' "$dt/README.md"
mkdir -p "$dt/tests/guest"
printf '#!/bin/sh\n# a comment: drops the key\ninfo "the key was dropped"\nexpect_eq "the key is unchanged" 1 1\nfinish\n' \
	>"$dt/tests/guest/01-x.sh"
printf '# Bad input\n\n| input | what happens | tested by |\n|---|---|---|\n| a key | dropped | guest 01 ("the key is unchanged") |\n' \
	>"$dt/docs/bad-input.md"
doc_passes "a bad-input row quoting a check of its test"
sed -i 's|"the key is unchanged"|"the key was dropped"|' "$dt/docs/bad-input.md"
doc_fails "a bad-input row quoting a text that is no check" \
	'docs/bad-input.md:5: guest 01: "the key was dropped" is in tests/guest/01-x.sh, but not in a check'
rm -rf "$dt"

echo "== kernel state check self-test (kernel_state_check in scripts/lib.sh)"
# What check.sh and make demo compare before and after a run, on a made-up
# /proc: unchanged passes; an ip_vs module loaded meanwhile fails, and so
# does a module taint flag (O, E: ours is out of tree and unsigned), while
# another module (loop) is allowed.
kt=$(mktemp -d)
mkdir -p "$kt/sys/kernel"
echo 0 >"$kt/sys/kernel/tainted"
printf 'ext4 1 0 - Live 0\n' >"$kt/modules"
ks() { (. scripts/lib.sh && KSTATE_PROC=$kt kernel_state); }
kcheck() { (. scripts/lib.sh && kernel_state_check k "$1" "$2"); }
k0=$(ks)
printf 'loop 1 0 - Live 0\n' >>"$kt/modules"
k1=$(ks)
printf 'ip_vs_maglev 1 0 - Live 0\nip_vs 2 1 ip_vs_maglev, Live 0\n' >>"$kt/modules"
k2=$(ks)
echo 12288 >"$kt/sys/kernel/tainted"
k3=$(ks)
kcheck "$k0" "$k1" >"$log"
if [ "$(grep -c '^PASS' "$log")" -eq 2 ] && ! grep -q '^FAIL' "$log"; then
	echo "PASS: kernel_state_check passes a run that loaded loop"
	pass=$((pass + 1))
else
	echo "FAIL: kernel_state_check on a run that loaded loop:"
	cat "$log"
	fail=$((fail + 1))
fi
kcheck "$k0" "$k2" >"$log"
if grep -q '^FAIL: k: loaded into .*: ip_vs ip_vs_maglev$' "$log"; then
	echo "PASS: kernel_state_check fails a run that loaded ip_vs and ip_vs_maglev"
	pass=$((pass + 1))
else
	echo "FAIL: kernel_state_check misses ip_vs_maglev loaded:"
	cat "$log"
	fail=$((fail + 1))
fi
# Loaded and removed again: only the taint shows it.
kcheck "$k0" "$(sed 's/^tainted .*/tainted 12288/' <<<"$k0")" >"$log"
if grep -q '^FAIL: k: the kernel.s taint gained a module flag' "$log"; then
	echo "PASS: kernel_state_check fails a run that set the out-of-tree and unsigned taint flags"
	pass=$((pass + 1))
else
	echo "FAIL: kernel_state_check misses the taint flags O and E:"
	cat "$log"
	fail=$((fail + 1))
fi
kcheck "$(grep -v '^module' <<<"$k0"; echo 'modules unlisted')" \
	"$(grep -v '^module' <<<"$k3"; echo 'modules unlisted')" >"$log"
if grep -q '^FAIL: k: the kernel.s taint' "$log" &&
   grep -q '^SKIP: k: no /proc/modules' "$log"; then
	echo "PASS: kernel_state_check without /proc/modules: the taint still counts, the list is a SKIP"
	pass=$((pass + 1))
else
	echo "FAIL: kernel_state_check without /proc/modules:"
	cat "$log"
	fail=$((fail + 1))
fi
rm -rf "$kt"

if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
