#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench-old.sh: "make bench-old". The table build of this tree against the
# one before packed slots (BENCH_OLD_REV, default 8ceeba3), side by side in
# one process (tools/bench/build-vs-old.c): the old maglev_table.c and its
# headers come from git, built with the same flags, their global symbols
# renamed old_* with objcopy. Prints figures; passes on any speed, fails
# only if the digests differ or a build fails.
set -eu
. "$(dirname "$0")/lib.sh"

need_pkgs make gcc libc6-dev binutils git
rev=${BENCH_OLD_REV:-8ceeba3}
w=$TOP/build/bench-old
rm -rf "$w"
mkdir -p "$w/include" "$w/tools/include"
for f in maglev_table.c include/maglev_table.h include/maglev_compat.h; do
	git -C "$TOP" show "$rev:$f" >"$w/$f"
done
# A revision with tools/include/maglev_compat.h has the userspace
# stand-ins there, first on the include path; before, include/'s one
# header held both sides.
f=tools/include/maglev_compat.h
if git -C "$TOP" cat-file -e "$rev:$f" 2>/dev/null; then
	git -C "$TOP" show "$rev:$f" >"$w/$f"
fi
CFLAGS=(-O2 -g -std=gnu11 -Wall -Wextra)
gcc "${CFLAGS[@]}" -I"$w/tools/include" -I"$w/include" -c -o "$w/old.o" "$w/maglev_table.c"
nm --defined-only -g "$w/old.o" | awk '{ print $3, "old_" $3 }' >"$w/rename"
objcopy --redefine-syms="$w/rename" "$w/old.o" "$w/old_r.o"
gcc "${CFLAGS[@]}" -I"$TOP/tools/include" -I"$TOP/include" -o "$w/build-vs-old" \
	"$TOP/tools/bench/build-vs-old.c" "$TOP/maglev_table.c" "$w/old_r.o"
echo "# old: maglev_table.c of $rev"
"$w/build-vs-old" 65537 1000
"$w/build-vs-old" 65537 1000 drain
"$w/build-vs-old" 65537 3
"$w/build-vs-old" 5000011 1000
