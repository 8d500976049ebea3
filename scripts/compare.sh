#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# compare.sh: "make compare". Maglev or ring? Builds build/maglev-compare
# (tools/bench/compare.c), prints its table and draws build/compare/compare.png
# and compare.svg with gnuplot (tools/bench/compare.gp).
#
# Environment: COMPARE_OUT (output directory, default build/compare), and
# COMPARE_NS, COMPARE_KEYS, COMPARE_RUNS as described in tools/bench/compare.c.
set -eu
. "$(dirname "$0")/lib.sh"

need_pkgs make gcc libc6-dev gnuplot-nox
out=${COMPARE_OUT:-$TOP/build/compare}
mkdir -p "$out"
make -s -C "$TOP" build/maglev-compare >&2
start=$(date +%s%N)
"$TOP/build/maglev-compare" "$out"
echo "# compare: $(( ($(date +%s%N) - start) / 1000000 )) ms"
gnuplot -e "data='$out/compare.tsv'; out='$out'" "$TOP/tools/bench/compare.gp"
echo "# charts: $out/compare.png $out/compare.svg"
