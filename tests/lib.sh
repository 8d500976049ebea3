# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
#
# What the host shell tests (tests/sim/run.sh, tests/sim/ring.sh,
# tests/fleet/run.sh) share: a scratch directory $TMP removed on exit, and
# PASS:/FAIL: lines counted for the closing "N passed, N failed". Source
# it; do not run it.

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
npass=0
nfail=0
pass() { echo "PASS: $*"; npass=$((npass + 1)); }
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }

# summary: the closing line; the exit status says whether all passed.
summary() {
	echo "$npass passed, $nfail failed"
	[ "$nfail" -eq 0 ]
}
