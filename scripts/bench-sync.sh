#!/bin/bash
# bench-sync.sh: "make bench-sync". Runs guest test 18 (tests/guest/
# 18-sync.sh: three LBs with IPVS connection sync) on the test kernel and
# prints its figures: connections broken when an LB dies after backend
# changes, with and without sync, beside maglev-sim's prediction, and the
# sync traffic and CPU per connection at a steady connection rate for the
# recommended settings, IPVS's defaults and no sync master
# (docs/fleet.md; SYNC_COST=1 in the guest, left out of "make check"). It prints figures; the test's own checks still count.
set -eu
. "$(dirname "$0")/lib.sh"

export KFLAVOUR=default
rc=0
GUEST_TESTS='18-*' GUEST_ENV=SYNC_COST=1 "$TOP/scripts/vm-test.sh" || rc=$?
res=$TOP/build/check/vm-default/guest-18-sync.results
echo "bench-sync: host cpu:$(sed -n 's/^model name[^:]*:/ /p' /proc/cpuinfo | head -n 1)"
tr -d '\r' <"$res" | grep -E '^(sync-cost|fleet-sync) ' || true
exit "$rc"
