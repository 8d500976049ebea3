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

# Adds the "N passed, N failed" line of a test program's output to the totals.
count() {
	local line p f

	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1 || true)
	if [ -z "$line" ]; then
		echo "FAIL: $2 printed no result line"
		fail=$((fail + 1))
		return
	fi
	p=${line%% passed*}
	f=${line#*passed, }
	f=${f%% failed*}
	pass=$((pass + p))
	fail=$((fail + f))
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT

echo "== host unit tests (ASan, UBSan)"
if $CC -O1 -g -std=gnu11 -Wall -Wextra -Werror \
	-fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all -Iinclude -Itests \
	-o build/maglev-test tests/maglev_test.c tests/maglev_ref.c \
	maglev_table.c tools/siphash.c; then
	ASAN_OPTIONS=detect_leaks=1 build/maglev-test 2>&1 | tee "$log" || true
	sed -n 's/^not ok - /FAIL: host unit test: /p' "$log"
	count "$log" "host unit tests"
else
	echo "FAIL: host unit tests do not build"
	fail=$((fail + 1))
fi

echo "== SipHash-2-4, hsiphash and key helpers (reference and kernel vectors; ASan, UBSan)"
if $CC -O1 -g -std=gnu11 -Wall -Wextra -Werror \
	-fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all -Iinclude -Itests \
	-o build/siphash-test tests/siphash_test.c tools/siphash.c \
	maglev_table.c; then
	ASAN_OPTIONS=detect_leaks=1 build/siphash-test 2>&1 | tee "$log" || true
	sed -n 's/^not ok - /FAIL: siphash test: /p' "$log"
	count "$log" "siphash tests"
else
	echo "FAIL: siphash tests do not build"
	fail=$((fail + 1))
fi

echo "== reschedule points (maglev_table.c built with MAGLEV_RESCHED_TEST)"
if $CC -O2 -g -std=gnu11 -Wall -Wextra -Werror -DMAGLEV_RESCHED_TEST \
	-fsanitize=undefined -fno-sanitize-recover=all -Iinclude -Itests \
	-o build/resched-test tests/resched_test.c maglev_table.c; then
	build/resched-test 2>&1 | tee "$log" || true
	sed -n 's/^not ok - /FAIL: reschedule test: /p' "$log"
	count "$log" "reschedule tests"
else
	echo "FAIL: reschedule tests do not build"
	fail=$((fail + 1))
fi

echo "== ip_vs_mh port of the benchmark (hsiphash vectors, tables)"
if $CC -O1 -g -std=gnu11 -Wall -Wextra -Werror \
	-fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all -Iinclude -Itests -Itools -Itools/bench \
	-o build/mh-port-test tests/mh_port_test.c tools/bench/mh_port.c \
	tests/maglev_ref.c maglev_table.c; then
	build/mh-port-test 2>&1 | tee "$log" || true
	sed -n 's/^not ok - /FAIL: mh port test: /p' "$log"
	count "$log" "mh port tests"
else
	echo "FAIL: mh port tests do not build"
	fail=$((fail + 1))
fi

echo "== maglev-sim tests"
if make -s tools && [ -x tests/sim/run.sh ]; then
	tests/sim/run.sh | tee "$log" || true
	count "$log" "maglev-sim tests"
else
	echo "FAIL: maglev-sim or its tests missing"
	fail=$((fail + 1))
fi

echo "== maglev-fleet tests (fleet check, Prometheus export)"
if [ -x tests/fleet/run.sh ]; then
	tests/fleet/run.sh | tee "$log" || true
	count "$log" "maglev-fleet tests"
else
	echo "FAIL: tests/fleet/run.sh missing"
	fail=$((fail + 1))
fi

echo "== ring unit tests (ASan, UBSan)"
if $CC -O1 -g -std=gnu11 -Wall -Wextra -Werror \
	-fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all -Iinclude -Itools -Itools/ring \
	-o build/ring-test tests/ring_test.c tools/ring/ring_hash.c tools/ring/ring_set.c; then
	ASAN_OPTIONS=detect_leaks=1 build/ring-test 2>&1 | tee "$log" || true
	sed -n 's/^not ok - /FAIL: ring unit test: /p' "$log"
	count "$log" "ring unit tests"
else
	echo "FAIL: ring unit tests do not build"
	fail=$((fail + 1))
fi

echo "== maglev-sim ring tests"
tests/sim/ring.sh | tee "$log" || true
count "$log" "maglev-sim ring tests"

echo "== make compare (reduced)"
tests/compare.sh | tee "$log" || true
count "$log" "make compare"

echo "== doc checker self-test (scripts/doc-check.sh on a small tree)"
# A tree whose docs are right passes; the same with a dead link fails.
dt=$(mktemp -d)
mkdir -p "$dt/docs" "$dt/scripts"
printf '.PHONY: all help\nall:\nhelp:\n\t@echo "  make [all]  build"\n\t@echo "  make help   this list"\n' >"$dt/Makefile"
# shellcheck disable=SC2016 # backticks are Markdown
printf '# T\n\n## Part one\n\nSee [one](docs/one.md#more), `make all`, `scripts/x.sh`.\n' >"$dt/README.md"
printf '# One\n\n## More\n\nBack to [the top](../README.md#part-one).\n' >"$dt/docs/one.md"
: >"$dt/scripts/x.sh"
if scripts/doc-check.sh "$dt" >"$log" 2>&1; then
	echo "PASS: doc-check passes a right tree"
	pass=$((pass + 1))
else
	echo "FAIL: doc-check fails a right tree:"
	grep '^FAIL' "$log"
	fail=$((fail + 1))
fi
sed -i 's|docs/one.md#more|docs/two.md|' "$dt/README.md"
if scripts/doc-check.sh "$dt" >"$log" 2>&1; then
	echo "FAIL: doc-check passes a dead link"
	fail=$((fail + 1))
elif grep -q '^FAIL: docs: README.md:5: link docs/two.md: no such file' "$log"; then
	echo "PASS: doc-check fails on a dead link"
	pass=$((pass + 1))
else
	echo "FAIL: doc-check fails a dead link without naming it:"
	cat "$log"
	fail=$((fail + 1))
fi
# A figure quoted differently from docs/testing.md's table fails too.
sed -i 's|docs/two.md|docs/one.md#more|' "$dt/README.md"
printf '# Testing\n\n## Current figures\n\n| figure | value | how |\n|---|---|---|\n| demo from nothing | 81 s | a run |\n' >"$dt/docs/testing.md"
printf '\nIt took <!-- figure: demo from nothing -->80 s<!-- /figure -->.\n' >>"$dt/README.md"
if scripts/doc-check.sh "$dt" >"$log" 2>&1; then
	echo "FAIL: doc-check passes a figure two pages give differently"
	fail=$((fail + 1))
elif grep -q '^FAIL: docs: README.md:[0-9]*: figure "demo from nothing" is "80 s" here, "81 s" in docs/testing.md' "$log"; then
	echo "PASS: doc-check fails on a figure two pages give differently"
	pass=$((pass + 1))
else
	echo "FAIL: doc-check fails a figure without naming it:"
	cat "$log"
	fail=$((fail + 1))
fi
rm -rf "$dt"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
