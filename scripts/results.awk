# Turn the results port of one guest boot (see guest-init.sh) into
# "PASS: ...", "FAIL: ..." and "SKIP: ..." lines, one per test.
#
#   awk -v label=NAME -v want="suite ..." [-v exact=1] [-v finish=1] \
#       -f results.awk RESULTS
#
# Guest tests: every "PASS: x"/"FAIL: x"/"SKIP: x" line a test prints is
# one result (a SKIP is counted as skipped, not passed or failed).
# A test exiting non-zero without a FAIL line is one FAIL, and so is a test
# that prints neither; with finish=1 (tests/guest/, whose lib.sh's finish
# prints "@@ FINISH" before it exits) so is a test that ends without
# reaching finish (an early exit, a shell error). KUnit: every leaf
# "ok"/"not ok" line of the KTAP is one result; a parameterised case
# counts its parameters, not itself. Every "1..N" plan must be met by N
# results at its level; a suite whose every case skipped fails. Suites
# named in want must be present and not empty; with exact=1, a suite not
# named in want fails too (tests/manifest names them all).

function out(kind, text) { print kind ": " text }

function ktap(line,   ind, rest, ok, skip, name, k, parent, cfailed, path) {
	match(line, /^ */)
	ind = RLENGTH
	rest = substr(line, ind + 1)
	if (rest ~ /^# Subtest: /) {
		subtest[ind] = substr(rest, 12)
		return
	}
	if (rest ~ /^1\.\.[0-9]+ *$/) {
		plan[ind] = substr(rest, 4) + 0
		nres[ind] = 0
		return
	}
	if (rest !~ /^(not )?ok [0-9]+/)
		return
	nres[ind]++
	# This result closes every deeper level: their plans are due.
	plans_due(ind)
	ok = rest !~ /^not /
	name = rest
	sub(/^(not )?ok [0-9]+ */, "", name)
	skip = name ~ /# *[Ss][Kk][Ii][Pp]/
	sub(/ *#.*$/, "", name)

	parent = haschild[ind]
	cfailed = childfail[ind]
	path = ""
	for (k = 0; k <= ind; k++)
		if (k in subtest)
			path = path subtest[k] "/"
	for (k = 0; k < ind; k++) {
		haschild[k] = 1
		if (!ok)
			childfail[k] = 1
	}
	for (k in haschild)
		if (k + 0 >= ind) {
			delete haschild[k]
			delete childfail[k]
		}
	for (k in subtest)
		if (k + 0 > ind)
			delete subtest[k]

	if (parent) {
		if (!ok && !cfailed)
			out("FAIL", "kunit/" path name ": failed")
		return
	}
	cases++
	if (skip) {
		skipped++
		out("SKIP", "kunit/" path name)
	} else
		out(ok ? "PASS" : "FAIL", "kunit/" path name)
}

# plans_due LEVEL: plan_due for every level deeper than LEVEL (-1: all).
function plans_due(lvl,   k, n, due) {
	n = 0
	for (k in plan)
		if (k + 0 > lvl)
			due[++n] = k + 0
	for (k = 1; k <= n; k++)
		plan_due(due[k])
}

# plan_due LEVEL: the results at LEVEL met its plan "1..N".
function plan_due(lvl,   where) {
	where = (lvl in subtest) ? subtest[lvl] : suite
	if (nres[lvl] != plan[lvl])
		out("FAIL", "kunit/" where ": KTAP plan 1.." plan[lvl] ", " \
		    nres[lvl] " results")
	delete plan[lvl]
	delete nres[lvl]
}

{ sub(/\r$/, "") }

/^@@ KTAP-END/ {
	plans_due(-1)
	if (!cases)
		out("FAIL", "kunit/" suite ": suite has no test cases")
	else if (skipped == cases)
		out("FAIL", "kunit/" suite ": every one of its " cases " cases skipped")
	inktap = 0
	next
}
/^@@ KTAP / {
	suite = $3
	seen[suite] = 1
	inktap = 1
	cases = skipped = 0
	split("", haschild); split("", childfail); split("", subtest)
	split("", plan); split("", nres)
	next
}
inktap { ktap($0); next }

/^@@ BEGIN / { test = $3; intest = 1; npass = nfail = finished = 0; next }
intest && /^@@ FINISH$/ { finished = 1; next }
/^@@ END / {
	if ($4 != 0 && !nfail)
		out("FAIL", label ": exited with status " $4 " and no FAIL line")
	else if (!npass && !nfail)
		out("FAIL", label ": printed no PASS or FAIL line")
	if (finish && !finished)
		out("FAIL", label ": did not reach its end (no finish: an early exit or a shell error)")
	intest = 0
	next
}
/^@@ DONE/ { done = 1; next }
/^@@ / { next }

intest && /^PASS: / { npass++; out("PASS", label ": " substr($0, 7)); next }
intest && /^FAIL: / { nfail++; out("FAIL", label ": " substr($0, 7)); next }
intest && /^SKIP: / { out("SKIP", label ": " substr($0, 7)); next }
!intest && /^(PASS|FAIL|SKIP): / { out(substr($0, 1, 4), label ": " substr($0, 7)) }

END {
	if (intest)
		out("FAIL", label ": did not finish")
	if (!done)
		out("FAIL", label ": guest did not finish (timeout or crash)")
	n = split(want, w, " ")
	for (k = 1; k <= n; k++) {
		named[w[k]] = 1
		if (!(w[k] in seen))
			out("FAIL", "kunit/" w[k] ": suite missing")
	}
	if (exact)
		for (k in seen)
			if (!(k in named))
				out("FAIL", "kunit/" k ": ran, but tests/manifest does not name it")
}
