#!/bin/bash
# static-check.sh: the documentation checks of doc-check.sh, then
# checkpatch.pl --strict on every module source file and sparse (C=2) on
# the module and the KUnit module, using the unpacked test kernel tree.
# Each file's checkpatch and each sparse run is one check.
# Logs: build/check/static/.
set -eu
. "$(dirname "$0")/lib.sh"

# First, as it needs no kernel: links, make targets and paths in the docs.
tally < <("$TOP/scripts/doc-check.sh" 2>&1 |
	sed '/^[0-9]* passed, [0-9]* failed$/d')

need_pkgs "${BUILD_PKGS[@]}" sparse
kdir=$("$TOP/scripts/build-kernel.sh")
w=$(work_dir static)

cd "$TOP"
files=(maglev_main.c maglev_table.c maglev_excl.c ring_hash.c include/*.h
       kunit/*.c)
for f in "${files[@]}"; do
	if [ ! -f "$f" ]; then
		fail "checkpatch: $f missing"
	elif (cd "$kdir" && ./scripts/checkpatch.pl --strict --no-tree \
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
for name in module kunit; do
	m=$src
	[ "$name" = kunit ] && m=$src/kunit
	if [ ! -f "$m/Kbuild" ]; then
		fail "sparse $name: no Kbuild"
		continue
	fi
	log=$w/sparse-$name.log
	if ! make -C "$kdir" M="$m" C=2 CHECK=sparse modules >"$log" 2>&1; then
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
