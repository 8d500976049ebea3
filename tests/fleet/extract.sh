#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Saves the /proc/net/ip_vs_maglev captures that guest tests print with
# fleet_capture (tests/guest/lib.sh) as files, verbatim:
#
#   tests/fleet/extract.sh RESULTS DIR
#
# RESULTS is a guest results file (build/check/vm-default/guest-12-fleet
# .results, ...); each line "# capture NAME LB | TEXT" adds TEXT to
# DIR/NAME.LB.  Prints the files written.
set -eu
[ $# -eq 2 ] || { echo "usage: $0 RESULTS DIR" >&2; exit 2; }
mkdir -p "$2"
tr -d '\r' <"$1" | awk -v dir="$2" '
	$1 == "#" && $2 == "capture" && $5 == "|" {
		f = dir "/" $3 "." $4
		if (!(f in seen)) {
			seen[f] = 1
			printf "" >f
			print f
		}
		line = $0
		sub(/^# capture [^ ]+ [^ ]+ \| /, "", line)
		print line >>f
	}'
