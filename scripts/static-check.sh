#!/bin/bash
# static-check.sh: the documentation checks of doc-check.sh, then
# checkpatch.pl --strict on every module source file (and the benchmark
# module tools/bench/kmod/ip_vs_connbench.c) and sparse (C=2) on
# the module with and without its KUnit suites (MAGLEV_KUNIT=1), using the
# unpacked test kernel tree.
# Each file's checkpatch and each sparse run is one check.
# Logs: build/check/static/.
set -eu
. "$(dirname "$0")/lib.sh"

need_pkgs "${BUILD_PKGS[@]}" sparse
kdir=$("$TOP/scripts/build-kernel.sh")

# First the docs: links, make targets and paths, and the figures that
# describe the code, whose struct sizes come from a build against the test
# kernel (DOC_KDIR). Its results count here; its summary line must be its
# last.
doc=$(DOC_KDIR=$kdir "$TOP/scripts/doc-check.sh" 2>&1) || true
[[ $(tail -n 1 <<<"$doc") =~ $SUMMARY_RE ]] ||
	fail "docs: doc-check.sh did not end with its summary line"
tally < <(sed -E '/^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$/d' <<<"$doc")
w=$(work_dir static)

cd "$TOP"
# A merge's conflict markers left in a committed file (seen once in NEWS
# and installing.md, which no other check read as an error).
if git grep -qnE '^(<<<<<<<|>>>>>>>) ' -- . 2>/dev/null; then
	fail "conflict markers in: $(git grep -lE '^(<<<<<<<|>>>>>>>) ' -- . | tr '\n' ' ')"
else
	pass "no merge conflict markers in the tree"
fi
files=(maglev_*.c include/*.h tools/include/*.h kunit/*.[ch]
       tools/ring/ring_hash.[ch] tools/bench/kmod/*.c)
for f in "${files[@]}"; do
	# The userspace compat header restates the kernel's typedefs.
	ignore=
	[ "$f" = tools/include/maglev_compat.h ] && ignore=--ignore=NEW_TYPEDEFS
	if [ ! -f "$f" ]; then
		fail "checkpatch: $f missing"
	# shellcheck disable=SC2086 # ignore is one word or none
	elif (cd "$kdir" && ./scripts/checkpatch.pl --strict --no-tree $ignore \
		--no-summary --show-types -q -f "$TOP/$f") >"$w/checkpatch.log" 2>&1
	then
		pass "checkpatch $f"
	else
		fail "checkpatch $f"
		sed "s|$TOP/||" "$w/checkpatch.log"
	fi
done

src=$w/src
stage_sources "$src"
# The module, the module with its KUnit suites built in, and guest 27's
# test build.
for name in module kunit race; do
	kunit=
	[ "$name" = kunit ] && kunit=MAGLEV_KUNIT=1
	[ "$name" = race ] && kunit=MAGLEV_RACE=1
	if [ ! -f "$src/Kbuild" ]; then
		fail "sparse $name: no Kbuild"
		continue
	fi
	log=$w/sparse-$name.log
	make -C "$kdir" M="$src" clean >/dev/null 2>&1 || true
	if ! make -C "$kdir" M="$src" C=2 CHECK=sparse $kunit modules \
		>"$log" 2>&1; then
		fail "sparse $name: build failed (see $log)"
		tail -n 20 "$log"
	elif grep -E ': (warning|error):' "$log" | grep -F "$src/" |
		sed "s|$src/||" | grep .; then
		fail "sparse $name"
	else
		pass "sparse $name"
	fi
done
summary
